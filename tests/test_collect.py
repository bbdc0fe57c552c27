"""``ttt-grader collect`` on what LMS exports and students really hand in: Canvas, Moodle and
Blackboard shapes, nested archives, names in any script, collisions, several exports at once,
submission times, hostile members and zip bombs. Every case goes through the real command."""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import grading_course as gc  # noqa: E402

from grader.cli import main  # noqa: E402
from grader.collect import MAX_MEMBER_BYTES, collect  # noqa: E402

L1, L2 = "01-boards-and-moves", "02-who-won"


@pytest.fixture
def course(tmp_path):
    """A course with two lessons in source/ (all collect needs)."""
    root = tmp_path / "course"
    for name in (L1, L2):
        (root / "source" / name).mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(), root / "source" / name / f"{name}.ipynb")
    return root


def notebook(tag: str) -> str:
    """A notebook whose one cell says ``tag``, so the test can tell which one was placed."""
    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(tag)]))


def placed(course: Path, student: str, lesson: str) -> str | None:
    path = course / "submitted" / student / lesson / f"{lesson}.ipynb"
    return nbformat.read(path, as_version=4).cells[0].source if path.exists() else None


def students(course: Path) -> list[str]:
    return sorted(p.name for p in (course / "submitted").iterdir()) if (course / "submitted").exists() else []


def zipped(path: Path, members: dict, times: dict | None = None) -> Path:
    """Writes a zip file of {name: text or bytes}; ``times`` gives a member's date_time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(times or {}).get(name, (2026, 11, 20, 9, 0, 0)))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return path


def folders(inbox: Path, names, lesson: str = L1) -> Path:
    """Writes a folder per student holding one notebook that says the student's name."""
    for name in names:
        (inbox / name).mkdir(parents=True)
        (inbox / name / f"{lesson}.ipynb").write_text(notebook(name))
    return inbox


