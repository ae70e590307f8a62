"""The 13 data types of the standard, their categories, and type promotion.

Inside xp, dtypes are NumPy dtype instances, what a ``jax.Array`` reports as its ``.dtype``.
The dtype objects of the namespace (``xp.float32``, what ``result_type`` and ``finfo`` return) are
:class:`DType` instances standing for them: NumPy's dtypes compare equal to ``None`` and to
strings (``numpy.dtype("float64") == None`` is True), which the standard's equality semantics
(and conformance suites: ``table.get(key) == dtype``) cannot have. A ``DType`` compares equal
only to itself and to the NumPy dtype it stands for, hashes like it, and ``numpy.dtype(xp.float32)``
(hence JAX) accepts it.

An array's ``x.dtype`` is the NumPy dtype itself, which equals (and hashes as) the ``DType``:
JAX's own machinery (``lax.cond``, ``lax.switch``, ``full_like`` in ``jax.grad``, NumPy's
``result_type``) reads ``x.dtype`` of the arrays it is given and takes NumPy dtypes only, so this
is what lets xp arrays go where jax arrays go.

Promotion follows the standard's lattice exactly. Pairs the standard leaves unspecified
(mixed kinds) follow JAX's lattice with strong types: ``bool`` promotes to any type, an integer
to any floating type, a real type to any complex type of at least its precision.
``uint64`` with a signed integer has no integer result and raises.

Which dtypes can be used depends on JAX's 64-bit mode, read at call time (xp never changes
JAX's configuration): with ``jax_enable_x64`` off, the four 64-bit types are unavailable, and
asking for one (``dtype=xp.float64``, NumPy float64 or int64 data, a promotion such as
``int32 + uint32``) is an error rather than a silent truncation to 32 bits. The error names the
two ways out: turn the 64-bit mode on, or opt in to narrowing. Under ``xp.narrow_64bit()`` (or
with ``XP_NARROW_64BIT=1``), while the mode is off, requested 64-bit dtypes and incoming 64-bit
NumPy data become their 32-bit counterparts (float64 -> float32, complex128 -> complex64,
int64 -> int32, uint64 -> uint32), each with a ``NarrowingWarning`` naming the function and the
parameter, and integers that do not fit raise OverflowError (``xp._narrowing``). Promotions are
not narrowed: once the arguments are 32-bit, the only promotion that needs 64 bits is a signed
integer with uint32, and int32 would not hold every uint32 value. The dtypes reported as
available (``__array_namespace_info__().dtypes()``, ``default_dtypes()``) stay the 32-bit ones.

With the 64-bit mode on, a TPU (JAX's default backend) still has no float64: XLA emulates it there
with float32's exponent range, so float64 and complex128 are unavailable in the same way (the
same errors, the same opt-in to narrowing), the default floating dtypes are float32 and complex64,
and int64 / uint64 (exact there) stay.
"""

from __future__ import annotations

import builtins
import functools
import itertools
from collections.abc import Iterable

import jax
import numpy as np

bool = np.dtype("bool")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

ALL: tuple[np.dtype, ...] = (
    bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float32, float64, complex64, complex128,
)  # fmt: skip
BY_NAME: dict[str, np.dtype] = {dt.name: dt for dt in ALL}
X64_ONLY = frozenset({int64, uint64, float64, complex128})

# The kinds of `isdtype`, and the categories function signatures are written in.
KINDS: dict[str, frozenset[np.dtype]] = {
    "bool": frozenset({bool}),
    "signed integer": frozenset({int8, int16, int32, int64}),
    "unsigned integer": frozenset({uint8, uint16, uint32, uint64}),
    "real floating": frozenset({float32, float64}),
    "complex floating": frozenset({complex64, complex128}),
}
KINDS["integral"] = KINDS["signed integer"] | KINDS["unsigned integer"]
KINDS["numeric"] = KINDS["integral"] | KINDS["real floating"] | KINDS["complex floating"]

INTEGER = KINDS["integral"]
REAL_FLOATING = KINDS["real floating"]
COMPLEX_FLOATING = KINDS["complex floating"]
FLOATING = REAL_FLOATING | COMPLEX_FLOATING
NUMERIC = KINDS["numeric"]
REAL_NUMERIC = INTEGER | REAL_FLOATING
INTEGER_OR_BOOL = INTEGER | {bool}
ANY = frozenset(ALL)

# The categories a function's parameter may require, as the standard words them.
CATEGORY_NAMES: dict[frozenset[np.dtype], str] = {
    ANY: "any",
    NUMERIC: "numeric",
    REAL_NUMERIC: "real-valued",
    FLOATING: "floating-point",
    REAL_FLOATING: "real-valued floating-point",
    COMPLEX_FLOATING: "complex floating-point",
    INTEGER: "integer",
    INTEGER_OR_BOOL: "integer or boolean",
    KINDS["bool"]: "boolean",
}


def a_category(category: frozenset[np.dtype]) -> str:
    """The category's name with its article, for messages: "an integer", "a real-valued"."""
    name = CATEGORY_NAMES[category]
    return ("an " if name[0] in "aeiou" else "a ") + name


