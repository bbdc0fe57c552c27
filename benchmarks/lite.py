"""The lessons' browser-only site (``make lite``) beside the same work on this computer, in one run.

Builds the site (as ``tests/test_lite.py`` does) with lesson 1 filled in with the instructor's
solutions and a notebook of timed loops, serves it on 127.0.0.1 (every other host blocked) and
opens it in Chromium, where Python runs in the page (Pyodide). Prints, side by side:

- **the site's size**: in all, and its parts (Pyodide's core, the Python wheels, JupyterLab);
- **the kernel's start**: opening a notebook to its first cell's result, against starting a
  plain IPython kernel on CPython here (``jupyter_client``) to its first result;
- **lesson 1's run**: Run All on the filled lesson, against nbclient running the same notebook
  top to bottom in a plain kernel (kernel start included in both);
- **a loop's cost**: the same Python (`LOOPS`: a counting loop and a recursive Fibonacci), bare
  and under ``ttt.limits.cpu_limit`` (a profiling timer on CPython, ``sys.monitoring`` counting
  in the browser), in the page against CPython in a process here; best of `REPEAT`.

Wall seconds throughout (a browser tab has no CPU clock of its own to read); the load average is
printed at the start and the end. Asserts nothing. Usage: ``python benchmarks/lite.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from test_browser import CHROMIUM, CHROMIUM_ARGS, prompts, run_all_cells  # noqa: E402 - the tests' Chromium
from test_lite import build_site, filled_lessons, local_only_page, serving, site_notebook  # noqa: E402 - the tests' site

LESSON = "01-boards-and-moves"
TIMING = "timing.ipynb"
FIRST_NOTEBOOK = "first.ipynb"
REPEAT = 3
# The loops timed in the page and in CPython: one home for both, printed as one JSON line.
LOOPS = f"""
import json, time
from ttt.limits import cpu_limit

def count(n):
    total = 0
    for i in range(n):
        total += i
    return total

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def best(work, limited):
    times = []
    for _ in range({REPEAT}):
        started = time.perf_counter()
        if limited:
            with cpu_limit(600):
                work()
        else:
            work()
        times.append(time.perf_counter() - started)
    return min(times)

WORK = {{"count to 5,000,000": lambda: count(5_000_000), "fib(30)": lambda: fib(30)}}
print("LOOPS", json.dumps({{name: [best(w, False), best(w, True)] for name, w in WORK.items()}}))
"""
FIRST = "1 + 1"


def load() -> str:
    processes = sum(1 for p in os.listdir("/proc") if p.isdigit())
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f", {processes} processes"


def size_table(site: Path) -> None:
    def mb(paths) -> float:
        return sum(p.stat().st_size for p in paths) / 2**20

    files = [p for p in site.rglob("*") if p.is_file()]
    core = [p for p in files if p.parent.name == "pyodide" and not p.name.endswith(".whl")]
    wheels = [p for p in files if p.name.endswith(".whl")]
    total = mb(files)
    print(f"\nthe site: {total:.1f} MB in {len(files):,} files")
    print(f"  Pyodide's core (the interpreter, its standard library)  {mb(core):6.1f} MB")
    print(f"  Python wheels ({len(wheels)}: ttt, what it and the kernel import)   {mb(wheels):6.1f} MB")
    print(f"  JupyterLab, the kernel's front end, the rest             {total - mb(core) - mb(wheels):6.1f} MB")


def open_and_run_all(browser, url: str, name: str) -> tuple[float, str]:
    """Open notebook `name` in the site, Run All; return the seconds to its last result and the outputs' text."""
    with local_only_page(browser) as page:
        started = time.monotonic()
        page.goto(f"{url}lab/index.html?path={name}")
        page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=120_000)
        run_all_cells(page, timeout=900_000)
        seconds = time.monotonic() - started
        assert all(p.strip() != "[ ]:" and "*" not in p for p in prompts(page)), prompts(page)
        assert page.outside == [], page.outside
        return seconds, "\n".join(page.locator(".jp-OutputArea-output").all_text_contents())


def loops_said(text: str) -> dict:
    return json.loads(text[text.index("LOOPS ") + 6:].splitlines()[0])


def in_the_page(browser, url: str) -> dict:
    """The kernel's start, lesson 1's run and the loops, in Chromium on the site."""
    start, _ = open_and_run_all(browser, url, FIRST_NOTEBOOK)
    lesson, _ = open_and_run_all(browser, url, f"{LESSON}.ipynb")
    return {"start": start, "lesson": lesson, "loops": loops_said(open_and_run_all(browser, url, TIMING)[1])}


def first_result_seconds() -> float:
    """A plain IPython kernel on CPython started here, to its first result."""
    from jupyter_client.manager import start_new_kernel

    started = time.monotonic()
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive(FIRST, timeout=120, output_hook=lambda message: None)
        return time.monotonic() - started
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def on_this_computer(lesson) -> dict:
    import nbclient

    seconds = {"start": first_result_seconds()}
    seconds["loops"] = loops_said(subprocess.run([sys.executable, "-c", LOOPS], capture_output=True, text=True, check=True).stdout)
    started = time.monotonic()
    nbclient.NotebookClient(lesson, timeout=600, kernel_name="python3").execute()
    seconds["lesson"] = time.monotonic() - started
    return seconds


def main() -> int:
    if CHROMIUM is None:
        print("Chromium is not installed: nothing measured (Debian: apt-get install chromium)")
        return 0
    from playwright.sync_api import sync_playwright

    print(load())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lessons = filled_lessons(work, [LESSON])
        print("building the site (make lite) ...", file=sys.stderr, flush=True)
        site = build_site(work, {**lessons, TIMING: site_notebook([LOOPS]), FIRST_NOTEBOOK: site_notebook([FIRST])})
        size_table(site)
        with serving(site) as url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                print("measuring in Chromium ...", file=sys.stderr, flush=True)
                page = in_the_page(browser, url)
            finally:
                browser.close()
        print("measuring on this computer ...", file=sys.stderr, flush=True)
        here = on_this_computer(lessons[f"{LESSON}.ipynb"])
    print(f"\n{'wall seconds':<52}{'the site (Pyodide)':>20}{'this computer (CPython)':>25}{'ratio':>9}")

    def row(label: str, ours: float, base: float) -> None:
        print(f"{label:<52}{ours:>20.3f}{base:>25.3f}{ours / base:>8.1f}x")

    row("a notebook's first result (the kernel's start)", page["start"], here["start"])
    row(f"lesson {LESSON[:2]}, filled: open and Run All", page["lesson"], here["lesson"])
    for name, (bare, limited) in page["loops"].items():
        base_bare, base_limited = here["loops"][name]
        row(f"{name}, bare", bare, base_bare)
        row(f"{name}, under cpu_limit", limited, base_limited)
        print(f"{'':<4}cpu_limit's cost: {limited / bare:.2f}x in the page, {base_limited / base_bare:.2f}x on CPython")
    print("(in the site, from opening the page: JupyterLab, Pyodide and every wheel loaded, then `1 + 1`; "
          "on this computer, a kernel's start and `1 + 1`; the lesson likewise)")
    print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
