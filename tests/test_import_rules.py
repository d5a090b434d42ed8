"""The one-way import rules: app.core is pure, and the server never imports torch or the probe."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE_FORBIDDEN = {
    "fastapi",
    "starlette",
    "torch",
    "uvicorn",
    "websockets",
    "httpx",
    "sqlite3",
    "socket",
    "asyncio",
    "os",
    "io",
    "pathlib",
    "time",
    "datetime",
    "random",
    "subprocess",
    "shutil",
    "threading",
    "requests",
    "jinja2",
    "plotly",
    "gpu_probe",
    "app.api",
    "app.live",
    "app.main",
    "app.settings",
    "app.cli",
    "app.errors",
}
SERVER_FORBIDDEN = {"torch", "gpu_probe"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _hits(names: set[str], forbidden: set[str]) -> set[str]:
    return {n for n in names if any(n == f or n.startswith(f + ".") for f in forbidden)}


def test_core_imports_only_stdlib_computation_and_pydantic():
    files = sorted((ROOT / "app" / "core").rglob("*.py"))
    assert files, "app/core has no modules"
    bad = {str(f.relative_to(ROOT)): _hits(_imports(f), CORE_FORBIDDEN) for f in files}
    assert {k: v for k, v in bad.items() if v} == {}


def test_server_never_imports_torch_or_gpu_probe():
    files = sorted((ROOT / "app").rglob("*.py"))
    bad = {str(f.relative_to(ROOT)): _hits(_imports(f), SERVER_FORBIDDEN) for f in files}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_rule_checker_sees_a_forbidden_import():
    assert _hits({"torch.distributed", "math"}, CORE_FORBIDDEN) == {"torch.distributed"}
