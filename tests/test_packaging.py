"""What we declare about the package is true: the floors tox's ``lowest`` env installs are pyproject.toml's
floors, that env really has them, the Pythons we test are the ones we classify, and the MIT license ships in
the sdist and the wheel (built here from a copy of the tree, through setuptools' PEP 517 hooks, offline).
"""

from __future__ import annotations

import configparser
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
CONSTRAINTS = ROOT / "lowest-constraints.txt"


def _declared() -> dict[str, Requirement]:
    """The requirements whose floors the ``lowest`` env proves: the package's own and its ``test`` extra's."""
    lines = [*PROJECT["dependencies"], *PROJECT["optional-dependencies"]["test"]]
    requirements = [Requirement(line) for line in lines]
    return {canonicalize_name(r.name): r for r in requirements if canonicalize_name(r.name) != "pytest-agentloom"}


def _floor(requirement: Requirement) -> str | None:
    floors = [spec.version for spec in requirement.specifier if spec.operator == ">="]
    return floors[0] if len(floors) == 1 else None


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"{CONSTRAINTS.name}: {line!r} is not 'name==version'"
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_every_requirement_has_one_floor_and_the_lowest_constraints_pin_exactly_it() -> None:
    declared = _declared()
    missing = sorted(name for name, requirement in declared.items() if _floor(requirement) is None)
    assert not missing, f"pyproject.toml: give each of {missing} one '>=' floor (tested by tox -e lowest)"
    floors = {name: Version(str(_floor(requirement))) for name, requirement in declared.items()}
    pins = {name: Version(version) for name, version in _pins().items()}
    assert pins == floors, (
        f"{CONSTRAINTS.name} must pin every floor of pyproject.toml (dependencies and the test extra) "
        "to exactly that version, and nothing else: edit both together"
    )


def test_an_extra_for_users_declares_the_floor_the_suite_proves() -> None:
    """``pip install pytest-agentloom[fuzz]`` asks for the hypothesis the ``lowest`` env tests (the test extra's)."""
    declared = _declared()
    for line in PROJECT["optional-dependencies"]["fuzz"]:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in declared and _floor(requirement) == _floor(declared[name]), (
            f"pyproject.toml: the fuzz extra's {line!r} must have the floor of the test extra's {declared.get(name)}")


@pytest.mark.skipif(not os.environ.get("AGENTLOOM_LOWEST"), reason="only in tox -e lowest (AGENTLOOM_LOWEST)")
def test_the_lowest_env_has_exactly_the_floors_installed() -> None:
    installed = {name: importlib.metadata.version(name) for name in _pins()}
    assert installed == _pins()


def test_the_pythons_tox_tests_are_the_pythons_classified() -> None:
    tox = configparser.ConfigParser()
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    envs = [env.strip() for env in tox["tox"]["envlist"].split(",")]
    tested = sorted(f"3.{env[3:]}" for env in envs if re.fullmatch(r"py3\d+", env))
    classified = sorted(c.rsplit(" :: ", 1)[1] for c in PROJECT["classifiers"]
                        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert tested == classified
    assert PROJECT["requires-python"] == f">={tested[0]}"
    assert tox["testenv:lowest"]["base_python"] == f"py{tested[0].replace('.', '')}"


def test_the_license_is_mit_and_declared_as_a_license_file() -> None:
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")


@pytest.mark.slow
def test_the_sdist_and_the_wheel_carry_the_license_and_the_metadata(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(ROOT / name, tree / name)
    for folder in ("pytest_agentloom", "docs"):
        shutil.copytree(ROOT / folder, tree / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path / "dist"
    # the folder is read once: a build may leave its own command line in sys.argv
    build = ("import sys; from setuptools import build_meta as backend; out = sys.argv[1]; "
             "backend.build_sdist(out); backend.build_wheel(out)")
    done = subprocess.run([sys.executable, "-c", build, str(out)], cwd=tree, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    version = PROJECT["version"]

    with zipfile.ZipFile(out / f"pytest_agentloom-{version}-py3-none-any.whl") as wheel:
        info = f"pytest_agentloom-{version}.dist-info"
        assert wheel.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        metadata = wheel.read(f"{info}/METADATA").decode("utf-8")
    assert "License-Expression: MIT\n" in metadata
    assert "License-File: LICENSE\n" in metadata
    for minor in ("3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {minor}\n" in metadata

    with tarfile.open(out / f"pytest_agentloom-{version}.tar.gz") as sdist:
        names = sdist.getnames()
        member = sdist.extractfile(f"pytest_agentloom-{version}/LICENSE")
        assert member is not None and member.read() == (ROOT / "LICENSE").read_bytes()
    assert f"pytest_agentloom-{version}/pytest_agentloom/py.typed" in names
    assert f"pytest_agentloom-{version}/docs/compatibility.md" in names
    assert not [name for name in names if "/tests/" in name], "the suite needs the whole repository: not shipped"
