"""``python -m grader``: the same as ``ttt-grader``."""

import sys

from grader.cli import main

if __name__ == "__main__":  # imported as a module, it does nothing
    sys.exit(main())
