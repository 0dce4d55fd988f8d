"""The ``ray`` dispatch backend: each agent runs as a Ray task; its report is written here.

:class:`RayBackend` wraps every runtime of a review in a :class:`RayRuntime`.
The dispatcher calls it like any runtime, so the guard's deadlines, the
retry of a failed agent, the error stubs and "exactly one report per
launched agent" hold unchanged. Its ``run`` ships the task (the agent, its
prompt, its content file, the reviewed files - see :mod:`fluxdrive.scale.bundle`)
to a Ray task that declares its CPUs, runs the wrapped runtime there in a
scratch directory, and returns the report text, usage and notes. The driver
then writes the report through the completion contract, where the monitor
and synthesis see it as if a local agent had written it.

Failure modes, each mapped onto the protocol:

- the guard's deadline passes, or Ctrl-C: the remote task is cancelled
  (``ray.cancel(force=True)``) and the guard writes the stub;
- the task's node (or worker process) dies: the task is submitted once more -
  the dead node is gone from the cluster, so it lands on another - and a
  second death becomes the error stub, with a note;
- the runtime raises on the node: the same exception is raised here, so the
  guard records the same error a local run would.

The peer channel crosses nodes when ``channel.url`` binds the run to a Redis
stream: the binding is copied into each task's scratch directory. Without
it, a task on the driver's machine (or on a shared file system) appends to
the driver's ``peer-findings.jsonl`` directly; a task elsewhere has only its
own.

A runtime decides what it distributes (``Runtime.distribute``): by default
its agents become Ray tasks (:meth:`RayBackend.ship`); the static runtime
keeps its agents here and spreads its one shared analysis over the cluster
through :meth:`RayBackend.map`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fluxdrive.config.model import Config
from fluxdrive.contracts import output_path, write_agent_output
from fluxdrive.exchange import channel
from fluxdrive.exchange import stream as channel_stream
from fluxdrive.runtimes import AgentResult, AgentTask, Provenance, Runtime, runtime_class
from fluxdrive.scale import bundle, ray_session


def _on_node(function: Callable[..., Any], *job: Any) -> tuple[Any, str]:
    """``function(*job)`` in a Ray task, and the node it ran on."""
    return function(*job), ray_session.node_id()


STREAM_MARKER = channel_stream.MARKER  # the run's Redis binding, next to the channel file
# Exceptions that mean the node or the worker process went away, not that the agent failed.
NODE_FAILURES = (
    "NodeDiedError",
    "WorkerCrashedError",
    "LocalRayletDiedError",
    "ObjectLostError",
    "ObjectReconstructionFailedError",
    "OwnerDiedError",
)


@dataclass(frozen=True, slots=True)
class RemoteTask:
    """Everything an agent task needs on a node, picklable (no callbacks, no driver paths it must write to)."""

    runtime: str
    model: str | None
    task: AgentTask  # notify and activity cleared; output_dir and content_file are replaced on the node
    files: bundle.Bundle
    content_text: bytes | None
    content_name: str
    stream_marker: bytes | None


@dataclass(frozen=True, slots=True)
class RemoteOutcome:
    """What came back: the report (None when the runtime wrote none), the result, the runtime's notes, the node."""

    report: str | None
    result: AgentResult
    notes: tuple[str, ...]
    node: str
    shipped: bool
    local_channel: bytes = b""  # what the agent wrote to its node's channel file (Redis unreachable from there)


def run_remote(job: RemoteTask) -> RemoteOutcome:
    """The Ray task: run ``job``'s agent with a fresh runtime in a scratch directory of this node."""
    ray = ray_session.require_ray()
    scratch = Path(tempfile.mkdtemp(prefix="fluxdrive-agent-"))
    try:
        root, shipped = bundle.resolve_root(job.files, ray.get)
        output_dir = scratch / "out"
        output_dir.mkdir()
        content_file = None
        if job.content_text is not None:
            content_file = scratch / "content" / job.content_name
            content_file.parent.mkdir()
            content_file.write_bytes(job.content_text)
        channel_path = _channel_path(job, output_dir)
        content = dataclasses.replace(job.task.content, root=root, content_file=content_file)
        task = dataclasses.replace(job.task, content=content, output_dir=output_dir, channel_path=channel_path)
        runtime = runtime_class(job.runtime).create(job.model)

        async def run() -> AgentResult:
            try:
                return await runtime.run(task)
            finally:
                await runtime.aclose()

        result = asyncio.run(run())
        report = output_path(output_dir, task.agent.name)
        text = report.read_text(encoding="utf-8") if report.is_file() else None
        scratch_channel = output_dir / job.task.channel_path.name
        kept = scratch_channel.read_bytes() if channel_path == scratch_channel and scratch_channel.is_file() else b""
        return RemoteOutcome(text, result, tuple(runtime.notes()), ray_session.node_id(), shipped, kept)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _channel_path(job: RemoteTask, output_dir: Path) -> Path:
    """The Redis-bound channel when the run has one; else the driver's file if this node sees it; else local."""
    local = output_dir / job.task.channel_path.name
    if job.stream_marker is not None:
        (output_dir / STREAM_MARKER).write_bytes(job.stream_marker)
        return local
    if job.task.channel_path.parent.is_dir():
        return job.task.channel_path
    return local


