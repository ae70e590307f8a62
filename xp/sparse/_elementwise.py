"""Element-wise functions of sparse arrays, from the dense tables (``xp._elementwise``).

The policy (docs/sparse.md): a result is sparse where it is zero wherever the inputs are
structurally zero; otherwise the implementation says why the result is dense
(``xp._routing.dense_result``) and the routing computes the call densely, with a
SparseEfficiencyWarning.

- **One sparse operand, unary** (``sin(A)``): ``f`` is applied to the stored values when
  ``f(0) == 0`` (or False) in ``A``'s dtype, which :data:`ZERO_PRESERVING` lists (a test checks
  the list against the functions). ``exp``, ``cos``, ``log``, ``isfinite``, ``logical_not``,
  ``bitwise_invert``, ... are dense.
- **Sparse with a Python scalar** (``A * 2``, ``A > 0``): decided on the scalar's value: the
  stored values are computed when ``f(0, s) == 0`` (``f(s, 0)`` for ``s ∘ A``); ``A + 1``,
  ``A / 0``, ``A == 0`` are dense. ``multiply``, ``bitwise_and`` and ``logical_and`` always keep the
  pattern: as in SciPy and pydata sparse, ``A * inf`` is 0, not NaN, at a structural zero.
- **Two sparse operands**: :data:`BINARY_KINDS` says how patterns combine: the union for
  ``f(0, 0) == 0`` (``add``, ``subtract``, ``maximum``, comparisons that are False at 0, ...),
  the intersection where also ``f(x, 0) == f(0, y) == 0`` (``multiply``, ``bitwise_and``,
  ``logical_and``), the first operand's pattern where ``f(0, y) == 0`` (the shifts). Other
  functions (``equal``, ``divide``, ``pow``, ...) are dense. Operands broadcast as dense ones do.
- **Sparse with a dense array**: the intersection functions (``A * x``: the pattern of the
  sparse operand, broadcast) and the shifts with a sparse first operand; the others are dense.

Dtypes, promotion, broadcasting and every argument error are the dense functions' own (they
run on stand-ins of the operands, once per signature), and the values are computed by the
dense kernels, so a sparse result has exactly the dtype and values of the dense one where it
stores them. Duplicate entries are summed before a function that is not additive is applied.
Results with two sparse operands are BCOO arrays in the plain layout, with sorted, unique
indices; operations on stored values keep their operand's format and layout.

Also here: ``astype``, ``clip`` (Python scalar bounds that keep 0 in range) and the data type
functions that take arrays (``result_type``, ``can_cast``, ``finfo``, ``iinfo``).
"""

from __future__ import annotations

import functools
import math
import struct
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from xp import _boundary as boundary
from xp import _data_type as dense_dtypes
from xp import _devices
from xp import _dtypes as dt
from xp import _elementwise as ew
from xp._array import Array, wrap
from xp._jit import kernel, on_constants
from xp._routing import dense_result, implements
from xp.sparse import _coordinates as coordinates
from xp.sparse._array import BCOO, SparseArray, wrap_sparse
from xp.sparse._dense_checks import abstract

UNION = "union"
INTERSECTION = "intersection"
FIRST = "first"

ZERO_PRESERVING = frozenset({
    "abs", "asin", "asinh", "atan", "atanh", "ceil", "conj", "expm1", "floor", "imag", "isinf",
    "isnan", "log1p", "negative", "positive", "real", "round", "sign", "signbit", "sin", "sinh",
    "sqrt", "square", "tan", "tanh", "trunc",
})  # fmt: skip
"""The unary functions with ``f(0) == 0`` (or False): applied to the stored values."""

LINEAR = frozenset({"conj", "imag", "negative", "positive", "real"})
"""Unary functions additive over duplicate entries (no summing of duplicates first)."""

BINARY_KINDS: dict[str, str] = {
    **dict.fromkeys(
        ("add", "subtract", "maximum", "minimum", "bitwise_or", "bitwise_xor", "logical_or", "logical_xor",
         "atan2", "hypot", "copysign", "nextafter", "greater", "less", "not_equal"),
        UNION,
    ),
    **dict.fromkeys(("multiply", "bitwise_and", "logical_and"), INTERSECTION),
    **dict.fromkeys(("bitwise_left_shift", "bitwise_right_shift"), FIRST),
}  # fmt: skip
"""How the patterns of two sparse operands combine, for the functions with ``f(0, 0) == 0``."""


def _dense_message(what: str) -> str:
    return f"{what}, so the result is dense"


# --- deciding on zeros ----------------------------------------------------------------------

_IMAGES: dict[Any, bool] = {}


