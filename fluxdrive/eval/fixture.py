"""Evaluation fixtures: an input a reviewer runs on, and the ground truth written for it beforehand.

A fixture is a directory (``evals/README.md``) holding ``ground-truth.json``
and exactly one input: ``document.md``, a ``project/`` directory, or
``base/`` with ``change.patch`` (reviewed as a diff). The ground truth is
interflux's qualification format (``fixture_id``, ``agent_type``,
``findings[]``, ``annotator``, ``notes``; its fixtures load verbatim, their
``api-spec:GET /tasks`` locations included) plus an optional ``cwe`` per
finding and ``must_not_flag`` decoys. A fixture that does not have this shape is
refused with one line naming the file and the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fluxdrive.core.paths import read_regular
from fluxdrive.core.structured import TooDeepError, load_json
from fluxdrive.errors import InputError, UsageError
from fluxdrive.eval.locate import check

GROUND_TRUTH = "ground-truth.json"
MAX_GROUND_TRUTH_BYTES = 16 * 1024 * 1024
InputKind = Literal["document", "project", "diff"]
Severity = Literal["P0", "P1", "P2", "P3"]
_CWE = re.compile(r"^CWE-[1-9]\d{0,4}$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)


def safe_relative(path: str) -> bool:
    """Whether a path named by benchmark data or a repository stays inside a fixture: relative, no ``..``, no
    ``.git``, no backslash, no control bytes."""
    parts = path.split("/")
    return (
        bool(path)
        and not path.startswith("/")
        and "\\" not in path
        and not any(ord(ch) < 32 for ch in path)
        and all(part not in ("", ".", "..", ".git") for part in parts)
    )


def _location(value: str) -> str:
    return check(value)


class Expected(_Model):
    """One defect the reviewer should report."""

    severity: Severity
    location: str = Field(
        description="path:line, path:a-b, 'section: Heading' or document:heading (relative to the input; "
        "fluxdrive.eval.locate)"
    )
    description: str = Field(min_length=1)
    category: str = Field(min_length=1, description="kebab-case kind: sql-injection, n-plus-one, ...")
    cwe: str | None = Field(default=None, description="CWE-89 form, for security weaknesses")

    _check_location = field_validator("location")(_location)

    @field_validator("cwe")
    @classmethod
    def _check_cwe(cls, value: str | None) -> str | None:
        if value is not None and not _CWE.match(value):
            raise ValueError("expected the CWE-89 form")
        return value


class Decoy(_Model):
    """Something that looks like a defect and is not: a finding of its category there is a false positive."""

    location: str
    description: str = Field(min_length=1)
    category: str = Field(min_length=1)

    _check_location = field_validator("location")(_location)


class GroundTruth(_Model):
    """``ground-truth.json``."""

    fixture_id: str = Field(min_length=1)
    agent_type: str = Field(min_length=1, description="the lane the case exercises (fd-safety, ...) or 'any'")
    findings: list[Expected]
    must_not_flag: list[Decoy] = Field(default_factory=list)
    annotator: str = ""
    notes: str = ""


@dataclass(frozen=True, slots=True)
class Fixture:
    """A loaded fixture: where it is, what kind of input it has, and its ground truth."""

    root: Path
    kind: InputKind
    truth: GroundTruth

    @property
    def id(self) -> str:
        return self.truth.fixture_id


def ground_truth_schema() -> dict[str, Any]:
    """The JSON Schema of ground-truth.json."""
    schema = GroundTruth.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "fluxdrive eval ground-truth.json"
    return schema


def _present(path: Path, *, directory: bool) -> bool:
    """Whether the input is there; a symbolic link counts whatever it points at (even nothing), so that
    staging refuses that one case with a line instead of the whole suite failing to load."""
    return path.is_symlink() or (path.is_dir() if directory else path.is_file())


def _input_kind(root: Path) -> InputKind:
    present = [
        kind
        for kind, there in (
            ("document", _present(root / "document.md", directory=False)),
            ("project", _present(root / "project", directory=True)),
            ("diff", _present(root / "base", directory=True) and _present(root / "change.patch", directory=False)),
        )
        if there
    ]
    if len(present) != 1:
        found = ", ".join(present) or "none"
        raise UsageError(
            f"{root}: a fixture holds exactly one input (document.md, project/, or base/ + change.patch); found {found}"
        )
    return present[0]  # type: ignore[return-value]


def _first_error(path: Path, error: ValidationError) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return f"{path}: {field}: {first['msg']}"


def load_fixture(root: Path) -> Fixture:
    """The fixture in ``root`` (UsageError with one line naming the file and field when it is malformed)."""
    path = root / GROUND_TRUTH
    if not path.is_file():
        raise UsageError(f"{root}: no {GROUND_TRUTH}: not an eval fixture")
    try:  # a FIFO is refused, not waited on; too deep (RecursionError) or too many digits (ValueError): one line
        data = load_json(read_regular(path, GROUND_TRUTH, limit=MAX_GROUND_TRUTH_BYTES).decode("utf-8"), GROUND_TRUTH)
    except InputError as error:
        raise UsageError(error.message) from None
    except TooDeepError as error:
        raise UsageError(f"{path}: {error}") from None
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}: not readable JSON ({error})") from None
    except ValueError:  # UnicodeDecodeError, or an integer past Python's int-string limit (4,300 digits)
        raise UsageError(f"{path}: not readable JSON (not UTF-8, or a number with too many digits)") from None
    try:
        truth = GroundTruth.model_validate(data)
    except ValidationError as error:
        raise UsageError(_first_error(path, error)) from None
    return Fixture(root, _input_kind(root), truth)


def find_fixtures(path: Path) -> list[Fixture]:
    """One fixture (``path`` holds ground-truth.json) or every fixture directly under ``path``, by id."""
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory of eval fixtures")
    if (path / GROUND_TRUTH).is_file():
        return [load_fixture(path)]
    fixtures = [load_fixture(child) for child in sorted(path.iterdir()) if (child / GROUND_TRUTH).is_file()]
    if not fixtures:
        raise UsageError(f"{path}: no fixture here (a directory with {GROUND_TRUTH})")
    ids = [f.id for f in fixtures]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate:
        raise UsageError(f"{path}: fixture_id {duplicate!r} is used twice")
    return sorted(fixtures, key=lambda f: f.id)


SCAFFOLD_TRUTH = {
    "fixture_id": "",
    "agent_type": "fd-safety",
    "findings": [
        {
            "severity": "P1",
            "location": "app.py:1",
            "description": "What is wrong at this place, and why it matters",
            "category": "kebab-case-kind",
        }
    ],
    "must_not_flag": [
        {"location": "app.py:2", "description": "Looks wrong, is not: why", "category": "kebab-case-kind"}
    ],
    "annotator": "",
    "notes": "",
}


def scaffold(root: Path, kind: InputKind) -> list[Path]:
    """A new fixture directory with a ground truth to fill in and an empty input of ``kind``."""
    if root.exists():
        raise UsageError(f"{root}: already exists; a new fixture needs a new directory")
    root.mkdir(parents=True)
    truth = dict(SCAFFOLD_TRUTH, fixture_id=root.name)
    written = [root / GROUND_TRUTH]
    written[0].write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    if kind == "document":
        written.append(root / "document.md")
        written[-1].write_text("# Title\n\nThe document under review.\n", encoding="utf-8")
    elif kind == "project":
        (root / "project").mkdir()
        written.append(root / "project" / "app.py")
        written[-1].write_text("# the code under review\n", encoding="utf-8")
    else:
        (root / "base").mkdir()
        written.append(root / "base" / "app.py")
        written[-1].write_text("# the code before the change\n", encoding="utf-8")
        written.append(root / "change.patch")
        written[-1].write_text("", encoding="utf-8")
    return written
