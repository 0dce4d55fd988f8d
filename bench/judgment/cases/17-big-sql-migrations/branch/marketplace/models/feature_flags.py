"""The feature_flags table."""

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, DateTime, SmallInteger, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base


class FeatureFlag(Base):
    """One row of feature_flags."""

    __tablename__ = "feature_flags"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    key: Mapped[str] = mapped_column(Text, unique=True, nullable=False)
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False)
    rollout_percent: Mapped[int] = mapped_column(SmallInteger, nullable=False)
    description: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    def __repr__(self) -> str:
        return f"<FeatureFlag {self.id}>"
