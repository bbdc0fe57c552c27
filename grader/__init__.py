"""The instructor's side of ttt: the nbgrader course and the checks the lessons' hidden tests call.

``grader.checks`` compares a student's functions with the reference (``ttt``); ``grader.course``
writes the nbgrader course directory. ``grader`` uses ``ttt``; ``ttt`` never imports ``grader``.
"""

import sys as _sys

# jsonschema (which nbformat and nbgrader validate with) imports rfc3987_syntax wherever it is
# installed (jupyter_events asks for it) to check strings of the "iri" format, and that import builds
# 38 lark parsers: 2.2 CPU seconds in every process that reads a notebook, a third of the fixed cost
# of a lesson's check. No schema the grader validates has that format, so its processes go without it
# (jsonschema then leaves "iri" unchecked, as where the package is not installed).
_sys.modules.setdefault("rfc3987_syntax", None)

