"""The standard as data: the 2025.12 inventory shipped in ``conformance/data``, its chapters,
the versions a namespace can be checked against, and the type promotion lattice.

The inventory (``api_2025_12.json``) is derived from the specification's own stubs; the chapter
of each name is the stub module it is defined in.
"""

from __future__ import annotations

import ast
import functools
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
VERSIONS = ("2022.12", "2023.12", "2024.12", "2025.12")
DEFAULT_VERSION = "2025.12"

# Chapter titles, in the order the standard lists them; the report uses this order.
CHAPTERS = (
    "API names",
    "Signatures",
    "Array object",
    "Constants",
    "Data types",
    "Type promotion",
    "Inspection",
    "Creation functions",
    "Data type functions",
    "Elementwise functions",
    "Indexing functions",
    "Linear algebra functions",
    "Manipulation functions",
    "Searching functions",
    "Set functions",
    "Sorting functions",
    "Statistical functions",
    "Utility functions",
    "linalg extension",
    "fft extension",
    "Special cases",
)

# The names of each stub module of the standard (its `__all__`), by chapter.
_CHAPTER_NAMES = {
    "Constants": "e inf nan newaxis pi",
    "Creation functions": "arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid "
    "ones ones_like tril triu zeros zeros_like",
    "Data type functions": "astype can_cast finfo iinfo isdtype result_type",
    "Data types": "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128",
    "Elementwise functions": "abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift "
    "bitwise_invert bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh divide equal exp "
    "expm1 floor floor_divide greater greater_equal hypot imag isfinite isinf isnan less less_equal log log1p log2 "
    "log10 logaddexp logical_and logical_not logical_or logical_xor maximum minimum multiply negative nextafter "
    "not_equal positive pow real reciprocal remainder round sign signbit sin sinh square sqrt subtract tan tanh "
    "trunc",
    "Indexing functions": "take take_along_axis",
    "Inspection": "__array_namespace_info__",
    "Linear algebra functions": "matmul matrix_transpose tensordot vecdot",
    "Manipulation functions": "broadcast_arrays broadcast_shapes broadcast_to concat expand_dims flip moveaxis "
    "permute_dims repeat reshape roll squeeze stack tile unstack",
    "Searching functions": "argmax argmin count_nonzero nonzero searchsorted where",
    "Set functions": "isin unique_all unique_counts unique_inverse unique_values",
    "Sorting functions": "argsort sort",
    "Statistical functions": "cumulative_sum cumulative_prod max mean min prod std sum var",
    "Utility functions": "all any diff",
}
_CHAPTER_OF = {name: chapter for chapter, names in _CHAPTER_NAMES.items() for name in names.split()}


def chapter_of(name: str) -> str:
    """The chapter a qualified name belongs to: ``add``, ``linalg.det``, ``array.__add__``, ``info.dtypes``."""
    head, _, _ = name.partition(".")
    if "." in name:
        return {"linalg": "linalg extension", "fft": "fft extension", "array": "Array object"}.get(head, "Inspection")
    return _CHAPTER_OF.get(name, "API names")


@functools.cache
def inventory() -> dict[str, Any]:
    """The 2025.12 inventory (``api_2025_12.json``)."""
    return json.loads((DATA / "api_2025_12.json").read_text("utf-8"))


@functools.cache
def special_cases() -> dict[str, Any]:
    """The special cases of the standard (``special_cases_2025_12.json``)."""
    return json.loads((DATA / "special_cases_2025_12.json").read_text("utf-8"))


def _added_after(version: str) -> set[str]:
    """Qualified names the standard added after ``version`` (so not required by it)."""
    later = [v for v in VERSIONS if v > version]
    return {name for v in later for name in inventory()["new_in_all"].get(v, [])}


def required(version: str = DEFAULT_VERSION) -> dict[str, list[str]]:
    """The names ``version`` requires, by group: ``namespace``, ``array``, ``linalg``, ``fft``, ``info``."""
    if version not in VERSIONS:
        raise ValueError(f"unknown version {version!r}; known: {', '.join(VERSIONS)}")
    inv, later = inventory(), _added_after(version)
    groups: dict[str, list[str]] = {}
    for group, prefix in (
        ("namespace", ""),
        ("array", "array."),
        ("linalg", "linalg."),
        ("fft", "fft."),
        ("info", "info."),
    ):
        groups[group] = [n for n in inv[group] if prefix + n not in later]
    groups["capabilities"] = [n for n in inv["capabilities"] if f"capabilities.{n}" not in later]
    return groups


