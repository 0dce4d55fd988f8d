"""Where a review happens: what the input is, the project root, the files, the output directory.

One idea per module, re-exported here so callers import ``fluxdrive.workspace``:

- :mod:`fluxdrive.workspace.target` - the input classified (file, document,
  directory, several paths, diff) and its PROJECT_ROOT (PROTOCOL.md section 1);
- :mod:`fluxdrive.core.walk` - the project's reviewable files, with the one
  skip policy every walker shares (it lives in ``core`` so the runtimes and
  triage can list files without importing the rest of this package);
- :mod:`fluxdrive.workspace.output` - OUTPUT_DIR, the runs root, the newest
  run, the input copy;
- :mod:`fluxdrive.workspace.lock` - one run per output directory (claim, lock,
  fresh directory).
"""

from __future__ import annotations

from fluxdrive.core.walk import FileList, list_files, review_files
from fluxdrive.workspace.lock import (
    LOCK_FILE,
    RUN_MARKER,
    RUNS_CONTAINER,
    BusyError,
    claim_output_dir,
    is_run_directory,
    run_lock,
)
from fluxdrive.workspace.output import (
    RUNS_DIR,
    RUNS_GITIGNORE,
    default_output_dir,
    latest_run,
    output_dir_for,
    runs_root,
    write_input_copy,
)
from fluxdrive.workspace.target import (
    DOCUMENT_SUFFIXES,
    MAX_INPUT_BYTES,
    InputKind,
    Target,
    diff_project,
    looks_like_diff,
    project_root,
    resolve_target,
)

__all__ = [
    "DOCUMENT_SUFFIXES",
    "LOCK_FILE",
    "MAX_INPUT_BYTES",
    "RUNS_CONTAINER",
    "RUNS_DIR",
    "RUNS_GITIGNORE",
    "RUN_MARKER",
    "BusyError",
    "FileList",
    "InputKind",
    "Target",
    "claim_output_dir",
    "default_output_dir",
    "diff_project",
    "is_run_directory",
    "latest_run",
    "list_files",
    "looks_like_diff",
    "output_dir_for",
    "project_root",
    "resolve_target",
    "review_files",
    "run_lock",
    "runs_root",
    "write_input_copy",
]
