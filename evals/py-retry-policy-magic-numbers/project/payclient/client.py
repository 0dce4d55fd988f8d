"""HTTP client for the payments provider, with retries and rate limiting."""
import random
import time
import uuid
from http import HTTPStatus

import requests

BASE_URL = "https://api.payments.example/v2"
# Slightly above a multiple of 3 s, the TCP retransmission window.
CONNECT_TIMEOUT_S = 3.05
READ_TIMEOUT_S = 20
MAX_ATTEMPTS = 4
BACKOFF_BASE_S = 0.25
BACKOFF_CAP_S = 8.0
PAGE_LIMIT = 100  # the provider's maximum page size
RETRYABLE = {HTTPStatus.TOO_MANY_REQUESTS, HTTPStatus.BAD_GATEWAY, HTTPStatus.SERVICE_UNAVAILABLE}


class PaymentsClient:
    def __init__(self, api_key: str, session: requests.Session = None):
        self.api_key = api_key
        self.session = session or requests.Session()
        self.timeout_ms = 30
        self.calls = []

    def _sleep_before_retry(self, attempt: int) -> None:
        delay = min(BACKOFF_BASE_S * 2 ** attempt, BACKOFF_CAP_S)
        time.sleep(delay + random.uniform(0, delay / 10))

    def _throttle(self) -> None:
        now = time.monotonic()
        self.calls = [t for t in self.calls if now - t < 1]
        if len(self.calls) >= 25:
            time.sleep(1 - (now - self.calls[0]))
        self.calls.append(time.monotonic())

    def request(self, method: str, path: str, idempotency_key: str = None, **kwargs) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.api_key}"}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        for attempt in range(MAX_ATTEMPTS):
            self._throttle()
            resp = self.session.request(
                method,
                BASE_URL + path,
                headers=headers,
                timeout=(CONNECT_TIMEOUT_S, self.timeout_ms),
                **kwargs,
            )
            if resp.status_code not in RETRYABLE:
                return resp
            if attempt < MAX_ATTEMPTS - 1:
                self._sleep_before_retry(attempt)
        return resp

    def capture(self, payment_id: str, amount_cents: int) -> dict:
        if amount_cents > 5000000:
            raise ValueError("amount over the single-capture limit")
        resp = self.request(
            "POST",
            f"/payments/{payment_id}/capture",
            idempotency_key=str(uuid.uuid4()),
            json={"amount": amount_cents},
        )
        resp.raise_for_status()
        return resp.json()

    def refund(self, payment_id: str, amount_cents: int, reason: str) -> dict:
        if len(reason) > 140:
            reason = reason[:140]
        resp = self.request(
            "POST",
            f"/payments/{payment_id}/refunds",
            idempotency_key=str(uuid.uuid4()),
            json={"amount": amount_cents, "reason": reason},
        )
        resp.raise_for_status()
        return resp.json()

    def list_payments(self, since: str) -> list:
        items, cursor = [], None
        while True:
            params = {"since": since, "limit": PAGE_LIMIT}
            if cursor:
                params["cursor"] = cursor
            resp = self.request("GET", "/payments", params=params)
            resp.raise_for_status()
            body = resp.json()
            items.extend(body["data"])
            cursor = body.get("next_cursor")
            if not cursor:
                return items
