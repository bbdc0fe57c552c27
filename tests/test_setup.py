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


BENCHMARK_EXTRAS = {"peers"}  # what only `make bench` installs (programs to measure against), never an environment's


def test_environment_yml_is_in_step_with_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [s for name, extra in project["optional-dependencies"].items() if name not in BENCHMARK_EXTRAS
              for s in extra if requirement(s)[0] != project["name"]]  # "ttt[cluster]": the extra itself is listed
    wanted = dict(requirement(s) for s in project["dependencies"] + extras)
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
    assert "jupyter lab $(LESSONS)/ $(if $(ROOT),--allow-root,)" in makefile
    assert "apt-get install -y -qq graphviz" in makefile


def test_students_install_does_not_pull_dask():
    """Only the cluster extra (and dev, through it) brings Dask: a plain install has none of it,
    directly or through what it needs (read from the installed package's metadata)."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement

    def needs(name: str, extra: str = "") -> set[str]:
        found, todo = set(), [(name, extra)]
        while todo:
            package, wanted = todo.pop()
            try:
                listed = requires(package) or []
            except PackageNotFoundError:
                continue
            for spec in map(Requirement, listed):
                if spec.marker is None or spec.marker.evaluate({"extra": wanted}):
                    key = spec.name.lower().replace("_", "-")
                    for more in [""] + sorted(spec.extras):
                        if (key, more) not in found:
                            found.add((key, more))
                            todo.append((key, more))
        return {key for key, _ in found}

    plain = needs("ttt")
    assert {"anywidget", "ipywidgets", "traitlets", "tqdm"} <= plain  # the walk does follow the requirements
    assert not {"dask", "distributed"} & plain, sorted({"dask", "distributed"} & plain)
    assert {"dask", "distributed", "nbgrader"} <= needs("ttt", "cluster")
    assert "distributed" in needs("ttt", "dev")
    # the library and its widgets alone: no grader, no JupyterLab, no charts (what a lesson in a browser needs)
    assert not GRADER_AND_LAB & plain, sorted(GRADER_AND_LAB & plain)
    assert {"nbgrader", "nbclient", "psutil"} <= needs("ttt", "grader")
    assert {"jupyterlab", "nbgrader"} <= needs("ttt", "lab") and GRADER_AND_LAB <= needs("ttt", "dev")
    assert not {"matplotlib", "numpy"} & needs("ttt", "lab")  # the charts are drawn by the front end (ttt.charts)


# (psutil is not among them: IPython itself needs it)
GRADER_AND_LAB = {"nbgrader", "jupyterlab", "notebook", "nbclient", "nbconvert", "jupyter-client"}


@pytest.mark.slow
def test_the_built_wheel_installs_the_library_and_widgets_alone(tmp_path):
    """`pip install` of the wheel in a new virtual environment: ttt, its board and the lessons' visible
    tests work there, and nothing of the grader or JupyterLab was installed."""
    import subprocess
    import sys
    import venv

    def run(*argv: str) -> str:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=900)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done.stdout

    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(tmp_path / "dist"), str(ROOT))
    [wheel] = (tmp_path / "dist").glob("ttt-*.whl")
    import zipfile

    # the widgets' front end, WebAssembly Graphviz included (trees where dot cannot run)
    assert {"ttt/widgets/widget.js", "ttt/widgets/widget.css", "ttt/widgets/static/viz.js"} <= set(zipfile.ZipFile(wheel).namelist())
    venv.EnvBuilder(with_pip=True).create(tmp_path / "env")
    python = str(tmp_path / "env" / "bin" / "python")
    run(python, "-m", "pip", "install", "--quiet", str(wheel))
    installed = run(python, "-c", "import importlib.metadata as m; print(*sorted(d.metadata['Name'].lower().replace('_', '-') "
                                  "for d in m.distributions()))").split()
    assert not GRADER_AND_LAB & set(installed), sorted(GRADER_AND_LAB & set(installed))
    said = run(python, "-c", "from ttt.widgets import PlayableBoard; from grader.checks import expect, returned\n"
                             "from ttt.tictactoe import initial_state\n"
                             "def player(board):\n    return 'X'\n"
                             "board = PlayableBoard(); board.click_square(4)\n"
                             "from ttt import charts\n"
                             "chart = charts.bars([{'who': 'X', 'games': 2}], x='who', y='games')._repr_mimebundle_()\n"
                             "print(board.state[4], board.state.count('O'), returned(player, initial_state()), *sorted(chart))")
    # the computer (O) answered the click; a chart is a Vega-Lite specification, with its table as text
    assert said.split() == ["X", "1", "X", "application/vnd.vegalite.v5+json", "text/plain"], said


def test_the_grader_runs_without_dask():
    """Importing the grader's commands imports no Dask (it is imported only for --cluster)."""
    import subprocess
    import sys

    code = "import sys, grader.cli, grader.autograde, grader.course_ops, ttt; print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
