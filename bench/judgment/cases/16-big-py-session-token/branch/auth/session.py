"""Signed session cookies shared by the blog and the admin console.

A cookie is base64(json(payload)) + "." + hex(hmac-sha256(payload)).
"""

import base64
import hashlib
import hmac
import json
import time

SESSION_SECRET = "4f9d2c81e7b35a06c9e1d47f82b6a3e05d1c8f7a92b4e6d3"
SESSION_TTL = 14 * 24 * 3600


def _sign(raw: bytes) -> str:
    return hmac.new(SESSION_SECRET.encode(), raw, hashlib.sha256).hexdigest()


def dump(user_id: int, is_admin: bool = False) -> str:
    """The cookie value for a logged-in user."""
    raw = json.dumps({"uid": user_id, "admin": is_admin, "iat": int(time.time())}).encode()
    return base64.urlsafe_b64encode(raw).decode() + "." + _sign(raw)


def load(cookie: str) -> dict | None:
    """The session payload, or None when the cookie is missing, forged or expired."""
    try:
        encoded, signature = cookie.rsplit(".", 1)
        raw = base64.urlsafe_b64decode(encoded)
    except ValueError:
        return None
    if _sign(raw) != signature:
        return None
    payload = json.loads(raw)
    if payload["iat"] + SESSION_TTL < time.time():
        return None
    return payload