def zip_bytes(members: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def run(source: Path, course: Path, capsys) -> tuple[int, str]:
    code = main(["collect", str(source), "--course", str(course)])
    return code, capsys.readouterr().out


# -- a nested archive belongs to the outer member's owner ------------------------------------

@pytest.mark.parametrize("outer, owner", [
    ("alice_11_22_work.zip", "alice_11"),  # Canvas
    ("Alice Smith_11_assignsubmission_file_/work.zip", "alice_smith_11"),  # Moodle
    ("Lesson1_alice_attempt_2026-11-20-10-00-00_work.zip", "alice"),  # Blackboard
])
def test_a_nested_archive_belongs_to_the_outer_members_owner(course, tmp_path, capsys, outer, owner):
    inner = zip_bytes({f"bob/{L1}.ipynb": notebook("alice's work"),
                       f"bob_99_98_{L2}.ipynb": notebook("alice's lesson 2")})
    export = zipped(tmp_path / "export.zip", {outer: inner, f"carol_33_44_{L1}.ipynb": notebook("carol")})
    code, out = run(export, course, capsys)
    assert code == 0, out
    assert placed(course, owner, L1) == "alice's work" and placed(course, owner, L2) == "alice's lesson 2"
    assert not any(s.startswith("bob") for s in students(course))


# -- LMS user ids stay in the student id; names in any script stay readable and unique --------

def test_lms_user_ids_keep_two_students_of_one_name_apart(course, tmp_path, capsys):
    export = zipped(tmp_path / "export.zip", {
        f"smithjohn_123_456_{L1}.ipynb": notebook("canvas 123"),
        f"smithjohn_789_111_{L1}.ipynb": notebook("canvas 789"),
        f"John Smith_5_assignsubmission_file_/{L1}.ipynb": notebook("moodle 5"),
        f"John Smith_6_assignsubmission_file_/{L1}.ipynb": notebook("moodle 6"),
        f"Lesson1_jsmith1_attempt_2026-11-20-10-00-00_{L1}.ipynb": notebook("blackboard jsmith1"),
        f"Lesson1_jsmith2_attempt_2026-11-20-10-00-00_{L1}.ipynb": notebook("blackboard jsmith2"),
    })
    code, out = run(export, course, capsys)
    assert code == 0, out
    assert students(course) == ["john_smith_5", "john_smith_6", "jsmith1", "jsmith2", "smithjohn_123", "smithjohn_789"]
    assert placed(course, "smithjohn_789", L1) == "canvas 789" and placed(course, "john_smith_6", L1) == "moodle 6"


def test_names_in_any_script_are_kept(course, tmp_path, capsys):
    inbox = folders(tmp_path / "inbox", ("张伟", "李娜"))
    zipped(inbox / "moodle.zip", {f"王芳_7_assignsubmission_file_/{L2}.ipynb": notebook("王芳"),
                                  f"Zoë Ægir_8_assignsubmission_file_/{L2}.ipynb": notebook("Zoë")})
    zipped(inbox / "canvas.zip", {f"김민준_31_41_{L2}.ipynb": notebook("김민준")})
    code, out = run(inbox, course, capsys)
    assert code == 0, out
    assert students(course) == sorted(["张伟", "李娜", "王芳_7", "zoë_ægir_8", "김민준_31"])
    assert "unknown" not in out and placed(course, "李娜", L1) == "李娜"


@pytest.mark.slow
def test_a_student_named_in_another_script_is_graded_by_real_nbgrader(tmp_path, capsys):
    from grader.autograde import autograde

    course = gc.make_course(tmp_path / "course")
    inbox = tmp_path / "inbox"
    (inbox / "张伟").mkdir(parents=True)
    nbformat.write(gc.solved(course), inbox / "张伟" / "tiny.ipynb")
    assert main(["collect", str(inbox), "--course", str(course)]) == 0
    [outcome] = autograde(course, jobs=1, progress=False)
    assert (outcome.student, outcome.score, outcome.max_score, outcome.error) == ("张伟", 3, 3, "")


def test_a_collision_is_an_error_not_a_merge(course, tmp_path, capsys):
    inbox = folders(tmp_path / "inbox", ("Ann Lee", "ann_lee"))
    zipped(inbox / "moodle.zip", {f"Bo Wu_1_assignsubmission_file_/{L1}.ipynb": notebook("a"),
                                  f"bo wu_1_assignsubmission_file_/{L2}.ipynb": notebook("b")})
    code, out = run(inbox, course, capsys)
    assert code == 1
    assert "'Ann Lee' and 'ann_lee' would both be student 'ann_lee'" in out
    assert "'Bo Wu_1' and 'bo wu_1' would both be student 'bo_wu_1'" in out
    assert students(course) == []


def test_a_collision_with_an_earlier_collect_is_an_error(course, tmp_path, capsys):
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "Ann Lee").mkdir(parents=True)
    (first / "Ann Lee" / f"{L1}.ipynb").write_text(notebook("first"))
    (second / "ann lee").mkdir(parents=True)
    (second / "ann lee" / f"{L2}.ipynb").write_text(notebook("second"))
    assert run(first, course, capsys)[0] == 0
    code, out = run(second, course, capsys)
    assert code == 1 and "'Ann Lee' and 'ann lee' would both be student 'ann_lee'" in out
    assert placed(course, "ann_lee", L1) == "first" and placed(course, "ann_lee", L2) is None


# -- a folder of several exports keeps each student -------------------------------------------

def test_a_folder_of_several_exports_keeps_each_student(course, tmp_path, capsys):
    inbox = tmp_path / "inbox"
    zipped(inbox / "week2" / "canvas.zip", {f"s{k}_{100 + k}_{k}_{L1}.ipynb": notebook(f"c{k}") for k in range(8)})
    zipped(inbox / "week3" / "moodle.zip", {f"M{k}_{k}_assignsubmission_file_/{L2}.ipynb": notebook(f"m{k}") for k in range(8)})
    zipped(inbox / "week4" / "blackboard.zip",
           {f"Lesson1_b{k}_attempt_2026-11-20-10-00-00_{L1}.ipynb": notebook(f"b{k}") for k in range(8)})
    code, out = run(inbox, course, capsys)
    assert code == 0, out
    assert len(students(course)) == 24 and "week2" not in students(course) and "week3" not in students(course)
    assert out.splitlines()[-1] == f"24 placed in {course}/submitted/ (24 students)"


