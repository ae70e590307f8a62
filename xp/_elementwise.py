"""Element-wise functions, built from one table.

Each row of :data:`UNARY` and :data:`BINARY` names a function, the ``jax`` computation, the
dtypes it accepts and its result rule; :func:`_unary` and :func:`_binary` turn a row into the
public function. The computation runs in a jitted kernel whose trace-time code does the dtype
work (category checks, promotion, broadcasting checks), so an eager call on xp arrays costs one
cached kernel dispatch, and a traced call inlines to the same jaxpr as ``jax.numpy``.

Dtype rules beyond the standard's table (documented choices, see ``_dtypes``):

- functions of floating-point operands (``sin``, ``divide``, ``atan2``, ...) compute integer
  operands in the default floating dtype, as NumPy and JAX do;
- logical functions accept any dtype and use its truth value (non-zero is True);
- everything else rejects dtypes outside its category with a TypeError.

Special cases the standard prescribes that ``jax.numpy`` gets wrong are fixed in
``xp._special_cases``, as code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp import _routing as routing
from xp import _special_cases as special_cases
from xp._array import Array, JaxArrayImpl, wrap
from xp._errors import fail
from xp._jit import Tracer, kernel
from xp._routing import api
from xp._typing import ArrayLike
from xp._utility import truth

if TYPE_CHECKING:
    from xp.sparse._array import SparseArray


SAME = "same"  # result has the computation dtype
REAL = "real"  # result has the real dtype of the computation dtype (abs of complex)


class Op:
    """An element-wise function: its name, its computation, the dtypes it accepts and its
    result's. (A plain class: a dataclass costs about 1.5 ms to create at import; bench/RESULTS.md,
    "Import time".)"""

    __slots__ = ("accepts", "compute", "doc", "lift", "name", "result")

    def __init__(
        self,
        name: str,
        compute: Callable[..., Any],
        accepts: frozenset[np.dtype],
        result: np.dtype | str = SAME,
        *,
        lift: bool = False,  # integer operands are computed in the default floating dtype
        doc: str = "",
    ) -> None:
        self.name = name
        self.compute = compute
        self.accepts = accepts
        self.result = result
        self.lift = lift
        self.doc = doc

    def __repr__(self) -> str:
        return f"Op({self.name!r})"


def _keep_integers(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Rounding functions return integer input unchanged (jax.numpy would make it float)."""
    return lambda x: x if x.dtype.kind in "iub" else fn(x)


