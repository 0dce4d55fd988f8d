"""Domain detection (PROTOCOL.md section 8): what kind of project this is.

**Deviation from the spec, documented.** Section 8 scores a signal category as
the share of its signals that matched (matched / signals defined) and a
domain as the weighted mean of those shares. That dilutes with the length of
the lists: a FastAPI service with ``app/api/``, fastapi in its manifest and
``APIRouter`` scored 0.09 for web-api, and on a labelled corpus of 55 real
projects (``tests/fixtures/domains/``, ``bench/domains.py``) the primary
domain was right for 9. The reference deprecated that formula itself
(2026-03-24) for model-based classification; offline, we keep the spec's
signals and weigh them as evidence instead:

- every signal has a weight in ``data/domains/index.yaml`` (roughly: how
  likely a project showing it belongs to the domain); a domain's confidence
  is ``1 - prod(1 - weight)`` over what matched, so an unmatched signal never
  lowers it and long lists do not dilute;
- a weight of 0.9 or more is *decisive*: one framework dependency,
  ``project.godot``, ``dbt_project.yml``, ``platformio.ini``, a Tauri config,
  an Android manifest or ``.claude-plugin/plugin.json`` detects its domain;
- signals every project has (``src/``, ``*.md``, ``pyproject.toml``) weigh
  about nothing, and the domains describing a project's form rather than its
  subject (``tier: generic``: cli-tool, library-sdk) give way to a specific
  one: the primary is the detected domain with decisive evidence, then the
  specific one, then the most confident;
- directory signals match whole path components (``ui`` never matches
  ``benchsuite``); manifests are read in the root and in sub-projects two
  levels down (``backend/pyproject.toml``, ``src-tauri/Cargo.toml``,
  ``app/build.gradle.kts``), development dependencies and imports seen in the
  sampled sources counting 0.7 of a runtime dependency;
- a few *facts* are derived from the manifests: the project declares a command
  (``entry_point``), publishes a package and declares none
  (``library_package``), or is itself a framework another domain lists
  (``framework_package``: flask's own repository is a library, not a web API).

Examples, tests, docs, fixtures, scripts, tools and dot-directories are not
the product: their names count as directory signals, their contents are not
read (``.claude-plugin/`` excepted). Transitive dependencies (``# via`` other
packages in a compiled requirements file, ``// indirect`` in go.mod) are not
the project's choice and are left out. Everything is bounded so a 20,000-file
repository costs well under two seconds: directories three levels deep,
files four, at most ``WALK_BUDGET`` entries, ``MAX_MANIFESTS`` manifests and
``keyword_sample_files`` sampled sources.

The result is cached in ``PROJECT_ROOT/.fluxdrive/domains.yaml``. It stays
fresh while the structural hash (manifests and framework indicator files) is
unchanged; a cache without a hash falls back to git (commits since
``detected_at`` touching structural files) and then to file times. With
``override: true`` the cache is the user's decision and is never recomputed.
"""

from __future__ import annotations

import configparser
import fnmatch
import functools
import hashlib
import itertools
import os
import re
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

import fluxdrive.core.git as _git
from fluxdrive.config.model import DomainsConfig
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.clock import parse_timestamp, utc_timestamp
from fluxdrive.core.confine import OutsideRootError, read_confined
from fluxdrive.core.project import cache_file
from fluxdrive.core.structured import load_json, load_yaml
from fluxdrive.core.walk import SKIPPED_DIRS
from fluxdrive.errors import FluxdriveError
from fluxdrive.triage.profile import CODE_LANGUAGES, MANIFEST_LANGUAGES, language_of
from fluxdrive.workspace import Target