# -- the submission time decides, whatever the collect order -----------------------------------

@pytest.mark.parametrize("shape", ["canvas", "moodle", "blackboard"])
@pytest.mark.parametrize("order", ["older first", "newer first"])
def test_the_newer_submission_wins_whatever_the_order(course, tmp_path, capsys, shape, order):
    def export(name, tag, day):
        member = {"canvas": f"ada_1_{day}_{L1}.ipynb", "moodle": f"Ada_1_assignsubmission_file_/{L1}.ipynb",
                  "blackboard": f"Lesson1_ada_attempt_2026-11-{day:02d}-10-00-00_{L1}.ipynb"}[shape]
        # Blackboard's own time is in the name: the zip's member time says the opposite, and loses
        stamp = (2026, 11, 30 - day if shape == "blackboard" else day, 12, 0, 0)
        return zipped(tmp_path / name, {member: notebook(tag)}, {member: stamp})

    older, newer = export("older.zip", "older", 3), export("newer.zip", "newer", 10)
    for path in ([older, newer] if order == "older first" else [newer, older]):
        assert run(path, course, capsys)[0] == 0
    student = {"canvas": "ada_1", "moodle": "ada_1", "blackboard": "ada"}[shape]
    assert placed(course, student, L1) == "newer"
    assert (course / "submitted" / student / L1 / "timestamp.txt").read_text().startswith("2026-11-10 ")


def test_two_different_notebooks_with_one_time_are_an_error(course, tmp_path, capsys):
    export = zipped(tmp_path / "export.zip", {f"ada/{L1}.ipynb": notebook("one"), f"ada/{L1} (1).ipynb": notebook("two")})
    code, out = run(export, course, capsys)
    assert code == 1 and "have the same submission time and differ" in out and students(course) == []


# -- every skipped member is listed with why ----------------------------------------------------

@pytest.mark.parametrize("prefix", ["ada_1_2_", "Ada_1_assignsubmission_file_/", "Lesson1_ada_attempt_2026-11-20-10-00-00_"])
def test_every_skipped_member_is_listed_with_why(course, tmp_path, capsys, prefix):
    export = zipped(tmp_path / "export.zip", {
        f"{prefix}{L1}.ipynb": notebook("ada"),
        f"../{L1}.ipynb": notebook("up"),
        f"/abs/{L1}.ipynb": notebook("abs"),
        f"..\\..\\evil\\{L1}.ipynb": notebook("backslash"),
        f"C:\\Users\\x\\{L1}.ipynb": notebook("drive"),
        f"{prefix}tictactoe.py": "def player(board): ...",
        f"__MACOSX/._{L1}.ipynb": b"\0\5\26\7",
        f"{prefix}notes.txt": "hello",
    })
    code, out = run(export, course, capsys)
    assert students(course) == [("ada" if "attempt" in prefix else "ada_1")]
    for member, why in [(f"../{L1}.ipynb", "leaves the archive"), (f"/abs/{L1}.ipynb", "leaves the archive"),
                        (f"..\\..\\evil\\{L1}.ipynb", "leaves the archive"), (f"C:\\Users\\x\\{L1}.ipynb", "leaves the archive"),
                        (f"{prefix}tictactoe.py", "a Python file, not a notebook"),
                        (f"__MACOSX/._{L1}.ipynb", "housekeeping"), (f"{prefix}notes.txt", "not a notebook")]:
        assert f"export.zip:{member}: " in out and why in out.split(f"export.zip:{member}: ")[1].splitlines()[0], member
    assert "skipped, not submissions (7):" in out and code == 0


# -- extraction is capped ------------------------------------------------------------------------

