"""Every error fluxdrive shows to a person, in one module.

Each error says what went wrong (``message``) and how to fix it (``hint``),
and carries the process exit code the CLI error boundary uses. Library code
raises these; only ``fluxdrive.cli`` turns them into a line on stderr.

    FluxdriveError                 exit 2 unless stated
    ├── UsageError                 a bad argument, flag or combination
    ├── InputError                 a path that is missing, unreadable, a
    │   │                          directory, binary or not UTF-8
    │   └── NothingToReviewError        exit 0: an empty diff (a no-op pull request)
    ├── ConfigError                a config file, key or value is invalid
    ├── AgentDefinitionError       an agent definition file is invalid
    ├── ChannelError               a peer finding fails validation
    ├── VerdictError               a verdict record fails validation
    └── ReviewError                exit 3: no verdict could be produced

Exit codes (ARCHITECTURE.md): 0 verdict below ``--fail-on``, 1 at or above
it, 2 usage or input error, 3 the review could not produce a verdict.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAIL_ON = 1
EXIT_USAGE = 2
EXIT_NO_VERDICT = 3
EXIT_INTERRUPTED = 130


class FluxdriveError(Exception):
    """Base of every user-facing error: a message, a fix hint, an exit code."""

    exit_code: int = EXIT_USAGE
    label: str = "error"  # how the CLI introduces it on stderr

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        """The message and hint folded into a single line for stderr (each part at most MAX_PART characters:
        a 1 MB path quoted back whole is no help)."""
        text = _bounded(self.message)
        if self.hint:
            text = f"{text} (hint: {_bounded(self.hint)})"
        return text


MAX_PART = 500


def _bounded(text: str) -> str:
    folded = " ".join(text.split())
    return folded if len(folded) <= MAX_PART else f"{folded[: MAX_PART - 20]}... ({len(folded):,} characters)"


class UsageError(FluxdriveError):
    """A command was called with a bad argument, flag or combination."""


class InputError(FluxdriveError):
    """A path the user gave cannot be used as input."""


class NothingToReviewError(InputError):
    """The input is empty - a diff with no changes: not a failure (CI runs reviews on no-op pull requests)."""

    exit_code = EXIT_OK
    label = "nothing to review"


class _LocatedError(FluxdriveError):
    """An error in one file (or variable) at one key: ``where: key 'k': problem``."""

    noun = "key"

    def __init__(self, *, where: str, name: str | None, problem: str, hint: str | None = None) -> None:
        located = f"{where}: {self.noun} '{name}'" if name else where
        super().__init__(f"{located}: {problem}", hint=hint)
        self.problem = problem


class ConfigError(_LocatedError):
    """A configuration file, key or value is invalid."""

    def __init__(self, *, source: str, key: str | None, problem: str, hint: str | None = None) -> None:
        super().__init__(where=source, name=key, problem=problem, hint=hint)
        self.source = source
        self.key = key


class AgentDefinitionError(_LocatedError):
    """An agent definition file is missing a field or has a bad value."""

    noun = "field"

    def __init__(self, *, path: str, field: str | None, problem: str, hint: str | None = None) -> None:
        super().__init__(where=path, name=field, problem=problem, hint=hint)
        self.path = path
        self.field = field


class ChannelError(FluxdriveError):
    """A peer finding failed validation and was not appended."""


class VerdictError(FluxdriveError):
    """A verdict record failed validation and was not written."""


class ReviewError(FluxdriveError):
    """The review could not produce a verdict at all."""

    exit_code = EXIT_NO_VERDICT