def _scalar_key(s: Any) -> Any:
    if type(s) is float:
        return struct.pack("<d", s)
    if type(s) is complex:
        return struct.pack("<dd", s.real, s.imag)
    return s


def _is_zero(out: Array) -> bool:
    with on_constants():
        return bool(np.asarray(out._value) == 0)


def _unary_keeps_zero(name: str, dtype: np.dtype) -> bool:
    """Whether ``f(0) == 0`` in ``dtype`` (the dense function raises for a dtype it does not take)."""
    key = (name, dtype)
    known = _IMAGES.get(key)
    if known is None:
        with on_constants():
            known = _is_zero(ew.FUNCTIONS[name](np.zeros((), dtype)))
        _IMAGES[key] = known
    return known


def _scalar_keeps_zero(name: str, dtype: np.dtype, scalar: Any, scalar_first: bool) -> bool:
    """Whether ``f(0, s) == 0`` (``f(s, 0)`` when the scalar comes first) for an array of ``dtype``."""
    key = (name, dtype, type(scalar), _scalar_key(scalar), scalar_first)
    known = _IMAGES.get(key)
    if known is None:
        zero = np.zeros((), dtype)
        fn = ew.FUNCTIONS[name]
        with on_constants():
            known = _is_zero(fn(scalar, zero) if scalar_first else fn(zero, scalar))
        if len(_IMAGES) > 4096:
            _IMAGES.clear()
        _IMAGES[key] = known
    return known


# --- unary functions ------------------------------------------------------------------------


def _stored(x: Any, fn: Any, *, additive: bool) -> Any:
    """``fn`` (jax array -> xp Array) applied to the stored values of ``x``, same pattern and format."""
    value = x._value if additive else coordinates.unique_value(x._value)
    return wrap_sparse(coordinates.same_format(value, fn(value.data)._value))


def _unary(name: str) -> None:
    fn = ew.FUNCTIONS[name]

    def sparse_unary(x: Any, /) -> Any:
        dtype = np.dtype(x._value.dtype)
        if not _unary_keeps_zero(name, dtype):
            dense_result(_dense_message(f"{name}(0) is not 0 for {dtype}"))
        return _stored(x, lambda data: fn(wrap(data)), additive=name in LINEAR)

    sparse_unary.__name__ = sparse_unary.__qualname__ = name
    implements(name)(sparse_unary)


for _op in ew.UNARY:
    _unary(_op.name)


# --- binary functions -----------------------------------------------------------------------


def _additive_with(name: str, scalar: Any, scalar_first: bool) -> bool:
    """Whether ``f(., s)`` is additive in the sparse operand (duplicates need no summing first)."""
    if name == "multiply" or (name == "divide" and not scalar_first):
        return True
    return name in ("add", "subtract") and scalar == 0


def _binary(name: str) -> None:
    fn = ew.FUNCTIONS[name]
    kind = BINARY_KINDS.get(name)

    def sparse_binary(x1: Any, x2: Any, /) -> Any:
        spec = abstract(fn, x1, x2)  # the dense checks: dtypes, promotion, scalars, shapes
        s1, s2 = isinstance(x1, SparseArray), isinstance(x2, SparseArray)
        if s1 and s2:
            if kind is None:
                dense_result(_dense_message(f"{name}(0, 0) is not 0 (structural zeros of both "
                       f"operands give non-zero elements)"))  # fmt: skip
            return BCOO._wrap(_sparse_sparse(x1._value, x2._value, name=name, kind=kind, shape=tuple(spec.shape)))
        sparse, other = (x1, x2) if s1 else (x2, x1)
        if type(other) in boundary.PY_SCALARS:
            if kind != INTERSECTION and not _scalar_keeps_zero(name, np.dtype(sparse._value.dtype), other, s2):
                args = f"{other!r}, 0" if s2 else f"0, {other!r}"
                dense_result(_dense_message(f"{name}({args}) is not 0"))
            if s1:
                return _stored(sparse, lambda data: fn(wrap(data), other), additive=_additive_with(name, other, False))
            return _stored(sparse, lambda data: fn(other, wrap(data)), additive=_additive_with(name, other, True))
        if not (kind == INTERSECTION or (kind == FIRST and s1)):
            dense_result(_dense_message(f"{name} of a sparse and a dense array is not zero "
                   f"where the sparse one is"))  # fmt: skip
        dense = boundary.array(other, "x2" if s1 else "x1")
        coalesce = name != "multiply" and not sparse._value.unique_indices
        out = _sparse_dense(sparse._value, dense, name=name, sparse_first=s1, coalesce=coalesce,
                            shape=tuple(spec.shape))  # fmt: skip
        return BCOO._wrap(out)

    sparse_binary.__name__ = sparse_binary.__qualname__ = name
    implements(name)(sparse_binary)