def test_a_zip_bomb_is_stopped_with_a_clear_message(course, tmp_path, capsys):
    bomb = tmp_path / "canvas.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr(f"eve_1_2_{L1}.ipynb", notebook("eve"))
        with archive.open(f"mal_3_4_{L1}.ipynb", "w") as member:  # 256 MB of spaces
            for _ in range(256):
                member.write(b" " * 2**20)
    assert bomb.stat().st_size < 300 * 2**10
    code, out = run(bomb, course, capsys)
    assert code == 0, out  # eve's is placed; the bomb is listed as not placed, with why
    assert out.splitlines()[-1].startswith(f"1 placed in {course}/submitted/ (1 student); 1 not placed: "
                                           f"canvas.zip:mal_3_4_{L1}.ipynb: expands to more than {MAX_MEMBER_BYTES / 2**20:g} MB")
    assert students(course) == ["eve_1"]
    assert not any(p.stat().st_size > MAX_MEMBER_BYTES for p in (course / "submitted").rglob("*"))


def test_the_member_count_and_total_size_and_depth_are_capped(course, tmp_path, capsys):
    export = zipped(tmp_path / "export.zip", {f"s{k}_{k}_1_{L1}.ipynb": notebook(str(k)) for k in range(40)})
    report = collect(export, course, max_members=25)
    assert len(report.placed) == 25 and any("more than 25 archive members" in e for e in report.stopped)
    assert report.exit_status == 1  # some members were never looked at
    assert sum("over the cap on members" in why or "collect stopped" in why for _, why in report.skipped) == 15
    report = collect(export, course, max_total_bytes=4 * len(notebook("1")))
    assert any("GB in all (the cap)" in e for e in report.stopped) and len(report.placed) <= 4
    deep = zip_bytes({f"{L1}.ipynb": notebook("deep")})
    for _ in range(4):
        deep = zip_bytes({"inner.zip": deep})
    report = collect(zipped(tmp_path / "deep.zip", {"ann_1_2_work.zip": deep}), course)
    assert any("not opened (at most 3 deep)" in why for _, why in report.skipped)


# -- no correct work lost to form ------------------------------------------------------------------

def test_a_notebook_with_a_huge_picture_is_placed_with_its_outputs_removed(course, tmp_path, capsys):
    import base64
    import os

    from grader.collect import MAX_NOTEBOOK_BYTES

    picture = base64.b64encode(os.urandom(41 * 2**20)).decode()  # a 41 MB picture, 55 MB as text
    code_cell = nbformat.v4.new_code_cell("def player(board):\n    return 'X'", outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": picture})])
    big = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("ada's work"), code_cell]))
    assert 55_000_000 < len(big) < 60_000_000
    export = zipped(tmp_path / "export.zip", {f"ada_1_2_{L1}.ipynb": big, f"bob_3_4_{L1}.ipynb": notebook("bob")})
    code, out = run(export, course, capsys)
    assert code == 0, out
    assert placed(course, "ada_1", L1) == "ada's work" and placed(course, "bob_3", L1) == "bob"
    path = course / "submitted" / "ada_1" / L1 / f"{L1}.ipynb"
    kept = nbformat.read(path, as_version=4)
    assert kept.cells[1].source == "def player(board):\n    return 'X'" and kept.cells[1].outputs == []
    assert path.stat().st_size < MAX_NOTEBOOK_BYTES
    assert "placed with its outputs removed" in out and "its code is what is graded" in out


def test_of_two_copies_with_one_time_the_lms_s_own_member_is_kept(course, tmp_path, capsys):
    at = (2026, 11, 20, 9, 0, 0)
    inner = zip_bytes({f"{L1}.ipynb": notebook("the copy in the zip")})
    export = zipped(tmp_path / "export.zip", {f"ada_1_2_{L1}.ipynb": notebook("the LMS's own"), "ada_1_2_work.zip": inner},
                    times={f"ada_1_2_{L1}.ipynb": at, "ada_1_2_work.zip": at})
    code, out = run(export, course, capsys)
    assert code == 0, out
    assert placed(course, "ada_1", L1) == "the LMS's own"
    assert f"kept export.zip:ada_1_2_{L1}.ipynb, not export.zip:ada_1_2_work.zip:{L1}.ipynb (the same submission time: " \
           "the LMS's own member is kept over a copy inside a zip file in it)" in out


