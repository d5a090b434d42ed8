"""`meshscope serve` takes its host and port from MESHSCOPE_HOST / MESHSCOPE_PORT when no
flag names them (the README: settings can come from the environment). It passed its own
defaults as if given, so MESHSCOPE_PORT=9000 still served on 8000."""

from pathlib import Path

from app.cli import build_parser, serve_settings


def test_the_environment_sets_host_and_port_when_no_flag_does(monkeypatch):
    monkeypatch.setenv("MESHSCOPE_PORT", "9123")
    monkeypatch.setenv("MESHSCOPE_HOST", "127.0.0.2")
    monkeypatch.setenv("MESHSCOPE_DB", "/tmp/env.sqlite3")
    s = serve_settings(build_parser().parse_args(["serve"]))
    assert (s.host, s.port, s.db) == ("127.0.0.2", 9123, Path("/tmp/env.sqlite3"))
    flags = ["serve", "--port", "9200", "--host", "127.0.0.1", "--db", "x.sqlite3"]
    s = serve_settings(build_parser().parse_args(flags))
    assert (s.host, s.port, s.db) == ("127.0.0.1", 9200, Path("x.sqlite3"))


def test_without_flags_or_environment_the_defaults_are_the_readmes(monkeypatch):
    for name in ("MESHSCOPE_PORT", "MESHSCOPE_HOST", "MESHSCOPE_DB"):
        monkeypatch.delenv(name, raising=False)
    s = serve_settings(build_parser().parse_args(["serve"]))
    assert (s.host, s.port, s.db) == ("127.0.0.1", 8000, Path("meshscope.sqlite3"))
    assert (
        "default 8000"
        in build_parser()._subparsers._group_actions[0].choices["serve"].format_help()
    )


def test_a_bad_setting_is_one_line_naming_the_flag_or_variable(monkeypatch, capsys):
    # --port 99999 or MESHSCOPE_COMPUTE_THREADS=abc printed pydantic's traceback.
    from app.cli import main

    assert main(["serve", "--port", "99999"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("meshscope: --port or MESHSCOPE_PORT: Input should be less than")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    monkeypatch.setenv("MESHSCOPE_COMPUTE_THREADS", "abc")
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("meshscope: MESHSCOPE_COMPUTE_THREADS: Input should be a valid integer")
