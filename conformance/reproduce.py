"""Reproducers: a failing check written as a short Python script that a person can run.

A property check's failure message names its call with descriptions of the arrays it drew
(``pow(uint16 (3,), int32 ()): dtype uint16, expected int32``). While a property runs, the
arrays it draws are recorded with their NumPy copies; when it fails, each description in the
message is replaced by the array it describes, written as a literal, and the call becomes
``xp.pow(x1, x2)``. The special cases write theirs from the value that failed.

Values are written exactly: a float32 value by its shortest decimal only where that decimal,
read as a Python float and then stored as float32 (what ``asarray`` does), gives the value back.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import keyword
import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance import spec
from conformance.model import FAILED, Result

ALIAS = "xp"  # the conventional name of an array namespace in generic code
_DTYPES = frozenset(spec.inventory()["dtypes"])


def import_lines(namespace: str) -> list[str]:
    """How the script gets the namespace, and JAX's 64-bit mode when the run had it on and the
    namespace's arrays are JAX's (JAX's default is off: the script would make other dtypes)."""
    lines = []
    jax = sys.modules.get("jax")
    if jax is not None and bool(getattr(jax.config, "jax_enable_x64", False)) and _on_jax(namespace):
        lines += ["import jax", "", 'jax.config.update("jax_enable_x64", True)  # as in the run']
    if all(part.isidentifier() and not keyword.iskeyword(part) for part in namespace.split(".")):
        lines.append(f"import {namespace} as {ALIAS}" if namespace != ALIAS else f"import {ALIAS}")
    else:  # a namespace object handed to run_bundled, not a module
        lines.append(f"{ALIAS} = ...  # the namespace checked ({namespace}), not an importable module")
    return lines


@functools.cache
def _on_jax(namespace: str) -> bool:
    """Whether the namespace's arrays live on a JAX device (xp, xp.sparse, jax.numpy)."""
    try:
        device = sys.modules[namespace].asarray(0).device
    except Exception:
        return False
    return type(device).__module__.partition(".")[0] in ("jax", "jaxlib")


def value(v: Any, dtype: str = "") -> str:
    """A Python literal of one element: ``float("nan")`` for NaN, ``complex(re, im)``."""
    if isinstance(v, bool | np.bool_):
        return repr(bool(v))
    if isinstance(v, int | np.integer):
        return repr(int(v))
    if isinstance(v, complex | np.complexfloating):
        part = "float32" if dtype == "complex64" else "float64"
        return f"complex({value(float(v.real), part)}, {value(float(v.imag), part)})"
    f = float(v)
    if math.isnan(f):
        return '-float("nan")' if math.copysign(1.0, f) < 0 else 'float("nan")'
    if math.isinf(f):
        return 'float("inf")' if f > 0 else '-float("inf")'
    if dtype == "float32":
        short = str(np.float32(f))
        if float(np.float32(float(short))) == f:
            return short
    return repr(f)


def array(dtype: str, values: np.ndarray) -> str:
    """``xp.asarray([[1, 2], [3, 4]], dtype=xp.int8)``: the array as the namespace builds it."""
    values = np.asarray(values)
    if values.size == 0:  # a nested empty list loses the shape
        return f"{ALIAS}.zeros({tuple(values.shape)!r}, dtype={ALIAS}.{dtype})"
    return f"{ALIAS}.asarray({_nested(values.tolist(), dtype)}, dtype={ALIAS}.{dtype})"


def _nested(v: Any, dtype: str) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_nested(e, dtype) for e in v) + "]"
    return value(v, dtype)


@dataclass
class Drawn:
    """An array a property drew: its variable in the script, its description in messages, its values."""

    name: str
    description: str
    dtype: str
    values: np.ndarray


@dataclass
class Recorder:
    """The arrays drawn by the current example of a property (the failing one, once it fails:
    hypothesis runs the falsifying example last, to report it)."""

    drawn: list[Drawn] = field(default_factory=list)

    def reset(self) -> None:
        self.drawn = []

    def add(self, label: str, description: str, dtype: str, values: np.ndarray) -> None:
        name = label if label.isidentifier() and not keyword.iskeyword(label) else f"a{len(self.drawn)}"
        taken = {d.name for d in self.drawn}
        if name in taken or name == ALIAS:
            name = next(f"{name}_{i}" for i in range(2, 100) if f"{name}_{i}" not in taken)
        self.drawn.append(Drawn(name, description, dtype, np.array(values, copy=True)))


def property_script(namespace: str, function: str, chapter: str, message: str, drawn: Sequence[Drawn]) -> str:
    """The script of a failed property check: the arrays of its falsifying example, and the call
    its message names, where the message names one (else the arrays, and the message)."""
    label, _, rest = _split_label(message.removeprefix("AssertionError: "))
    call, used = _call(label, drawn)
    if call is None and not drawn:
        return ""
    lines = [f"# {namespace}: {function} [{chapter}], the example hypothesis found", f"# {message}", ""]
    lines += [*import_lines(namespace), ""]
    lines += [f"{d.name} = {array(d.dtype, d.values)}" for d in drawn if call is None or d.name in used]
    if call is None:
        lines += [f"# the check called {function} with these arrays: {message}"]
        return "\n".join(lines) + "\n"
    lines.append(f"out = {call}")
    if rest.startswith(("dtype ", "shape (")):
        lines.append("print(out.dtype, out.shape)")
    lines.append("print(out)")
    return "\n".join(lines) + "\n"


