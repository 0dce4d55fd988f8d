"""The return_items table."""

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, ForeignKey, Integer, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class ReturnItem(Base):
    """One row of return_items."""

    __tablename__ = "return_items"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    return_request_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("return_requests.id"), nullable=False)
    order_line_id: Mapped[int] = mapped_column(BigInteger, nullable=False)
    quantity: Mapped[int] = mapped_column(Integer, nullable=False)
    condition: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    def __repr__(self) -> str:
        return f"<ReturnItem {self.id}>"
