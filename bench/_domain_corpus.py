"""The labelled domain-detection corpus (``tests/fixtures/domains/``): load, materialize, extract.

Each project directory holds ``project.yaml`` (source repository, commit,
license, the expected ``primary`` domain, the other ``acceptable`` domains,
``holdout``), ``tree.txt`` (the repository's file paths) and ``files/``
(verbatim manifests and a few source files, truncated). ``materialize``
rebuilds a project in a directory: every tree entry becomes an empty file,
then the stored files are written over them. Detection sees the layout and
manifests as they are in the real repository and a sample of its sources.

``extract`` builds ``tree.txt`` and ``files/`` from a git directory (a bare
mirror is enough); the labels in ``project.yaml`` are written by hand first:

    .venv/bin/python bench/_domain_corpus.py extract GIT_DIR SLUG
"""

from __future__ import annotations

import fnmatch
import hashlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "domains"
DOMAINS = (
    "game-simulation", "ml-pipeline", "web-api", "cli-tool", "mobile-app", "embedded-systems", "library-sdk",
    "data-pipeline", "claude-code-plugin", "tui-app", "desktop-tauri",
)  # fmt: skip

# Extraction limits (see tests/fixtures/domains/README.md).
TREE_LINES = 3_000
TREE_SKIP = {"node_modules", "vendor", ".yarn", "__pycache__", "Pods", "bower_components", ".git"}
MANIFEST_DEPTH = 4
MANIFEST_COUNT = 80
MANIFEST_BYTES = 256_000
SAMPLE_COUNT = 8  # half the shallowest source files, half a uniform (hash-ordered) pick of the rest
SAMPLE_BYTES = 16_384
# Manifests and configuration files that say what a project is built with, whatever the detector.
MANIFEST_GLOBS = (
    "package.json", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "requirements*.txt", "environment.yml",
    "Cargo.toml", "go.mod", "Gemfile", "*.gemspec", "composer.json", "pom.xml", "build.gradle", "build.gradle.kts",
    "settings.gradle", "settings.gradle.kts", "libs.versions.toml", "pubspec.yaml", "Package.swift", "Podfile",
    "app.json", "app.config.ts", "app.config.js", "eas.json", "AndroidManifest.xml", "Info.plist",
    "platformio.ini", "prj.conf", "west.yml", "CMakeLists.txt", "Kconfig", "library.properties", "sdkconfig.defaults",
    "idf_component.yml", "dbt_project.yml", "packages.yml", "profiles.yml", "dagster.yaml", "workspace.yaml",
    "dagster_cloud.yaml", "prefect.yaml", "airflow.cfg", "dvc.yaml", "MLproject", "tauri.conf.json",
    "tauri.conf.json5", "Tauri.toml", "wails.json", "forge.config.*", "electron-builder.*", "plugin.json",
    "marketplace.json", "hooks.json", ".mcp.json", "project.godot", "*.uproject", "ProjectVersion.txt",
    "Makefile", "mkdocs.yml",
)  # fmt: skip
CODE_SUFFIXES = {
    ".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".rb", ".php", ".c", ".h",
    ".cc", ".cpp", ".hpp", ".cs", ".swift", ".scala", ".lua", ".sh", ".sql", ".gd", ".dart", ".svelte", ".vue",
    ".ino",
}  # fmt: skip


@dataclass(frozen=True)
class CorpusProject:
    """One labelled real project."""

    slug: str
    repo: str
    commit: str
    license: str
    primary: str
    acceptable: tuple[str, ...]
    holdout: bool
    reason: str
    directory: Path

    def paths(self) -> list[str]:
        """The stored tree: relative file paths."""
        tree = self.directory / "tree.txt"
        if not tree.is_file():
            return []
        lines = tree.read_text(encoding="utf-8").splitlines()
        return [line for line in lines if line and not line.startswith("#")]

    def stored_files(self) -> list[Path]:
        """The verbatim copies under ``files/``."""
        base = self.directory / "files"
        return sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else []


