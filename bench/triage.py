"""Benchmark domain detection on a synthetic 20,000-file repository.

Builds a web-API-shaped Python monorepo (manifests, api/ and handlers/
directories, 20,000 source files across 400 packages), then times a cold
detection (no cache; writes the cache) and the fresh-cache check that every
later triage pays.

Budgets (ARCHITECTURE.md): cold <= 2 s; fresh-cache check <= 100 ms.
Run: ``make bench`` or ``.venv/bin/python bench/triage.py``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from fluxdrive.config import Config
from fluxdrive.triage.domains import detect_cached

FILES = 20_000
BUDGET_COLD = 2.0
BUDGET_FRESH = 0.100
SOURCE = '''"""Handler module {n}."""

from fastapi import APIRouter, Request

router = APIRouter()


@router.get("/items/{{item_id}}")
async def read_item(item_id: int, request: Request) -> dict:
    """Return one item; the middleware checks authentication first."""
    return {{"id": item_id, "endpoint": "items", "handler": {n}}}
'''


def build(root: Path) -> None:
    (root / "pyproject.toml").write_text(
        '[project]\nname = "shop-api"\ndependencies = ["fastapi", "uvicorn", "sqlalchemy"]\n'
    )
    (root / "requirements.txt").write_text("fastapi\nuvicorn\n")
    (root / "openapi.yaml").write_text("openapi: 3.1.0\n")
    per_package = 50
    for index in range(FILES // per_package):
        top = ["api", "handlers", "services", "models"][index % 4]
        package = root / top / f"pkg{index:03d}"
        package.mkdir(parents=True)
        for number in range(per_package):
            (package / f"module{number:02d}.py").write_text(SOURCE.format(n=index * per_package + number))


def main() -> int:
    config = Config().domains
    with tempfile.TemporaryDirectory(prefix="fluxdrive-triage-") as tmp:
        root = Path(tmp)
        build(root)
        files = sum(1 for _ in root.rglob("*.py"))
        started = time.perf_counter()
        cold = detect_cached(root, config, use_cache=False)
        cold_s = time.perf_counter() - started
        fresh_times = []
        for _ in range(20):
            started = time.perf_counter()
            fresh = detect_cached(root, config)
            fresh_times.append(time.perf_counter() - started)
        assert fresh.source == "cache", fresh.source
        fresh_s = statistics.median(fresh_times)
        primary = cold.primary.profile if cold.primary else "none"
        print(
            f"repository: {files:,} source files; detected {[d.profile for d in cold.detected]} (primary {primary}), sampled {cold.sampled_files} files"
        )
        print(
            f"cold detection:      {cold_s * 1000:7.1f} ms  budget {BUDGET_COLD * 1000:.0f} ms -> ratio {cold_s / BUDGET_COLD:.2f}"
        )
        print(
            f"fresh-cache check:   {fresh_s * 1000:7.1f} ms (median of 20)  budget {BUDGET_FRESH * 1000:.0f} ms -> ratio {fresh_s / BUDGET_FRESH:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
