"""``python -m ttt``: the same as the ``ttt`` command."""

import sys

from ttt.cli import main

sys.exit(main())
