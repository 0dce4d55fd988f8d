"""The shipping_zones table."""

from datetime import datetime

from sqlalchemy import ARRAY, BigInteger, DateTime, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class ShippingZone(Base):
    """One row of shipping_zones."""

    __tablename__ = "shipping_zones"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    seller_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("sellers.id"), nullable=False)
    name: Mapped[str] = mapped_column(Text, nullable=False)
    countries: Mapped[list[str]] = mapped_column(ARRAY(String(2)), nullable=False)
    base_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    per_item_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    def __repr__(self) -> str:
        return f"<ShippingZone {self.id}>"