# The ladder of kinds, by numpy's kind character: bool < integer < real floating < complex.
_ARRAY_KIND = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}

COMPLEX_OF: dict[np.dtype, np.dtype] = {
    float32: complex64,
    float64: complex128,
    complex64: complex64,
    complex128: complex128,
}
REAL_OF: dict[np.dtype, np.dtype] = {complex64: float32, complex128: float64, float32: float32, float64: float64}


# --- the public dtype objects --------------------------------------------------------------


class DType:
    """A data type of the array API standard (``xp.float32``, ``x.dtype``)."""

    __slots__ = ("_np",)

    def __init__(self, np_dtype: np.dtype) -> None:
        self._np = np_dtype

    @property
    def name(self) -> str:
        return self._np.name

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype this stands for (so ``numpy.dtype(xp.float32)`` works)."""
        return self._np

    @property
    def kind(self) -> str:
        return self._np.kind

    @property
    def itemsize(self) -> int:
        return self._np.itemsize

    def __repr__(self) -> str:
        return f"xp.{self._np.name}"

    def __str__(self) -> str:
        return self._np.name

    def __eq__(self, other: object) -> builtins.bool:
        if isinstance(other, DType):
            return self._np == other._np
        if isinstance(other, np.dtype):
            return self._np == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._np)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (public_by_name, (self._np.name,))


PUBLIC: dict[np.dtype, DType] = {d: DType(d) for d in ALL}
"""The public dtype object of each dtype."""


def public_by_name(name: str) -> DType:
    return PUBLIC[BY_NAME[name]]


# --- promotion ------------------------------------------------------------------------------

# The standard's promotion lattice, as "a promotes to b" edges. The table is its closure.
_LATTICE_EDGES = (
    (int8, int16), (int16, int32), (int32, int64),
    (uint8, uint16), (uint16, uint32), (uint32, uint64),
    (uint8, int16), (uint16, int32), (uint32, int64),
    (float32, float64), (complex64, complex128),
    (float32, complex64), (float64, complex128),
)  # fmt: skip


def _ancestors() -> dict[np.dtype, set[np.dtype]]:
    """Every dtype's set of dtypes it promotes to, itself included."""
    up: dict[np.dtype, set[np.dtype]] = {dt: {dt} for dt in ALL}
    changed = True
    while changed:
        changed = False
        for low, high in _LATTICE_EDGES:
            for dt in ALL:
                if low in up[dt] and not up[high] <= up[dt]:
                    up[dt] |= up[high]
                    changed = True
    return up


def _least_upper_bound(a: np.dtype, b: np.dtype, up: dict[np.dtype, set[np.dtype]]) -> np.dtype | None:
    common = up[a] & up[b]
    least = [dt for dt in common if all(other in up[dt] for other in common)]
    return least[0] if least else None


def _mixed_kind(a: np.dtype, b: np.dtype) -> np.dtype | None:
    """Promotion of two dtypes of different kinds, which the standard leaves unspecified."""
    low, high = sorted((a, b), key=lambda dt: _ARRAY_KIND[dt.kind])
    if _ARRAY_KIND[low.kind] == _ARRAY_KIND[high.kind]:  # uint64 and a signed integer
        return None
    if high.kind == "c" and low.kind == "f":
        return COMPLEX_OF[low] if low.itemsize > high.itemsize // 2 else high
    return high


def _build_promotion_table() -> tuple[dict[tuple[np.dtype, np.dtype], np.dtype], frozenset]:
    up = _ancestors()
    table: dict[tuple[np.dtype, np.dtype], np.dtype] = {}
    standard: set[tuple[np.dtype, np.dtype]] = set()
    for a, b in itertools.product(ALL, ALL):
        result = _least_upper_bound(a, b, up)
        if result is not None:
            standard.add((a, b))
        else:
            result = _mixed_kind(a, b)
        if result is not None:
            table[a, b] = result
    return table, frozenset(standard)


PROMOTION_TABLE, STANDARD_PAIRS = _build_promotion_table()
"""``PROMOTION_TABLE[a, b]`` is the result of promoting ``a`` and ``b``; pairs with no result
are absent. ``STANDARD_PAIRS`` holds the pairs the standard itself specifies."""


class PromotionError(TypeError):
    pass


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """The promoted dtype of ``a`` and ``b``; raises PromotionError where there is none, or
    where it is a 64-bit dtype and JAX's 64-bit mode is off (int32 and uint32 need int64)."""
    if a is b:
        return a
    try:
        result = PROMOTION_TABLE[a, b]
    except KeyError:
        raise PromotionError(
            f"{a} and {b} have no common dtype (no integer dtype holds both; cast one explicitly)"
        ) from None
    if result in X64_ONLY and result is not a and result is not b and not x64_enabled():
        raise PromotionError(
            f"{a} and {b} promote to {result}: {unavailable_message(result, narrowable=False)}, or cast one "
            f"of them to a 32-bit dtype (narrowing does not apply to promotions: {NARROWED[result]} "
            f"would not hold every value of both)"
        )
    return result


