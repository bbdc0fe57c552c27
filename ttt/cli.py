"""The ``ttt`` command: play in the terminal, run a match between players, draw a search tree.

    ttt play [--game G] [--as X|O|random] [--ai NAME]
    ttt match A B [-n N] [--seed S] [--json] [--game G]
    ttt players [--game G]
    ttt tree BOARD [--algorithm minimax|alphabeta|depth-limited] [--depth D] [--max-nodes N] [-o FILE]

Each subcommand is a function ``cmd_<name>(args) -> int`` added to the parser in `build_parser`.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from typing import Any, Callable, Optional, Sequence, TextIO

from ttt import agents
from ttt.errors import InvalidActionError, InvalidBoardError
from ttt.games import game_names, get_game
from ttt.play import Session, match, play_game, prepare

__all__ = ["main", "match", "play_game"]  # `from ttt.cli import play_game, match` still works



class UsageError(Exception):
    """A command-line mistake: printed as one line, exit status 2."""


# --- ttt play --------------------------------------------------------------------------------

TIME_HELP = "CPU seconds a move for players that take them (the big boards' default and mcts; default: 1)"

def _player_for(name: Optional[str], game: str, seed: Optional[int], *, seconds: Optional[float] = None) -> Callable[[Any], Any]:
    name = name or get_game(game).default_player
    if seconds is not None and not 0 < seconds < math.inf:
        raise UsageError(f"--time must be a positive, finite number of seconds, not {seconds}")
    try:
        return agents.make(name, seed, game=game, **_time_option(name, game, seconds))
    except ValueError as error:
        raise UsageError(str(error)) from None


def _time_option(name: str, game: str, seconds: Optional[float]) -> dict[str, float]:
    """Return ``{"seconds": seconds}`` if player `name` takes a time budget per move, else {}."""
    if seconds is None or name not in agents.names(game):
        return {}
    return {"seconds": seconds} if "seconds" in agents.options(name, game=game) else {}


def _ask(prompt: str, stdin: TextIO, stdout: TextIO) -> str:
    """Return one line typed by the player; raise EOFError at the end of input."""
    stdout.write(prompt)
    stdout.flush()
    line = stdin.readline()
    if not line:
        raise EOFError
    return line.strip()


def cmd_play(args: argparse.Namespace, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    """Play one game against a computer player in the terminal (as in the CSC 242 write-up and the win-block-best-square game)."""
    game = get_game(args.game)
    ai = _player_for(args.ai, args.game, args.seed, seconds=args.time)
    out = stdout.write
    out(game.instructions + "\n")
    try:
        side = args.side
        if side == "random":
            side = random.Random(args.seed).choice("XO")
            out(f"You play {side}.\n")
        while side not in ("X", "O"):
            side = _ask("Play as X or O? (X moves first) ", stdin, stdout).upper()
            if side not in ("X", "O"):
                out("Please type X or O.\n")
        out(f"The computer ({ai.__name__}) plays {'O' if side == 'X' else 'X'}.\n")
        _prepare(ai, out)
        session = Session(game, {side: None, ("O" if side == "X" else "X"): ai})
        while not session.over:
            out("\n" + game.format_numbered(session.state) + "\n")
            if session.computer_to_move:
                move = session.play_computer()
                out(f"The computer takes {game.move_name(move)}.\n")
            else:
                session.play(_ask_move(game, session.state, stdin, stdout))
        out("\n" + game.format_numbered(session.state) + "\n")
        won = session.winner
        if won is None:
            out("It's a tie!\n")
        elif won == side:
            out(f"Congratulations, {won}: you win!\n")
        else:
            out(f"{won} wins: the computer beat you this time.\n")
        return 0
    except (EOFError, KeyboardInterrupt):
        out("\nGame abandoned. Goodbye!\n")
        return 0


def _prepare(player: Any, out: Callable[[str], Any]) -> None:
    """Do a player's work before its first move (the compiled search compiles), saying so."""
    prepare(player, lambda sentence: out(sentence + "\n"))


def _side(text: str) -> str:
    """Return 'X', 'O' or 'random' from what was typed after --as, in any case."""
    return text.upper() if text.upper() in ("X", "O") else text.lower()


def _ask_move(game: Any, state: Any, stdin: TextIO, stdout: TextIO) -> Any:
    """Return a legal move typed by the player, asking again (with the reason) until it is one."""
    prompt = game.move_prompt
    while True:
        text = _ask(prompt, stdin, stdout)
        try:
            return game.parse_move(state, text)
        except InvalidActionError as error:
            stdout.write(f"{error}\nTry again.\n")


# --- ttt match -------------------------------------------------------------------------------


def cmd_match(args: argparse.Namespace, stdout: TextIO = sys.stdout) -> int:
    """Play N games between two players, alternating who starts, and print the tally."""
    if args.n < 1:
        raise UsageError(f"-n must be at least 1, not {args.n}")
    game = get_game(args.game)
    seed = args.seed
    seconds = args.time
    a = _player_for(args.a, args.game, seed, seconds=seconds)
    b = _player_for(args.b, args.game, None if seed is None else seed + 1, seconds=seconds)
    _prepare(a, sys.stderr.write)  # (on stderr: --json prints one object on stdout)
    if b.__name__ != a.__name__:
        _prepare(b, sys.stderr.write)
    outcome = match(game, a, b, games=args.n, names=(args.a, args.b), progress=not args.json and sys.stderr.isatty())
    if args.json:
        stdout.write(json.dumps(outcome.to_dict()) + "\n")
        return 0
    width = max(len(n) for n in outcome.results) + 2
    stdout.write(f"{args.n} games of {game.name}, alternating who starts\n")
    stdout.write(f"{'player':<{width}}{'wins':>6}{'ties':>6}{'losses':>8}\n")
    for name, r in outcome.results.items():
        stdout.write(f"{name:<{width}}{r['wins']:>6}{r['ties']:>6}{r['losses']:>8}\n")
    return 0


