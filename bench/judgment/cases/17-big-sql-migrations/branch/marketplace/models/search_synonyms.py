"""The search_synonyms table."""

from datetime import datetime

from sqlalchemy import ARRAY, BigInteger, DateTime, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class SearchSynonym(Base):
    """One row of search_synonyms."""

    __tablename__ = "search_synonyms"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    term: Mapped[str] = mapped_column(Text, nullable=False)
    synonyms: Mapped[list[str]] = mapped_column(ARRAY(Text), nullable=False)
    locale: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    def __repr__(self) -> str:
        return f"<SearchSynonym {self.id}>"
