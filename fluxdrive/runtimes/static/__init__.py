"""The offline ``static`` runtime."""

from fluxdrive.runtimes.static.runtime import StaticRuntime

__all__ = ["StaticRuntime"]
