"""The set-up files agree with each other: pyproject.toml, environment.yml, Makefile, README, CI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAME = {"graphviz": "python-graphviz"}  # PyPI name -> conda-forge name where they differ


def requirement(spec: str) -> tuple[str, str]:
    """Return (name, version constraint) of a requirement such as 'nbgrader>=0.9,<0.10'."""
    name, constraint = re.match(r"([A-Za-z0-9_.\-]+)\s*(.*)", spec).groups()
    return name.lower(), constraint.replace(" ", "")


def test_environment_yml_is_in_step_with_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = dict(requirement(s) for s in project["dependencies"] + project["optional-dependencies"]["dev"])
    wanted = {CONDA_NAME.get(name, name): constraint for name, constraint in wanted.items()}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = dict(requirement(d) for d in env["dependencies"] if isinstance(d, str))
    assert "conda-forge" in env["channels"]
    assert conda.pop("python") == ">=" + project["requires-python"].lstrip(">=")
    assert conda.pop("graphviz") == ""  # the dot program itself
    conda.pop("pip")
    assert conda == wanted
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip_section == ["-e ."]


def test_ci_runs_the_readmes_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```")[1].splitlines()[1:]  # the first code block, after its language
    commands = [line.split("#")[0].strip() for line in first_block if line.strip()]
    assert commands == ["make lab", "make test"]


def test_make_lab_passes_allow_root_only_for_root():
    makefile = (ROOT / "Makefile").read_text()
    assert "jupyter lab notebooks/ $(if $(ROOT),--allow-root,)" in makefile
    assert "apt-get install -y -qq graphviz" in makefile
