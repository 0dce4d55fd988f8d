"""What the flow engine's collaborators read of each other, as protocols.

A :class:`~.engine.FunctionFlow` reads the project's index (functions,
summaries, the attributes classes set) and the project builds flows; a
:class:`~.sinks.SinkChecker` judges values for a flow and records what
reaches a sink in that flow's summary. Naming those views here, below all
three modules, keeps the imports one way (project -> engine -> sinks ->
roles), even for the type checker.
"""

from __future__ import annotations

from typing import Protocol

from fluxdrive.runtimes.static.flows.ir import Expr, Function, Module
from fluxdrive.runtimes.static.flows.spec import FlowSpec
from fluxdrive.runtimes.static.flows.summaries import Summary
from fluxdrive.runtimes.static.flows.values import Value
from fluxdrive.runtimes.static.flows.views import Render


class ProjectIndex(Protocol):
    """What a function's flow reads and records of its project (:class:`~.project.Project`)."""

    spec: FlowSpec
    owners: dict[str, frozenset[str]]
    functions: dict[tuple[str, str], Function]
    attributes: dict[tuple[str, str], dict[str, Value]]
    summaries: dict[tuple[str, str], Summary]
    renders: dict[tuple[str, int], Render]
    handlers: dict[str, set[str]]

    def resolve(
        self, module: Module, func: Expr, owner: str, env: dict[str, Value], receiver: str = ""
    ) -> tuple[str, str] | None:
        """The project function a call names."""
        ...


class FlowView(Protocol):
    """What a sink checker reads of the flow it judges for (:class:`~.engine.FunctionFlow`)."""

    line: int
    arrays: dict[str, list[Expr]]
    summary: Summary

    def eval(self, expr: Expr) -> Value:
        """The value of ``expr`` at this point of the function."""
        ...

    def eval_quiet(self, expr: Expr) -> Value:
        """The value of ``expr`` without judging the calls in it."""
        ...