def _truth(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The logical functions read each operand's truth value (subnormals are True)."""
    return lambda *xs: fn(*(truth(x) for x in xs))


FLOATING, NUMERIC, REAL_NUMERIC = dt.FLOATING, dt.NUMERIC, dt.REAL_NUMERIC
REAL_FLOATING, INTEGER, INTEGER_OR_BOOL, ANY = dt.REAL_FLOATING, dt.INTEGER, dt.INTEGER_OR_BOOL, dt.ANY
BOOL = dt.bool

# fmt: off
UNARY = (
    Op("abs", special_cases.abs, NUMERIC, REAL, doc="Absolute value |x| of each element."),
    Op("acos", special_cases.acos, FLOATING, lift=True, doc="Principal inverse cosine of each element."),
    Op("acosh", special_cases.acosh, FLOATING, lift=True, doc="Inverse hyperbolic cosine of each element."),
    Op("asin", special_cases.asin, FLOATING, lift=True, doc="Principal inverse sine of each element."),
    Op("asinh", special_cases.asinh, FLOATING, lift=True, doc="Inverse hyperbolic sine of each element."),
    Op("atan", special_cases.atan, FLOATING, lift=True, doc="Principal inverse tangent of each element."),
    Op("atanh", special_cases.atanh, FLOATING, lift=True, doc="Inverse hyperbolic tangent of each element."),
    Op("bitwise_invert", jnp.invert, INTEGER_OR_BOOL, doc="Bitwise NOT of each element."),
    Op("ceil", _keep_integers(jnp.ceil), REAL_NUMERIC, doc="Smallest integer-valued number not less than each element."),
    Op("conj", jnp.conj, NUMERIC, doc="Complex conjugate of each element."),
    Op("cos", special_cases.cos, FLOATING, lift=True, doc="Cosine of each element (in radians)."),
    Op("cosh", special_cases.cosh, FLOATING, lift=True, doc="Hyperbolic cosine of each element."),
    Op("exp", special_cases.exp, FLOATING, lift=True, doc="Exponential e**x of each element."),
    Op("expm1", special_cases.expm1, FLOATING, lift=True, doc="exp(x) - 1 of each element, accurate for small x."),
    Op("floor", _keep_integers(jnp.floor), REAL_NUMERIC, doc="Greatest integer-valued number not greater than each element."),
    Op("imag", special_cases.imag, NUMERIC, REAL, doc="Imaginary component of each element (0 for real input)."),
    Op("isfinite", jnp.isfinite, NUMERIC, BOOL, doc="Whether each element is finite."),
    Op("isinf", jnp.isinf, NUMERIC, BOOL, doc="Whether each element is infinite."),
    Op("isnan", jnp.isnan, NUMERIC, BOOL, doc="Whether each element is NaN."),
    Op("log", special_cases.log, FLOATING, lift=True, doc="Natural logarithm of each element."),
    Op("log1p", special_cases.log1p, FLOATING, lift=True, doc="log(1 + x) of each element, accurate for small x."),
    Op("log2", special_cases.log2, FLOATING, lift=True, doc="Base-2 logarithm of each element."),
    Op("log10", special_cases.log10, FLOATING, lift=True, doc="Base-10 logarithm of each element."),
    Op("logical_not", _truth(jnp.logical_not), ANY, BOOL, doc="Logical NOT of each element."),
    Op("negative", jnp.negative, NUMERIC, doc="Numerical negative -x of each element."),
    Op("positive", lambda x: x, NUMERIC, doc="Numerical positive +x of each element."),
    Op("real", special_cases.real, NUMERIC, REAL, doc="Real component of each element."),
    Op("reciprocal", special_cases.reciprocal, FLOATING, lift=True, doc="1 / x of each element."),
    Op("round", _keep_integers(jnp.round), NUMERIC, doc="Each element rounded to the nearest integer, ties to even."),
    Op("sign", special_cases.sign, NUMERIC, doc="Sign of each element (x / |x| for complex x, 0 at 0)."),
    Op("signbit", special_cases.signbit, REAL_NUMERIC, BOOL, doc="Whether the sign bit of each element is set."),
    Op("sin", special_cases.sin, FLOATING, lift=True, doc="Sine of each element (in radians)."),
    Op("sinh", special_cases.sinh, FLOATING, lift=True, doc="Hyperbolic sine of each element."),
    Op("sqrt", special_cases.sqrt, FLOATING, lift=True, doc="Principal square root of each element."),
    Op("square", jnp.square, NUMERIC, doc="x * x of each element."),
    Op("tan", special_cases.tan, FLOATING, lift=True, doc="Tangent of each element (in radians)."),
    Op("tanh", special_cases.tanh, FLOATING, lift=True, doc="Hyperbolic tangent of each element."),
    Op("trunc", _keep_integers(jnp.trunc), REAL_NUMERIC, doc="Each element rounded toward zero."),
)

BINARY = (
    Op("add", jnp.add, NUMERIC, doc="Sum x1 + x2 of each pair of elements."),
    Op("atan2", special_cases.atan2, REAL_FLOATING, lift=True, doc="Inverse tangent of x1 / x2, in the quadrant of (x2, x1)."),
    Op("bitwise_and", jnp.bitwise_and, INTEGER_OR_BOOL, doc="Bitwise AND of each pair of elements."),
    Op("bitwise_left_shift", special_cases.left_shift, INTEGER, doc="x1 shifted left by x2 bits."),
    Op("bitwise_or", jnp.bitwise_or, INTEGER_OR_BOOL, doc="Bitwise OR of each pair of elements."),
    Op("bitwise_right_shift", special_cases.right_shift, INTEGER, doc="x1 shifted right (arithmetically) by x2 bits."),
    Op("bitwise_xor", jnp.bitwise_xor, INTEGER_OR_BOOL, doc="Bitwise XOR of each pair of elements."),
    Op("copysign", jnp.copysign, REAL_FLOATING, lift=True, doc="|x1| with the sign of x2."),
    Op("divide", special_cases.divide, NUMERIC, lift=True, doc="True division x1 / x2."),
    Op("equal", jnp.equal, ANY, BOOL, doc="Whether x1 == x2, for each pair of elements."),
    Op("floor_divide", special_cases.floor_divide, REAL_NUMERIC, doc="Floor division x1 // x2; for integers, x1 // 0 is 0 (as NumPy)."),
    Op("greater", jnp.greater, REAL_NUMERIC, BOOL, doc="Whether x1 > x2."),
    Op("greater_equal", jnp.greater_equal, REAL_NUMERIC, BOOL, doc="Whether x1 >= x2."),
    Op("hypot", special_cases.hypot, REAL_FLOATING, lift=True, doc="sqrt(x1**2 + x2**2) without undue overflow."),
    Op("less", jnp.less, REAL_NUMERIC, BOOL, doc="Whether x1 < x2."),
    Op("less_equal", jnp.less_equal, REAL_NUMERIC, BOOL, doc="Whether x1 <= x2."),
    Op("logaddexp", special_cases.logaddexp, REAL_FLOATING, lift=True, doc="log(exp(x1) + exp(x2)), without overflow."),
    Op("logical_and", _truth(jnp.logical_and), ANY, BOOL, doc="Logical AND of each pair of elements."),
    Op("logical_or", _truth(jnp.logical_or), ANY, BOOL, doc="Logical OR of each pair of elements."),
    Op("logical_xor", _truth(jnp.logical_xor), ANY, BOOL, doc="Logical XOR of each pair of elements."),
    Op("maximum", jnp.maximum, REAL_NUMERIC, doc="Larger of each pair of elements (NaN if either is NaN)."),
    Op("minimum", jnp.minimum, REAL_NUMERIC, doc="Smaller of each pair of elements (NaN if either is NaN)."),
    Op("multiply", special_cases.multiply, NUMERIC, doc="Product x1 * x2 of each pair of elements."),
    Op("nextafter", jnp.nextafter, REAL_FLOATING, lift=True, doc="The next representable value after x1 toward x2."),
    Op("not_equal", jnp.not_equal, ANY, BOOL, doc="Whether x1 != x2, for each pair of elements."),
    Op("pow", special_cases.pow, NUMERIC, doc="x1 raised to the power x2."),
    Op("remainder", special_cases.remainder, REAL_NUMERIC, doc="Remainder of x1 / x2 with the sign of x2 (Python's %); for integers, x1 % 0 is 0 (as NumPy)."),
    Op("subtract", jnp.subtract, NUMERIC, doc="Difference x1 - x2 of each pair of elements."),
)
# fmt: on


# --- kernels --------------------------------------------------------------------------------


def _check_category(op: Op, dtype: np.dtype, param: str) -> None:
    if dtype not in op.accepts and not (op.lift and dtype in dt.INTEGER):
        fail(TypeError, f"{param} must have {dt.a_category(op.accepts)} dtype, got {dtype}")


def _computation_dtype(op: Op, dtype: np.dtype) -> np.dtype:
    if op.lift and dtype in dt.INTEGER:
        return dt.default_float()
    return dtype


def _result(op: Op, out: Any, dtype: np.dtype) -> Any:
    """Make sure the result has the promised dtype (jax may widen or weaken it)."""
    want: Any  # SAME and REAL are markers; any other result is a dtype
    if op.result is SAME:
        want = dtype
    elif op.result is REAL:
        want = dt.REAL_OF.get(dtype, dtype)
    else:
        want = op.result
    if out.dtype != want or getattr(out, "weak_type", False):
        out = lax.convert_element_type(out, want)
    return out


def _unary_kernel(op: Op, x: Any) -> Any:
    _check_category(op, x.dtype, "x")
    dtype = _computation_dtype(op, x.dtype)
    return _result(op, op.compute(x.astype(dtype)), dtype)


def _binary_kernel(op: Op, x1: Any, x2: Any) -> Any:
    _check_category(op, x1.dtype, "x1")
    _check_category(op, x2.dtype, "x2")
    try:
        dtype = dt.promote(x1.dtype, x2.dtype)
    except dt.PromotionError as e:
        fail(TypeError, f"x1 and x2: {e}")
    dtype = _computation_dtype(op, dtype)
    try:
        shape = jnp.broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        fail(ValueError, f"x1 and x2 cannot be broadcast together: shapes {x1.shape} and {x2.shape}")
    # at trace time only, so free on later calls: an outer product by broadcasting is where a
    # too-big element-wise result usually comes from
    boundary.allocation(shape, dtype, None, "the broadcast shape of x1 and x2")
    return _result(op, op.compute(x1.astype(dtype), x2.astype(dtype)), dtype)


# --- the public functions -------------------------------------------------------------------

_Sparse = TypeVar("_Sparse", bound="SparseArray")


class UnaryFunction(Protocol):
    """The signature of a unary element-wise function, ``f(x, /)``, for type checkers.

    A sparse ``x`` gives a sparse array of its format where ``f(0) == 0``, else a dense array."""

    @overload
    def __call__(self, x: ArrayLike, /) -> Array: ...
    @overload
    def __call__(self, x: _Sparse, /) -> _Sparse | Array: ...
    def __call__(self, x: ArrayLike | SparseArray, /) -> Array | SparseArray: ...


class BinaryFunction(Protocol):
    """The signature of a binary element-wise function, ``f(x1, x2, /)``, for type checkers.

    With a sparse operand the result is sparse where its zeros are structural (``multiply``
    with a dense array, ``add`` of two sparse ones), else dense."""

    @overload
    def __call__(self, x1: ArrayLike, x2: ArrayLike, /) -> Array: ...
    @overload
    def __call__(self, x1: ArrayLike | SparseArray, x2: ArrayLike | SparseArray, /) -> Array | SparseArray: ...
    def __call__(self, x1: ArrayLike | SparseArray, x2: ArrayLike | SparseArray, /) -> Array | SparseArray: ...


def _unary(op: Op) -> Callable[[ArrayLike], Array]:
    run = kernel(functools.partial(_unary_kernel, op))
    where = f"xp.{op.name}"

    def compute(x: ArrayLike, /) -> Array:
        return wrap(run(x._value if type(x) is Array else boundary.array(x, "x")))

    def function(x: ArrayLike, /) -> Array:
        try:
            return compute(x)
        except Exception as error:
            return routing.failed(error, where, function, (x,), {})

    return _publish(function, compute, op)


def _binary(op: Op) -> Callable[[ArrayLike, ArrayLike], Array]:
    run = kernel(functools.partial(_binary_kernel, op))
    where = f"xp.{op.name}"

    def compute(x1: ArrayLike, x2: ArrayLike, /) -> Array:
        if type(x1) is Array:
            if type(x2) is Array:
                return wrap(run(x1._value, x2._value))
            kind = type(x2)
            if (kind is float or kind is int) and type(x1._value) is JaxArrayImpl:
                scalar = _SCALARS.get((kind, x2, x1._value.aval.dtype))
                if scalar is not None:
                    return wrap(run(x1._value, scalar))
        return wrap(run(*operands(op, x1, x2)))

    def function(x1: ArrayLike, x2: ArrayLike, /) -> Array:
        try:
            return compute(x1, x2)
        except Exception as error:
            return routing.failed(error, where, function, (x1, x2), {})

    return _publish(function, compute, op)


# Python scalars already converted for an eager array of a dtype: (type, value, dtype) -> array.
# Only ints and finite non-zero floats, whose == and hash agree with their bits.
_SCALARS: dict[tuple[type, Any, np.dtype], Any] = {}


def operands(op: Op | None, x1: Any, x2: Any, names: tuple[str, str] = ("x1", "x2")) -> tuple[Any, Any]:
    """Two operands as jax arrays, a Python scalar taking its dtype from the other operand.

    A Python scalar must be of a kind the function accepts with the other operand's dtype
    (the standard's rule, extended as in ``_dtypes.scalar_dtype``), and an int must fit.
    """
    v1, v2 = boundary.operand(x1, names[0]), boundary.operand(x2, names[1])
    s1, s2 = type(v1) in boundary.PY_SCALARS, type(v2) in boundary.PY_SCALARS
    if s1 and s2:
        return boundary.array(v1, names[0]), boundary.array(v2, names[1])
    if s1:
        return _scalar_operand(op, v1, v2, names[0]), v2
    if s2:
        return v1, _scalar_operand(op, v2, v1, names[1])
    return v1, v2


def _scalar_operand(op: Op | None, scalar: Any, other: Any, param: str) -> Any:
    dtype = dt.scalar_dtype(other.dtype, type(scalar))
    if op is not None and dtype not in op.accepts and not (op.lift and dtype in dt.INTEGER):
        fail(TypeError, f"{param} is a Python {type(scalar).__name__}, which xp.{op.name} does not take "
               f"with an array of dtype {other.dtype}")  # fmt: skip
    if isinstance(other, Tracer):
        return boundary.scalar_constant(scalar, dtype, param)
    result = boundary.scalar_array(scalar, dtype, param)
    cacheable = type(scalar) is int or (type(scalar) is float and scalar == scalar and scalar != 0)
    if cacheable and len(_SCALARS) < 4096:  # (scalar_array's result is concrete under any trace)
        _SCALARS[type(scalar), scalar, other.dtype] = result
    return result


def _publish(function: Callable[..., Any], compute: Callable[..., Any], op: Op) -> Any:
    """Name and register the public function of ``op``: ``function``, the wrapper of ``compute``
    that reports its errors and routes sparse arguments, as ``routing.api``'s does (written with
    the function's own parameters: no packing of ``*args``, on the hottest functions)."""
    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = op.doc
    function.__wrapped__ = compute  # type: ignore[attr-defined]  # (the operators call it: xp/_operators.py)
    return routing.publish(op.name, function)


def _build() -> dict[str, Callable[..., Array]]:
    functions: dict[str, Callable[..., Array]] = {op.name: _unary(op) for op in UNARY}
    functions.update((op.name, _binary(op)) for op in BINARY)
    return functions


FUNCTIONS = _build()
OPS = {op.name: op for op in UNARY + BINARY}

# The public names, bound explicitly so that readers and type checkers see them, with their
# signatures (tests/test_typing.py checks that these are the rows of UNARY and BINARY).
abs: UnaryFunction = FUNCTIONS["abs"]
acos: UnaryFunction = FUNCTIONS["acos"]
acosh: UnaryFunction = FUNCTIONS["acosh"]
asin: UnaryFunction = FUNCTIONS["asin"]
asinh: UnaryFunction = FUNCTIONS["asinh"]
atan: UnaryFunction = FUNCTIONS["atan"]
atanh: UnaryFunction = FUNCTIONS["atanh"]
bitwise_invert: UnaryFunction = FUNCTIONS["bitwise_invert"]
ceil: UnaryFunction = FUNCTIONS["ceil"]
conj: UnaryFunction = FUNCTIONS["conj"]
cos: UnaryFunction = FUNCTIONS["cos"]
cosh: UnaryFunction = FUNCTIONS["cosh"]
exp: UnaryFunction = FUNCTIONS["exp"]
expm1: UnaryFunction = FUNCTIONS["expm1"]
floor: UnaryFunction = FUNCTIONS["floor"]
imag: UnaryFunction = FUNCTIONS["imag"]
isfinite: UnaryFunction = FUNCTIONS["isfinite"]
isinf: UnaryFunction = FUNCTIONS["isinf"]
isnan: UnaryFunction = FUNCTIONS["isnan"]
log: UnaryFunction = FUNCTIONS["log"]
log1p: UnaryFunction = FUNCTIONS["log1p"]
log2: UnaryFunction = FUNCTIONS["log2"]
log10: UnaryFunction = FUNCTIONS["log10"]
logical_not: UnaryFunction = FUNCTIONS["logical_not"]
negative: UnaryFunction = FUNCTIONS["negative"]
positive: UnaryFunction = FUNCTIONS["positive"]
real: UnaryFunction = FUNCTIONS["real"]
reciprocal: UnaryFunction = FUNCTIONS["reciprocal"]
round: UnaryFunction = FUNCTIONS["round"]
sign: UnaryFunction = FUNCTIONS["sign"]
signbit: UnaryFunction = FUNCTIONS["signbit"]
sin: UnaryFunction = FUNCTIONS["sin"]
sinh: UnaryFunction = FUNCTIONS["sinh"]
sqrt: UnaryFunction = FUNCTIONS["sqrt"]
square: UnaryFunction = FUNCTIONS["square"]
tan: UnaryFunction = FUNCTIONS["tan"]
tanh: UnaryFunction = FUNCTIONS["tanh"]
trunc: UnaryFunction = FUNCTIONS["trunc"]
add: BinaryFunction = FUNCTIONS["add"]
atan2: BinaryFunction = FUNCTIONS["atan2"]
bitwise_and: BinaryFunction = FUNCTIONS["bitwise_and"]
bitwise_left_shift: BinaryFunction = FUNCTIONS["bitwise_left_shift"]
bitwise_or: BinaryFunction = FUNCTIONS["bitwise_or"]
bitwise_right_shift: BinaryFunction = FUNCTIONS["bitwise_right_shift"]
bitwise_xor: BinaryFunction = FUNCTIONS["bitwise_xor"]
copysign: BinaryFunction = FUNCTIONS["copysign"]
divide: BinaryFunction = FUNCTIONS["divide"]
equal: BinaryFunction = FUNCTIONS["equal"]
floor_divide: BinaryFunction = FUNCTIONS["floor_divide"]
greater: BinaryFunction = FUNCTIONS["greater"]
greater_equal: BinaryFunction = FUNCTIONS["greater_equal"]
hypot: BinaryFunction = FUNCTIONS["hypot"]
less: BinaryFunction = FUNCTIONS["less"]
less_equal: BinaryFunction = FUNCTIONS["less_equal"]
logaddexp: BinaryFunction = FUNCTIONS["logaddexp"]
logical_and: BinaryFunction = FUNCTIONS["logical_and"]
logical_or: BinaryFunction = FUNCTIONS["logical_or"]
logical_xor: BinaryFunction = FUNCTIONS["logical_xor"]
maximum: BinaryFunction = FUNCTIONS["maximum"]
minimum: BinaryFunction = FUNCTIONS["minimum"]
multiply: BinaryFunction = FUNCTIONS["multiply"]
nextafter: BinaryFunction = FUNCTIONS["nextafter"]
not_equal: BinaryFunction = FUNCTIONS["not_equal"]
pow: BinaryFunction = FUNCTIONS["pow"]
remainder: BinaryFunction = FUNCTIONS["remainder"]
subtract: BinaryFunction = FUNCTIONS["subtract"]


@api
def clip(
    x: ArrayLike,
    /,
    min: ArrayLike | None = None,
    max: ArrayLike | None = None,
) -> Array:
    """Clamp each element of ``x`` to ``[min, max]`` (either bound may be None).

    Python scalar bounds follow the scalar rules with ``x``; the result has ``x``'s dtype and
    the broadcast shape of the three. A NaN in ``x`` or in a bound gives NaN.
    """
    value = boundary.array(x, "x")
    if value.dtype not in dt.REAL_NUMERIC:
        fail(TypeError, f"x must have a real-valued dtype, got {value.dtype}")
    bounds: list[Any] = []
    for bound, name in ((min, "min"), (max, "max")):
        if bound is None:
            bounds.append(None)
        elif type(bound) in boundary.PY_SCALARS:
            bounds.append(operands(OPS["maximum"], value, bound, ("x", name))[1])
        else:
            bound_value = boundary.array(bound, name)
            if bound_value.dtype not in dt.REAL_NUMERIC:
                fail(TypeError, f"{name} must have a real-valued dtype, got {bound_value.dtype}")
            bounds.append(bound_value)
    return wrap(_clip(value, *bounds))


@kernel
def _clip(x: Any, low: Any, high: Any) -> Any:
    shapes = [v.shape for v in (x, low, high) if v is not None]
    try:
        shape = jnp.broadcast_shapes(*shapes)
    except ValueError:
        fail(ValueError, f"x, min and max cannot be broadcast together: shapes {shapes}")
    out = jnp.broadcast_to(x, shape)
    if low is not None:
        low = low.astype(x.dtype) if dt.promote(low.dtype, x.dtype) == x.dtype else low
        out = jnp.where(out < low, low, out).astype(x.dtype)
        if x.dtype.kind == "f":
            out = jnp.where(jnp.isnan(low), jnp.nan, out).astype(x.dtype)
    if high is not None:
        high = high.astype(x.dtype) if dt.promote(high.dtype, x.dtype) == x.dtype else high
        out = jnp.where(out > high, high, out).astype(x.dtype)
        if x.dtype.kind == "f":
            out = jnp.where(jnp.isnan(high), jnp.nan, out).astype(x.dtype)
    return out
