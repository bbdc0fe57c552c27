"""The exceptions a student or instructor sees: each message says what is wrong and why."""


class InvalidActionError(ValueError):
    """An action (a move) that cannot be played on the board it was given."""


class InvalidBoardError(ValueError):
    """A board that is malformed, or not a position that a real game can reach."""
