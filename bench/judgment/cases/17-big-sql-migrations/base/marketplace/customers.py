"""Customer lookups."""

from sqlalchemy import text
from sqlalchemy.engine import Connection


def by_email(conn: Connection, email: str) -> dict | None:
    """The customer with this email address, or None."""
    row = conn.execute(
        text("SELECT id, email, full_name, country FROM customers WHERE email = :email"), {"email": email}
    ).first()
    return dict(row._mapping) if row is not None else None
