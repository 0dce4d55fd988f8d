"""``fluxdrive domains``: which domains a project belongs to, and why; pin them by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fluxdrive.cli._io import out, out_json, warn
from fluxdrive.core.columns import format_columns

app = typer.Typer(help="Detect or pin project domains (game, web API, CLI, ...).", no_args_is_help=True)


@app.command("detect")
def detect(
    path: Annotated[
        Path, typer.Argument(metavar="[PATH]", help="Any path inside the project (default: current directory).")
    ] = Path("."),
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ignore and rewrite .fluxdrive/domains.yaml.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    show_all: Annotated[bool, typer.Option("--all", help="List every domain, detected or not.")] = False,
) -> None:
    """Score every domain: confidence, detected or not, and the signals that matched."""
    from fluxdrive.config import load_config
    from fluxdrive.triage.domains import detect as run_detect
    from fluxdrive.triage.domains import detect_cached

    root = _project_root(path)
    config = load_config(root).config
    detection = detect_cached(root, config.domains, use_cache=not no_cache)
    if detection.source != "detected" and (show_all or as_json):
        cached = detection
        detection = run_detect(root, config.domains)
        detection.source = f"{cached.source} (signals recomputed for display)"
        for domain in detection.domains:
            domain.detected = any(c.profile == domain.profile for c in cached.detected)
            domain.primary = any(c.profile == domain.profile and c.primary for c in cached.detected)
    for note in detection.notes:
        warn(note)
    shown = detection.domains if show_all or detection.source == "detected" else detection.detected
    if not show_all and detection.source == "detected":
        shown = [d for d in detection.domains if d.detected or d.confidence > 0]
    if as_json:
        out_json({
            "schema_version": 1, "root": str(root), "source": detection.source, "seconds": round(detection.seconds, 4),
            "domains": [
                {"profile": d.profile, "confidence": d.confidence, "detected": d.detected, "primary": d.primary,
                 "scores": d.scores, "matched": d.matched}
                for d in shown
            ],
        })  # fmt: skip
        return
    rows = []
    for d in shown:
        state = "primary" if d.primary else "detected" if d.detected else "-"
        signals = "; ".join(f"{c}: {', '.join(v)}" for c, v in d.matched.items()) or {
            "override": "(pinned by hand)",
            "cache": "(from cache)",
        }.get(detection.source, "")
        rows.append((d.profile, f"{d.confidence:.2f}", state, signals))
    out(
        format_columns(("DOMAIN", "CONFIDENCE", "STATE", "MATCHED SIGNALS"), rows, max_last=110)
        if rows
        else "No domain signals found."
    )
    out(f"source: {detection.source} ({detection.seconds * 1000:.0f} ms), project root {root}")


def _project_root(path: Path) -> Path:
    from fluxdrive.core.paths import require_directory
    from fluxdrive.core.project import find_project_root
    from fluxdrive.errors import InputError

    if not path.exists():
        raise InputError(f"path not found: {path}", hint="check the path")
    root = find_project_root(path)
    require_directory(root, "project directory")
    return root


@app.command("set")
def set_domains(
    domains: Annotated[
        list[str], typer.Argument(metavar="DOMAIN...", help="Domains to pin, primary first (e.g. web-api).")
    ],
    path: Annotated[Path, typer.Option("--path", metavar="PATH", help="Any path inside the project.")] = Path("."),
) -> None:
    """Pin the project's domains by hand; detection will not overwrite them until `domains reset`."""
    from fluxdrive.errors import UsageError
    from fluxdrive.triage.domains import Detection, DomainScore, load_index, write_cache

    root = _project_root(path)
    known = load_index()
    unknown = [d for d in domains if d not in known]
    if unknown:
        raise UsageError(f"unknown domain {unknown[0]!r}", hint=f"known domains: {', '.join(sorted(known))}")
    chosen = list(dict.fromkeys(domains))
    pinned = [DomainScore(name, 1.0, True, index == 0) for index, name in enumerate(chosen)]
    written = write_cache(root, Detection(pinned, "override"), override=True)
    out(f"pinned {', '.join(chosen)} in {written} (primary: {chosen[0]})")


@app.command("reset")
def reset_domains(
    path: Annotated[Path, typer.Option("--path", metavar="PATH", help="Any path inside the project.")] = Path("."),
) -> None:
    """Forget pinned or cached domains; the next triage detects them again."""
    from fluxdrive.triage.domains import cache_path

    cache = cache_path(_project_root(path))
    if cache.exists():
        cache.unlink()
        out(f"removed {cache}")
    else:
        out("no domain cache to remove")
