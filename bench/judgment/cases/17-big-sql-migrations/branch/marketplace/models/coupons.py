"""The coupons table."""

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, Integer, SmallInteger, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class Coupon(Base):
    """One row of coupons."""

    __tablename__ = "coupons"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    code: Mapped[str] = mapped_column(Text, unique=True, nullable=False)
    percent_off: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)
    amount_off_cents: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    valid_from: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    valid_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    max_redemptions: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    def __repr__(self) -> str:
        return f"<Coupon {self.id}>"