# -- one student under two LMS formats is one student --------------------------------------------

CANVAS_ALICE, MOODLE_ALICE = "smithalice_10001_555_", "Alice Smith_10001_assignsubmission_file_/"


def test_one_lms_user_id_under_two_formats_is_one_student(course, tmp_path, capsys):
    export = zipped(tmp_path / "export.zip", {f"{CANVAS_ALICE}{L1}.ipynb": notebook("canvas lesson 1"),
                                              f"{MOODLE_ALICE}{L2}.ipynb": notebook("moodle lesson 2")})
    code, out = run(export, course, capsys)
    assert code == 0, out
    assert students(course) == ["alice_smith_10001"]  # the first id in alphabetical order
    assert placed(course, "alice_smith_10001", L1) == "canvas lesson 1"
    assert placed(course, "alice_smith_10001", L2) == "moodle lesson 2"
    assert (f"note: alice_smith_10001 (Moodle, export.zip:{MOODLE_ALICE}{L2}.ipynb) and smithalice_10001 (Canvas, "
            f"export.zip:{CANVAS_ALICE}{L1}.ipynb) are one student (LMS user id 10001, the same name): "
            "placed as alice_smith_10001") in out


def test_one_student_in_two_formats_for_one_lesson_keeps_the_newer_and_says_so(course, tmp_path, capsys):
    older, newer = (2026, 11, 20, 9, 0, 0), (2026, 11, 21, 9, 0, 0)
    canvas = zipped(tmp_path / "canvas.zip", {f"{CANVAS_ALICE}{L1}.ipynb": notebook("canvas, older")},
                    {f"{CANVAS_ALICE}{L1}.ipynb": older})
    moodle = zipped(tmp_path / "moodle.zip", {f"{MOODLE_ALICE}{L1}.ipynb": notebook("moodle, newer")},
                    {f"{MOODLE_ALICE}{L1}.ipynb": newer})
    code, out = run(canvas, course, capsys)  # collected apart: the second collect finds the first's student
    assert code == 0 and students(course) == ["smithalice_10001"]
    code, out = run(moodle, course, capsys)
    assert code == 0, out
    assert students(course) == ["smithalice_10001"]  # the id the earlier collect used
    assert placed(course, "smithalice_10001", L1) == "moodle, newer"
    assert "alice_smith_10001 (Moodle, moodle.zip:" in out and "smithalice_10001 (Canvas, collected before)" in out
    code, out = run(canvas, course, capsys)  # the older one again: the newer stays, and the report says why
    assert code == 0, out
    assert placed(course, "smithalice_10001", L1) == "moodle, newer" and students(course) == ["smithalice_10001"]
    assert f"kept the notebook collected before (2026-11-21 09:00:00.000000 UTC), not canvas.zip:{CANVAS_ALICE}{L1}.ipynb" in out


def test_one_student_in_two_formats_in_one_export_keeps_the_newer(course, tmp_path, capsys):
    export = zipped(tmp_path / "export.zip", {f"{CANVAS_ALICE}{L1}.ipynb": notebook("canvas, newer"),
                                              f"{MOODLE_ALICE}{L1}.ipynb": notebook("moodle, older")},
                    {f"{CANVAS_ALICE}{L1}.ipynb": (2026, 11, 22, 9, 0, 0), f"{MOODLE_ALICE}{L1}.ipynb": (2026, 11, 21, 9, 0, 0)})
    code, out = run(export, course, capsys)
    assert code == 0, out
    assert students(course) == ["alice_smith_10001"] and placed(course, "alice_smith_10001", L1) == "canvas, newer"
    assert (f"alice_smith_10001/{L1}: kept export.zip:{CANVAS_ALICE}{L1}.ipynb, "
            f"not export.zip:{MOODLE_ALICE}{L1}.ipynb (older)") in out


