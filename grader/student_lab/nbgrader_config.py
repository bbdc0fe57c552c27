"""nbgrader settings of the students' JupyterLab that `make lab` opens (it puts this folder on
JUPYTER_CONFIG_PATH, so an instructor's own JupyterLab is unchanged).

Validate (the button, and `nbgrader validate`) runs the hidden tests too, as the instructor's
grading runs them (`ttt-grader check`): it lists a function that passes the visible tests and
fails the hidden ones as failed, and never says "Success" for the visible tests alone. Another
deployment (a JupyterHub, say) gets the same with these lines in its students' nbgrader_config.py.
"""

from grader.selfcheck import validate_finish, validate_start

c = get_config()  # noqa: F821  (nbgrader provides get_config)
c.Execute.on_notebook_start = validate_start
c.Execute.on_cell_start = validate_finish
