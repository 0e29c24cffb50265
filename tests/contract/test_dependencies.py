"""One source of truth for what the Lambda layer ships: pyproject.toml's [project] dependencies.

`sam build` reads layers/holdfast/requirements.txt, the dev venv installs pyproject.toml; if the
two drift, the tests run one set of packages and AWS another.
"""
from __future__ import annotations

import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.handlers import REPO


def _normalised(lines: list[str]) -> dict[str, tuple[frozenset[str], str]]:
    found = {}
    for line in lines:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name not in found, f"{name} is listed twice"
        found[name] = (frozenset(requirement.extras), str(requirement.specifier))
    return found


def _pyproject_dependencies() -> list[str]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]


def _layer_requirements() -> list[str]:
    text = (REPO / "layers" / "holdfast" / "requirements.txt").read_text()
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def test_layer_requirements_are_the_pyproject_dependencies():
    assert _normalised(_layer_requirements()) == _normalised(_pyproject_dependencies())


def test_every_layer_dependency_is_pinned_exactly():
    for line in _pyproject_dependencies():
        specifiers = list(Requirement(line).specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==", f"not pinned: {line}"


def test_the_tracer_gets_what_it_imports_on_lambda():
    # Powertools' Tracer imports aws_xray_sdk as soon as it runs on Lambda
    deps = _normalised(_pyproject_dependencies())
    assert "tracer" in deps["aws-lambda-powertools"][0]
    assert "aws-xray-sdk" in deps


def test_the_dev_venv_runs_the_versions_the_layer_ships():
    for line in _pyproject_dependencies():
        requirement = Requirement(line)
        assert requirement.specifier.contains(metadata.version(requirement.name)), (
            f"{requirement.name} {metadata.version(requirement.name)} installed, the layer ships {line}")
