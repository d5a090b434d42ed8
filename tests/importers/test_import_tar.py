"""`meshscope import-trace ARCHIVE.tar`: a tar of trace files is read as a stream, member by
member, and stores what the same files imported from a directory store; a member that is
not a trace by its name refuses the archive, named, with nothing stored; and importing the
same traces again, as a directory or as a tar, stores nothing new."""

import sqlite3
import tarfile
from pathlib import Path

from app.importers.import_trace import main

GLOO = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "gloo_dp2_pp2"


def _tar(tmp_path: Path, name: str, extra: dict[str, bytes] | None = None) -> Path:
    out = tmp_path / name
    with tarfile.open(out, "w:gz" if name.endswith(".gz") else "w") as tar:
        tar.add(GLOO, arcname="traces")  # with its folder, as a trace set is often archived
        for member, data in (extra or {}).items():
            path = tmp_path / Path(member).name
            path.write_bytes(data)
            tar.add(path, arcname=member)
    return out


def _stored(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT run, step, rank, record FROM steps ORDER BY step, rank"
        ).fetchall()


def test_a_tar_stores_what_its_directory_stores(tmp_path, capsys):
    assert main([str(GLOO), "--run", "r", "--db", str(tmp_path / "dir.sqlite3")]) == 0
    from_dir = capsys.readouterr().out
    for name in ("set.tar", "set.tar.gz"):
        db = tmp_path / f"{name}.sqlite3"
        assert main([str(_tar(tmp_path, name)), "--run", "r", "--db", str(db)]) == 0
        out = capsys.readouterr().out
        assert "4 rank file(s), 12 rank-step record(s)" in out
        assert "12 new record(s) stored" in out
        assert _stored(db) == _stored(tmp_path / "dir.sqlite3")
        # The same spans and the same clock offsets as the directory's import.
        assert out.splitlines()[1:3] == from_dir.splitlines()[1:3]


def test_a_member_that_is_not_a_trace_refuses_the_archive_and_stores_nothing(tmp_path, capsys):
    archive = _tar(tmp_path, "mixed.tar", {"traces/notes.txt": b"not a trace"})
    db = tmp_path / "mixed.sqlite3"
    assert main([str(archive), "--run", "r", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "mixed.tar:traces/notes.txt: not a trace by its name" in err
    assert not db.exists() or _stored(db) == []


def test_a_truncated_tar_is_refused_naming_it(tmp_path, capsys):
    whole = _tar(tmp_path, "whole.tar").read_bytes()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(whole[: len(whole) // 2])
    assert main([str(cut), "--run", "r", "--db", str(tmp_path / "cut.sqlite3")]) == 2
    assert "cut.tar" in capsys.readouterr().err


def test_importing_the_same_traces_again_stores_nothing_new(tmp_path, capsys):
    db = tmp_path / "again.sqlite3"
    archive = _tar(tmp_path, "again.tar")
    assert main([str(GLOO), "--run", "r", "--db", str(db)]) == 0
    first = _stored(db)
    for source in (GLOO, archive, archive):
        capsys.readouterr()
        assert main([str(source), "--run", "r", "--db", str(db)]) == 0
        assert "0 new record(s) stored" in capsys.readouterr().out
        assert _stored(db) == first
