"""The ``llm`` runtime: language models with read-only tools and the peer channel (``fluxdrive[llm]``)."""

from fluxdrive.runtimes.llm.runtime import LlmRuntime

__all__ = ["LlmRuntime"]
