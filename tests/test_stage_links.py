"""A submission's folder is written by students: staging copies its plain files and folders only, never
following, reading or copying a symbolic link, a device or a pipe (a link to another student's
notebook scored that student's grade; a link to /dev/zero filled the disk)."""

from __future__ import annotations

import functools
import os
import shutil

from grader.stage import _only_files


def test_links_devices_and_pipes_are_left_out_and_named(tmp_path):
    source = tmp_path / "submitted" / "mallory" / "lesson"
    (source / "data").mkdir(parents=True)
    (source / "lesson.ipynb").write_text("{}")
    (source / "data" / "kept.txt").write_text("kept")
    other = tmp_path / "submitted" / "alice" / "lesson"
    other.mkdir(parents=True)
    (other / "lesson.ipynb").write_text('{"alice": 1}')
    os.symlink(other / "lesson.ipynb", source / "copied.ipynb")
    os.symlink("/dev/zero", source / "zero.ipynb")
    os.symlink(other, source / "alice")
    os.mkfifo(source / "data" / "pipe")
    left_out: list[str] = []
    shutil.copytree(source, tmp_path / "staged", ignore=functools.partial(_only_files, left_out), symlinks=True)
    staged = sorted(str(p.relative_to(tmp_path / "staged")) for p in (tmp_path / "staged").rglob("*"))
    assert staged == ["data", "data/kept.txt", "lesson.ipynb"]
    assert sorted(left_out) == ["alice", "copied.ipynb", "pipe", "zero.ipynb"]