def load_projects(corpus: Path = CORPUS) -> list[CorpusProject]:
    """Every project of the corpus, by slug."""
    projects = []
    for meta in sorted(corpus.glob("*/project.yaml")):
        data = yaml.safe_load(meta.read_text(encoding="utf-8"))
        projects.append(
            CorpusProject(
                slug=meta.parent.name,
                repo=str(data["repo"]),
                commit=str(data["commit"]),
                license=str(data["license"]),
                primary=str(data["primary"]),
                acceptable=tuple(str(a) for a in data.get("acceptable") or ()),
                holdout=bool(data.get("holdout", False)),
                reason=str(data.get("reason", "")),
                directory=meta.parent,
            )
        )
    return projects


def materialize(project: CorpusProject, destination: Path) -> Path:
    """Rebuild the project under ``destination``: tree entries as empty files, stored files over them."""
    root = Path(destination)
    root.mkdir(parents=True, exist_ok=True)
    made: set[Path] = set()
    for relative in project.paths():
        path = root / relative
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.touch()
    base = project.directory / "files"
    for stored in project.stored_files():
        path = root / stored.relative_to(base)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(stored.read_bytes())
    return root


# --------------------------------------------------------------------------
# extraction from a git directory


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(git_dir), *args], capture_output=True, check=True).stdout


def _listing(git_dir: Path, commit: str) -> dict[str, int]:
    """Path -> size of every blob at ``commit``, vendored directories left out."""
    out: dict[str, int] = {}
    for line in _git(git_dir, "ls-tree", "-r", "-l", "-z", commit).split(b"\0"):
        if not line:
            continue
        meta, _, name = line.decode("utf-8", errors="replace").partition("\t")
        kind, size = meta.split()[1], meta.split()[3]
        parts = PurePosixPath(name).parts
        if kind != "blob" or any(p in TREE_SKIP for p in parts[:-1]):
            continue
        out[name] = int(size) if size.isdigit() else 0
    return out


def _shallow_first(paths: list[str]) -> list[str]:
    """By depth, then by a hash of the path (deterministic, not alphabetical)."""
    return sorted(paths, key=lambda p: (p.count("/"), hashlib.sha1(p.encode()).hexdigest()))


def extract(git_dir: Path, slug: str, corpus: Path = CORPUS) -> str:
    """Write ``tree.txt`` and ``files/`` for ``slug`` from ``git_dir`` at the commit in its project.yaml."""
    directory = corpus / slug
    meta = yaml.safe_load((directory / "project.yaml").read_text(encoding="utf-8"))
    commit = str(meta["commit"])
    listing = _listing(git_dir, commit)
    kept = sorted(_shallow_first(list(listing))[:TREE_LINES])
    header = [
        f"# {meta['repo']}@{commit}: {len(kept)} of {len(listing)} paths",
        f"# (shallowest first; {', '.join(sorted(TREE_SKIP))} left out)",
    ]
    (directory / "tree.txt").write_text("\n".join(header + kept) + "\n", encoding="utf-8")
    files = directory / "files"
    if files.exists():
        for old in sorted(files.rglob("*"), reverse=True):
            old.unlink() if old.is_file() else old.rmdir()
    manifests = [
        p
        for p in _shallow_first(kept)
        if p.count("/") < MANIFEST_DEPTH
        and listing[p] <= MANIFEST_BYTES
        and any(fnmatch.fnmatchcase(PurePosixPath(p).name, g) for g in MANIFEST_GLOBS)
    ][:MANIFEST_COUNT]
    code = [
        p
        for p in _shallow_first(kept)
        if PurePosixPath(p).suffix.lower() in CODE_SUFFIXES
        and p not in manifests
        and not p.endswith((".min.js", ".d.ts"))
        and 0 < listing[p] <= 1_000_000
    ]
    shallow = code[: SAMPLE_COUNT // 2]
    rest = sorted(set(code) - set(shallow), key=lambda p: hashlib.sha1(p.encode()).hexdigest())
    samples = shallow + rest[: SAMPLE_COUNT - len(shallow)]
    for relative, limit in [(m, MANIFEST_BYTES) for m in manifests] + [(s, SAMPLE_BYTES) for s in samples]:
        data = _git(git_dir, "show", f"{commit}:{relative}")[:limit]
        if b"\x00" in data[:8192]:
            continue
        target = files / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return f"{slug}: {len(kept)}/{len(listing)} paths, {len(manifests)} manifests, {len(samples)} samples"


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "extract":
        print(extract(Path(argv[1]), argv[2]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