CATEGORIES = ("directories", "files", "frameworks", "keywords", "facts")
# The spec's category weights; the config's domains.weight_* scale a category relative to these.
SPEC_WEIGHTS = {"directories": 0.3, "files": 0.2, "frameworks": 0.3, "keywords": 0.2}
DEFAULT_WEIGHTS = {"directories": 0.15, "files": 0.3, "frameworks": 0.6, "keywords": 0.03, "facts": 0.3}
DECISIVE = 0.9
SECONDARY_FACTOR = 0.7  # a development-only dependency, or an import seen in a sampled source
KEYWORD_CAP = 0.3
GENERIC_EXTRA_CONFIDENCE = 0.75
CACHE_FILE = Path(".fluxdrive") / "domains.yaml"
CACHE_VERSION = 1
# The one skip policy every walk shares (.fluxdrive, our own config and agents, included: it says nothing
# about the project's domain), widened to vendored code and Rust/Maven build output (``target``), which
# would speak for someone else's domain; the review itself still lists those files.
SKIP_DIRS = SKIPPED_DIRS | {"target", "vendor"}
# Directories that show, exercise or help build the product without being it: named, never read.
NOT_PRODUCT = {
    "examples", "example", "samples", "sample", "demo", "demos", "test", "tests", "testdata", "fixtures", "docs",
    "doc", "benchmarks", "bench", "e2e", "__tests__", "spec", "scripts", "tools",
}  # fmt: skip
# Dot-directories hold tool configuration, not the product; a Claude Code plugin's manifest is the exception.
DOT_DIRS = {".claude-plugin"}
DIR_DEPTH = 3
FILE_DEPTH = 4
MANIFEST_DEPTH = 3
WALK_BUDGET = 20_000
MAX_MANIFESTS = 60
MANIFEST_BYTES = 1_000_000
SAMPLE_BYTES = 65_536
MANIFEST_NAMES = {
    "package.json", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "Cargo.toml", "go.mod", "Gemfile",
    "composer.json", "pom.xml", "build.gradle", "build.gradle.kts", "libs.versions.toml", "pubspec.yaml",
    "platformio.ini", "CMakeLists.txt",
}  # fmt: skip
_DEV_REQUIREMENTS = re.compile(r"(?:^|[-_.])(?:dev|develop|test|tests|testing|lint|docs?|typing|ci)(?:[-_.]|$)")
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_SETUP_REQUIREMENT = re.compile(r"""["']([A-Za-z][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~]=?|["'])""")
_SETUP_LIST = re.compile(r"\b(\w*(?:require|requires|requirements|deps|dependencies))\s*=\s*[\[{(]", re.I)
_GRADLE_COORDINATE = re.compile(r"""["']([A-Za-z][\w.-]*:[\w.-]+)(?::[^"']*)?["']""")
_GRADLE_PLUGIN = re.compile(r"""\bid\s*\(?\s*["']([\w.-]+)["']""")
_GRADLE_ALIAS = re.compile(r"\balias\s*\(\s*libs\.plugins\.([\w.]+)\s*\)")
_CATALOG_ENTRY = re.compile(r"""\b(?:module|id|group)\s*=\s*["']([\w.:-]+)["']""")
_POM_ID = re.compile(r"<(?:artifactId|groupId)>\s*([\w.-]+)\s*</")
_CMAKE_PACKAGE = re.compile(r"\b(?:find_package|fetchcontent_declare|pkg_check_modules)\s*\(\s*([\w-]+)", re.I)
_PLATFORMIO = re.compile(r"^\s*(framework|platform)\s*=\s*([\w, -]+)", re.M)
_PY_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([a-z_][\w]*)[\w.]*[ \t]+import|import[ \t]+([a-z_][\w.]*))", re.M)
_JS_IMPORT = re.compile(r"""(?:\bfrom\s+|\brequire\(\s*|\bimport\s+)["']([@\w][\w./@-]*)["']""")
_C_INCLUDE = re.compile(r"""^[ \t]*#[ \t]*include[ \t]*[<"]([\w./-]+)[>"]""", re.M)
_DART_IMPORT = re.compile(r"""^import\s+["']package:(\w+)/""", re.M)


@dataclass(frozen=True, slots=True)
class DomainSignals:
    """One domain's detection rules: signal lists, their weights, threshold and tier."""

    name: str
    min_confidence: float
    signals: dict[str, tuple[str, ...]]
    weights: dict[str, dict[str, float]] = field(default_factory=dict)
    tier: str = "specific"

    def weight(self, category: str, signal: str) -> float:
        """The signal's weight (the category default when index.yaml gives none)."""
        return self.weights.get(category, {}).get(signal, DEFAULT_WEIGHTS.get(category, 0.0))

    @property
    def generic(self) -> bool:
        return self.tier == "generic"


@dataclass
class DomainScore:
    """How one domain scored: confidence, per-category evidence, what matched."""

    profile: str
    confidence: float
    detected: bool = False
    primary: bool = False
    scores: dict[str, float] = field(default_factory=dict)
    matched: dict[str, list[str]] = field(default_factory=dict)
    decisive: bool = False


@dataclass
class Detection:
    """Every domain's score, detected ones first (primary, then by confidence), and how it was obtained."""

    domains: list[DomainScore]
    source: str  # "detected" | "cache" | "override"
    seconds: float = 0.0
    sampled_files: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def detected(self) -> list[DomainScore]:
        return [d for d in self.domains if d.detected]

    @property
    def primary(self) -> DomainScore | None:
        return next((d for d in self.domains if d.primary), None)


def _entries(raw: Any, category: str) -> list[tuple[str, float | None]]:
    """``[signal, {signal: weight}, ...]`` from index.yaml as (signal, weight or None)."""
    out: list[tuple[str, float | None]] = []
    for item in raw or ():
        pairs = item.items() if isinstance(item, dict) else [(item, None)]
        for signal, weight in pairs:
            text = str(signal) if category == "files" else str(signal).lower()
            out.append((text, None if weight is None else float(weight)))
    return out