def signature_text(qualified: str, version: str = DEFAULT_VERSION) -> str | None:
    """The signature the standard gives ``qualified`` (e.g. ``add``, ``array.__add__``) in ``version``."""
    text = inventory()["signatures"].get(qualified)
    for v, changes in inventory()["changed_signatures"].items():
        if v > version and qualified in changes:
            text = changes[qualified][0]  # the signature before that version changed it
    return text


class Param:
    """One parameter of a signature of the standard."""

    __slots__ = ("default", "has_default", "kind", "name")

    def __init__(self, name: str, kind: str, has_default: bool = False, default: Any = None) -> None:
        self.name, self.kind, self.has_default, self.default = name, kind, has_default, default

    def __repr__(self) -> str:
        return f"Param({self.name!r}, {self.kind!r}, {self.has_default}, {self.default!r})"


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)  # e.g. a name; compared as text


@functools.cache
def parse_signature(text: str) -> tuple[Param, ...]:
    """The parameters of a signature written as in the standard's stubs (``self`` dropped)."""
    fn = ast.parse(f"def {text}: pass").body[0]
    assert isinstance(fn, ast.FunctionDef)
    a = fn.args
    params: list[Param] = []
    positional = [(p, "positional-only") for p in a.posonlyargs] + [(p, "positional-or-keyword") for p in a.args]
    first_default = len(positional) - len(a.defaults)
    for i, (p, kind) in enumerate(positional):
        d = a.defaults[i - first_default] if i >= first_default else None
        params.append(Param(p.arg, kind, d is not None, _literal(d) if d is not None else None))
    if a.vararg is not None:
        params.append(Param(a.vararg.arg, "var-positional"))
    for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        params.append(Param(p.arg, "keyword-only", d is not None, _literal(d) if d is not None else None))
    if a.kwarg is not None:
        params.append(Param(a.kwarg.arg, "var-keyword"))
    if params and params[0].name == "self":
        params = params[1:]
    return tuple(params)


# --- Type promotion -----------------------------------------------------------------------------
# The standard's lattice: an edge a -> b means a promotes to b. Pairs with no common ancestor
# inside one kind (integers with floats, bool with numbers, uint64 with signed integers) are
# left unspecified by the standard.
_EDGES = (
    ("int8", "int16"),
    ("int16", "int32"),
    ("int32", "int64"),
    ("uint8", "uint16"),
    ("uint16", "uint32"),
    ("uint32", "uint64"),
    ("uint8", "int16"),
    ("uint16", "int32"),
    ("uint32", "int64"),
    ("float32", "float64"),
    ("complex64", "complex128"),
    ("float32", "complex64"),
    ("float64", "complex128"),
)
_KIND = {"bool": "b", "float32": "f", "float64": "f", "complex64": "f", "complex128": "f"}


def _up(name: str) -> set[str]:
    seen, todo = {name}, [name]
    while todo:
        n = todo.pop()
        for a, b in _EDGES:
            if a == n and b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


@functools.cache
def promotion_table() -> dict[tuple[str, str], str]:
    """The standard's promotion table: ``(dtype1, dtype2) -> result`` for every pair it specifies."""
    names = inventory()["dtypes"]
    table: dict[tuple[str, str], str] = {}
    for a in names:
        for b in names:
            if _KIND.get(a, "i") != _KIND.get(b, "i"):
                continue
            common = _up(a) & _up(b)
            least = [c for c in common if all(o in _up(c) for o in common)]
            if least:
                table[a, b] = least[0]
    return table


KIND_NAMES = ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric")
_KIND_MEMBERS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KIND_MEMBERS["integral"] = _KIND_MEMBERS["signed integer"] + _KIND_MEMBERS["unsigned integer"]
_KIND_MEMBERS["numeric"] = (
    _KIND_MEMBERS["integral"] + _KIND_MEMBERS["real floating"] + _KIND_MEMBERS["complex floating"]
)


def kind_members(kind: str) -> tuple[str, ...]:
    """The dtype names of an ``isdtype`` kind."""
    return _KIND_MEMBERS[kind]


# Categories the function chapters write input dtypes in.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "any": (*_KIND_MEMBERS["numeric"], "bool"),
    "numeric": _KIND_MEMBERS["numeric"],
    "real-valued": _KIND_MEMBERS["integral"] + _KIND_MEMBERS["real floating"],
    "integer": _KIND_MEMBERS["integral"],
    "integer or boolean": _KIND_MEMBERS["integral"] + ("bool",),
    "boolean": ("bool",),
    "floating-point": _KIND_MEMBERS["real floating"] + _KIND_MEMBERS["complex floating"],
    "real-valued floating-point": _KIND_MEMBERS["real floating"],
    "complex floating-point": _KIND_MEMBERS["complex floating"],
}
