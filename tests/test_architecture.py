"""The code's shape, checked: no import circles, small modules, one explicit sparse routing.

The import graph is read from the source (every ``import`` statement, module-level or inside a
function, except those only type checkers run (under ``if TYPE_CHECKING:``, or in the ``else``
of ``if not TYPE_CHECKING:``), and ``importlib.import_module`` of a constant name), so a circle
hidden in a method-local import counts as one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jax
import pytest
from subprocess_env import failure, run_script

import xp
import xp.sparse
from xp import _routing

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("xp", "conformance")
MAX_LINES = 800  # one concept per module (docs/DEVELOPING.md); a module past this holds more than one

# Function-local imports of project modules that are not there to dodge a circle, and why.
LAZY_IMPORTS = {
    # the conformance tool starts fast for --help and loads the checks or the upstream runner
    # only for the mode asked for
    ("conformance.cli", "conformance.checks"),
    # a special-case engine that fails to import skips its chapter instead of stopping the tool
    ("conformance.checks.special", "conformance.special_cases"),
    # xp.fft, xp.linalg, xp.sparse, xp.special, xp.transforms and xp.checked (with JAX's
    # checkify) are imported on first use: code that does not use them does not pay for them at
    # import
    ("xp", "xp.fft"),
    ("xp", "xp.linalg"),
    ("xp", "xp.sparse"),
    ("xp", "xp.special"),
    ("xp", "xp.transforms"),
    ("xp", "xp._checked.running"),
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _runtime_branches(node: ast.If) -> list[ast.stmt] | None:
    """The statements of an ``if TYPE_CHECKING:`` (or ``if not TYPE_CHECKING:``) that run at
    runtime (its ``else``, or its body); None for another ``if``."""
    test = ast.unparse(node.test)
    negated = test.startswith("not ")
    if test.removeprefix("not ").split(".")[-1] != "TYPE_CHECKING":  # TYPE_CHECKING, typing.TYPE_CHECKING
        return None
    return node.body if negated else node.orelse


def _imports(name: str, path: Path) -> list[tuple[str, bool]]:
    """(imported project module, whether the import is inside a function) for each import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        runtime = _runtime_branches(node) if isinstance(node, ast.If) else None
        if runtime is not None:
            for statement in runtime:
                visit(statement, in_function)
            return
        if isinstance(node, ast.Import):
            found.extend((a.name, in_function) for a in node.names if a.name in MODULES)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and first.value in MODULES:
                found.append((first.value, in_function))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}"
                target = target if target in MODULES else base
                if target in MODULES:
                    found.append((target, in_function))
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    return components


def test_the_circle_finder_finds_circles():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_the_import_reader_sees_imports_of_every_kind():
    assert ("xp._array", False) in IMPORTS["xp._boundary"]  # from xp._array import Array
    assert ("conformance.checks", True) in IMPORTS["conformance.cli"]  # inside a function
    assert ("xp.sparse", True) in IMPORTS["xp"]  # importlib.import_module("xp.sparse"), in an else
    assert ("xp.sparse", False) not in IMPORTS["xp"]  # from xp import sparse, for type checkers only


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circles(package):
    graph = {n: {t for t, _ in IMPORTS[n] if t != n} for n in MODULES if n.split(".")[0] == package}
    assert _circles(graph) == []


def test_no_module_imports_its_own_top_level_package():
    # ``from xp import add`` inside xp would run xp/__init__ (which imports everything) from
    # below it; modules import the submodule that defines what they need
    offenders = [(n, t) for n, imports in IMPORTS.items() for t, _ in imports if t in PACKAGES and n != t]
    assert offenders == []


def test_function_local_imports_are_only_the_listed_lazy_ones():
    local = {(n, t) for n, imports in IMPORTS.items() for t, in_function in imports if in_function}
    assert local == LAZY_IMPORTS


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_are_small(name):
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(ROOT)} has {lines} lines; split it along its concerns"


def _public(name: str) -> object:
    obj: object = xp
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def test_every_public_function_is_registered_under_its_public_name():
    assert "add" in _routing.PUBLIC_FUNCTIONS and "linalg.solve" in _routing.PUBLIC_FUNCTIONS
    for name, fn in _routing.PUBLIC_FUNCTIONS.items():
        assert _public(name) is fn, name


@pytest.mark.parametrize("module", ["linalg", "fft", "special", "transforms"])
def test_a_public_submodule_lists_its_functions_only(module):
    # not the names its code imports: xp.linalg.wrap (an internal helper, which wraps anything,
    # an xp array included) showed in dir() and tab completion beside the functions
    namespace = getattr(xp, module)
    assert [name for name in dir(namespace) if not name.startswith("_")] == sorted(namespace.__all__)
    assert all(callable(getattr(namespace, name)) for name in namespace.__all__)


def test_the_namespace_lists_no_name_of_its_implementation():
    assert not {"annotations", "TYPE_CHECKING", "wrap", "api", "kernel"} & set(dir(xp))


def test_sparse_implementations_implement_public_functions():
    assert len(_routing.SPARSE_IMPLEMENTATIONS) > 40  # xp.sparse is imported: they are registered
    assert set(_routing.SPARSE_IMPLEMENTATIONS) <= set(_routing.PUBLIC_FUNCTIONS)