# --- ttt players -------------------------------------------------------------------------------


def cmd_players(args: argparse.Namespace, stdout: TextIO = sys.stdout) -> int:
    """List the registered players of a game, one a line with what it does."""
    for name, doc in agents.describe(args.game).items():
        stdout.write(f"{name:<14}{doc}\n")
    from ttt.agents.bigboards import installed_engines

    said = installed_engines(args.game)
    if said:
        stdout.write(f"\n{said}\n")
    return 0


# --- ttt tree ----------------------------------------------------------------------------------

TREE_FORMATS = (".svg", ".png", ".dot")


def cmd_tree(args: argparse.Namespace, stdout: Optional[TextIO] = None) -> int:
    """Draw the search tree from a position (``ttt.draw.draw_tree``) into -o's file, or DOT to stdout.

    The file's extension picks the format: .dot needs nothing more, .svg and .png need
    Graphviz's dot program.
    """
    stdout = stdout or sys.stdout
    from pathlib import Path

    import graphviz

    from ttt.draw import DOT_MISSING, draw_tree
    from ttt.trace import record

    game = get_game(args.game)
    output = Path(args.output) if args.output else None
    if output is not None and output.suffix.lower() not in TREE_FORMATS:
        raise UsageError(f"cannot write {str(output)!r}: the file name must end in .svg, .png or .dot")
    if args.depth is not None and args.depth < 1:
        raise UsageError(f"--depth must be at least 1, not {args.depth}")
    if args.max_nodes < 1:
        raise UsageError(f"--max-nodes must be at least 1, not {args.max_nodes}")
    if args.algorithm == "depth-limited":
        if args.depth is None:
            raise UsageError("--algorithm depth-limited needs --depth D, the number of moves to look ahead")
        if game.evaluate is None:
            raise UsageError(
                f"{game.name} has no heuristic for a depth-limited search; use minimax or alphabeta "
                "(the 3x3 game is small enough to search to the end), or --game nine-board / ultimate"
            )
    state = game.parse(args.board)
    trace = record(game, state, algorithm=args.algorithm, ordered=args.ordered, depth=args.depth)
    dot = draw_tree(trace, max_depth=args.max_depth, max_nodes=args.max_nodes)
    if output is None:
        stdout.write(dot.source)
        return 0
    try:
        if output.suffix.lower() == ".dot":
            output.write_text(dot.source, encoding="utf-8")
        else:
            output.write_bytes(dot.pipe(format=output.suffix.lower()[1:]))
    except graphviz.ExecutableNotFound:
        raise UsageError(f"cannot write {output}: {DOT_MISSING} A .dot file needs no dot program.") from None
    except OSError as error:
        raise UsageError(f"cannot write {output}: {error.strerror or error}") from None
    result = trace.result
    best = "" if result is None or result.move is None else f", best move {game.move_name(result.move)}"
    value = "" if result is None else f"; value {result.value:g}{best}"
    stdout.write(f"wrote {output}: {args.algorithm} visited {trace.node_count} nodes, {trace.cutoffs} cut-offs{value}\n")
    return 0


# --- the parser ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """Return the ``ttt`` argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="ttt", description="Tic-tac-toe for teaching game-playing AI.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add_game(p: argparse.ArgumentParser) -> None:
        p.add_argument("--game", default="tictactoe", choices=game_names(), help="which game (default: tictactoe)")

    p = sub.add_parser("play", help="play against the computer in the terminal")
    add_game(p)
    p.add_argument("--as", dest="side", choices=["X", "O", "random"], type=_side,
                   help="your side (default: asked; X moves first)")
    p.add_argument("--ai", help="the computer's player (default: the strongest; see `ttt players`)")
    p.add_argument("--seed", type=int, help="seed for the computer's and the side's randomness")
    p.add_argument("--time", type=float, metavar="SECONDS", help=TIME_HELP)
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("match", help="play N games between two players and tally the results")
    add_game(p)
    p.add_argument("a", help="first player's name (moves first in game 1)")
    p.add_argument("b", help="second player's name")
    p.add_argument("-n", type=int, default=100, help="number of games (default: 100)")
    p.add_argument("--seed", type=int, help="seed for the players' randomness (B gets seed+1)")
    p.add_argument("--time", type=float, metavar="SECONDS", help=TIME_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=cmd_match)

    p = sub.add_parser("players", help="list the players you can name")
    add_game(p)
    p.set_defaults(func=cmd_players)

    p = sub.add_parser("tree", help="draw the search tree from a position (.svg, .png or .dot)")
    add_game(p)
    p.add_argument("board", metavar="BOARD", help="the position, row by row, such as XO./.X./...")
    p.add_argument("--algorithm", default="alphabeta", choices=["minimax", "alphabeta", "depth-limited"],
                   help="the search to draw (default: alphabeta)")
    p.add_argument("--ordered", action="store_true", help="try the most promising moves first")
    p.add_argument("--depth", type=int, help="how many moves ahead a depth-limited search looks")
    p.add_argument("--max-nodes", type=int, default=300, help="draw at most N nodes; the rest become '… N more' (default: 300)")
    p.add_argument("--max-depth", type=int, help="draw no deeper than this; deeper nodes become '… N more'")
    p.add_argument("-o", "--output", help="the file to write: .svg, .png or .dot (default: DOT text to stdout)")
    p.set_defaults(func=cmd_tree)

    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``ttt`` command; return its exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (UsageError, InvalidBoardError, InvalidActionError, ValueError) as error:
        print(f"ttt: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nInterrupted.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
