"""Where the value reaching a dangerous sink comes from, in any language, and what severity that earns.

Python's checks (``checks/_flows.py``) and the JavaScript/TypeScript and Go
flow engine (``flows/``) both end a data-flow question with an
:class:`Origin`, so a shell fed by the request is P0 and one fed by an unknown
global P2 whichever language the code is in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

OriginKind = Literal["outside", "command line", "parameter", "unknown", "clean"]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the value reaching a sink comes from, as far as the checks can tell.

    ``outside``: the request, user input, the network (``label`` names it);
    ``command line``: arguments of a command (whoever types them runs the program);
    ``parameter``: a public function's parameter, chosen by its caller;
    ``unknown``: a global, ``self.x``, a private helper's parameter, an unknown call;
    ``clean``: constants, numbers, cleaned values: nothing to report.
    """

    kind: OriginKind
    label: str = ""

    @classmethod
    def source(cls, label: str) -> Origin:
        """The origin of a value :func:`tainted_at` found outside data in."""
        return cls("command line" if label.startswith("command-line") else "outside", label)

    def severity(self, outside: str = "P0", parameter: str = "P0", unknown: str = "P2") -> str | None:
        """The severity a dangerous sink gets from this origin (None: not a finding)."""
        return {
            "outside": outside,
            "command line": "P2",
            "parameter": parameter,
            "unknown": unknown,
            "clean": None,
        }[self.kind]

    @property
    def proof(self) -> str:
        """What the flow proves, for the finding's confidence: the request's path high, a parameter medium."""
        return {"outside": "high", "parameter": "medium", "command line": "medium", "unknown": "low"}.get(self.kind, "")

    @property
    def evidence(self) -> str:
        """A phrase for the finding: "built from request.args", "check where `self.x` comes from"."""
        if self.kind == "unknown":
            return f"from {self.label}: check where it comes from" if self.label else "from a value of unknown origin"
        return f"from {self.label}" if self.label else ""
