"""``python -m ttt``: the same as the ``ttt`` command."""

import sys

from ttt.cli import main

if __name__ == "__main__":  # imported as a module, it does nothing
    sys.exit(main())
