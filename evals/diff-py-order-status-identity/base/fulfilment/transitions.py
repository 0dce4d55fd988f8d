"""Order status transitions for the fulfilment worker."""
import logging
from datetime import datetime, timezone

log = logging.getLogger(__name__)

ALLOWED = {
    "new": {"paid", "cancelled"},
    "paid": {"packed", "refunded"},
    "packed": {"shipped"},
    "shipped": {"delivered", "returned"},
}


class TransitionError(Exception):
    pass


def can_transition(current: str, target: str) -> bool:
    return target in ALLOWED.get(current, set())


def apply_transition(order: dict, target: str) -> dict:
    current = order["status"]
    if not can_transition(current, target):
        raise TransitionError(f"{current} -> {target} not allowed")
    order = dict(order)
    order["status"] = target
    order["updated_at"] = datetime.now(timezone.utc).isoformat()
    log.info("order %s: %s -> %s", order["id"], current, target)
    return order