class RayRuntime(Runtime):
    """Runs the wrapped runtime's agents as Ray tasks; the lifecycle and capabilities are the wrapped one's."""

    def __init__(self, inner: Runtime, backend: RayBackend, model: str | None) -> None:
        self.inner = inner
        self.backend = backend
        self.model = model
        self.name = inner.name  # type: ignore[misc]
        self.offline = inner.offline  # type: ignore[misc]
        self.needs_key = inner.needs_key  # type: ignore[misc]
        self.key_env_var = inner.key_env_var  # type: ignore[misc]
        self.remote = inner.remote  # type: ignore[misc]
        self.reads_prompt = inner.reads_prompt  # type: ignore[misc]
        self.description = inner.description  # type: ignore[misc]
        self._notes: list[str] = []
        self._nodes: set[str] = set()
        self._shipped = False

    def provenance(self, task: AgentTask) -> Provenance:
        return self.inner.provenance(task)

    def check(self, config: Config, root: Path, agent: Any = None) -> None:
        self.inner.check(config, root, agent)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def notes(self) -> list[str]:
        return [*self.inner.notes(), *dict.fromkeys(self._notes)]

    def placement(self) -> list[str]:
        if not self._nodes:
            return []
        shipped = " (the reviewed files shipped to nodes without a copy)" if self._shipped else ""
        return [f"{self.name} agents ran as Ray tasks on {len(self._nodes)} node(s){shipped}"]

    async def run(self, task: AgentTask) -> AgentResult:
        job = self.backend.job(self.inner, self.model, task)
        try:
            outcome = await self.backend.submit(job, self.inner)
        except Exception as exc:
            if type(exc).__name__ not in NODE_FAILURES:
                raise _unwrapped(exc) from None
            self._notes.append(f"{task.agent.name}: its Ray node or worker died ({type(exc).__name__}); retried once")
            try:
                outcome = await self.backend.submit(job, self.inner)
            except Exception as again:
                raise _unwrapped(again) from None
        self._nodes.add(outcome.node)
        self._notes.extend(outcome.notes)
        self._shipped = self._shipped or outcome.shipped
        channel.adopt(task.channel_path, outcome.local_channel)  # not lost with the node's scratch
        final = output_path(task.output_dir, task.agent.name)
        if outcome.report is not None:
            write_agent_output(task.output_dir, task.agent.name, outcome.report)
        return dataclasses.replace(outcome.result, output_path=final)


def _unwrapped(exc: BaseException) -> BaseException:
    """The runtime's own exception from a RayTaskError (so the stub says what a local run would say)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return cause
    text = str(exc).strip().splitlines()
    return RuntimeError(f"Ray task failed: {text[-1] if text else type(exc).__name__}")


class RayBackend:
    """The review's connection to the cluster, and how agent tasks are declared on it."""

    def __init__(self, address: str, config: Config) -> None:
        self.config = config
        self.address = address
        self._bundles: dict[tuple[str, tuple[str, ...]], bundle.Bundle] = {}

    @classmethod
    def connect(cls, address: str, config: Config) -> RayBackend:
        """Connect now (an unreachable cluster is one line and exit 2, before anything is written)."""
        ray_session.connect(address)
        return cls(address, config)

    def ship(self, runtime: Runtime, model: str | None) -> Runtime:
        """Each of ``runtime``'s agents as a Ray task."""
        return RayRuntime(runtime, self, model)

    def map(self, function: Callable[..., Any], jobs: Sequence[tuple[Any, ...]]) -> list[tuple[Any, str]]:
        """``function(*job)`` as one Ray task per job (one CPU each, retried once if its node dies); each result
        with the node it ran on, in job order."""
        ray = ray_session.connect(self.address)
        remote = ray_session.remote(_on_node, num_cpus=1, max_retries=1)
        placed: list[tuple[Any, str]] = ray.get([remote.remote(function, *job) for job in jobs])
        return placed

    def capacity(self) -> int:
        """The cluster's CPUs."""
        ray_session.connect(self.address)
        return ray_session.cluster_cpus()

    def job(self, runtime: Runtime, model: str | None, task: AgentTask) -> RemoteTask:
        """The picklable task for one agent run."""
        ray = ray_session.connect(self.address)
        content = task.content
        key = (str(content.root), content.files)
        if key not in self._bundles:
            self._bundles[key] = bundle.pack(Path(content.root), content.files, ray.put)
        content_file = content.content_file
        text = content_file.read_bytes() if content_file is not None and content_file.is_file() else None
        marker = task.output_dir / STREAM_MARKER
        return RemoteTask(
            runtime.name,
            model,
            dataclasses.replace(task, notify=None, activity=None),
            self._bundles[key],
            text,
            content_file.name if content_file is not None else "content.md",
            marker.read_bytes() if marker.is_file() else None,
        )

    async def submit(self, job: RemoteTask, runtime: Runtime) -> RemoteOutcome:
        """Run ``job`` as a Ray task and wait for it; cancellation cancels the task on its node."""
        ray = ray_session.connect(self.address)
        dispatch = self.config.dispatch
        options: dict[str, Any] = {
            "num_cpus": dispatch.remote_agent_cpus if runtime.remote else dispatch.agent_cpus,
            "max_retries": 0,  # a node's death is retried here, once, with a note
        }
        forwarded = {name: os.environ[name] for name in dispatch.forward_env if name in os.environ}
        if forwarded:
            options["runtime_env"] = {"env_vars": forwarded}
        ref = ray_session.remote(run_remote, **options).remote(job)
        try:
            outcome: RemoteOutcome = await ref
        except asyncio.CancelledError:
            ray.cancel(ref, force=True)
            raise
        return outcome