def calls_script(namespace: str, function: str, chapter: str, detail: str, calls: Sequence[str]) -> str:
    """The script of a check with fixed inputs: each call (written with ``xp.``) printed."""
    lines = [f"# {namespace}: {function} [{chapter}]", f"# {detail}", "", *import_lines(namespace), ""]
    return "\n".join([*lines, *(f"print({c})" for c in calls)]) + "\n"


def with_script(namespace: str, result: Result) -> Result:
    """A failure of a check with fixed inputs whose text is a call of the standard's names
    (``result_type(int8, uint8)``, ``can_cast(int8, uint8)``) gets that call as its script."""
    if result.status != FAILED or result.reproducer:
        return result
    call, _ = _call(result.check, ())
    if call is None:
        return result
    script = calls_script(namespace, result.function, result.chapter, result.detail, [call])
    return dataclasses.replace(result, reproducer=script)


def _split_label(message: str) -> tuple[str, str, str]:
    """``label: rest`` split at the first ``": "`` outside brackets (the label names the call)."""
    depth = 0
    for i, ch in enumerate(message):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ":" and depth == 0 and message[i + 1 : i + 2] == " ":
            return message[:i], ": ", message[i + 2 :]
    return message, "", ""


_OPERATOR_LABEL = re.compile(r"^(\w+ \S+ \w+) with ")  # "x1 ** x2 with uint16 (3,), int32 ()"


def _call(label: str, drawn: Sequence[Drawn]) -> tuple[str | None, set[str]]:
    """The label as a call on the namespace (``xp.pow(x1, x2)``) and the arrays it uses, or None."""
    operator = _OPERATOR_LABEL.match(label)
    text = operator.group(1) if operator else _substitute(label, drawn)
    names = {d.name for d in drawn}
    for end in range(len(text), 0, -1):  # the longest prefix that is an expression: f(x).values (sorted)
        try:
            tree = ast.parse(text[:end].strip(), mode="eval")
        except SyntaxError:
            continue
        rewritten = _Qualify(names).visit(tree)
        used = {n.id for n in ast.walk(rewritten) if isinstance(n, ast.Name) and n.id in names}
        if not any(isinstance(n, ast.Call | ast.BinOp | ast.UnaryOp) for n in ast.walk(rewritten)):
            return None, set()
        defined = names | {ALIAS, "float"}
        if any(isinstance(n, ast.Name) and n.id not in defined for n in ast.walk(rewritten)):
            return None, set()  # a name the script would not define
        return ast.unparse(rewritten), used
    return None, set()


def _substitute(label: str, drawn: Sequence[Drawn]) -> str:
    """Replace each description by its array's name, left to right; arrays with the same
    description are taken in the order they were drawn (the order of the call's arguments)."""
    unused = list(drawn)
    out, pos = [], 0
    while unused:
        found = [(label.find(d.description, pos), -len(d.description), i) for i, d in enumerate(unused)]
        found = [f for f in found if f[0] >= 0]
        if not found:
            break
        at, minus_length, i = min(found)
        out += [label[pos:at], unused[i].name]
        pos = at - minus_length
        del unused[i]
    return "".join(out) + label[pos:]


class _Qualify(ast.NodeTransformer):
    """Names of the standard (functions, dtypes, ``linalg``) become attributes of the namespace;
    ``inf`` and ``nan`` (as Python prints them) become floats."""

    def __init__(self, arrays: Iterable[str]) -> None:
        self.arrays = set(arrays)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.arrays:
            return node
        if node.id in ("inf", "nan"):
            return ast.Call(ast.Name("float", ast.Load()), [ast.Constant(node.id)], [])
        if node.id in _DTYPES or node.id in _STANDARD_NAMES:
            return ast.Attribute(ast.Name(ALIAS, ast.Load()), node.id, ast.Load())
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id == "float":
            return node  # float("nan"), written by visit_Name
        return self.generic_visit(node)


_STANDARD_NAMES = frozenset(spec.inventory()["namespace"]) | {"linalg", "fft"}


def call_lines(function: str, dtype: str, args: dict[str, list[Any]], note: str = "") -> list[str]:
    """``x1 = xp.asarray([...], dtype=...)`` for each argument, then ``print(xp.function(x1, x2))``."""
    lines = [
        f"{name} = {ALIAS}.asarray({_nested(list(vs), dtype)}, dtype={ALIAS}.{dtype})" for name, vs in args.items()
    ]
    call = f"print({ALIAS}.{function}({', '.join(args)}))"
    return [*lines, call + (f"  # {note}" if note else "")]


def special_case_script(namespace: str, function: str, sentence: str, body: Sequence[str]) -> str:
    """The script of a failed special case: the namespace imported, then ``body`` (the value it
    failed on, the call), written by :mod:`conformance.special_cases.evaluation`."""
    if not body:
        return ""
    lines = [f"# {namespace}: {function}, a special case of the standard", f"# {sentence}", ""]
    return "\n".join([*lines, *import_lines(namespace), "", *body]) + "\n"
