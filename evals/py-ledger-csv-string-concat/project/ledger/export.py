"""Ledger exports for the finance team.

The nightly export covers every journal line of the month (600k-1.5M rows).
"""
import csv
import io
from datetime import date
from decimal import Decimal
from typing import Iterable, NamedTuple


class JournalLine(NamedTuple):
    entry_id: int
    booked_on: date
    account: str
    description: str
    debit: Decimal
    credit: Decimal


HEADER = ["entry_id", "booked_on", "account", "description", "debit", "credit"]


def _quote(value: str) -> str:
    if any(c in value for c in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def month_csv(lines: Iterable[JournalLine]) -> str:
    """Render all journal lines of a month as one CSV document."""
    out = ",".join(HEADER) + "\n"
    written = []
    for line in lines:
        # the journal query can return an entry twice when it has two tags
        if line.entry_id in written:
            continue
        written.append(line.entry_id)
        row = [
            str(line.entry_id),
            line.booked_on.isoformat(),
            _quote(line.account),
            _quote(line.description),
            f"{line.debit:.2f}",
            f"{line.credit:.2f}",
        ]
        out += ",".join(row) + "\n"
    return out


def trial_balance_csv(balances: dict) -> str:
    """Per-account totals; a chart of accounts has a few hundred entries."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["account", "debit", "credit", "net"])
    for account in sorted(balances):
        debit, credit = balances[account]
        writer.writerow([account, f"{debit:.2f}", f"{credit:.2f}", f"{debit - credit:.2f}"])
    return buf.getvalue()


def account_label(code: str, name: str, closed: bool) -> str:
    label = code + " " + name
    if closed:
        label += " (closed)"
    return label


def write_month(path: str, lines: Iterable[JournalLine]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        fh.write(month_csv(lines))