def test_one_lms_user_id_under_two_different_names_is_a_question(course, tmp_path, capsys):
    export = zipped(tmp_path / "export.zip", {f"{CANVAS_ALICE}{L1}.ipynb": notebook("alice"),
                                              f"Bob Jones_10001_assignsubmission_file_/{L1}.ipynb": notebook("bob")})
    code, out = run(export, course, capsys)
    assert code == 0, out
    assert students(course) == ["bob_jones_10001", "smithalice_10001"]  # nothing merged on a guess, nothing lost
    assert (f"to look at (1):\n  bob_jones_10001 (Moodle, export.zip:Bob Jones_10001_assignsubmission_file_/{L1}.ipynb) "
            f"and smithalice_10001 (Canvas, export.zip:{CANVAS_ALICE}{L1}.ipynb) have the same LMS user id (10001) "
            "under different names: placed as 2 students") in out


def test_a_name_change_in_one_lms_is_one_student(course, tmp_path, capsys):
    export = zipped(tmp_path / "export.zip", {f"smithalice_10001_1_{L1}.ipynb": notebook("before"),
                                              f"jonesalice_10001_2_{L2}.ipynb": notebook("after")})
    code, out = run(export, course, capsys)
    assert code == 0, out
    assert students(course) == ["jonesalice_10001"] and placed(course, "jonesalice_10001", L1) == "before"


def test_a_stray_notebook_beside_good_ones_is_listed_and_the_rest_are_in(course, tmp_path, capsys):
    members = {f"s{k:02d}_{1000 + k}_{k}_{L1}.ipynb": notebook(f"s{k}") for k in range(48)}
    export = zipped(tmp_path / "export.zip", {**members, "Untitled.ipynb": notebook("stray")})
    code, out = run(export, course, capsys)
    assert code == 0, out  # everything that could be placed was
    assert len(students(course)) == 48
    assert out.splitlines()[-1] == (f"48 placed in {course}/submitted/ (48 students); 1 not placed: export.zip:Untitled.ipynb: "
                                    f"no lesson name in the file's name or folders (rename it to one of: {L1}, {L2}); "
                                    "the rest are in")


def test_collect_fails_when_it_places_nothing(course, tmp_path, capsys):
    export = zipped(tmp_path / "export.zip", {"Untitled.ipynb": notebook("stray"), "notes.txt": "hello"})
    code, out = run(export, course, capsys)
    assert code == 1 and students(course) == []
    assert out.splitlines()[-1].startswith(f"0 placed in {course}/submitted/ (0 students); 1 not placed: export.zip:Untitled.ipynb")


def test_collect_says_its_exit_status_in_its_help(capsys):
    with pytest.raises(SystemExit):
        main(["collect", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit status: 0 when it read everything and placed what could be placed" in text
    assert "1 when it placed nothing, or stopped reading at a cap" in text


@pytest.mark.slow
def test_a_class_with_one_student_under_two_lms_formats_is_graded_once(tmp_path, capsys):
    from grader.autograde import autograde

    course = gc.make_course(tmp_path / "course")
    wrong = nbformat.writes(gc.solved(course, player="def player(board):\n    return 'X'"))
    export = zipped(tmp_path / "export.zip", {
        f"smithalice_10001_555_{gc.LESSON}.ipynb": wrong,  # Canvas, older: wrong
        f"Alice Smith_10001_assignsubmission_file_/{gc.LESSON}.ipynb": nbformat.writes(gc.solved(course)),  # Moodle, newer
        f"jonesbob_10002_556_{gc.LESSON}.ipynb": nbformat.writes(gc.solved(course)),
    }, {f"smithalice_10001_555_{gc.LESSON}.ipynb": (2026, 11, 20, 9, 0, 0),
        f"Alice Smith_10001_assignsubmission_file_/{gc.LESSON}.ipynb": (2026, 11, 21, 9, 0, 0)})
    assert main(["collect", str(export), "--course", str(course)]) == 0
    out = capsys.readouterr().out
    assert "are one student (LMS user id 10001, the same name): placed as alice_smith_10001" in out
    outcomes = autograde(course, jobs=1, progress=False)
    assert [(o.student, o.score, o.max_score, o.error) for o in outcomes] == [
        ("alice_smith_10001", 3, 3, ""), ("jonesbob_10002", 3, 3, "")]
