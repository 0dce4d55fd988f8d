"""Which calls are sinks, which of their arguments count, and what a value reaching one earns.

A sink is always judged, never skipped: the value's strongest origin
(:meth:`Value.origin`) picks the severity the sink class declares for it
(``outside``: P0 for a shell; ``parameter``: P1; ``unknown``: P2; a class
that lists no severity for an origin does not report it: a file path taken
from a parameter is what a library is for). Argument vectors get their own
reading (a ``--`` before the value, an option the value is attached to, a
shell's ``-c``), and a project function whose parameter reaches a sink
reports at the call that gives it outside data.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass

from fluxdrive.runtimes.static.flows.ir import (
    Arr,
    Call,
    Concat,
    Const,
    Expr,
    Index,
    Lambda,
    Member,
    Name,
    Obj,
    root_name,
)
from fluxdrive.runtimes.static.flows.roles import FlowView
from fluxdrive.runtimes.static.flows.spec import Argument, FlowSpec, SinkClass
from fluxdrive.runtimes.static.flows.summaries import SummarySink
from fluxdrive.runtimes.static.flows.values import HOLE, Value, join
from fluxdrive.runtimes.static.provenance import Origin
from fluxdrive.runtimes.static.redos import Ambiguity, ambiguities

SQL_TEXT = re.compile(
    r"\b(select\b[\s\S]*\bfrom|insert\s+into|update\b[\s\S]*\bset\b|delete\s+from|create\s+(table|index|view)|"
    r"drop\s+(table|index|view)|alter\s+table|pragma\s|truncate\s|replace\s+into|merge\s+into|where\s+\w+\s*(=|like|in\b)|"
    r"^\s*[\w.]+\s*(=|<>|!=|>=|<=|\blike\b|\bin\b)\s*['\"(]?\0)",  # a condition: gorm's Where("name = '" + x + "'")
    re.IGNORECASE,
)
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "cmd", "cmd.exe", "powershell", "pwsh", "powershell.exe"})
SHELL_FLAGS = frozenset({"-c", "/c", "/C", "-Command", "-command", "-lc", "-ec"})


@dataclass(frozen=True, slots=True)
class FlowHit:
    """A value reaching a sink, judged."""

    sink: SinkClass
    path: str
    line: int
    callee: str
    origin: Origin
    severity: str
    program: str = ""
    through: str = ""
    detail: str = ""  # the ambiguous part of a pattern, for ReDoS

    @property
    def title(self) -> str:
        phrase = f"from {self.origin.label}" if self.origin.label else "from a value the review cannot see"
        program = self.program or "the program"
        title = self.sink.title.format(origin=phrase, callee=self.callee, program=program, detail=self.detail)
        return f"{title} through {self.through}" if self.through else title

    @property
    def rule(self) -> str:
        return self.sink.rule

    @property
    def fix(self) -> str:
        return self.sink.fix

    @property
    def evidence_level(self) -> str:
        return self.origin.proof

    @property
    def why(self) -> str:
        if self.origin.kind == "unknown":
            source = self.origin.label or "code the review cannot see"
            return f"{self.sink.why} The value comes from {source}: check that nothing from outside reaches it."
        if self.origin.kind == "parameter":
            return f"{self.sink.why} The value is the {self.origin.label} of a public function: its callers choose it."
        return self.sink.why


def selected(exprs: tuple[Expr, ...], values: list[Value], argument: Argument) -> Iterator[tuple[Expr, Value]]:
    """The arguments a sink's declaration names."""
    if argument.position is None or argument.mode == "rest":
        start = argument.position or 0
        yield from zip(exprs[start:], values[start:], strict=False)
        return
    position = argument.position if argument.position >= 0 else len(exprs) - 1
    if 0 <= position < len(exprs) and position < len(values):
        yield exprs[position], values[position]


def counts(mode: str, expr: Expr, value: Value) -> bool:
    """Whether an argument counts for a sink's mode (text, SQL, data as it came)."""
    if isinstance(expr, Lambda) or "function" in value.tags:
        return False
    outside = any(t.kind == "outside" for t in value.taints)
    if mode in ("text", "rest"):
        return value.text is not None or outside
    if mode == "sql":  # text built with a hole that reads as SQL (query/run/get name too many other things)
        return value.text is not None and HOLE in value.text and bool(SQL_TEXT.search(value.text))
    if mode in ("object", "whole"):
        return not isinstance(expr, Obj) if mode == "whole" else not isinstance(expr, Const)
    return True


