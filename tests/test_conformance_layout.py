"""The conformance package stays in small modules without import loops (issue #8): no module over
600 lines, and no module importing, at the top or inside a function, one that imports it back."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "conformance"
MAX_LINES = 600


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules ``name`` imports anywhere in its code (``importlib.import_module`` of a
    constant name included). ``from package import submodule`` imports the submodule."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module":
            first = node.args[0] if node.args else None
            targets = [first.value] if isinstance(first, ast.Constant) and isinstance(first.value, str) else []
        found |= {t for t in targets if t in known and t != name}
    return found


def test_no_module_is_over_600_lines():
    long = {name: n for name, path in modules().items() if (n := len(path.read_text("utf-8").splitlines())) > MAX_LINES}
    assert not long, long


def test_no_import_loops():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert graph["conformance.cli"], "the import graph is empty: the parser is broken"

    def loop_from(start: str) -> list[str] | None:
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    return [*trail, start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
        return None

    loops = [loop for name in graph if (loop := loop_from(name))]
    assert not loops, loops
