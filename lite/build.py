"""Builds the lessons' browser-only site (``make lite``): JupyterLite with the Pyodide kernel, the six
released lessons, and every Python package the lessons import, served by the site itself.

    python lite/build.py [--output _site]

Run by ``make lite`` with the build's own virtual environment (``.venv-lite``: jupyterlite-core,
the Pyodide kernel and the widgets' front ends, `lite/requirements.txt`) after ``npm ci`` in
``lite/`` (Pyodide's core, `lite/package.json`). Nothing is fetched when the site runs:

- Pyodide's core comes from npm; the npm package holds the interpreter and its standard library
  but no packages, and its lock file names Pyodide's own builds. The lock is rewritten to list
  only the wheels the site carries (each's name, version, file, sha256, dependencies and import
  names read from the wheel itself), pure-Python wheels from PyPI: ttt's dependencies
  (``pyproject.toml``), the kernel's (IPython, comm, jedi, micropip) and the kernel's own
  (``pyodide_kernel``, ``piplite`` and its stand-ins for ipykernel and widgetsnbextension).
- The kernel loads all of them when it starts, so a lesson's first ``import ttt`` just works, and
  ``%pip install`` looks nowhere but the site (``disablePyPIFallback``).
- The lessons are released with ``ttt-grader release``: the students' versions, without the
  solutions or the hidden tests; their "Check your work" section says what checking is there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

LITE = Path(__file__).resolve().parent
ROOT = LITE.parent
PYODIDE = LITE / "node_modules" / "pyodide"
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
# What the kernel itself imports as it starts (jupyterlite-pyodide-kernel installs these by name)
KERNEL_NEEDS = ["ipython", "comm", "jedi", "micropip"]
# The kernel's own wheels, shipped in its JupyterLab extension: these stand in for the PyPI packages of
# the same names (ipykernel, widgetsnbextension), which a browser cannot run
KERNEL_WHEELS = ["pyodide_kernel-", "piplite-", "ipykernel-", "widgetsnbextension-4."]
CORE_FILES = ["pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
              "package.json"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=ROOT / "_site", help="where the site goes (default _site)")
    parser.add_argument("--lessons", type=Path, default=None,
                        help="a folder of notebooks to put in the site instead of the released lessons (a test's)")
    args = parser.parse_args(argv)
    if not (PYODIDE / "pyodide-lock.json").is_file():
        raise SystemExit(f"Pyodide's core is missing from {PYODIDE}: run `npm ci` in lite/ (make lite does)")
    with tempfile.TemporaryDirectory(prefix="ttt-lite-") as tmp:  # its own: two builds at once never meet
        build(Path(tmp), args.lessons, args.output)
    size = sum(p.stat().st_size for p in args.output.rglob("*") if p.is_file())
    print(f"The site is in {args.output}/ ({size / 2**20:.0f} MB): serve that folder with any static web server "
          "(python -m http.server -d _site), then open lab/index.html.")
    return 0


def build(work: Path, lessons_folder: Path | None, output: Path) -> None:
    """Builds the site in `output`, working in `work`: the wheels, Pyodide's core, the lessons (released, or
    `lessons_folder`'s notebooks), then JupyterLite."""
    wheels = work / "lite" / "static" / "pyodide"  # the kernel's well-known place for a Pyodide of the site's own
    wheels.mkdir(parents=True)
    say("ttt's wheel and the wheels it needs in a browser")
    python_wheels(wheels)
    say("Pyodide's core, its lock file rewritten for those wheels")
    packages = pyodide_core(wheels)
    say("the lessons, released")
    files = work / "files"
    if lessons_folder is None:
        lessons(files)
    else:
        shutil.copytree(lessons_folder, files)
    for notebook in files.glob("*.ipynb"):
        for_the_site(notebook)
    (work / "lite" / "jupyter-lite.json").write_text(json.dumps(settings(packages), indent=2) + "\n")
    say("the site")
    shutil.rmtree(output, ignore_errors=True)
    run(Path(sys.executable).parent / "jupyter", "lite", "build", "--lite-dir", work / "lite", "--contents", files,
        "--output-dir", output, "--no-sourcemaps", cwd=work)


def say(step: str) -> None:
    print(f"-- {step}", flush=True)


def run(*command, cwd: Path | None = None) -> None:
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def python_wheels(into: Path) -> None:
    """ttt's wheel, the pure-Python wheels of what it and the kernel need (from PyPI), and the kernel's own."""
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", into, ROOT)
    needs = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"] + KERNEL_NEEDS
    run(sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--implementation", "py",
        "--abi", "none", "--platform", "any", "--python-version", pyodide_python(), "--dest", into, *needs)
    ours = kernel_wheels()
    for wheel in into.glob("*.whl"):  # the kernel's stand-ins replace the PyPI packages of the same name
        if canonicalize_name(parse_wheel_filename(wheel.name)[0]) in {canonicalize_name(parse_wheel_filename(w.name)[0]) for w in ours}:
            wheel.unlink()
    for wheel in ours:
        shutil.copy(wheel, into / wheel.name)


def kernel_wheels() -> list[Path]:
    import jupyterlite_pyodide_kernel

    found = [p for p in Path(sys.prefix).glob("share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension/static/pypi/*.whl")]
    chosen = [w for w in found if w.name.startswith(tuple(KERNEL_WHEELS))]
    if len(chosen) != len(KERNEL_WHEELS):
        raise SystemExit(f"jupyterlite-pyodide-kernel {jupyterlite_pyodide_kernel.__version__} does not ship the wheels "
                         f"{KERNEL_WHEELS} (found {sorted(w.name for w in found)})")
    return chosen