class SinkChecker:
    """Collects the sink hits of one file (hits are kept only when ``report`` is on)."""

    def __init__(self, spec: FlowSpec, path: str, *, report: bool) -> None:
        self.spec = spec
        self.path = path
        self.report = report
        self.hits: list[FlowHit] = []
        self._seen: dict[tuple[str, int, str], int] = {}  # (path, line, sink class) -> index of its hit

    # ----------------------------------------------------------------- judging
    def judge(
        self,
        sink: SinkClass,
        value: Value,
        line: int,
        callee: str,
        flow: FlowView,
        *,
        program: str = "",
        through: str = "",
        detail: str = "",
        cap: str = "",
        at: int = 0,
        path: str = "",
    ) -> None:
        """Report ``value`` at a sink of class ``sink`` with the severity its origin earns (never above ``cap``).

        ``path``/``line``: where the sink is (another file's, for a call through a summary).
        """
        self._remember(sink, value, line, callee, flow, path=path, program=program)
        if sink.safe_prefix is not None and value.text and sink.safe_prefix.match(value.text):
            return  # "/user/" + id stays on this site; "https://api.example.com/" + path keeps its host
        origin, taint = value.origin(sink.kind)
        if taint is None or not self.report:
            return
        severity = self._severity(sink, origin.kind, program)
        at = at or taint.at
        if at and (at != line or path):  # reported where the fix goes (in this file); the sink is named in the title
            callee, line, path = f"{callee} at {path + ':' if path else 'line '}{line}", at, ""
        if severity is None:
            return
        if cap and severity < cap:
            severity = cap
        hit = FlowHit(sink, path or self.path, line, callee, origin, severity, program, through, detail)
        key = (hit.path, line, sink.name)
        known = self._seen.get(key)
        if known is None:
            self._seen[key] = len(self.hits)
            self.hits.append(hit)
        elif severity < self.hits[known].severity:  # the same place reached by worse data: keep the worst
            self.hits[known] = hit

    @staticmethod
    def _severity(sink: SinkClass, origin: str, program: str) -> str | None:
        """What an origin earns at this sink; an argument vector's program can raise or rule it out."""
        level = "unknown" if origin == "command line" else origin
        dangerous = bool(program) and posixpath.basename(program) in sink.dangerous
        if sink.dangerous and level == "parameter" and not dangerous:
            return None  # a library passing its caller's value to a harmless program
        if level == "outside" and dangerous:
            return sink.severity.get("dangerous", sink.severity.get(level))
        return sink.severity.get(level)

    def _remember(
        self, sink: SinkClass, value: Value, line: int, callee: str, flow: FlowView, *, path: str, program: str
    ) -> None:
        """A parameter reaching the sink goes into the function's summary, for its callers."""
        for taint in value.taints:
            if taint.param >= 0 and taint.reaches(sink.kind):
                where = path or self.path
                flow.summary.sinks.setdefault(
                    (taint.param, sink.name, where, line),
                    SummarySink(taint.param, sink.name, callee, where, line, program),
                )

    # ------------------------------------------------------------------- calls
    def call(self, expr: Call, callee: str, args: list[Value], flow: FlowView, receiver: Value | None) -> None:
        """Check one call against every sink class, and a pattern applied to text against ReDoS."""
        self._backtracking(expr, callee, args, flow, receiver)
        module = receiver is not None and "module" in receiver.tags and (receiver.alias or "") in self.spec.modules
        method = expr.func.name if isinstance(expr.func, Member) else ""
        candidates = self.spec.sinks_by_call.get(callee, ()) + self.spec.sinks_by_method.get(method, ())
        for sink in {sink.name: sink for sink in candidates}.values():  # each class once
            arguments = self._declared(sink, expr, callee, module=module)
            if arguments is None:
                continue
            if sink.name == "argv":
                self._argv(sink, expr, callee, args, flow, arguments)
            elif sink.name == "program" and self._shell_option(expr):
                command = self.spec.sinks.get("command")
                for value in args[:2] if command is not None else []:
                    self.judge(command, value, expr.line, callee, flow)  # type: ignore[arg-type]
            else:
                for argument in arguments:
                    for arg, given in selected(expr.args, args, argument):
                        # { name: req.body.name } gives data as it came; { $where: `...${x}` } is text
                        value = _as_given(arg, flow) if argument.mode == "object" and isinstance(arg, Obj) else given
                        if counts(argument.mode, arg, value):
                            self.judge(sink, value, expr.line, callee, flow)

    def _declared(self, sink: SinkClass, expr: Call, callee: str, *, module: bool) -> tuple[Argument, ...] | None:
        """The arguments ``sink`` watches in this call, or None when the call is not one of its sinks.

        ``module``: the call is a function of a module the declarations name (``child_process.exec``
        is a shell, never the SQL method ``exec``).
        """
        arguments = sink.calls.get(callee)
        if arguments is not None and sink.when_options and not _turns_on(expr, sink.when_options):
            return None  # parseXml(text) without { noent: true } expands nothing
        if arguments is not None:
            if sink.writers and not (expr.args and root_name(expr.args[0]) in sink.writers):
                return None  # fmt.Fprintf(os.Stderr, ...) logs; fmt.Fprintf(w, ...) answers the request
            return arguments
        if module or not isinstance(expr.func, Member) or expr.func.name not in sink.methods:
            return None
        declared = sink.methods[expr.func.name]
        if declared.receivers and root_name(expr.func.obj) not in declared.receivers:
            return None
        if declared.safe_options and _has_option(expr, declared.safe_options):
            return None
        return declared.arguments

    def _shell_option(self, expr: Call) -> bool:
        """``spawn(cmd, args, { shell: true })``: the program and its arguments go through a shell."""
        for arg in expr.args[1:]:
            if isinstance(arg, Obj):
                for key, value in arg.entries:
                    if key == "shell" and not (isinstance(value, Const) and value.value in ("false", "null")):
                        return True
        return False

    def where_code(self, text: Expr, flow: FlowView) -> Value:
        """``{ $where: `this.stocks > '${threshold}'` }``: query text the database runs as JavaScript.

        Judged where the object is written, whoever later passes it to ``find``.
        """
        value = flow.eval(text)
        code = self.spec.sinks.get("code")
        if code is not None:
            self.judge(code, value, getattr(text, "line", flow.line), "$where", flow)
        return value

    def _argv(
        self,
        sink: SinkClass,
        expr: Call,
        callee: str,
        args: list[Value],
        flow: FlowView,
        arguments: tuple[Argument, ...],
    ) -> None:
        """Values placed in a program's argument vector without ``--`` before them.

        The program is the argument just before the vector (``spawn("git", [...])``,
        ``exec.CommandContext(ctx, "git", args...)``); ``git.raw([...])`` runs git.
        """
        git = (isinstance(expr.func, Member) and expr.func.name == "raw") or callee.endswith("simple-git.raw")
        for argument in arguments:
            before = (argument.position or 0) - 1
            program_expr = expr.args[before] if 0 <= before < len(expr.args) else None
            program = "git" if git else (program_expr.value if isinstance(program_expr, Const) else "")
            items = self._items(expr, args, argument, flow)
            self._vector(sink, items, expr.line, callee, program, flow)

    def _items(
        self, expr: Call, args: list[Value], argument: Argument, flow: FlowView
    ) -> list[tuple[Expr, Value | None]]:
        position = argument.position or 0
        if argument.mode == "rest":  # Go: exec.Command("git", args...) spreads a slice built before
            spread = [
                item
                for e in expr.args[position:]
                for item in (flow.arrays.get(e.id, [e]) if isinstance(e, Name) else [e])
            ]
            return [(e, None) for e in spread]
        if position >= len(expr.args):
            return []
        vector = expr.args[position]
        if isinstance(vector, Arr):
            return [(e, None) for e in vector.items]
        if isinstance(vector, Name) and vector.id in flow.arrays:
            return [(e, None) for e in flow.arrays[vector.id]]
        return [(vector, args[position] if position < len(args) else None)]

    def _vector(
        self,
        sink: SinkClass,
        items: list[tuple[Expr, Value | None]],
        line: int,
        callee: str,
        program: str,
        flow: FlowView,
    ) -> None:
        shell = posixpath.basename(program) in SHELLS
        command = self.spec.sinks.get("command")
        next_is_command = False
        for item, known in items:
            if isinstance(item, Const):
                if item.value == "--":
                    return  # everything after is an operand, never an option
                next_is_command = shell and item.value in SHELL_FLAGS
                continue
            value = known if known is not None else flow.eval_quiet(item)
            if next_is_command and command is not None:
                self.judge(command, value, line, callee, flow)
                next_is_command = False
                continue
            if isinstance(item, Concat) and item.parts and _starts_with_option(item.parts[0]):
                continue  # --opt=value: the value is attached to an option, it cannot become one
            if value.text and value.text.startswith("-") and not value.text.startswith(HOLE):
                continue
            self.judge(sink, value, line, callee, flow, program=program)

    # ------------------------------------------------------- summaries, fields
    def through(self, expr: Call, name: str, sink: SummarySink, value: Value, flow: FlowView) -> None:
        """A call giving a project function data that its parameter carries to a sink.

        Reported at the sink (where the fix goes), naming the call; a parameter of the caller goes
        into the caller's summary in turn.
        """
        declared = self.spec.sinks.get(sink.sink)
        if declared is None:
            return
        live = Value(frozenset(t for t in value.taints if t.kind in ("outside", "parameter") or t.param >= 0))
        self.judge(
            declared,
            live,
            sink.line,
            sink.callee,
            flow,
            program=sink.program,
            through=f"{name}() called at {self.path}:{expr.line}",
            path=sink.path,
        )

    def property(self, target: Member, value: Value, flow: FlowView, line: int) -> None:
        """``el.innerHTML = value``: assigning to a property that writes HTML."""
        for sink in self.spec.sinks.values():
            if target.name in sink.properties:
                self.judge(sink, value, line, f".{target.name}", flow)

    def _backtracking(self, expr: Call, callee: str, args: list[Value], flow: FlowView, receiver: Value | None) -> None:
        """``re.test(text)``, ``text.match(re)``: an ambiguous pattern applied to text that may come from outside."""
        sink = self.spec.sinks.get("redos")
        if sink is None or not isinstance(expr.func, Member) or receiver is None:
            return
        method = expr.func.name
        if method in APPLIED_BY_PATTERN and "regex" in receiver.tags and args:
            pattern, text = receiver, args[0]
        elif method in APPLIED_TO_TEXT and args and "regex" in args[0].tags:
            pattern, text = args[0], receiver
        else:
            return
        found = _ambiguity(pattern.text or "")
        if found is None:
            return
        cap = "P2" if found.kind != "exponential" else ""
        defined = int(pattern.alias[6:]) if pattern.alias and pattern.alias.startswith("regex:") else 0
        self.judge(sink, text, expr.line, callee, flow, detail=f"`{found.fragment}`", cap=cap, at=defined)


