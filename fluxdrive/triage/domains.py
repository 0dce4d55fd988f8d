"""Domain detection (PROTOCOL.md section 8): what kind of project this is.

Each domain in ``data/domains/index.yaml`` defines up to four signal
categories. A category's score is the share of its signals that matched;
the domain's confidence is the weighted mean over the categories it defines
(weights from config, renormalized when a category is absent). A domain is
detected at or above its ``min_confidence``; the highest is primary.

Where signals are looked for, bounded so a 20,000-file repository costs well
under two seconds: directory names at the first two levels (substring,
case-insensitive), file globs in the root and ``src/``, ``lib/``, ``app/``,
``cmd/``, dependency names from the manifests, and keywords (whole words,
case-insensitive) in at most ``keyword_sample_files`` source files, taken
from matching directories first.

The result is cached in ``PROJECT_ROOT/.fluxdrive/domains.yaml``. It stays
fresh while the structural hash (manifests and framework indicator files) is
unchanged; a cache without a hash falls back to git (commits since
``detected_at`` touching structural files) and then to file times. With
``override: true`` the cache is the user's decision and is never recomputed.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from fluxdrive import _git
from fluxdrive._atomic import atomic_write_text
from fluxdrive._clock import parse_timestamp, utc_timestamp
from fluxdrive._structured import load_yaml
from fluxdrive.config.model import DomainsConfig
from fluxdrive.triage.profile import CODE_LANGUAGES, MANIFEST_LANGUAGES, language_of, project_facts

CATEGORIES = ("directories", "files", "frameworks", "keywords")
FILE_DIRS = ("", "src", "lib", "app", "cmd")
CACHE_FILE = Path(".fluxdrive") / "domains.yaml"
CACHE_VERSION = 1
# .fluxdrive holds our own config and agents: it says nothing about the project's domain.
SKIP_DIRS = {
    ".fluxdrive", ".git", "node_modules", ".venv", "venv", "__pycache__", "dist", "build", "target", "vendor", ".tox",
}  # fmt: skip
SAMPLE_BYTES = 65_536


@dataclass(frozen=True, slots=True)
class DomainSignals:
    """One domain's detection rules."""

    name: str
    min_confidence: float
    signals: dict[str, tuple[str, ...]]


@dataclass
class DomainScore:
    """How one domain scored: confidence, per-category shares, what matched."""

    profile: str
    confidence: float
    detected: bool = False
    primary: bool = False
    scores: dict[str, float] = field(default_factory=dict)
    matched: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Detection:
    """Every domain's score, detected ones first (by confidence), and how it was obtained."""

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


@functools.lru_cache(maxsize=1)
def load_index() -> dict[str, DomainSignals]:
    """``data/domains/index.yaml`` as DomainSignals by name."""
    text = (resources.files("fluxdrive") / "data" / "domains" / "index.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    out = {}
    for name, spec in sorted(data["domains"].items()):
        signals = {c: tuple(str(s).lower() if c != "files" else str(s) for s in spec.get(c, ())) for c in CATEGORIES}
        out[name] = DomainSignals(name, float(spec.get("min_confidence", 0.3)), {c: s for c, s in signals.items() if s})
    return out


@dataclass
class Observations:
    """What the project shows: directory names, indicator files, dependencies, sampled text."""

    directories: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)
    samples: list[str] = field(default_factory=list)


def _listdir(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError:
        return []


def observe_layout(root: Path) -> Observations:
    """Directory names (two levels), indicator files and dependencies: cheap, no deep walk."""
    seen = Observations()
    for entry in _listdir(root):
        if entry.is_dir(follow_symlinks=False) and entry.name not in SKIP_DIRS:
            seen.directories.append(entry.name.lower())
            for child in _listdir(Path(entry.path)):
                if child.is_dir(follow_symlinks=False) and child.name not in SKIP_DIRS:
                    seen.directories.append(f"{entry.name}/{child.name}".lower())
    for folder in FILE_DIRS:
        base = root / folder if folder else root
        seen.files.extend(e.name for e in _listdir(base) if e.is_file(follow_symlinks=False))
    seen.dependencies = project_facts(root).dependencies
    return seen


def _source_files(directory: Path, limit: int) -> Iterator[Path]:
    """Source files under ``directory``, breadth-first and sorted, at most ``limit``."""
    queue = [directory]
    found = 0
    while queue and found < limit:
        current = queue.pop(0)
        for entry in _listdir(current):
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                    queue.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False) and language_of(entry.name) in CODE_LANGUAGES:
                yield Path(entry.path)
                found += 1
                if found >= limit:
                    return


