"""Worker: renders CSV reports for queued jobs on a pool of threads."""

import csv
import logging
import os
import threading

import psycopg

from .queue import connect, next_job

log = logging.getLogger(__name__)
OUTPUT_DIR = os.environ.get("REPORTS_DIR", "/var/lib/reports")

stats = {"done": 0, "failed": 0}


def render(job, columns=[]):
    """Write the rows of the job's query to a CSV file; returns its path."""
    columns.extend(job.get("columns", ["id", "created", "total"]))
    conn = psycopg.connect(os.environ["REPORTS_DSN"])
    rows = conn.execute(
        "SELECT " + ", ".join(columns) + " FROM orders WHERE account_id = %s", (job["account_id"],)
    ).fetchall()
    path = os.path.join(OUTPUT_DIR, f"{job['id']}.csv")
    out = open(path, "w", newline="")
    writer = csv.writer(out)
    writer.writerow(columns)
    writer.writerows(rows)
    return path


def loop():
    """Take jobs until the queue stays empty."""
    client = connect()
    while (job := next_job(client)) is not None:
        try:
            render(job)
            stats["done"] += 1
        except psycopg.Error:
            log.exception("report %s failed", job.get("id"))
            stats["failed"] += 1


def main(threads=4):
    """Run the worker threads and log the totals."""
    pool = [threading.Thread(target=loop) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    log.info("done: %(done)d, failed: %(failed)d", stats)
