"""initial_state repeats one row ([[EMPTY] * 3] * 3): a move in one row would show in all three; everything else right.

expect: initial_state=fail player=pass actions=pass result=pass winner=pass terminal=pass utility=pass minimax=pass
message: initial_state=one and the same list
"""

from raise_exception import *  # noqa: F401,F403  (the rest of the file as in raise_exception.py)
from raise_exception import EMPTY


def initial_state():
    return [[EMPTY] * 3] * 3
