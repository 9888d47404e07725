"""Asset folders: hashed inputs, cached builds, the Glue folder's content."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from infrastructure import assets


def _tree(root: Path) -> None:
    (root / "odp").mkdir(parents=True)
    (root / "odp" / "__init__.py").write_text("")
    (root / "odp" / "__pycache__").mkdir()
    (root / "odp" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (root / "lambdas" / "file_manager").mkdir(parents=True)
    (root / "lambdas" / "file_manager" / "handler.py").write_text("def handler(event, context):\n    return {}\n")
    (root / "etl" / "jobs").mkdir(parents=True)
    (root / "etl" / "jobs" / "file_processor.py").write_text("print('job')\n")
    (root / ".cache" / "jars").mkdir(parents=True)
    (root / ".cache" / "jars" / "odp-hudi-extensions.jar").write_bytes(b"PK jar")  # what make setup compiles


def _fake_pip(calls: list[tuple[str, ...]]):
    def pip(*arguments: str) -> None:
        calls.append(arguments)
        if arguments[0] == "download":
            target = Path(arguments[arguments.index("--dest") + 1])
            target.mkdir(parents=True, exist_ok=True)
            (target / "pydantic-2.14.3-py3-none-any.whl").write_bytes(b"wheel")

    return pip


def test_inputs_hash_changes_with_content_and_ignores_bytecode(tmp_path: Path) -> None:
    _tree(tmp_path)
    files = list(assets._package_files(tmp_path, ("odp", "lambdas")))
    assert [p.name for p in files] == ["__init__.py", "handler.py"]
    first = assets.inputs_hash(tmp_path, files, ("pydantic==1",))
    assert first == assets.inputs_hash(tmp_path, files, ("pydantic==1",))
    assert first != assets.inputs_hash(tmp_path, files, ("pydantic==2",))
    (tmp_path / "odp" / "__init__.py").write_text("X = 1\n")
    assert first != assets.inputs_hash(tmp_path, files, ("pydantic==1",))


def test_lambda_code_is_built_once_then_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(assets, "_pip", _fake_pip(calls))
    folder = assets.lambda_code(tmp_path, tmp_path / "cache")
    assert (folder / "lambdas" / "file_manager" / "handler.py").is_file()
    assert not (folder / "odp" / "__pycache__").exists()
    assert assets.lambda_code(tmp_path, tmp_path / "cache") == folder
    assert len(calls) == 1
    assert calls[0][0] == "install"
    assert "manylinux2014_x86_64" in calls[0]


def test_glue_artifacts_hold_script_library_and_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.setattr(assets, "_pip", _fake_pip([]))
    built = assets.glue_artifacts(tmp_path, tmp_path / "cache")
    assert built.script == "file_processor.py"
    assert built.wheels == ("wheels/pydantic-2.14.3-py3-none-any.whl",)
    with zipfile.ZipFile(built.directory / built.library) as archive:
        assert sorted(archive.namelist()) == ["etl/jobs/file_processor.py", "odp/__init__.py"]
    assert built.wheels_zip.endswith(".gluewheels.zip")
    with zipfile.ZipFile(built.directory / built.wheels_zip) as archive:
        assert sorted(archive.namelist()) == ["wheels/pydantic-2.14.3-py3-none-any.whl", "wheels/requirements.txt"]
        assert archive.read("wheels/requirements.txt").decode().split() == list(assets.PYTHON_DEPENDENCIES)
    assert (built.directory / built.extensions_jar).read_bytes() == b"PK jar"  # shipped for --extra-jars
    again = assets.glue_artifacts(tmp_path, tmp_path / "cache2")
    for name in (built.library, built.wheels_zip):
        assert (again.directory / name).read_bytes() == (built.directory / name).read_bytes()
    # a rebuilt jar is a new folder, never a stale one
    (tmp_path / ".cache" / "jars" / "odp-hudi-extensions.jar").write_bytes(b"PK jar 2")
    rebuilt = assets.glue_artifacts(tmp_path, tmp_path / "cache")
    assert rebuilt.directory != built.directory
    assert (rebuilt.directory / rebuilt.extensions_jar).read_bytes() == b"PK jar 2"


def test_glue_artifacts_without_the_extensions_jar_name_make_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    (tmp_path / ".cache" / "jars" / "odp-hudi-extensions.jar").unlink()
    monkeypatch.setattr(assets, "_pip", _fake_pip([]))
    with pytest.raises(assets.AssetBuildError, match=r"odp-hudi-extensions.jar not found: run `make setup`"):
        assets.glue_artifacts(tmp_path, tmp_path / "cache")


def test_the_zip_of_wheels_installs_in_one_offline_pip_call(repo_root: Path, tmp_path: Path) -> None:
    """What Glue 5 does with --python-modules-installer-option --no-index: install wheels/requirements.txt
    from the zip's own wheels only, for Glue's platform (manylinux x86_64, CPython 3.11)."""
    built = assets.glue_artifacts(repo_root, repo_root / ".cache" / "assets")  # the real build of this tree
    with zipfile.ZipFile(built.directory / built.wheels_zip) as archive:
        archive.extractall(tmp_path)
    wheels = tmp_path / assets.GLUE_WHEELS_DIR
    assets._pip(
        "install",
        "--no-index",
        "--find-links",
        str(wheels),
        *assets.PIP_PLATFORM,
        "--target",
        str(tmp_path / "site"),
        "-r",
        str(wheels / "requirements.txt"),
    )
    installed = {p.name.split("-")[0].lower() for p in (tmp_path / "site").glob("*.dist-info")}
    assert {"pydantic", "pydantic_core", "pyyaml", "typing_extensions", "annotated_types"} <= installed


def test_pip_failure_names_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(assets.AssetBuildError, match="pip"):
        assets._pip("install", "--no-index", "--target", "/nonexistent-odp", "surely-not-a-package==0")


def test_only_the_newest_builds_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.setattr(assets, "_pip", _fake_pip([]))
    cache = tmp_path / "cache"
    built = []
    for version in range(assets.KEEP_BUILDS + 2):
        (tmp_path / "odp" / "__init__.py").write_text(f"VERSION = {version}\n")
        built.append(assets.lambda_code(tmp_path, cache))
    remaining = sorted(p.name for p in cache.glob("lambda-*"))
    assert len(remaining) == assets.KEEP_BUILDS
    assert built[-1].name in remaining
    assert built[0].name not in remaining
