"""What type checkers see: mypy and pyright, run on typed user code (tests/typing/).

- ``tests/typing/correct.py`` must check clean with both (and it runs: its ``assert_type`` calls
  pin the inferred types, and the code is correct at runtime too);
- ``tests/typing/wrong.py`` marks each wrong call with a comment ``wrong``: each checker must
  report an error on exactly those lines.

The checkers run as subprocesses of this interpreter, on copies of the two modules in a
temporary directory, with xp found on the search path from this checkout; mypy in strict mode,
pyright in its standard mode (its strict mode also reports ``jax.numpy``'s functions as partially
unknown: jaxlib declares no type for their ``device`` parameter, ``jax.Device``; it reports
nothing of xp's). Both are in the ``test`` and ``dev`` extras; a missing one fails the test
rather than skipping it.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import numpy as np
import pytest

import xp
from xp import _boundary as boundary
from xp import _dtypes as dt
from xp import _elementwise as elementwise
from xp import _typing
from xp._errors import ArgumentError

ROOT = Path(__file__).resolve().parent.parent
MODULES = ROOT / "tests" / "typing"
CORRECT, WRONG = "correct.py", "wrong.py"

MYPY_CONFIG = """\
[mypy]
strict = True
cache_dir = .mypy_cache
[mypy-xp,xp.*]
follow_imports = silent
"""


def _marked_lines(name: str) -> set[int]:
    lines = (MODULES / name).read_text().splitlines()
    return {number for number, line in enumerate(lines, 1) if "# wrong" in line}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two modules, with the checkers' configurations, outside the checkout."""
    path = tmp_path_factory.mktemp("typing")
    for name in (CORRECT, WRONG):
        shutil.copy(MODULES / name, path / name)
    (path / "mypy.ini").write_text(MYPY_CONFIG)
    pyright = {"include": [CORRECT, WRONG], "extraPaths": [str(ROOT)], "typeCheckingMode": "standard"}
    (path / "pyrightconfig.json").write_text(json.dumps(pyright))
    return path


def _run(command: list[str], workdir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", *command],
        cwd=workdir,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if "No module named" in result.stderr:
        pytest.fail(f"{command[0]} is not installed: pip install -e '.[dev]'\n{result.stderr}")
    return result


def _mypy(workdir: Path) -> tuple[dict[str, set[int]], str]:
    result = _run(["mypy", "--config-file", "mypy.ini", CORRECT, WRONG], workdir, MYPYPATH=str(ROOT))
    errors: dict[str, set[int]] = {CORRECT: set(), WRONG: set()}
    for match in re.finditer(r"^(\w+\.py):(\d+): error:", result.stdout, re.MULTILINE):
        errors[match[1]].add(int(match[2]))
    assert result.returncode in (0, 1), result.stdout + result.stderr  # 2: mypy itself failed
    return errors, result.stdout


def _pyright(workdir: Path) -> tuple[dict[str, set[int]], str]:
    result = _run(["pyright", "--outputjson", "--pythonpath", sys.executable], workdir)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright did not run:\n{result.stdout}\n{result.stderr}")
    errors: dict[str, set[int]] = {CORRECT: set(), WRONG: set()}
    messages = []
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] in ("error", "warning"):
            name, line = Path(diagnostic["file"]).name, diagnostic["range"]["start"]["line"] + 1
            errors[name].add(line)
            messages.append(f"{name}:{line}: {diagnostic['severity']}: {diagnostic['message']}")
    return errors, "\n".join(messages)


@pytest.mark.x64  # static checks: JAX's 64-bit mode changes nothing they read, so they run once
@pytest.mark.parametrize("checker", [_mypy, _pyright], ids=["mypy", "pyright"])
def test_the_checkers_accept_correct_code_and_flag_each_wrong_call(checker, workdir):
    errors, output = checker(workdir)
    assert errors[CORRECT] == set(), output
    wrong = _marked_lines(WRONG)
    assert len(wrong) >= 15
    assert errors[WRONG] == wrong, (
        f"unflagged: {sorted(wrong - errors[WRONG])}, unexpected: " + str(sorted(errors[WRONG] - wrong)) + "\n" + output
    )


def test_the_correct_code_runs():
    runpy.run_path(str(MODULES / CORRECT))


# --- the declarations and the runtime agree --------------------------------------------------


def test_element_wise_functions_are_declared_with_their_rows_signatures():
    declared = {name: kind for name, kind in elementwise.__annotations__.items() if kind.endswith("Function")}
    assert {n for n, kind in declared.items() if kind == "UnaryFunction"} == {op.name for op in elementwise.UNARY}
    assert {n for n, kind in declared.items() if kind == "BinaryFunction"} == {op.name for op in elementwise.BINARY}
    for name in declared:
        assert getattr(xp, name) is elementwise.FUNCTIONS[name]


def test_array_operators_declared_for_type_checkers_are_installed_at_runtime():
    source = (ROOT / "xp" / "_array.py").read_text()
    declared = set(re.findall(r"^        def (\w+)\(self", source, re.MULTILINE)) - {"T", "mT"}
    installed = {name for name in declared if name in vars(xp.Array)}
    assert len(declared) > 50
    assert installed == declared
    assert isinstance(vars(xp.Array)["T"], property) and isinstance(vars(xp.Array)["mT"], property)


def test_dtype_names_are_the_13_dtypes_and_what_the_boundary_takes():
    names = typing.get_args(_typing.DTypeName)
    assert names == tuple(d.name for d in dt.ALL)
    for name in names:
        if dt.BY_NAME[name] not in dt.X64_ONLY or dt.x64_enabled():
            assert boundary.dtype(name) == dt.BY_NAME[name]
    for misspelt in ("flaot32", "float33", "f4", "float", "Float32"):
        with pytest.raises(ArgumentError, match="dtype must be one of the array API dtypes"):
            boundary.dtype(misspelt)
    with pytest.raises(TypeError, match="xp.zeros: dtype must be one of the array API dtypes"):
        xp.zeros(3, dtype="flaot32")  # type: ignore[arg-type]  # (wrong.py's call, at runtime)


def test_scalar_types_of_dtype_like_are_what_the_boundary_takes():
    for member in typing.get_args(_typing.ScalarType):
        (kind,) = typing.get_args(member)
        expected = {bool: dt.bool, int: dt.default_int(), float: dt.default_float(), complex: dt.default_complex()}
        want = expected.get(kind, np.dtype(kind))
        if want not in dt.X64_ONLY or dt.x64_enabled():
            assert boundary.dtype(kind) == want
