"""The instructor's side of ttt: the nbgrader course and the checks the lessons' hidden tests call.

``grader.checks`` compares a student's functions with the reference (``ttt``); ``grader.course``
writes the nbgrader course directory. ``grader`` uses ``ttt``; ``ttt`` never imports ``grader``.
"""