def test_registering_a_sparse_implementation_of_no_public_function_is_an_error():
    with pytest.raises(RuntimeError, match="'linalg.no_such_function' is not the public name of an xp function"):
        _routing.implements("linalg.no_such_function")(lambda x: x)
    with pytest.raises(RuntimeError, match="two sparse implementations of xp.add"):
        _routing.implements("add")(lambda x1, x2: x1)
    assert "linalg.no_such_function" not in _routing.SPARSE_IMPLEMENTATIONS


@pytest.mark.integration
def test_import_xp_compiles_nothing_and_defers_the_optional_parts():
    # import time is measured in bench/overhead.py; this pins what makes it cheap
    # (what import does is the same on every backend: on the CPU where this process's is not)
    done = run_script("import_probe", cwd=ROOT, timeout=300)
    assert done.returncode == 0, failure(done)


def test_a_kernel_is_jax_jit_of_its_function_keeping_its_unused_arguments():
    from xp import _jit

    def scaled(x, unused, *, n):
        return x * n

    made = _jit.kernel(static_argnames="n")(scaled)
    # the jax.jit itself, made at definition, as jax.numpy's functions are: no Python between the
    # caller and jax.jit's dispatch
    assert type(made) is type(jax.jit(scaled)) and made.__wrapped__ is scaled
    x = xp.asarray(3).jax
    assert int(made(x, x, n=2)) == 6 and int(made(x, x, n=4)) == 12
    assert made._cache_size() == 2
    # keep_unused: the compiled computation takes the argument its result does not read
    assert len(made.lower(x, x, n=2).compile().input_shardings[0]) == 2


# What the code must not do to get its effects (docs/DEVELOPING.md): generate code, rebind a
# function's code or a module's globals, or walk the stack.
_FORBIDDEN = ("exec(", "compile(", "__code__", "sys._getframe", "f_back", "f_globals", "globals()[")


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.split(".")[0] == "xp"))
def test_no_module_generates_code_rebinds_code_or_walks_the_stack(name):
    source = MODULES[name].read_text()
    assert [word for word in _FORBIDDEN if word in source] == []


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.split(".")[0] == "xp" and n != "xp._jit"))
def test_every_inlined_kernel_is_made_by_the_one_kernel_factory(name):
    # xp._jit.kernel, for dense and sparse code alike (it keeps unused arguments: see there)
    source = MODULES[name].read_text()
    assert "inline=True" not in source and "jax.core.Tracer =" not in source and "Tracer = " not in source


def _constants(tree: ast.Module) -> dict[str, object]:
    """The module's top-level names bound to literals (``REDUCTION = (1, 2)``)."""
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            found.update((target.id, value) for target in targets if isinstance(target, ast.Name))
    return found


def _static_parameters(function: ast.FunctionDef, constants: dict[str, object]) -> list[str] | None:
    """The static parameters of a function decorated with ``kernel(..., static_arg...=...)``, by
    name; None for any other function."""
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    for decorator in function.decorator_list:
        if not isinstance(decorator, ast.Call) or "kernel" not in ast.unparse(decorator):
            continue
        static: list[str] = []
        for option in decorator.keywords:
            value = eval(compile(ast.Expression(option.value), "<decorator>", "eval"), dict(constants))
            values = value if isinstance(value, tuple) else (value,)
            if option.arg == "static_argnames":
                static.extend(values)
            elif option.arg == "static_argnums":
                static.extend(positional[i] for i in values)
        return static or None
    return None


def _keyword_static_calls(path: Path) -> list[str]:
    """Calls in ``path`` of its own kernels that pass a static argument by keyword."""
    tree = ast.parse(path.read_text())
    constants = _constants(tree)
    kernels = {}
    for node in tree.body:
        static = _static_parameters(node, constants) if isinstance(node, ast.FunctionDef) else None
        if static:
            kernels[node.name] = set(static)
    return [
        f"{path.name}:{node.lineno} {node.func.id}({k.arg}=...)"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in kernels
        for k in node.keywords
        if k.arg in kernels[node.func.id]
    ]


def test_the_keyword_call_finder_finds_keyword_calls(tmp_path):
    module = tmp_path / "module.py"
    module.write_text(
        "@functools.partial(kernel, static_argnames=('axis', 'n'))\ndef _k(x, axis, n): ...\n"
        "AXIS = (1,)\n@functools.partial(kernel, static_argnums=AXIS)\ndef _j(x, axis): ...\n"
        "def f(x):\n    return _k(x, 0, n=2), _k(x, 0, 2), _j(x, axis=1), _j(x, 1)\n"
    )
    found = _keyword_static_calls(module)
    assert [f.split(" ", 1)[1] for f in found] == ["_k(n=...)", "_j(axis=...)"]


def test_the_dense_namespace_passes_static_arguments_to_its_kernels_positionally():
    # jax.jit's C++ dispatch costs 0.1-0.2 µs more per eager call when static arguments come as
    # keywords (xp/_jit.py). xp.sparse's kernels take several static arguments by name, which reads
    # better, and an eager sparse call costs 10 µs or more: they are not held to this.
    found = [call for path in sorted((ROOT / "xp").glob("*.py")) for call in _keyword_static_calls(path)]
    assert not found, found
