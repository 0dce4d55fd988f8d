"""What reviews leave behind and later commands read: the history database, baselines, and the typed
reader of a run directory (:class:`~fluxdrive.runs.directory.RunDirectory`, the one place a run's files are
parsed).

Nothing is imported here: triage reads the history database at a lower layer than the run-directory
reader, and importing ``fluxdrive.runs.history`` must not pull the reports in with it.
"""
