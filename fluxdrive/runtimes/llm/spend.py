"""The run's money meter: one hard ceiling (``budget.max_usd``) shared by every model call of a review.

The up-front estimate can be wrong (a reviewer reads more files than its
history says), so the cap is also enforced while the run goes. Before each
model request the caller *reserves* the request's worst case - its input
tokens plus ``llm.max_output_tokens`` at the model's prices; the request may
start only when what was spent, plus what other requests in flight have
reserved, plus this worst case stays within the cap. After the response the
reservation is released and the real usage is charged. Reserving (not just
comparing against what was spent) is what keeps concurrent agents from all
passing the check at once and overshooting together.

The meter is plain data behind a lock, so agents on one event loop, threads
and the research daemon thread may share it. It knows nothing about
pydantic-ai (``metered.py`` wraps a model with it) or about the run
directory (``on_stop`` lets the launch write the decision).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from fluxdrive.errors import FluxdriveError


@dataclass(frozen=True, slots=True)
class Stop:
    """One request the meter refused: whose, and the money at that moment."""

    agent: str
    spent: float
    cap: float
    worst_case: float

    @property
    def reason(self) -> str:
        """The stub's and the notes' words."""
        return f"cost ceiling reached (${self.spent:.4f} of ${self.cap:.4f})"


class CostCeilingError(FluxdriveError):
    """A model request was refused because its worst case would pass ``budget.max_usd``.

    A control-flow signal inside a run: the agent that meets it ends with an
    error stub carrying :attr:`Stop.reason`; it never reaches the CLI.
    """

    def __init__(self, stop: Stop) -> None:
        super().__init__(stop.reason, hint="raise budget.max_usd or --max-cost, or review with fewer --agents")
        self.stop = stop


@dataclass
class SpendMeter:
    """Money spent and reserved by one run's model calls, against an optional cap (None: counts only)."""

    cap: float | None = None
    on_stop: Callable[[Stop], None] | None = None  # called once per agent the ceiling stops
    spent: float = 0.0
    reserved: float = 0.0
    requests: int = 0
    stops: list[Stop] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def reserve(self, agent: str, worst_case: float) -> float:
        """Hold ``worst_case`` dollars for one request of ``agent``, or raise :class:`CostCeilingError`.

        Returns the amount held, to hand back to :meth:`settle`."""
        worst_case = max(0.0, worst_case)
        with self._lock:
            if self.cap is not None and self.spent + self.reserved + worst_case > self.cap:
                stop = Stop(agent, round(self.spent, 6), self.cap, round(worst_case, 6))
                first = all(s.agent != agent for s in self.stops)
                self.stops.append(stop)
            else:
                self.reserved += worst_case
                self.requests += 1
                return worst_case
        if first and self.on_stop is not None:
            self.on_stop(stop)
        raise CostCeilingError(stop)

    def settle(self, held: float, actual: float) -> None:
        """A request ended: release what it held and charge what it really cost (0 when it failed)."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - held)
            self.spent += max(0.0, actual)

    @property
    def hit(self) -> bool:
        """True once the ceiling refused any request."""
        return bool(self.stops)

    def stopped(self) -> list[str]:
        """The agents the ceiling stopped, in the order it did."""
        return list(dict.fromkeys(s.agent for s in self.stops))

    def notes(self) -> list[str]:
        """The run's notes (run.json, the summary): that the ceiling was hit, what was spent, whom it stopped."""
        if not self.hit or self.cap is None:
            return []
        return [
            f"cost ceiling reached: ${self.spent:.4f} spent of the ${self.cap:.4f} cap (budget.max_usd); "
            f"stopped before their next model request: {', '.join(self.stopped())} - the review is incomplete"
        ]
