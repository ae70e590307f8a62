"""Property checks of the elementwise functions and their operators, against NumPy.

For each function: inputs of every dtype of the category the standard names for it (and, for
two-argument functions, every pair of such dtypes the promotion table covers), broadcast shapes,
then the result's dtype (by the standard's rule), shape (the broadcast shape) and values (NumPy's,
computed in double precision for floating-point inputs unless the function is exact).
Inputs are finite and moderate: the special cases of infinities, NaNs and signed zeros are checked
by the special-cases chapter.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from conformance import spec
from conformance.checks import properties
from conformance.model import SKIPPED, Result, Task
from conformance.namespaces import Namespace

CHAPTER = "Elementwise functions"


@dataclass(frozen=True)
class Fn:
    category: str  # the dtypes the standard's signature names
    result: str  # "same" | "promoted" | "bool" | "real" (the real type of a complex input)
    oracle: Callable[..., Any]
    operator: Callable[..., Any] | None = None
    symbol: str = ""
    edge: bool = False  # inputs may be NaN or infinite
    bound: float | None = None  # |input| at most this
    native: bool = False  # the oracle computes in the input dtype, not in double precision
    atol: float = 0.0  # absolute tolerance, in units of the dtype's relative one
    nonnegative_x2: bool = False  # shifts, integer powers
    nonzero_x2: bool = False  # integer division


FP, RFP = "floating-point", "real-valued floating-point"
UNARY: dict[str, Fn] = {
    "abs": Fn("numeric", "real", np.abs),
    "acos": Fn(FP, "same", np.arccos),
    "acosh": Fn(FP, "same", np.arccosh),
    "asin": Fn(FP, "same", np.arcsin),
    "asinh": Fn(FP, "same", np.arcsinh),
    "atan": Fn(FP, "same", np.arctan),
    "atanh": Fn(FP, "same", np.arctanh),
    "bitwise_invert": Fn("integer or boolean", "same", np.invert, operator.invert, "~"),
    "ceil": Fn("real-valued", "same", np.ceil),
    "conj": Fn("numeric", "same", np.conj),
    "cos": Fn(FP, "same", np.cos, bound=100.0, atol=1.0),
    "cosh": Fn(FP, "same", np.cosh, bound=20.0),
    "exp": Fn(FP, "same", np.exp, bound=50.0),
    "expm1": Fn(FP, "same", np.expm1, bound=50.0),
    "floor": Fn("real-valued", "same", np.floor),
    "imag": Fn("complex floating-point", "real", np.imag),
    "isfinite": Fn("numeric", "bool", np.isfinite, edge=True),
    "isinf": Fn("numeric", "bool", np.isinf, edge=True),
    "isnan": Fn("numeric", "bool", np.isnan, edge=True),
    "log": Fn(FP, "same", np.log),
    "log1p": Fn(FP, "same", np.log1p),
    "log2": Fn(FP, "same", np.log2),
    "log10": Fn(FP, "same", np.log10),
    "logical_not": Fn("boolean", "bool", np.logical_not),
    "negative": Fn("numeric", "same", np.negative, operator.neg, "-x"),
    "positive": Fn("numeric", "same", np.positive, operator.pos, "+x"),
    "real": Fn(FP, "real", np.real),
    "reciprocal": Fn(FP, "same", np.reciprocal),
    "round": Fn("numeric", "same", np.round, native=True),
    "sign": Fn("numeric", "same", np.sign),
    "signbit": Fn(RFP, "bool", np.signbit, edge=True),
    "sin": Fn(FP, "same", np.sin, bound=100.0, atol=1.0),
    "sinh": Fn(FP, "same", np.sinh, bound=20.0),
    "sqrt": Fn(FP, "same", np.sqrt),
    "square": Fn("numeric", "same", np.square),
    "tan": Fn(FP, "same", np.tan, bound=1.5, atol=1.0),
    "tanh": Fn(FP, "same", np.tanh, bound=20.0),
    "trunc": Fn("real-valued", "same", np.trunc),
}
BINARY: dict[str, Fn] = {
    "add": Fn("numeric", "promoted", np.add, operator.add, "+"),
    "atan2": Fn(RFP, "promoted", np.arctan2, atol=1.0),
    "bitwise_and": Fn("integer or boolean", "promoted", np.bitwise_and, operator.and_, "&"),
    "bitwise_left_shift": Fn("integer", "promoted", np.left_shift, operator.lshift, "<<", nonnegative_x2=True),
    "bitwise_or": Fn("integer or boolean", "promoted", np.bitwise_or, operator.or_, "|"),
    "bitwise_right_shift": Fn("integer", "promoted", np.right_shift, operator.rshift, ">>", nonnegative_x2=True),
    "bitwise_xor": Fn("integer or boolean", "promoted", np.bitwise_xor, operator.xor, "^"),
    "copysign": Fn(RFP, "promoted", np.copysign),
    "divide": Fn(FP, "promoted", np.divide, operator.truediv, "/"),
    "equal": Fn("any", "bool", np.equal, operator.eq, "==", edge=True),
    "floor_divide": Fn(
        "real-valued", "promoted", np.floor_divide, operator.floordiv, "//", native=True, nonzero_x2=True
    ),
    "greater": Fn("real-valued", "bool", np.greater, operator.gt, ">", edge=True),
    "greater_equal": Fn("real-valued", "bool", np.greater_equal, operator.ge, ">=", edge=True),
    "hypot": Fn(RFP, "promoted", np.hypot),
    "less": Fn("real-valued", "bool", np.less, operator.lt, "<", edge=True),
    "less_equal": Fn("real-valued", "bool", np.less_equal, operator.le, "<=", edge=True),
    "logaddexp": Fn(RFP, "promoted", np.logaddexp),
    "logical_and": Fn("boolean", "bool", np.logical_and),
    "logical_or": Fn("boolean", "bool", np.logical_or),
    "logical_xor": Fn("boolean", "bool", np.logical_xor),
    "maximum": Fn("real-valued", "promoted", np.maximum, edge=True),
    "minimum": Fn("real-valued", "promoted", np.minimum, edge=True),
    "multiply": Fn("numeric", "promoted", np.multiply, operator.mul, "*"),
    "nextafter": Fn(RFP, "same", np.nextafter, native=True),
    "not_equal": Fn("any", "bool", np.not_equal, operator.ne, "!=", edge=True),
    "pow": Fn("numeric", "promoted", np.power, operator.pow, "**", bound=8.0, nonnegative_x2=True),
    "remainder": Fn("real-valued", "promoted", np.remainder, operator.mod, "%", native=True, nonzero_x2=True),
    "subtract": Fn("numeric", "promoted", np.subtract, operator.sub, "-"),
}
_OPERATOR_METHOD = {
    "~": "__invert__",
    "-x": "__neg__",
    "+x": "__pos__",
    "+": "__add__",
    "&": "__and__",
    "<<": "__lshift__",
    "|": "__or__",
    ">>": "__rshift__",
    "^": "__xor__",
    "/": "__truediv__",
    "==": "__eq__",
    "//": "__floordiv__",
    ">": "__gt__",
    ">=": "__ge__",
    "<": "__lt__",
    "<=": "__le__",
    "*": "__mul__",
    "!=": "__ne__",
    "**": "__pow__",
    "%": "__mod__",
    "-": "__sub__",
}


def _result_dtype(rule: str, *dtypes: str) -> str:
    if rule == "bool":
        return "bool"
    if rule == "real":
        return {"complex64": "float32", "complex128": "float64"}.get(dtypes[0], dtypes[0])
    if rule == "promoted" and len(dtypes) == 2:
        return spec.promotion_table()[dtypes[0], dtypes[1]]
    return dtypes[0]


def _oracle_input(x: np.ndarray, fn: Fn) -> np.ndarray:
    if fn.native or x.dtype.kind not in "fc":
        return x
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _elements(fn: Fn, dtype: str, second: bool = False) -> Any:
    if second and fn.nonnegative_x2 and dtype.startswith(("int", "uint")):
        return properties.elements(dtype, low=0, high=np.iinfo(dtype).bits - 1)
    return properties.elements(dtype, edge=fn.edge, bound=fn.bound if dtype[0] in "fc" else None)


def _unary(ns: Namespace, arrays: properties.Arrays, name: str, fn: Fn, use_operator: bool) -> Result:
    dtypes = ns.available(spec.CATEGORIES[fn.category])
    function = f"array.{_OPERATOR_METHOD[fn.symbol]}" if use_operator else name
    if not dtypes:
        return Result(CHAPTER, function, "properties", SKIPPED, f"no {fn.category} dtypes")
    call = fn.operator if use_operator else ns.get(name)

    def body(data: Any) -> None:
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        shape = data.draw(properties.shapes(), label="shape")
        x, xn = arrays.draw(data, dtype, shape, elements=_elements(fn, dtype))
        assert call is not None
        out = call(x)
        expected = fn.oracle(_oracle_input(xn, fn))
        label = f"{fn.symbol.replace('x', '')}({ns.describe(x)})" if use_operator else f"{name}({ns.describe(x)})"
        tol = properties.tolerance(dtype)
        properties.assert_result(ns, label, out, _result_dtype(fn.result, dtype), shape, expected, atol=fn.atol * tol)

    return properties.run_property(ns, CHAPTER, function if use_operator else name, body)


def _pairs(ns: Namespace, category: str, same: bool) -> list[tuple[str, str]]:
    dtypes = ns.available(spec.CATEGORIES[category])
    table = spec.promotion_table()
    return [
        (a, b) for a in dtypes for b in dtypes if (a, b) in table and table[a, b] in ns.dtypes and (a == b or not same)
    ]


def _binary(ns: Namespace, arrays: properties.Arrays, name: str, fn: Fn, use_operator: bool) -> Result:
    pairs = _pairs(ns, fn.category, same=name == "nextafter")
    function = f"array.{_OPERATOR_METHOD[fn.symbol]}" if use_operator else name
    if not pairs:
        return Result(CHAPTER, function, "properties", SKIPPED, f"no {fn.category} dtypes")
    call = fn.operator if use_operator else ns.get(name)

    def body(data: Any) -> None:
        d1, d2 = data.draw(st.sampled_from(pairs), label="dtypes")
        shapes = data.draw(properties.broadcastable(2), label="shapes")
        x1, x1n = arrays.draw(data, d1, shapes.input_shapes[0], label="x1", elements=_elements(fn, d1))
        x2, x2n = arrays.draw(data, d2, shapes.input_shapes[1], label="x2", elements=_elements(fn, d2, second=True))
        if fn.nonzero_x2 and d2.startswith(("int", "uint")):
            assume(bool(np.all(x2n != 0)))
        if name == "pow" and d1.startswith(("int", "uint")):
            assume(bool(np.all(x2n >= 0)))
        assert call is not None
        out = call(x1, x2)
        result = _result_dtype(fn.result, d1, d2)
        a, b = _oracle_input(x1n, fn), _oracle_input(x2n, fn)
        if fn.native and d1 != d2:
            a, b = a.astype(result), b.astype(result)
        expected = fn.oracle(a, b)
        args = f"{ns.describe(x1)}, {ns.describe(x2)}"
        label = f"x1 {fn.symbol} x2 with {args}" if use_operator else f"{name}({args})"
        properties.assert_result(
            ns, label, out, result, shapes.result_shape, expected, atol=fn.atol * properties.tolerance(result)
        )

    return properties.run_property(ns, CHAPTER, function if use_operator else name, body)


def _clip(ns: Namespace, arrays: properties.Arrays) -> Result:
    dtypes = ns.available(spec.CATEGORIES["real-valued"])
    clip = ns.get("clip")

    def body(data: Any) -> None:
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        shape = data.draw(properties.shapes(), label="shape")
        x, xn = arrays.draw(data, dtype, shape)
        kinds = data.draw(st.tuples(*[st.sampled_from(["none", "scalar", "array"])] * 2), label="min, max")
        bounds: list[Any] = []
        bounds_np: list[Any] = []
        for k, label in zip(kinds, ("min", "max"), strict=True):
            if k == "none":
                bounds.append(None)
                bounds_np.append(None)
            elif k == "scalar":
                lo = max(-100, int(np.iinfo(dtype).min)) if dtype[0] in "iu" else -100
                v = data.draw(st.integers(lo, 100), label=label)
                bounds.append(v if dtype[0] in "iu" else float(v))
                bounds_np.append(np.asarray(v, dtype=dtype))
            else:
                b, bn = arrays.draw(data, dtype, shape, label=label)
                bounds.append(b)
                bounds_np.append(bn)
        if bounds_np[0] is not None and bounds_np[1] is not None:
            assume(bool(np.all(bounds_np[0] <= bounds_np[1])))
        out = clip(x, bounds[0], bounds[1])
        expected = xn
        if bounds_np[0] is not None:
            expected = np.maximum(expected, bounds_np[0]).astype(dtype)
        if bounds_np[1] is not None:
            expected = np.minimum(expected, bounds_np[1]).astype(dtype)
        properties.assert_result(
            ns, f"clip({ns.describe(x)}, min={kinds[0]}, max={kinds[1]})", out, dtype, shape, expected
        )

    return properties.run_property(ns, CHAPTER, "clip", body)


def _one(runner: Callable[..., Result], *args: Any) -> list[Result]:
    return [runner(*args)]


def tasks(ns: Namespace, arrays: properties.Arrays) -> Iterator[Task]:
    """One task per function, and one per operator."""
    required = set(spec.required(ns.version)["namespace"])
    for table, runner in ((UNARY, _unary), (BINARY, _binary)):
        for name, fn in table.items():
            if name not in required:
                continue
            yield Task(name, functools.partial(_one, runner, ns, arrays, name, fn, False), function=name)
            if fn.operator is not None:
                run = functools.partial(_one, runner, ns, arrays, name, fn, True)
                yield Task(f"{name} operator", run, weight=0.5, function=name)
    if "clip" in required:
        yield Task("clip", lambda: [_clip(ns, arrays)], function="clip")