APPLIED_BY_PATTERN = frozenset({"test", "exec"})
APPLIED_TO_TEXT = frozenset({"match", "matchAll", "replace", "replaceAll", "split", "search"})


@functools.lru_cache(maxsize=4096)
def _ambiguity(literal: str) -> Ambiguity | None:
    """The worst ambiguity of a ``/pattern/flags`` literal (exponential first), or None."""
    if not literal.startswith("/") or literal.count("/") < 2:
        return None
    body, _, flags = literal[1:].rpartition("/")
    found = ambiguities(body, "javascript", flags)
    return min(found, key=lambda a: a.kind != "exponential") if found else None


def _as_given(query: Obj, flow: FlowView) -> Value:
    """The fields of a query object that hold data as it came (a value, not text built around it)."""
    given = [v for _key, v in query.entries if isinstance(v, Name | Member | Index)]
    nested = [v for _key, v in query.entries if isinstance(v, Obj)]
    values = [flow.eval_quiet(v) for v in given] + [_as_given(v, flow) for v in nested]
    return join(values) if values else Value()


def _turns_on(expr: Call, names: frozenset[str]) -> bool:
    """An options object in the call sets one of ``names`` to something other than false."""
    return any(
        isinstance(arg, Obj)
        and any(key in names and not (isinstance(v, Const) and v.value in ("false", "null")) for key, v in arg.entries)
        for arg in expr.args
    )


def _has_option(expr: Call, names: frozenset[str]) -> bool:
    return any(isinstance(arg, Obj) and any(key in names for key, _ in arg.entries) for arg in expr.args)


def _starts_with_option(part: Expr) -> bool:
    return isinstance(part, Const) and part.kind == "string" and part.value.startswith("-")
