"""fluxdrive: a team of specialist reviewers, one deterministic verdict."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("fluxdrive")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
