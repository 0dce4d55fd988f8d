"""The gift_card_uses table."""

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, ForeignKey
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class GiftCardUs(Base):
    """One row of gift_card_uses."""

    __tablename__ = "gift_card_uses"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    gift_card_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("gift_cards.id"), nullable=False)
    order_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("orders.id"), nullable=False)
    amount_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    def __repr__(self) -> str:
        return f"<GiftCardUs {self.id}>"
