"""fluxdrive's version, from the installed distribution (a leaf: every writer that stamps it imports only this)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("fluxdrive")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"