for _op in ew.BINARY:
    _binary(_op.name)


@functools.partial(kernel, static_argnames=("name", "kind", "shape"))
def _sparse_sparse(a: Any, b_: Any, name: str, kind: str, shape: tuple[int, ...]) -> Any:
    op = ew.OPS[name]
    parts = [coordinates.broadcast(coordinates.coo(v), shape) for v in (a, b_)]
    parts = [p if p.unique else coordinates.coalesce(p) for p in parts]
    na, nb = coordinates.rows(parts[0]), coordinates.rows(parts[1])
    idx, (va, vb), (pa, pb), first = coordinates.merge(parts)
    out = ew._binary_kernel(op, va, vb)
    if kind == UNION:
        keep = first & (pa | pb)
        n = na + nb
    elif kind == INTERSECTION:
        keep = first & pa & pb
        n = min(na, nb)
    else:
        keep = first & pa
        n = na
    return coordinates.to_bcoo(coordinates.compacted(coordinates.make(out, idx, shape, keep, True), n), sorted=True)


@functools.partial(kernel, static_argnames=("name", "sparse_first", "coalesce", "shape"))
def _sparse_dense(a: Any, d: Any, name: str, sparse_first: bool, coalesce: bool, shape: tuple[int, ...]) -> Any:
    op = ew.OPS[name]
    c = coordinates.coo(a)
    if coalesce and not c.unique:
        c = coordinates.coalesce(c)
    c = coordinates.broadcast(c, shape)
    n = coordinates.rows(c)
    if d.ndim == 0:
        values = jnp.broadcast_to(d, (n,))
    else:
        lead = len(shape) - d.ndim
        key = tuple(
            jnp.zeros(n, c.idx.dtype) if d.shape[j] == 1 else jnp.clip(c.idx[:, lead + j], 0, d.shape[j] - 1)
            for j in range(d.ndim)
        )
        values = d[key] if math.prod(d.shape) else jnp.zeros(n, d.dtype)
    out = ew._binary_kernel(op, c.data, values) if sparse_first else ew._binary_kernel(op, values, c.data)
    return coordinates.to_bcoo(coordinates.make(out, c.idx, shape, coordinates.valid(c), c.unique))


# --- clip -----------------------------------------------------------------------------------


@implements("clip")
def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    """Python scalar (or None) bounds with ``min <= 0 <= max``: clipped stored values."""
    abstract(ew.clip, x, min, max)
    for bound, param in ((min, "min"), (max, "max")):
        if bound is not None and type(bound) not in boundary.PY_SCALARS:
            dense_result(_dense_message(f"an array {param} bound gives non-zero elements where x "
                   f"is structurally zero"))  # fmt: skip
    dtype = np.dtype(x._value.dtype)
    with on_constants():
        zero = _is_zero(ew.clip(np.zeros((), dtype), min, max))
    if not zero:
        dense_result(_dense_message(f"clip(0, min={min!r}, max={max!r}) is not 0"))
    return _stored(x, lambda data: ew.clip(wrap(data), min, max), additive=False)


# --- astype and the data type functions -----------------------------------------------------


@implements("astype")
def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """The stored values converted (duplicates summed first where conversion is not additive)."""
    abstract(dense_dtypes.astype, x, dtype, copy=copy, device=device)
    want = boundary.dtype(dtype)
    target = boundary.device(device)
    value = x._value
    source = np.dtype(value.dtype)
    if want == source and _devices.same_placement(value.data, target):
        return x if not boundary.boolean(copy, "copy") else wrap_sparse(coordinates.same_format(value, value.data))
    additive = source != dt.bool and want != dt.bool and not (source.kind in "fc" and want.kind in "iu")
    if not additive:
        value = coordinates.unique_value(value)
    out = coordinates.same_format(value, dense_dtypes._astype(value.data, dtype=want))
    if target is not None and target is not _devices.TRACED:
        out = jax.device_put(out, target)
    return wrap_sparse(out)


def _dtype_arg(a: Any) -> Any:
    return a.dtype if isinstance(a, SparseArray) else a


@implements("result_type")
def result_type(*arrays_and_dtypes: Any) -> Any:
    return dense_dtypes.result_type(*(_dtype_arg(a) for a in arrays_and_dtypes))


@implements("can_cast")
def can_cast(from_: Any, to: Any, /) -> bool:
    return dense_dtypes.can_cast(_dtype_arg(from_), to)


@implements("finfo")
def finfo(type: Any, /) -> Any:
    return dense_dtypes.finfo(_dtype_arg(type))


@implements("iinfo")
def iinfo(type: Any, /) -> Any:
    return dense_dtypes.iinfo(_dtype_arg(type))
