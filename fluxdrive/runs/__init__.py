"""What reviews leave behind and later commands read: the history database, baselines, and the typed
reader of a run directory (:class:`RunDirectory`, the one place a run's files are parsed)."""

from fluxdrive.runs.directory import RunDirectory

__all__ = ["RunDirectory"]
