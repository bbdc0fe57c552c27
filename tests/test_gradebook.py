"""A course's new gradebook: made in the grader's own process, the same as nbgrader's own."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import nbgrader.api

from grader.course_ops import release
from grader.gradebook import new_gradebook


def _schema(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as db:
        return {name: sql for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_master")
                if kind == "table" and name != "alembic_version"}


def _version(path: Path) -> list[tuple[str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT version_num FROM alembic_version").fetchall()


def test_a_new_gradebook_has_nbgraders_tables_and_migration_head(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    nbgrader.api.Gradebook(f"sqlite:///{tmp_path / 'theirs.db'}").close()
    new_gradebook(f"sqlite:///{tmp_path / 'ours.db'}")
    assert _schema(tmp_path / "ours.db") == _schema(tmp_path / "theirs.db")
    assert _version(tmp_path / "ours.db") == _version(tmp_path / "theirs.db") == [(nbgrader.api.get_alembic_version(),)]
    with nbgrader.api.Gradebook(f"sqlite:///{tmp_path / 'ours.db'}") as gradebook:
        gradebook.add_student("ada")
        assert [s.id for s in gradebook.students] == ["ada"]


def test_a_gradebook_that_is_there_is_left_as_it_is(tmp_path):
    kept = tmp_path / "gradebook.db"
    kept.write_bytes(b"not a database")
    new_gradebook(f"sqlite:///{kept}")
    new_gradebook("postgresql://nowhere/gradebook")  # another database: nbgrader's to make
    assert kept.read_bytes() == b"not a database"


def test_a_release_starts_no_alembic_process(tmp_path, monkeypatch):
    def started(*_args, **_kwargs):
        raise AssertionError("the release asked for alembic's head in a process of its own")

    monkeypatch.setattr(nbgrader.api, "get_alembic_version", started)
    assert release(tmp_path / "course", lessons=["01-boards-and-moves"]) == ["01-boards-and-moves"]
    with nbgrader.api.Gradebook(f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}") as gradebook:
        assert [a.name for a in gradebook.assignments] == ["01-boards-and-moves"]
        assert gradebook.find_assignment("01-boards-and-moves").num_submissions == 0
    assert (tmp_path / "course" / "release" / "01-boards-and-moves" / "01-boards-and-moves.ipynb").is_file()
