"""nbgrader's Validate in the students' JupyterLab (``grader/student_lab/``), answered without blocking
the server: this server extension runs nbgrader's validation of the visible tests in a process of its
own (``python -m grader.validate NOTEBOOK``) while the server goes on answering, and its dialog says
that the hidden tests did not run and how to run them, never "Success" for the visible tests alone."""

from __future__ import annotations
import json
import os
import sys
from pathlib import Path
from grader.selfcheck import VISIBLE_ONLY


def visible_tests(path: str | Path) -> dict:
    """nbgrader's Validate on the notebook at `path` (the visible tests only), as its Validate
    handler runs it (the same configuration, the same answer); run in a process of its own."""
    from jupyter_core.paths import jupyter_config_path
    from nbgrader.apps import NbGrader
    from nbgrader.validator import Validator

    app = NbGrader()
    app.config_file_paths.append([os.getcwd(), *jupyter_config_path()])
    app.load_config_file()
    return Validator(config=app.config).validate(str(path))


# nbgrader's Validate dialog has no message of its own but "Success" and "The following cell failed:"
# (its front end); a failing cell's error is shown as HTML, so the note comes as such an error, with
# a style that hides, in that dialog only, the heading and the (empty) cell above it, and wraps it
_NOTE = ("<style>#validation-message:has(.ttt-visible-only) > div:nth-child(-n+2) {{display: none}}"
         " .ttt-note {{white-space: normal; font-family: var(--jp-ui-font-family); font-size: var(--jp-ui-font-size1)}}"
         "</style><div class='ttt-note'>{}</div>")


def validate_answer(results: dict, name: str) -> dict:
    """What Validate's dialog shows (nbgrader's answer, reshaped): a failing cell's code cut to its
    first lines, so that its error shows without scrolling, and always that the hidden tests did
    not run and how to run them, never nbgrader's "Success" for the visible tests alone."""
    import html
    import re

    note = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(VISIBLE_ONLY.format(name=name)))
    if results.get("type_changed") or results.get("changed"):
        return {"success": True, "value": results}
    failed = results.get("failed") or []
    if not failed:
        passed = f"<p class='ttt-visible-only'><b>Your notebook passes the visible tests.</b></p><p>{note}</p>"
        return {"success": True, "value": {"failed": [{"source": "", "error": _NOTE.format(passed)}]}}
    cells = [{"source": "\n".join(c["source"].splitlines()[:2]) + "\n…", "error": c["error"]} for c in failed]
    cells[-1]["error"] += "\n" + _NOTE.format(note)
    return {"success": True, "value": {"failed": cells}}


def _validate_handler():
    """The Tornado handler of Validate's request: nbgrader's (its path checks, its configuration),
    but the validation runs in a process of its own while the server goes on answering."""
    import asyncio

    from nbgrader.server_extensions.validate_assignment.handlers import ValidateAssignmentHandler
    from tornado import web

    class Validate(ValidateAssignmentHandler):
        @web.authenticated
        async def post(self):
            try:
                path = self.get_argument("path")
            except web.MissingArgumentError:
                path = self.get_json_body()["path"]
            root = Path(self.root_dir).resolve()
            target = (root / path).resolve()
            if not target.is_relative_to(root):
                raise web.HTTPError(403, "Access denied: path outside allowed directory")
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "grader.validate", str(target), cwd=os.getcwd(),
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await process.communicate()
            try:
                answer = validate_answer(json.loads(out.decode().strip().splitlines()[-1]), target.name)
            except (ValueError, IndexError):
                lines = err.decode(errors="replace").strip().splitlines()
                answer = {"success": False, "value": lines[-1] if lines else "Validate could not run"}
            self.finish(json.dumps(answer))

    return Validate


def _jupyter_server_extension_points():
    return [{"module": "grader.validate"}]


def _load_jupyter_server_extension(server) -> None:
    """Jupyter server extension (the students' JupyterLab, ``grader/student_lab/``): nbgrader's
    Validate request answered by ``_validate_handler`` in place of nbgrader's own handler, which
    validates inside the server's event loop (the whole server waits until it is done)."""
    from jupyter_server.utils import url_path_join
    from nbgrader.server_extensions.validate_assignment.handlers import NbGraderVersionHandler

    web_app = server.web_app
    web_app.settings["root_dir"] = server.root_dir
    base = web_app.settings["base_url"]
    web_app.add_handlers(".*$", [(url_path_join(base, "assignments/validate"), _validate_handler()),
                                 (url_path_join(base, "nbgrader_version"), NbGraderVersionHandler)])


if __name__ == "__main__" and len(sys.argv) == 2:  # the Validate handler's process
    import warnings

    warnings.filterwarnings("ignore")
    print(json.dumps(visible_tests(sys.argv[1])))
