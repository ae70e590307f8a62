"""Property checks of the statistical and utility functions, against NumPy.

Reductions are checked over ``axis=None``, one axis or several, with and without ``keepdims``;
result dtypes by the standard's rules (``sum``/``prod``/``cumulative_*`` widen small integers to
the default integer dtype); values against NumPy in double precision, with a tolerance scaled by
the magnitude of what was summed.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from conformance import spec
from conformance.checks import properties
from conformance.checks.registry import pick, prop, sum_dtype
from conformance.namespaces import Namespace

CHAPTER = "Statistical functions"
UTILITY = "Utility functions"


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _reduction(
    ns: Namespace,
    arrays: properties.Arrays,
    name: str,
    category: str,
    oracle: Any,
    *,
    dtype_rule: str = "same",
    bound: float = 100.0,
    nonempty: bool = False,
) -> Any:
    """A reduction ``name(x, axis=, keepdims=)``: dtype, shape and values."""
    dtypes = ns.available(spec.CATEGORIES[category])
    fn = ns.get(name)

    def body(data: Any) -> None:
        d = pick(data, dtypes, "dtype")
        shape = tuple(data.draw(properties.shapes(min_side=1 if nonempty else 0), label="shape"))
        x, xn = arrays.draw(data, d, shape, bound=bound)
        axis = properties.axes(data, x.ndim)
        axes = properties.normalize_axes(axis, x.ndim)
        if nonempty:
            assume(all(shape[a] > 0 for a in axes) and math.prod(shape) > 0)
        keepdims = data.draw(st.booleans(), label="keepdims")
        kw: dict[str, Any] = (
            {"keepdims": keepdims} if keepdims or data.draw(st.booleans(), label="pass keepdims") else {}
        )
        if axis is not None or data.draw(st.booleans(), label="pass axis"):
            kw["axis"] = axis
        correction = 0.0
        if name in ("std", "var"):
            correction = pick(data, [0, 1, 0.5], "correction") if math.prod(shape[a] for a in axes) > 1 else 0
            kw["correction"] = correction
        out = fn(x, **kw)
        result = sum_dtype(ns, d) if dtype_rule == "sum" else d
        wide = np.complex128 if d.startswith("complex") else np.float64
        source = (
            xn.astype(result) if dtype_rule == "sum" and d[0] in "iu" else (xn.astype(wide) if d[0] in "fc" else xn)
        )
        extra: dict[str, Any] = {"ddof": correction} if name in ("std", "var") else {}
        if dtype_rule == "sum" and d[0] in "iu":
            extra["dtype"] = result  # wrap around in the result dtype, as implementations do
        expected = np.asarray(oracle(source, axis=axes, keepdims=keepdims, **extra))
        count = max(1, math.prod(shape[a] for a in axes))
        # rounding errors grow with what is added up; products are checked relative to their size
        scale = {"sum": bound * count, "prod": 1.0, "var": bound**2}.get(name, bound)
        atol = properties.tolerance(result) * scale
        label = f"{name}({', '.join([ns.describe(x), *(f'{k}={v}' for k, v in kw.items())])})"
        properties.assert_result(ns, label, out, result, _reduced_shape(shape, axes, keepdims), expected, atol=atol)

    return body


_REDUCTIONS = {
    "sum": ("numeric", np.sum, "sum", 100.0, False),
    "prod": ("numeric", np.prod, "sum", 2.0, False),
    "max": ("real-valued", np.max, "same", 1e3, True),
    "min": ("real-valued", np.min, "same", 1e3, True),
    "mean": ("floating-point", np.mean, "same", 100.0, True),
    "std": ("real-valued floating-point", np.std, "same", 100.0, True),
    "var": ("real-valued floating-point", np.var, "same", 100.0, True),
}
for _name, (_cat, _oracle, _rule, _bound, _nonempty) in _REDUCTIONS.items():
    prop(CHAPTER, _name)(
        functools.partial(
            _reduction, name=_name, category=_cat, oracle=_oracle, dtype_rule=_rule, bound=_bound, nonempty=_nonempty
        )
    )


def _cumulative(ns: Namespace, arrays: properties.Arrays, name: str, oracle: Any, initial: int, bound: float) -> Any:
    dtypes = ns.available(spec.CATEGORIES["numeric"])
    fn = ns.get(name)

    def body(data: Any) -> None:
        d = pick(data, dtypes, "dtype")
        x, xn = arrays.draw(data, d, data.draw(properties.shapes(min_dims=1), label="shape"), bound=bound)
        axis = (
            data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
            if x.ndim > 1 or data.draw(st.booleans(), label="pass axis")
            else None
        )
        include_initial = data.draw(st.booleans(), label="include_initial")
        out = (
            fn(x, axis=axis, include_initial=include_initial)
            if axis is not None
            else fn(x, include_initial=include_initial)
        )
        result = sum_dtype(ns, d)
        a = 0 if axis is None else axis % x.ndim
        source = xn.astype(result) if d[0] in "iu" else xn.astype(np.complex128 if d[0] == "c" else np.float64)
        expected = oracle(source, axis=a)
        if include_initial:
            pad = np.full(tuple(1 if i == a else s for i, s in enumerate(xn.shape)), initial, dtype=expected.dtype)
            expected = np.concatenate([pad, expected], axis=a)
        count = max(1, xn.shape[a])
        atol = properties.tolerance(result) * (1.0 if name.endswith("prod") else bound * count)
        label = f"{name}({ns.describe(x)}, axis={axis}, include_initial={include_initial})"
        properties.assert_result(ns, label, out, result, expected.shape, expected, atol=atol)

    return body


prop(CHAPTER, "cumulative_sum")(lambda ns, arrays: _cumulative(ns, arrays, "cumulative_sum", np.cumsum, 0, 100.0))
prop(CHAPTER, "cumulative_prod")(lambda ns, arrays: _cumulative(ns, arrays, "cumulative_prod", np.cumprod, 1, 2.0))


def _truth(ns: Namespace, arrays: properties.Arrays, name: str) -> Any:
    fn, oracle = ns.get(name), getattr(np, name)

    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        shape = tuple(data.draw(properties.shapes(), label="shape"))
        x, xn = arrays.draw(data, d, shape, elements=properties.elements(d, low=-1, high=1, bound=1))
        axis = properties.axes(data, x.ndim)
        keepdims = data.draw(st.booleans(), label="keepdims")
        out = fn(x, axis=axis, keepdims=keepdims)
        axes = properties.normalize_axes(axis, x.ndim)
        expected = oracle(xn, axis=axes, keepdims=keepdims)
        label = f"{name}({ns.describe(x)}, axis={axis}, keepdims={keepdims})"
        properties.assert_result(ns, label, out, "bool", _reduced_shape(shape, axes, keepdims), expected)

    return body


prop(UTILITY, "all")(lambda ns, arrays: _truth(ns, arrays, "all"))
prop(UTILITY, "any")(lambda ns, arrays: _truth(ns, arrays, "any"))


@prop(UTILITY, "diff")
def diff(ns: Namespace, arrays: properties.Arrays) -> Any:
    dtypes = ns.available(spec.CATEGORIES["numeric"])

    def body(data: Any) -> None:
        d = pick(data, dtypes, "dtype")
        x, xn = arrays.draw(data, d, data.draw(properties.shapes(min_dims=1), label="shape"), bound=100)
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
        n = data.draw(st.integers(0, 2), label="n")
        kw: dict[str, Any] = {"axis": axis, "n": n}
        np_kw: dict[str, Any] = {}
        for side in ("prepend", "append"):
            if n > 0 and data.draw(st.booleans(), label=side):  # with n=0, NumPy ignores them
                shape = list(xn.shape)
                shape[axis] = data.draw(st.integers(1, 2), label=f"{side} size")
                kw[side], np_kw[side] = arrays.draw(data, d, shape, label=side, bound=100)
        assume(xn.shape[axis] + sum(v.shape[axis] for v in np_kw.values()) >= n or n == 0)
        out = ns.module.diff(x, **kw)
        wide = xn.astype(np.float64 if d[0] == "f" else np.complex128) if d[0] in "fc" else xn
        expected = np.diff(wide, n=n, axis=axis, **{k: v.astype(wide.dtype) for k, v in np_kw.items()})
        properties.assert_result(
            ns, f"diff({ns.describe(x)}, axis={axis}, n={n}, {', '.join(np_kw)})", out, d, expected.shape, expected
        )

    return body
