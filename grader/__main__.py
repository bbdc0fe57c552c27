"""``python -m grader``: the same as ``ttt-grader``."""

import sys

from grader.cli import main

sys.exit(main())
