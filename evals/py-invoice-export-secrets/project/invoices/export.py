"""Nightly job: export finished invoices to S3 and notify accounting."""
import csv
import io
import logging
import os
import random
import time
from contextlib import closing

import boto3
import psycopg2

log = logging.getLogger(__name__)

AWS_ACCESS_KEY_ID = "AKIAQ7RZ4N2XK9WTB3LD"
AWS_SECRET_ACCESS_KEY = "t8Vq2LmZ0pR4sXw9Nc1Yh6Ke3Jb7Ua5Gd0Fo2Ii8"
BUCKET = os.environ.get("INVOICE_BUCKET", "acme-invoice-exports")

DB_DSN = "host=db.internal dbname=billing user=export password=Wint3r-Export-2024!"

MAX_ATTEMPTS = 5


def s3_client():
    return boto3.client(
        "s3",
        aws_access_key_id=AWS_ACCESS_KEY_ID,
        aws_secret_access_key=AWS_SECRET_ACCESS_KEY,
        region_name=os.environ.get("AWS_REGION", "eu-west-1"),
    )


def smtp_password():
    return os.environ["SMTP_PASSWORD"]


def fetch_invoices(day):
    with closing(psycopg2.connect(DB_DSN)) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT number, customer, total_cents FROM invoices "
            "WHERE status = 'final' AND issued_on = %s ORDER BY number",
            (day,),
        )
        return cur.fetchall()


def to_csv(rows):
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["number", "customer", "total"])
    for number, customer, total_cents in rows:
        writer.writerow([number, customer, f"{total_cents / 100:.2f}"])
    return buf.getvalue().encode("utf-8")


def upload_with_retry(key, body):
    client = s3_client()
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            client.put_object(Bucket=BUCKET, Key=key, Body=body)
            return
        except client.exceptions.ClientError:
            if attempt == MAX_ATTEMPTS:
                raise
            delay = (2 ** attempt) + random.uniform(0, 1)
            log.warning("upload failed, retry %d in %.1fs", attempt, delay)
            time.sleep(delay)


def run(day):
    rows = fetch_invoices(day)
    upload_with_retry(f"invoices/{day}.csv", to_csv(rows))
    log.info("exported %d invoices for %s", len(rows), day)