@functools.lru_cache(maxsize=1)
def _index_data() -> dict[str, Any]:
    text = (resources.files("fluxdrive") / "data" / "domains" / "index.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


@functools.lru_cache(maxsize=1)
def load_index() -> dict[str, DomainSignals]:
    """``data/domains/index.yaml`` as DomainSignals by name."""
    data = _index_data()
    defaults = {**DEFAULT_WEIGHTS, **{k: float(v) for k, v in (data.get("default_weights") or {}).items()}}
    out = {}
    for name, spec in sorted(data["domains"].items()):
        signals: dict[str, tuple[str, ...]] = {}
        weights: dict[str, dict[str, float]] = {}
        for category in CATEGORIES:
            entries = _entries(spec.get(category), category)
            if entries:
                signals[category] = tuple(s for s, _ in entries)
                weights[category] = {s: defaults[category] if w is None else w for s, w in entries}
        out[name] = DomainSignals(
            name, float(spec.get("min_confidence", 0.5)), signals, weights, str(spec.get("tier", "specific"))
        )
    return out


def _setting(name: str, default: float) -> float:
    return float(_index_data().get(name, default))


# --------------------------------------------------------------------------
# what the project shows


@dataclass
class Observations:
    """What the project shows: directories, files, dependencies, facts and sampled text.

    ``dependencies`` are runtime dependencies; ``secondary`` holds the weaker
    ones (development-only dependencies and imports seen in sampled sources).
    """

    directories: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)
    secondary: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    manifests: list[str] = field(default_factory=list)
    own: list[str] = field(default_factory=list)


@dataclass
class Manifest:
    """What one manifest declares."""

    path: str
    name: str | None = None
    runtime: set[str] = field(default_factory=set)
    dev: set[str] = field(default_factory=set)
    entry_point: bool = False
    package: bool = False  # publishes a package (a library unless it also declares a command)