def promote_all(dtypes: Iterable[np.dtype]) -> np.dtype:
    it = iter(dtypes)
    result = next(it)
    for dt in it:
        result = promote(result, dt)
    return result


# --- Python scalars -------------------------------------------------------------------------

# The kind of each Python scalar type, on the ladder bool < int < float < complex.
SCALAR_KIND: dict[type, int] = {builtins.bool: 0, int: 1, float: 2, complex: 3}


def scalar_dtype(array_dtype: np.dtype, scalar_type: type) -> np.dtype:
    """The dtype a Python scalar of ``scalar_type`` takes when combined with an array.

    The standard's rule: a scalar of the array's kind, or of a lower kind, takes the array's
    dtype. A scalar of a higher kind (which the standard leaves unspecified) takes the
    default dtype of its own kind, except that a complex scalar with a real floating array
    takes the complex dtype of the array's precision, as in JAX and NumPy.
    """
    scalar_kind = SCALAR_KIND[scalar_type]
    array_kind = _ARRAY_KIND[array_dtype.kind]
    if scalar_kind <= array_kind:
        return array_dtype
    if scalar_kind == 3 and array_kind == 2:
        return COMPLEX_OF[array_dtype]
    return default_dtype_of_scalar(scalar_type)


# --- 64-bit mode and defaults ---------------------------------------------------------------


def x64_enabled() -> builtins.bool:
    return jax.config.jax_enable_x64  # type: ignore[attr-defined]  # read per call: the fastest way


EMULATED = frozenset({float64, complex128})
"""What XLA:TPU computes only as an emulation: float64 with float32's exponent range (1e300 becomes
inf, 1e-300 zero) and, in its transcendental functions, float32's accuracy; LU-based linear algebra
and FFTs of it do not compile. xp does not offer these dtypes on a TPU (docs/accelerators.md)."""


@functools.cache
def float64_emulated() -> builtins.bool:
    """Whether JAX's default backend emulates float64 (a TPU). Read on first use, not at import
    (asking starts JAX's backends); the default backend cannot change once it has started."""
    return jax.default_backend() == "tpu"


def unavailable() -> frozenset[np.dtype]:
    """The dtypes that cannot be used now: the four 64-bit ones with JAX's 64-bit mode off;
    with it on, float64 and complex128 where the default backend only emulates them."""
    if not x64_enabled():
        return X64_ONLY
    return EMULATED if float64_emulated() else _NONE


_NONE: frozenset[np.dtype] = frozenset()


def available() -> tuple[np.dtype, ...]:
    """The dtypes usable now (see ``unavailable``)."""
    missing = unavailable()
    return tuple(dt for dt in ALL if dt not in missing)


def is_available(dtype: np.dtype) -> builtins.bool:
    return dtype not in X64_ONLY or dtype not in unavailable()


NARROWED: dict[np.dtype, np.dtype] = {float64: float32, complex128: complex64, int64: int32, uint64: uint32}
"""The 32-bit counterpart of each 64-bit dtype, what narrowing (``xp._narrowing``) gives."""

NARROWING_OPT_IN = "with xp.narrow_64bit(): ..., or XP_NARROW_64BIT=1"


def unavailable_message(dtype: np.dtype, *, narrowable: builtins.bool = True) -> str:
    """Why ``dtype`` cannot be used now, and the ways out: the 64-bit mode (or, where the backend
    only emulates it, another backend), and (where the request could be narrowed) the opt-in to
    narrowing."""
    if x64_enabled():
        enable = (
            f"{dtype} is not available on {jax.default_backend().upper()}: XLA emulates it there with float32's "
            f"exponent range and accuracy (1e300 becomes inf), so xp does not offer it there "
            f"(docs/accelerators.md); run on the CPU for {dtype} (JAX_PLATFORMS=cpu)"
        )
    else:
        enable = (
            f"{dtype} needs JAX's 64-bit mode, which is off; enable it with JAX_ENABLE_X64=1 or "
            f"jax.config.update('jax_enable_x64', True) before creating arrays"
        )
    if not narrowable:
        return enable
    return (
        f"{enable}, or opt in to narrowing 64-bit requests to 32 bits ({NARROWED[dtype]} here: "
        f"{NARROWING_OPT_IN}), or use a 32-bit dtype"
    )


def default_int() -> np.dtype:
    return int64 if x64_enabled() else int32


def default_uint() -> np.dtype:
    """The default unsigned integer dtype (what sums of unsigned integers accumulate in)."""
    return uint64 if x64_enabled() else uint32


def default_float() -> np.dtype:
    return float64 if x64_enabled() and not float64_emulated() else float32


def default_complex() -> np.dtype:
    return complex128 if x64_enabled() and not float64_emulated() else complex64


def default_dtype_of_scalar(scalar_type: type) -> np.dtype:
    kind = SCALAR_KIND[scalar_type]
    if kind == 0:
        return bool
    if kind == 1:
        return default_int()
    if kind == 2:
        return default_float()
    return default_complex()
