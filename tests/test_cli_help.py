"""`meshscope --help` opens with the commands it has: its first line said "serve | probe |
calibrate | upload" and left out import-trace (alias import), the command the README and
docs/import.md send a stranger to."""

from app.cli import build_parser


def test_the_help_line_names_every_command():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert set(commands) == {"serve", "probe", "calibrate", "upload", "import-trace"}
    first_line = parser.description.splitlines()[0]
    assert all(f" {name}" in first_line for name in commands), first_line