def _listdir(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError:
        return []


def _walk(root: Path, budget: int = WALK_BUDGET) -> tuple[list[str], list[str]]:
    """Directories (up to DIR_DEPTH) and files (up to FILE_DEPTH), breadth-first, relative, bounded."""
    directories: list[str] = []
    files: list[str] = []
    queue: list[tuple[Path, str, int]] = [(root, "", 0)]
    seen = 0
    while queue:
        path, relative, depth = queue.pop(0)
        for entry in _listdir(path):
            seen += 1
            if seen > budget:
                return directories, files
            child = f"{relative}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                if entry.name in SKIP_DIRS or (entry.name.startswith(".") and entry.name not in DOT_DIRS):
                    continue
                if depth + 1 <= DIR_DEPTH:
                    directories.append(child)
                if depth + 1 < FILE_DEPTH and entry.name.lower() not in NOT_PRODUCT:
                    queue.append((Path(entry.path), child + "/", depth + 1))
            elif entry.is_file(follow_symlinks=False):
                files.append(child)
    return directories, files


def _depth(relative: str) -> int:
    return relative.count("/") + 1


def _clean(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def _requirement(text: str) -> str | None:
    match = _REQUIREMENT_NAME.match(text)
    return _clean(match.group(1)) if match else None


def _read(root: Path, relative: str) -> str | None:
    try:
        data = read_confined(root / relative, root, "manifest", limit=MANIFEST_BYTES)
    except (OSError, FluxdriveError):  # linked out of the project, a FIFO, too big: no signal
        return None
    return data.decode("utf-8", errors="replace")


def _package_json(text: str, manifest: Manifest) -> None:
    data = load_json(text, "package.json")
    if not isinstance(data, dict):
        return
    manifest.name = str(data["name"]) if isinstance(data.get("name"), str) else None
    for key in ("dependencies", "peerDependencies", "optionalDependencies"):
        manifest.runtime |= {_clean(k) for k in (data.get(key) or {})}
    manifest.dev |= {_clean(k) for k in (data.get("devDependencies") or {})}
    manifest.entry_point = bool(data.get("bin"))
    manifest.package = not data.get("private") and any(k in data for k in ("main", "exports", "module", "types"))


def _pyproject(text: str, manifest: Manifest) -> None:
    data = tomllib.loads(text)
    project = data.get("project") or {}
    poetry = (data.get("tool") or {}).get("poetry") or {}
    manifest.name = project.get("name") or poetry.get("name")
    names = [_requirement(d) for d in project.get("dependencies") or []]
    for extra in (project.get("optional-dependencies") or {}).values():
        names += [_requirement(d) for d in extra]
    names += [_clean(k) for k in poetry.get("dependencies") or {} if k.lower() != "python"]
    manifest.runtime |= {n for n in names if n}
    dev: list[str | None] = []
    for group in (data.get("dependency-groups") or {}).values():
        dev += [_requirement(d) for d in group if isinstance(d, str)]
    for group in (poetry.get("group") or {}).values():
        dev += [_clean(k) for k in (group.get("dependencies") or {})]
    dev += [_clean(k) for k in poetry.get("dev-dependencies") or {}]
    dev += [_requirement(d) for d in ((data.get("tool") or {}).get("uv") or {}).get("dev-dependencies") or []]
    manifest.dev |= {n for n in dev if n}
    manifest.entry_point = bool(project.get("scripts") or project.get("gui-scripts") or poetry.get("scripts"))
    manifest.package = bool(manifest.name) and "build-system" in data


def _bracketed(text: str, start: int) -> str:
    """The balanced ``[...]`` / ``{...}`` / ``(...)`` literal opening at ``start`` (to the end if unbalanced)."""
    depth = 0
    for position in range(start, min(len(text), start + 100_000)):
        if text[position] in "[{(":
            depth += 1
        elif text[position] in "]})":
            depth -= 1
            if depth == 0:
                return text[start : position + 1]
    return text[start:]


def _setup_py(text: str, manifest: Manifest) -> None:
    """Requirement strings in setup()'s *_require(s) arguments and in lists named like requirements/deps."""
    for match in itertools.islice(_SETUP_LIST.finditer(text), 20):
        names = {_clean(m) for m in _SETUP_REQUIREMENT.findall(_bracketed(text, match.end() - 1))}
        (manifest.dev if match.group(1).startswith("tests") else manifest.runtime).update(names)
    name = re.search(r"""\bname\s*=\s*["']([\w.-]+)["']""", text)
    manifest.name = name.group(1) if name else None
    manifest.entry_point = "console_scripts" in text or "gui_scripts" in text
    manifest.package = True


def _setup_cfg(text: str, manifest: Manifest) -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    manifest.name = parser.get("metadata", "name", fallback=None)
    lines = parser.get("options", "install_requires", fallback="").splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            lines += value.splitlines()
    manifest.runtime |= {n for n in (_requirement(line) for line in lines) if n}
    manifest.entry_point = parser.has_option("options.entry_points", "console_scripts")
    manifest.package = bool(manifest.name)


def _requirements(text: str, manifest: Manifest, dev: bool) -> None:
    """Requirement names; a compiled file's entries listed only ``# via`` other packages are transitive, left out."""
    sources: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            source = stripped.lstrip("#").strip().removeprefix("via").strip()
            if current and line[:1].isspace() and source:
                sources[current].append(source)
            continue
        current = None if stripped.startswith("-") else _requirement(stripped)
        if current:
            sources.setdefault(current, [])

    def direct(via: list[str]) -> bool:
        return not via or any(v.startswith("-r") or v.endswith((".in", ".toml", ".txt", ".cfg")) for v in via)

    (manifest.dev if dev else manifest.runtime).update(n for n, via in sources.items() if direct(via))


def _cargo(text: str, manifest: Manifest, files: set[str]) -> None:
    data = tomllib.loads(text)
    package = data.get("package") or {}
    manifest.name = package.get("name")

    def tables(node: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        for key in ("dependencies", "build-dependencies", "dev-dependencies"):
            yield key, node.get(key) or {}
        for target in (node.get("target") or {}).values():
            if isinstance(target, dict):
                yield from tables(target)

    for key, table in [*tables(data), ("dependencies", (data.get("workspace") or {}).get("dependencies") or {})]:
        (manifest.dev if key == "dev-dependencies" else manifest.runtime).update(_clean(k) for k in table)
    base = str(PurePosixPath(manifest.path).parent)
    prefix = "" if base == "." else base + "/"
    manifest.entry_point = bool(data.get("bin")) or f"{prefix}src/main.rs" in files
    manifest.package = bool(package) and (bool(data.get("lib")) or f"{prefix}src/lib.rs" in files)


def _go_mod(text: str, manifest: Manifest, files: set[str], directories: set[str]) -> None:
    module = re.search(r"^module\s+(\S+)", text, re.M)
    manifest.name = module.group(1).rstrip("/").split("/")[-1] if module else None
    for line in re.findall(r"^\s*(?:require\s+)?([\w.-]+\.[\w./-]+\s+v\S+.*)$", text, re.M):
        if "// indirect" not in line:  # indirect requirements are transitive: not the project's choice
            manifest.runtime.add(line.split()[0].lower())
    base = str(PurePosixPath(manifest.path).parent)
    prefix = "" if base == "." else base + "/"
    manifest.entry_point = f"{prefix}main.go" in files or f"{prefix}cmd" in directories
    manifest.package = not manifest.entry_point


def _pubspec(text: str, manifest: Manifest) -> None:
    data = load_yaml(text, "pubspec.yaml")
    if not isinstance(data, dict):
        return
    manifest.name = str(data.get("name") or "") or None
    manifest.runtime |= {_clean(k) for k in data.get("dependencies") or {}}
    manifest.dev |= {_clean(k) for k in data.get("dev_dependencies") or {}}


def _gradle(text: str, manifest: Manifest) -> None:
    found = {*_GRADLE_COORDINATE.findall(text), *_GRADLE_PLUGIN.findall(text), *_CATALOG_ENTRY.findall(text)}
    found |= {alias.replace(".", "-") for alias in _GRADLE_ALIAS.findall(text)}
    manifest.runtime |= {f.lower() for f in found}


def _platformio(text: str, manifest: Manifest) -> None:
    for _, values in _PLATFORMIO.findall(text):
        manifest.runtime |= {v.strip().lower() for v in values.split(",") if v.strip()}
    manifest.entry_point = False


def _pipfile(text: str, manifest: Manifest) -> None:
    data = tomllib.loads(text)
    manifest.runtime |= {_clean(k) for k in data.get("packages") or {}}
    manifest.dev |= {_clean(k) for k in data.get("dev-packages") or {}}


def _composer(text: str, manifest: Manifest) -> None:
    data = load_json(text, "composer.json")
    if isinstance(data, dict):
        manifest.name = data.get("name")
        manifest.runtime |= {k.lower() for k in (data.get("require") or {})}
        manifest.dev |= {k.lower() for k in (data.get("require-dev") or {})}


def _gemfile(text: str, manifest: Manifest) -> None:
    manifest.runtime |= {_clean(g) for g in re.findall(r"""^\s*gem\s+["']([\w-]+)""", text, re.M)}


def _pom(text: str, manifest: Manifest) -> None:
    manifest.runtime |= {m.lower() for m in _POM_ID.findall(text)}


def _cmake(text: str, manifest: Manifest) -> None:
    manifest.runtime |= {m.lower() for m in _CMAKE_PACKAGE.findall(text)}


_PARSERS: dict[str, Callable[[str, Manifest], None]] = {
    "package.json": _package_json, "pyproject.toml": _pyproject, "setup.py": _setup_py, "setup.cfg": _setup_cfg,
    "Pipfile": _pipfile, "Gemfile": _gemfile, "composer.json": _composer, "pom.xml": _pom, "build.gradle": _gradle,
    "build.gradle.kts": _gradle, "libs.versions.toml": _gradle, "pubspec.yaml": _pubspec,
    "platformio.ini": _platformio, "CMakeLists.txt": _cmake,
}  # fmt: skip


def _parse_manifest(root: Path, relative: str, files: set[str], directories: set[str]) -> Manifest | None:
    text = _read(root, relative)
    if text is None:
        return None
    manifest = Manifest(relative)
    name = PurePosixPath(relative).name
    try:
        if name in _PARSERS:
            _PARSERS[name](text, manifest)
        elif name.startswith("requirements") and name.endswith(".txt"):
            _requirements(text, manifest, dev=bool(_DEV_REQUIREMENTS.search(name)))
        elif name == "Cargo.toml":
            _cargo(text, manifest, files)
        elif name == "go.mod":
            _go_mod(text, manifest, files, directories)
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError, configparser.Error, yaml.YAMLError):
        return manifest  # unparsable: it still names a sub-project, with no dependencies
    return manifest


def _is_manifest(relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return name in MANIFEST_NAMES or (name.startswith("requirements") and name.endswith(".txt"))


def own_project(target: Target) -> Path | None:
    """The directory reviewed when it is a project of its own inside the repository, else None.

    A directory with its own manifest (``pyproject.toml``, ``package.json``, ``go.mod``...) below
    the project root - a monorepo's service, an app kept under ``tests/fixtures/`` - is what
    the review is about: its domains are its own, not the repository's (the quick start's
    Flask shop was triaged as the repository's TUI and CLI). A plain ``src/`` has no manifest
    and keeps the project's. Not cached: the cache is the project's.
    """
    path = target.path
    if target.kind != "directory" or path is None or target.files:
        return None
    try:
        if path.resolve() == Path(target.root).resolve() or not path.is_dir():
            return None
        names = [entry.name for entry in os.scandir(path) if entry.is_file(follow_symlinks=False)]
    except OSError:
        return None
    return path if any(_is_manifest(name) for name in names) else None


def read_manifests(root: Path, directories: list[str], files: list[str]) -> list[Manifest]:
    """Manifests in the root and two levels of sub-projects, shallowest first (bounded)."""
    candidates = sorted(
        (f for f in files if _depth(f) <= MANIFEST_DEPTH and _is_manifest(f)), key=lambda f: (_depth(f), f)
    )
    file_set, dir_set = set(files), set(directories)
    found = []
    for relative in candidates[:MAX_MANIFESTS]:
        manifest = _parse_manifest(root, relative, file_set, dir_set)
        if manifest is not None:
            found.append(manifest)
    return found


def observe_layout(root: Path) -> Observations:
    """Directories, files, manifests' dependencies and facts: a bounded walk, no source reading."""
    root = Path(root)
    directories, files = _walk(root)
    seen = Observations(directories=[d.lower() for d in directories], files=files)
    manifests = read_manifests(root, directories, files)
    seen.manifests = [m.path for m in manifests]
    anchored = _anchored(files)
    own = _own_names(manifests, anchored)
    seen.own = sorted(own)
    runtime = {d for m in manifests for d in m.runtime} - own
    dev = {d for m in manifests for d in m.dev} - own - runtime
    # Game engines keep no package manifest; their project file names the engine.
    if any(f == "project.godot" for f in files):
        runtime.add("godot")
    if any(f.endswith(".uproject") and "/" not in f for f in files):
        runtime.add("unreal")
    seen.dependencies = sorted(runtime)
    seen.secondary = sorted(dev)
    seen.facts = _facts(manifests, own, anchored)
    return seen


def _own_names(manifests: list[Manifest], anchored: bool = False) -> set[str]:
    """The names the project's top-level manifests publish under: its own imports are no evidence."""
    names: set[str] = set()
    for manifest in _top_level(manifests, anchored):
        if manifest.name:
            name = _clean(manifest.name.split("/")[-1])
            names |= {name, name.replace("-", "")}
    return names


def _top_level(manifests: list[Manifest], anchored: bool = False) -> list[Manifest]:
    """The manifests that say what the project is: the root's, else the shallowest ones.

    ``anchored``: the root holds a decisive project file (project.godot, .claude-plugin/plugin.json...), so
    the root *is* the project even without a package manifest; sub-projects then do not speak for it.
    """
    if not manifests:
        return []
    shallowest = 1 if anchored else min(_depth(m.path) for m in manifests)
    return [m for m in manifests if _depth(m.path) == shallowest]


def _anchored(files: list[str]) -> bool:
    """Whether the root holds a decisive project file (a dot-directory's manifest counts as the root's)."""
    decisive = {
        g for d in load_index().values() for g in d.signals.get("files", ()) if d.weight("files", g) >= DECISIVE
    }
    return any(
        fnmatch.fnmatchcase(f, g)
        for f in files
        if _depth(f) == 1 or (_depth(f) == 2 and f.split("/")[0] in DOT_DIRS)
        for g in decisive
    )


def _facts(manifests: list[Manifest], own: set[str], anchored: bool = False) -> list[str]:
    """What the top-level manifests declare: a command, a published package, a framework of its own."""
    facts = []
    roots = _top_level(manifests, anchored)
    if any(m.entry_point for m in roots):
        facts.append("entry_point")
    elif any(m.package for m in roots):
        facts.append("library_package")
    frameworks = {
        s
        for d in load_index().values()
        if not d.generic
        for s in d.signals.get("frameworks", ())
        if d.weight("frameworks", s) >= 0.8
    }
    if own & frameworks and any(m.package for m in roots):
        facts.append("framework_package")
    return facts


# --------------------------------------------------------------------------
# sampled sources


def _source_files(directory: Path, limit: int) -> Iterator[Path]:
    """Source files under ``directory``, breadth-first and sorted, at most ``limit`` (product code only)."""
    queue = [directory]
    found = 0
    while queue and found < limit:
        current = queue.pop(0)
        for entry in _listdir(current):
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIP_DIRS and not entry.name.startswith(".") and entry.name not in NOT_PRODUCT:
                    queue.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False) and language_of(entry.name) in CODE_LANGUAGES:
                yield Path(entry.path)
                found += 1
                if found >= limit:
                    return


def _sample(root: Path, preferred: list[str], limit: int) -> list[tuple[str, str]]:
    """(file name, lowercased text) of up to ``limit`` source files, from preferred directories first."""
    chosen: list[Path] = []
    for directory in [root / d for d in preferred] + [root]:
        for path in _source_files(directory, limit - len(chosen)):
            if path not in chosen:
                chosen.append(path)
        if len(chosen) >= limit:
            break
    texts = []
    for path in chosen[:limit]:
        try:
            with path.open("rb") as handle:
                texts.append((path.name, handle.read(SAMPLE_BYTES).decode("utf-8", errors="replace").lower()))
        except OSError:
            continue
    return texts


def sample_sources(root: Path, preferred: list[str], limit: int) -> list[str]:
    """Text of up to ``limit`` source files, from preferred (matching) directories first."""
    return [text for _, text in _sample(root, preferred, limit)]


def imports_of(name: str, text: str) -> set[str]:
    """Modules a (lowercased) source file imports: Python, JS/TS, C/C++ headers, Dart packages, JVM/Swift."""
    language = language_of(name)
    found: set[str] = set()
    if language == "python":
        found |= {(m.group(1) or m.group(2)).split(".")[0] for m in _PY_IMPORT.finditer(text)}
    elif language in ("javascript", "typescript", "svelte", "vue"):
        for module in _JS_IMPORT.findall(text):
            if not module.startswith("."):
                parts = module.removeprefix("node:").split("/")
                found.add("/".join(parts[:2]) if module.startswith("@") else parts[0])
    elif language in ("c", "cpp") or name.endswith(".ino"):
        found |= {re.split(r"[/.]", m)[0] for m in _C_INCLUDE.findall(text)}
    elif language == "dart":
        found |= set(_DART_IMPORT.findall(text))
    elif language in ("kotlin", "java", "swift", "scala"):
        found |= set(re.findall(r"^import\s+(?:static\s+)?([a-z_][\w.]*)", text, re.M))
    return {_clean(f) for f in found if f}


# --------------------------------------------------------------------------
# scoring


def _dependency_matches(signal: str, dependency: str) -> bool:
    if dependency == signal:
        return True
    parts = [p for p in re.split(r"[/@.:]", dependency) if p]
    if signal in parts:
        return True
    return any(part.startswith(signal + "-") for part in parts[-1:])


def _keyword_in(word: str, text: str) -> bool:
    """``word`` as a whole word in the (lowercased) sample text.

    ``str.find`` jumps to each occurrence and only those are checked for word
    boundaries: a regex with a look-behind would walk every position of
    megabytes of samples for each of ~150 signals.
    """
    start = text.find(word)
    while start != -1:
        end = start + len(word)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(word, start + 1)
    return False


@dataclass
class _Seen:
    """Observations prepared for matching."""

    components: set[str]
    pairs: set[str]
    names: set[str]
    files: list[str]
    runtime: list[str]
    secondary: list[str]
    facts: set[str]
    text: str


def _prepare(seen: Observations) -> _Seen:
    components: set[str] = set()
    pairs: set[str] = set()
    for directory in seen.directories:
        parts = directory.lower().split("/")
        components.update(parts)
        pairs.update(f"{a}/{b}" for a, b in itertools.pairwise(parts))
    return _Seen(
        components,
        pairs,
        {PurePosixPath(f).name for f in seen.files},
        seen.files,
        seen.dependencies,
        seen.secondary,
        set(seen.facts),
        "\n".join(seen.samples),
    )


def _file_matches(pattern: str, prepared: _Seen) -> bool:
    if "/" in pattern:
        return any(fnmatch.fnmatchcase(f, pattern) or fnmatch.fnmatchcase(f, "*/" + pattern) for f in prepared.files)
    if not any(c in pattern for c in "*?["):
        return pattern in prepared.names
    return any(fnmatch.fnmatchcase(name, pattern) for name in prepared.names)


def _strength(category: str, signal: str, prepared: _Seen) -> float:
    """1.0 when the signal is seen outright, SECONDARY_FACTOR for weaker sightings, 0 when absent."""
    if category == "directories":
        found = signal in prepared.pairs if "/" in signal else signal in prepared.components
        return 1.0 if found else 0.0
    if category == "files":
        return 1.0 if _file_matches(signal, prepared) else 0.0
    if category == "frameworks":
        if any(_dependency_matches(signal, d) for d in prepared.runtime):
            return 1.0
        return SECONDARY_FACTOR if any(_dependency_matches(signal, d) for d in prepared.secondary) else 0.0
    if category == "facts":
        return 1.0 if signal in prepared.facts else 0.0
    return 1.0 if _keyword_in(signal, prepared.text) else 0.0


def _scale(config: DomainsConfig, category: str) -> float:
    spec = SPEC_WEIGHTS.get(category)
    if spec is None:
        return 1.0
    return float(getattr(config, f"weight_{category}")) / spec


def score_domains(
    seen: Observations, config: DomainsConfig, index: dict[str, DomainSignals] | None = None
) -> list[DomainScore]:
    """Confidence of every domain; detected ones flagged, the best marked primary."""
    index = index or load_index()
    prepared = _prepare(seen)
    keyword_cap = _setting("keyword_cap", KEYWORD_CAP)
    results = []
    for name, domain in index.items():
        scores: dict[str, float] = {}
        matched: dict[str, list[str]] = {}
        decisive = False
        for category, signals in domain.signals.items():
            scale = _scale(config, category)
            missing = 1.0
            for signal in signals:
                weight = min(0.99, domain.weight(category, signal) * scale)
                strength = _strength(category, signal, prepared) if weight > 0 else 0.0
                if strength:
                    missing *= 1.0 - weight * strength
                    matched.setdefault(category, []).append(signal)
                    decisive = decisive or weight * strength >= DECISIVE
            score = 1.0 - missing
            scores[category] = round(min(score, keyword_cap) if category == "keywords" else score, 4)
        remaining = 1.0
        for score in scores.values():
            remaining *= 1.0 - score
        confidence = round(1.0 - remaining, 4)
        threshold = domain.min_confidence if domain.min_confidence else config.default_min_confidence
        results.append(DomainScore(name, confidence, confidence >= threshold, False, scores, matched, decisive))
    return _rank(results, index)


def _rank(results: list[DomainScore], index: dict[str, DomainSignals]) -> list[DomainScore]:
    """Primary: decisive evidence first, then a specific domain over a generic one, then confidence."""

    def generic(d: DomainScore) -> bool:
        return index[d.profile].generic if d.profile in index else False

    results.sort(key=lambda d: (not d.detected, not d.decisive, generic(d), -d.confidence, d.profile))
    if results and results[0].detected:
        results[0].primary = True
        floor = _setting("generic_extra_confidence", GENERIC_EXTRA_CONFIDENCE)
        for other in results[1:]:
            if other.detected and generic(other) and other.confidence < floor:
                other.detected = False
        results.sort(key=lambda d: (not d.primary, not d.detected, -d.confidence, d.profile))
    return results


def detect(root: Path, config: DomainsConfig) -> Detection:
    """Detect domains from the project's layout, manifests and a sample of its sources."""
    started = time.monotonic()
    root = Path(root)
    seen = observe_layout(root)
    index = load_index()
    wanted = {
        s for dom in index.values() for s in dom.signals.get("directories", ()) if dom.weight("directories", s) >= 0.15
    }
    preferred = sorted(d for d in seen.directories if _depth(d) <= 2 and d.split("/")[-1] in wanted)
    sampled = _sample(root, preferred, config.keyword_sample_files)
    seen.samples = [text for _, text in sampled]
    own = set(seen.own) | _local_packages(seen.files)
    imported = {i for name, text in sampled for i in imports_of(name, text)} - own - set(seen.dependencies)
    seen.secondary = sorted(set(seen.secondary) | imported)
    domains = score_domains(seen, config, index)
    return Detection(domains, "detected", time.monotonic() - started, len(sampled))


def _local_packages(files: Iterable[str]) -> set[str]:
    """Top-level modules the project defines itself (``x.py``, ``x/``, ``src/x/``): importing them is no evidence."""
    out: set[str] = set()
    for relative in files:
        parts = PurePosixPath(relative).parts
        if parts[0] == "src" and len(parts) > 2:
            out.add(_clean(parts[1]))
        elif len(parts) > 1:
            out.add(_clean(parts[0]))
        else:
            out.add(_clean(PurePosixPath(parts[0]).stem))
    return out


# --------------------------------------------------------------------------
# the cache


@functools.lru_cache(maxsize=1)
def _indicator_patterns() -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    """One regex over file names and one over path tails: manifests and decisive indicator files."""
    index = load_index()
    globs = {g for d in index.values() for g in d.signals.get("files", ()) if d.weight("files", g) >= DECISIVE}
    names = sorted(
        {g for g in globs if "/" not in g} | MANIFEST_NAMES | set(MANIFEST_LANGUAGES) | {"requirements*.txt"}
    )
    tails = sorted(g for g in globs if "/" in g)
    by_name = re.compile("|".join(fnmatch.translate(g) for g in names))
    by_tail = re.compile("|".join(f"(?:.*/)?{fnmatch.translate(g)}" for g in tails)) if tails else None
    return by_name, by_tail


def structural_files(root: Path) -> list[str]:
    """Manifests (root and sub-projects) and framework indicator files present (relative paths)."""
    by_name, by_tail = _indicator_patterns()
    _, files = _walk(Path(root))
    found = []
    for relative in files:
        name = relative.rsplit("/", 1)[-1]
        if name.endswith(".md"):
            continue
        if _is_manifest(relative):
            if _depth(relative) <= MANIFEST_DEPTH:
                found.append(relative)
        elif by_name.match(name) or (by_tail is not None and by_tail.match(relative)):
            found.append(relative)
    return sorted(found)


def structural_hash(root: Path) -> str:
    """sha256 over the manifests' contents and the names of framework indicator files."""
    root = Path(root)
    digest = hashlib.sha256()
    for relative in structural_files(root):
        digest.update(f"f:{relative}\n".encode())
        if _is_manifest(relative):
            try:
                digest.update((root / relative).read_bytes())
            except OSError:
                continue
    return digest.hexdigest()


def cache_path(root: Path) -> Path:
    """``PROJECT_ROOT/.fluxdrive/domains.yaml``."""
    return Path(root) / CACHE_FILE


def _from_cache(data: dict[str, Any]) -> list[DomainScore]:
    out = [
        DomainScore(str(item["profile"]), float(item["confidence"]), True, bool(item.get("primary", False)))
        for item in data.get("domains", [])
    ]
    if out and not any(d.primary for d in out):
        out[0].primary = True
    return out


def _stale(root: Path, data: dict[str, Any]) -> bool:
    """The three staleness tiers: structural hash, then git history, then file times."""
    recorded = data.get("structural_hash")
    if recorded:
        return bool(recorded != structural_hash(root))
    since = str(data.get("detected_at") or "")
    try:
        detected = parse_timestamp(since)
    except ValueError:
        return True
    files = structural_files(root)
    changed = _git.changed_since(root, since, files)
    if changed is not None:
        return changed
    return any((root / f).stat().st_mtime > detected.timestamp() for f in files if (root / f).exists())


def write_cache(root: Path, detection: Detection, *, override: bool = False) -> Path:
    """Record the detected domains in ``.fluxdrive/domains.yaml``."""
    data = {
        "cache_version": CACHE_VERSION,
        "structural_hash": structural_hash(root),
        "detected_at": utc_timestamp(),
        "override": override,
        "domains": [
            {"profile": d.profile, "confidence": d.confidence, "primary": d.primary} for d in detection.detected
        ],
    }
    path = cache_file(root, CACHE_FILE, "the domain cache")
    atomic_write_text(
        path,
        "# fluxdrive domain detection cache; set override: true to pin these domains\n"
        + yaml.safe_dump(data, sort_keys=False),
    )
    return path


def detect_cached(root: Path, config: DomainsConfig, *, use_cache: bool = True) -> Detection:
    """Domains from a fresh cache when there is one, else detected (and cached)."""
    root = Path(root)
    path = cache_path(root)
    notes: list[str] = []
    if use_cache and path.is_file():
        started = time.monotonic()
        try:
            data = load_yaml(path.read_text(encoding="utf-8"), "the domain cache")
            if not isinstance(data, dict) or data.get("cache_version") != CACHE_VERSION:
                raise ValueError("unknown cache format")
            domains = _from_cache(data)
            if data.get("override"):
                return Detection(domains, "override", time.monotonic() - started)
            if not _stale(root, data):
                return Detection(domains, "cache", time.monotonic() - started)
            # Stale: detected again below, as a project's structure changing asks; routine, so no note (every
            # note is a warning on the console, and a cache refreshing itself is nothing the user must act on).
        except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
            notes.append(f"domain cache {path} is unreadable ({type(exc).__name__}); detected again")
    detection = detect(root, config)
    detection.notes = notes
    try:
        write_cache(root, detection)
    except OSError as exc:
        detection.notes.append(f"could not write the domain cache: {exc.strerror}")
    except OutsideRootError as exc:
        detection.notes.append(f"could not write the domain cache: {exc.message}")
    return detection


def detected_at(data: dict[str, Any]) -> datetime | None:
    """When a cache was written (None if unknown)."""
    try:
        return parse_timestamp(str(data.get("detected_at")))
    except ValueError:
        return None