def pyodide_python() -> str:
    return json.loads((PYODIDE / "pyodide-lock.json").read_text())["info"]["python"].rsplit(".", 1)[0]


def pyodide_core(into: Path) -> list[str]:
    """Copies Pyodide's core next to the wheels and writes its lock file for them; returns the packages' names."""
    for name in CORE_FILES:
        shutil.copy(PYODIDE / name, into / name)
    info = json.loads((PYODIDE / "pyodide-lock.json").read_text())["info"]
    environment = {**default_environment(), "sys_platform": "emscripten", "platform_system": "Emscripten",
                   "platform_machine": "wasm32", "os_name": "posix", "python_version": info["python"].rsplit(".", 1)[0],
                   "python_full_version": info["python"], "implementation_name": "cpython",
                   "platform_python_implementation": "CPython", "extra": ""}
    entries = {}
    for wheel in sorted(into.glob("*.whl")):
        name, version, _, _ = parse_wheel_filename(wheel.name)
        with zipfile.ZipFile(wheel) as zf:
            info_dir = next(n.split("/")[0] for n in zf.namelist() if n.split("/")[0].endswith(".dist-info"))
            metadata = Parser().parsestr(zf.read(f"{info_dir}/METADATA").decode())
            tops = {n.split("/")[0] for n in zf.namelist() if not n.split("/")[0].endswith((".dist-info", ".data"))}
        depends = sorted({canonicalize_name(r.name) for r in map(Requirement, metadata.get_all("Requires-Dist") or [])
                          if r.marker is None or r.marker.evaluate(environment)})
        imports = sorted(t.removesuffix(".py") for t in tops if re.fullmatch(r"[A-Za-z_]\w*(\.py)?", t))
        entries[canonicalize_name(name)] = {
            "name": canonicalize_name(name), "version": str(version), "file_name": wheel.name, "install_dir": "site",
            "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(), "package_type": "package", "imports": imports,
            "depends": depends, "unvendored_tests": False, "shared_library": False,
        }
    missing = {d: e["name"] for e in entries.values() for d in e["depends"] if d not in entries}
    if missing:
        raise SystemExit(f"the site's wheels need packages it does not carry: {missing}")
    (into / "pyodide-lock.json").write_text(json.dumps({"info": info, "packages": entries}, indent=1) + "\n")
    return sorted(entries)


def lessons(into: Path) -> Path:
    """The six lessons as ``ttt-grader release`` makes them for students."""
    grader = ROOT / ".venv" / "bin" / "ttt-grader"
    with tempfile.TemporaryDirectory() as tmp:
        run(grader if grader.exists() else "ttt-grader", "release", "--course", Path(tmp) / "course")
        into.mkdir(parents=True)
        for notebook in sorted((Path(tmp) / "course" / "release").glob("*/*.ipynb")):
            shutil.copy(notebook, into / notebook.name)
    return into


# A lesson's "Check your work" section, as the site says it: no Validate button, no grader here
CHECK_YOUR_WORK = "## Check your work"
CHECK_YOUR_WORK_HERE = f"""{CHECK_YOUR_WORK}
In this site the visible tests in each function's cells are your check: run them (Run → Run All
Cells) and fix the first one that fails. The hidden tests are run by the grader, which cannot run
inside a web page: the cell below says what to do instead. Your work is kept in this browser's
own storage once you save it (Ctrl+S; a reload loses what is not saved); to hand it in, download
the notebook (File → Download)."""
# A note put first in each lesson of the site: what differs from JupyterLab on a computer
IN_THIS_SITE = """**In this site** Python runs inside your browser. A cell that runs forever is not stopped
by the toolbar's Stop (■) here: use **Kernel → Restart Kernel**, then run the cells again from
the top (Run → Run All Cells). After you reopen a lesson, run its cells again too, for the
boards and pictures to come back. Your work is kept in this browser when you save it (Ctrl+S:
a reload loses what is not saved); to hand it in, download it with File → Download."""


def for_the_site(path: Path) -> None:
    """Rewrites a lesson for the site: its "Check your work" section (no Validate, no grader here), and a
    first note on what differs from JupyterLab on a computer (Stop, reopening, handing in)."""
    notebook = json.loads(path.read_text())
    cells = notebook.get("cells", [])
    sections = [c for c in cells if c.get("cell_type") == "markdown" and "".join(c.get("source", "")).startswith(CHECK_YOUR_WORK)]
    if not sections:  # not a lesson
        return
    for cell in sections:
        cell["source"] = CHECK_YOUR_WORK_HERE
    note = {"cell_type": "markdown", "metadata": {}, "source": IN_THIS_SITE}
    if any("id" in c for c in cells):  # nbformat 4.5: every cell has an id
        note["id"] = "in-this-site"
    cells.insert(0, note)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


def settings(packages: list[str]) -> dict:
    """The site's jupyter-lite.json: the kernel loads every package of the site as it starts, and never PyPI."""
    return {"jupyter-lite-schema-version": 0, "jupyter-config-data": {
        "appName": "ttt lessons",
        "litePluginSettings": {KERNEL_PLUGIN: {"loadPyodideOptions": {"packages": packages}, "disablePyPIFallback": True}},
    }}


if __name__ == "__main__":
    sys.exit(main())
