"""Asset folders built locally at synth time (no Docker), cached by a hash of their inputs.

``lambda_code`` assembles the Lambda code: the ``odp`` and ``lambdas`` packages plus the pure-Python
and manylinux wheels of pydantic and PyYAML (Powertools comes from its public layer).
``glue_artifacts`` assembles what the Glue job needs in the artifacts bucket: the job script, a zip
of the ``etl`` and ``odp`` packages for ``--extra-py-files``, and a "zip of wheels" for
``--additional-python-modules``: ``odp_dependencies.gluewheels.zip`` holding ``wheels/requirements.txt``
and every wheel it needs (pydantic and PyYAML with their dependencies), the form AWS documents for
Glue 5 without internet (installed with ``--python-modules-installer-option --no-index``), and ODP's jar of Hudi
extensions for ``--extra-jars`` (jvm/README.md: the catalog sync's partition extractor, the MERGE_ON_READ compaction
strategy), copied from ``.cache/jars/odp-hudi-extensions.jar``, which ``make setup`` compiles (a synth never runs
javac).

A folder is rebuilt only when its inputs change: its name carries the hash of every input file and
of the pinned requirements, so a second synth reuses it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from odp.config.views import View

# Runtime dependencies of odp/ that neither the Lambda runtime nor the Powertools layer provide,
# and that Glue 5.1 does not ship; versions match requirements.txt.
PYTHON_DEPENDENCIES = ("pydantic==2.14.3", "PyYAML==6.0.3")
PIP_PLATFORM = ("--platform", "manylinux2014_x86_64", "--only-binary=:all:", "--python-version", "3.11")
LAMBDA_PACKAGES = ("odp", "lambdas")
GLUE_PACKAGES = ("etl", "odp")
GLUE_SCRIPT = Path("etl/jobs/file_processor.py")
GLUE_SCRIPT_NAME = "file_processor.py"
GLUE_LIBRARY_NAME = "odp_etl.zip"
GLUE_WHEELS_DIR = "wheels"
# Glue 5 recognises a zip of wheels by this suffix; inside: wheels/requirements.txt and wheels/*.whl.
GLUE_WHEELS_ZIP = "odp_dependencies.gluewheels.zip"
# ODP's jar of Hudi extensions: where make setup builds it (relative to the repository), its name in the folder.
EXTENSIONS_JAR = Path(".cache/jars/odp-hudi-extensions.jar")
GLUE_EXTENSIONS_JAR = EXTENSIONS_JAR.name
_FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # keeps zip bytes, and so asset hashes, stable between builds
_SKIPPED_PARTS = {"__pycache__", ".pytest_cache", "tests"}
_SKIPPED_SUFFIXES = (".pyc", ".pyo")


class AssetBuildError(RuntimeError):
    """pip could not fetch a dependency (check network access to PyPI or the pip cache), or a file ``make setup``
    builds is missing."""


@dataclass(frozen=True)
class GlueArtifacts:
    """The Glue asset folder and the names of what it holds (relative to the folder)."""

    directory: Path
    script: str | None  # None when etl/jobs/file_processor.py does not exist yet
    library: str
    wheels_zip: str
    wheels: tuple[str, ...]  # the wheels inside wheels_zip, as wheels/<file>
    extensions_jar: str = GLUE_EXTENSIONS_JAR  # ODP's jar of Hudi extensions, for --extra-jars


def _package_files(root: Path, packages: Iterable[str]) -> Iterator[Path]:
    for package in packages:
        base = root / package
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and not _SKIPPED_PARTS & set(relative.parts) and path.suffix not in _SKIPPED_SUFFIXES:
                yield path


def inputs_hash(root: Path, files: Iterable[Path], extra: Iterable[str] = ()) -> str:
    """SHA-256 over the relative paths and bytes of ``files`` and the ``extra`` strings (16 hex chars)."""
    digest = hashlib.sha256()
    for item in extra:
        digest.update(item.encode())
        digest.update(b"\0")
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _pip(*arguments: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *arguments]
    result = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603
    if result.returncode != 0:
        raise AssetBuildError(f"{' '.join(command)} failed:\n{result.stderr.strip()}")


def _copy_packages(root: Path, packages: Iterable[str], target: Path) -> None:
    for path in _package_files(root, packages):
        destination = target / path.relative_to(root)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)


KEEP_BUILDS = 3  # per kind: older folders are removed (a concurrent synth may still read a recent one)


def _publish(build: Path, final: Path) -> Path:
    """Move a finished build into place (another process may have won the race, which is fine),
    then remove all but the ``KEEP_BUILDS`` newest folders of the same kind."""
    try:
        os.replace(build, final)
    except OSError:
        shutil.rmtree(build, ignore_errors=True)
    kind = final.name.split("-", 1)[0]
    builds = sorted(final.parent.glob(f"{kind}-*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in (p for p in builds[KEEP_BUILDS:] if p != final and "-build-" not in p.name):
        shutil.rmtree(old, ignore_errors=True)
    return final


def lambda_code(root: Path, cache: Path) -> Path:
    """The Lambda asset folder (built on first use).

    Raises:
        AssetBuildError: pip could not install the dependencies.
    """
    files = list(_package_files(root, LAMBDA_PACKAGES))
    final = cache / f"lambda-{inputs_hash(root, files, PYTHON_DEPENDENCIES)}"
    if final.is_dir():
        return final
    cache.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix="lambda-build-", dir=cache))
    _pip("install", *PIP_PLATFORM, "--no-compile", "--target", str(build), *PYTHON_DEPENDENCIES)
    _copy_packages(root, LAMBDA_PACKAGES, build)
    return _publish(build, final)


def glue_artifacts(root: Path, cache: Path) -> GlueArtifacts:
    """The Glue asset folder (built on first use).

    Raises:
        AssetBuildError: pip could not download the wheels, or ODP's extensions jar was not built (``make setup``).
    """
    script = root / GLUE_SCRIPT
    jar = root / EXTENSIONS_JAR
    if not jar.is_file():
        raise AssetBuildError(
            f"{jar} not found: run `make setup` (it compiles jvm/ into it); the Glue jobs load it with --extra-jars"
        )
    files = list(_package_files(root, GLUE_PACKAGES))
    # The artifact names take part in the hash: a change of layout is a new folder, never a stale one.
    names = (*PYTHON_DEPENDENCIES, GLUE_LIBRARY_NAME, GLUE_WHEELS_ZIP, GLUE_EXTENSIONS_JAR)
    final = cache / f"glue-{inputs_hash(root, [*files, jar], names)}"
    if not final.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix="glue-build-", dir=cache))
        wheels_dir = Path(tempfile.mkdtemp(prefix="wheels-", dir=cache)) / GLUE_WHEELS_DIR
        _pip("download", *PIP_PLATFORM, "--dest", str(wheels_dir), *PYTHON_DEPENDENCIES)
        (wheels_dir / "requirements.txt").write_text("\n".join(PYTHON_DEPENDENCIES) + "\n", encoding="utf-8")
        if script.is_file():
            shutil.copy2(script, build / GLUE_SCRIPT_NAME)
        _write_zip(build / GLUE_LIBRARY_NAME, root, files)
        shutil.copyfile(jar, build / GLUE_EXTENSIONS_JAR)
        _write_zip(build / GLUE_WHEELS_ZIP, wheels_dir.parent, sorted(wheels_dir.iterdir()))
        shutil.rmtree(wheels_dir.parent, ignore_errors=True)
        final = _publish(build, final)
    with zipfile.ZipFile(final / GLUE_WHEELS_ZIP) as archive:
        wheels = tuple(sorted(name for name in archive.namelist() if name.endswith(".whl")))
    return GlueArtifacts(
        directory=final,
        script=GLUE_SCRIPT_NAME if (final / GLUE_SCRIPT_NAME).is_file() else None,
        library=GLUE_LIBRARY_NAME,
        wheels_zip=GLUE_WHEELS_ZIP,
        wheels=wheels,
    )


def _write_zip(target: Path, root: Path, files: Iterable[Path]) -> None:
    """A deterministic zip of ``files`` named relative to ``root`` (fixed timestamps and modes)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            info = zipfile.ZipInfo(str(path.relative_to(root)), date_time=_FIXED_TIME)
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)


@dataclass(frozen=True)
class BuiltAssets:
    """Asset folders built once per synth and shared by every stage."""

    lambda_code: Path
    glue: GlueArtifacts
    views: tuple[View, ...] = ()  # config/views/*.sql, checked once per synth (deployed where consumers exist)