def sample_sources(root: Path, preferred: list[str], limit: int) -> list[str]:
    """Text of up to ``limit`` source files, from preferred (matching) directories first."""
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
                texts.append(handle.read(SAMPLE_BYTES).decode("utf-8", errors="replace").lower())
        except OSError:
            continue
    return texts


def _dependency_matches(signal: str, dependency: str) -> bool:
    if dependency == signal:
        return True
    parts = [p for p in re.split(r"[/@.]", dependency) if p]
    if signal in parts:
        return True
    return any(part.startswith(signal + "-") or part == signal for part in parts[-1:])


def _matches(category: str, signal: str, seen: Observations, keyword_text: str) -> bool:
    if category == "directories":
        return any(signal in d for d in seen.directories)
    if category == "files":
        return any(fnmatch.fnmatchcase(f, signal) for f in seen.files)
    if category == "frameworks":
        return any(_dependency_matches(signal, d) for d in seen.dependencies)
    return _keyword_in(signal.lower(), keyword_text)


def _keyword_in(word: str, text: str) -> bool:
    """``word`` as a whole word in the (lowercased) sample text.

    ``str.find`` jumps to each occurrence and only those are checked for word
    boundaries: a regex with a look-behind would walk every position of
    megabytes of samples for each of ~120 signals.
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


def score_domains(
    seen: Observations, config: DomainsConfig, index: dict[str, DomainSignals] | None = None
) -> list[DomainScore]:
    """Confidence of every domain; detected ones flagged, the best marked primary."""
    index = index or load_index()
    weights = {
        "directories": config.weight_directories,
        "files": config.weight_files,
        "frameworks": config.weight_frameworks,
        "keywords": config.weight_keywords,
    }
    keyword_text = "\n".join(seen.samples)
    results = []
    for name, domain in index.items():
        scores: dict[str, float] = {}
        matched: dict[str, list[str]] = {}
        for category, signals in domain.signals.items():
            hits = [s for s in signals if _matches(category, s, seen, keyword_text)]
            scores[category] = len(hits) / len(signals)
            if hits:
                matched[category] = hits
        total_weight = sum(weights[c] for c in scores) or 1.0
        confidence = round(sum(weights[c] * scores[c] for c in scores) / total_weight, 4)
        threshold = domain.min_confidence if domain.min_confidence else config.default_min_confidence
        results.append(DomainScore(name, confidence, confidence >= threshold, False, scores, matched))
    results.sort(key=lambda d: (not d.detected, -d.confidence, d.profile))
    if results and results[0].detected:
        results[0].primary = True
    return results


def detect(root: Path, config: DomainsConfig) -> Detection:
    """Detect domains from the project's layout, manifests and a sample of its sources."""
    started = time.monotonic()
    root = Path(root)
    seen = observe_layout(root)
    index = load_index()
    preferred = sorted(
        {
            d
            for d in seen.directories
            if any(s in d for dom in index.values() for s in dom.signals.get("directories", ()))
        }
    )
    seen.samples = sample_sources(root, preferred, config.keyword_sample_files)
    domains = score_domains(seen, config, index)
    return Detection(domains, "detected", time.monotonic() - started, len(seen.samples))


# --------------------------------------------------------------------------
# the cache


def structural_files(root: Path) -> list[str]:
    """Manifests and framework indicator files present (relative paths)."""
    index = load_index()
    globs = {g for d in index.values() for g in d.signals.get("files", ())} | set(MANIFEST_LANGUAGES)
    found: list[str] = []
    for folder in FILE_DIRS:
        base = root / folder if folder else root
        found.extend(
            f"{folder}/{entry.name}" if folder else entry.name
            for entry in _listdir(base)
            if entry.is_file(follow_symlinks=False)
            and any(fnmatch.fnmatchcase(entry.name, g) for g in globs)
            and not entry.name.endswith(".md")
        )
    return sorted(found)


def structural_hash(root: Path) -> str:
    """sha256 over the manifests' contents and the names of framework indicator files."""
    root = Path(root)
    digest = hashlib.sha256()
    for relative in structural_files(root):
        digest.update(f"f:{relative}\n".encode())
        if Path(relative).name in MANIFEST_LANGUAGES:
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
    path = cache_path(root)
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
            notes.append("domain cache is stale; detected again")
        except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
            notes.append(f"domain cache {path} is unreadable ({type(exc).__name__}); detected again")
    detection = detect(root, config)
    detection.notes = notes
    try:
        write_cache(root, detection)
    except OSError as exc:
        detection.notes.append(f"could not write the domain cache: {exc.strerror}")
    return detection


def detected_at(data: dict[str, Any]) -> datetime | None:
    """When a cache was written (None if unknown)."""
    try:
        return parse_timestamp(str(data.get("detected_at")))
    except ValueError:
        return None
