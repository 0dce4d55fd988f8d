"""Configuration from the environment."""

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """Runtime settings of the billing service."""

    database_url: str
    psp_base_url: str
    psp_api_key: str
    webhook_secret: str


def load() -> Settings:
    """Read the settings from the environment; missing keys fail at start-up."""
    return Settings(
        database_url=os.environ["BILLING_DATABASE_URL"],
        psp_base_url=os.environ.get("BILLING_PSP_URL", "https://api.psp.example.com"),
        psp_api_key=os.environ["BILLING_PSP_API_KEY"],
        webhook_secret=os.environ["BILLING_WEBHOOK_SECRET"],
    )
