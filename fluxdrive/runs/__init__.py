"""What reviews leave behind and later commands read: the history database, baselines, and the typed
reader of a run directory."""
