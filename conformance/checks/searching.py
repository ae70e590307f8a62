"""Property checks of the searching, sorting, set, indexing and linear algebra functions."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance import spec
from conformance.checks import properties
from conformance.checks.registry import pick, prop
from conformance.checks.statistical import _reduced_shape
from conformance.namespaces import Namespace

SEARCHING = "Searching functions"
SORTING = "Sorting functions"
SETS = "Set functions"
INDEXING = "Indexing functions"
LINALG = "Linear algebra functions"
_FEW = 3.0  # small integer-valued elements, so that ties and repeats happen


def _few(d: str) -> Any:
    return properties.elements(d, low=-_FEW, high=_FEW, bound=_FEW) if d != "bool" else properties.elements(d)


def _arg_reduction(ns: Namespace, arrays: properties.Arrays, name: str) -> Any:
    dtypes = ns.available(spec.CATEGORIES["real-valued"])
    fn, oracle = ns.get(name), getattr(np, name)

    def body(data: Any) -> None:
        d = pick(data, dtypes, "dtype")
        shape = tuple(data.draw(properties.shapes(min_side=1), label="shape"))
        x, xn = arrays.draw(data, d, shape, elements=_few(d))
        axis = data.draw(st.none() | (st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()), label="axis")
        keepdims = data.draw(st.booleans(), label="keepdims")
        out = fn(x, axis=axis, keepdims=keepdims)
        expected = oracle(xn, axis=axis, keepdims=keepdims)
        axes = properties.normalize_axes(axis, x.ndim)
        label = f"{name}({ns.describe(x)}, axis={axis}, keepdims={keepdims})"
        properties.assert_result(
            ns, label, out, ns.default("indexing"), _reduced_shape(shape, axes, keepdims), expected
        )

    return body


prop(SEARCHING, "argmax")(lambda ns, arrays: _arg_reduction(ns, arrays, "argmax"))
prop(SEARCHING, "argmin")(lambda ns, arrays: _arg_reduction(ns, arrays, "argmin"))


@prop(SEARCHING, "count_nonzero")
def count_nonzero(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        shape = tuple(data.draw(properties.shapes(), label="shape"))
        x, xn = arrays.draw(data, d, shape, elements=_few(d))
        axis = properties.axes(data, x.ndim)
        keepdims = data.draw(st.booleans(), label="keepdims")
        out = ns.module.count_nonzero(x, axis=axis, keepdims=keepdims)
        axes = properties.normalize_axes(axis, x.ndim)
        expected = np.count_nonzero(xn, axis=axes, keepdims=keepdims)
        label = f"count_nonzero({ns.describe(x)}, axis={axis}, keepdims={keepdims})"
        properties.assert_result(
            ns, label, out, ns.default("indexing"), _reduced_shape(shape, axes, keepdims), expected
        )

    return body


@prop(SEARCHING, "nonzero")
def nonzero(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        x, xn = arrays.draw(data, d, data.draw(properties.shapes(min_dims=1), label="shape"), elements=_few(d))
        out = ns.module.nonzero(x)
        expected = np.nonzero(xn)
        if len(out) != len(expected):
            raise AssertionError(f"nonzero({ns.describe(x)}): {len(out)} arrays, expected {len(expected)}")
        for i, (o, e) in enumerate(zip(out, expected, strict=True)):
            properties.assert_result(ns, f"nonzero({ns.describe(x)})[{i}]", o, ns.default("indexing"), e.shape, e)

    return body


@prop(SEARCHING, "searchsorted")
def searchsorted(ns: Namespace, arrays: properties.Arrays) -> Any:
    dtypes = ns.available(spec.CATEGORIES["real-valued"])

    def body(data: Any) -> None:
        d = pick(data, dtypes, "dtype")
        _, x1n = arrays.draw(data, d, (data.draw(st.integers(0, 6), label="size"),), label="x1", elements=_few(d))
        x1n = np.sort(x1n)
        x1 = ns.asarray(x1n, d)
        x2, x2n = arrays.draw(data, d, data.draw(properties.shapes(), label="x2 shape"), label="x2", elements=_few(d))
        side = pick(data, ["left", "right"], "side")
        out = ns.module.searchsorted(x1, x2, side=side)
        expected = np.searchsorted(x1n, x2n, side=side)
        properties.assert_result(
            ns,
            f"searchsorted({ns.describe(x1)}, {ns.describe(x2)}, side={side!r})",
            out,
            ns.default("indexing"),
            x2n.shape,
            expected,
        )

    return body


@prop(SEARCHING, "where")
def where(ns: Namespace, arrays: properties.Arrays) -> Any:
    table = spec.promotion_table()
    pairs = [(a, b) for a in ns.dtypes for b in ns.dtypes if table.get((a, b)) in ns.dtypes]

    def body(data: Any) -> None:
        d1, d2 = pick(data, pairs, "dtypes")
        shapes = data.draw(properties.broadcastable(3), label="shapes")
        c, cn = arrays.draw(data, "bool", shapes.input_shapes[0], label="condition")
        x1, x1n = arrays.draw(data, d1, shapes.input_shapes[1], label="x1")
        x2, x2n = arrays.draw(data, d2, shapes.input_shapes[2], label="x2")
        out = ns.module.where(c, x1, x2)
        result = table[d1, d2]
        expected = np.where(cn, x1n.astype(result), x2n.astype(result))
        label = f"where({ns.describe(c)}, {ns.describe(x1)}, {ns.describe(x2)})"
        properties.assert_result(ns, label, out, result, shapes.result_shape, expected)

    return body


def _sorted_indices(xn: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable (descending: equal elements keep their order) argsort along ``axis``."""

    def one(v: np.ndarray) -> np.ndarray:
        return np.array(sorted(range(len(v)), key=lambda i: v[i], reverse=descending), dtype=np.int64)

    if xn.size == 0:
        return np.zeros(xn.shape, dtype=np.int64)
    return np.apply_along_axis(one, axis, xn)


def _sorting(ns: Namespace, arrays: properties.Arrays, name: str) -> Any:
    dtypes = ns.available(spec.CATEGORIES["real-valued"])
    fn = ns.get(name)

    def body(data: Any) -> None:
        d = pick(data, dtypes, "dtype")
        x, xn = arrays.draw(data, d, data.draw(properties.shapes(min_dims=1), label="shape"), elements=_few(d))
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
        descending = data.draw(st.booleans(), label="descending")
        out = fn(x, axis=axis, descending=descending, stable=True)
        idx = _sorted_indices(xn, axis % x.ndim, descending)
        label = f"{name}({ns.describe(x)}, axis={axis}, descending={descending}, stable=True)"
        if name == "argsort":
            properties.assert_result(ns, label, out, ns.default("indexing"), xn.shape, idx)
        else:
            properties.assert_result(ns, label, out, d, xn.shape, np.take_along_axis(xn, idx, axis=axis))

    return body


prop(SORTING, "sort")(lambda ns, arrays: _sorting(ns, arrays, "sort"))
prop(SORTING, "argsort")(lambda ns, arrays: _sorting(ns, arrays, "argsort"))


def _unique(ns: Namespace, arrays: properties.Arrays, name: str) -> Any:
    dtypes = ns.available(spec.CATEGORIES["real-valued"]) + (["bool"] if "bool" in ns.dtypes else [])
    fn = ns.get(name)

    def body(data: Any) -> None:
        d = pick(data, dtypes, "dtype")
        x, xn = arrays.draw(data, d, data.draw(properties.shapes(), label="shape"), elements=_few(d))
        out = fn(x)
        label = f"{name}({ns.describe(x)})"
        values, index, _, counts = np.unique(xn, return_index=True, return_inverse=True, return_counts=True)
        parts = {"unique_values": ["values"], "unique_counts": ["values", "counts"]}.get(name)
        parts = parts or (
            ["values", "inverse_indices"]
            if name == "unique_inverse"
            else ["values", "indices", "inverse_indices", "counts"]
        )
        got = {"values": out} if name == "unique_values" else {p: getattr(out, p) for p in parts}
        order = np.argsort(ns.to_numpy(got["values"]), kind="stable")  # the order is unspecified
        properties.assert_result(
            ns, f"{label}.values (sorted)", ns.asarray(ns.to_numpy(got["values"])[order], d), d, values.shape, values
        )
        index_dtype = ns.default("indexing")
        if "counts" in got:
            properties.assert_result(
                ns,
                f"{label}.counts (sorted)",
                ns.asarray(ns.to_numpy(got["counts"])[order]),
                None,
                counts.shape,
                counts,
            )
            properties.assert_result(ns, f"{label}.counts", got["counts"], index_dtype, counts.shape)
        if "indices" in got:
            properties.assert_result(ns, f"{label}.indices", got["indices"], index_dtype, index.shape)
            firsts = xn.reshape(-1)[ns.to_numpy(got["indices"])]
            properties.assert_values(f"{label}: x[indices] == values", firsts, ns.to_numpy(got["values"]))
        if "inverse_indices" in got:
            inv = properties.assert_result(
                ns, f"{label}.inverse_indices", got["inverse_indices"], index_dtype, xn.shape
            )
            properties.assert_values(f"{label}: values[inverse_indices] == x", ns.to_numpy(got["values"])[inv], xn)

    return body


for _name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
    prop(SETS, _name)(functools.partial(_unique, name=_name))


@prop(SETS, "isin")
def isin(ns: Namespace, arrays: properties.Arrays) -> Any:
    dtypes = ns.available(spec.CATEGORIES["integer"])

    def body(data: Any) -> None:
        d = pick(data, dtypes, "dtype")
        x1, x1n = arrays.draw(data, d, data.draw(properties.shapes(), label="x1 shape"), label="x1", elements=_few(d))
        x2, x2n = arrays.draw(data, d, data.draw(properties.shapes(), label="x2 shape"), label="x2", elements=_few(d))
        invert = data.draw(st.booleans(), label="invert")
        out = ns.module.isin(x1, x2, invert=invert)
        properties.assert_result(
            ns,
            f"isin({ns.describe(x1)}, {ns.describe(x2)}, invert={invert})",
            out,
            "bool",
            x1n.shape,
            np.isin(x1n, x2n, invert=invert),
        )

    return body


@prop(INDEXING, "take")
def take(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        x, xn = arrays.draw(data, d, data.draw(properties.shapes(min_dims=1, min_side=1), label="shape"))
        axis = (
            data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
            if x.ndim > 1 or data.draw(st.booleans())
            else None
        )
        n = xn.shape[0 if axis is None else axis]
        idx = np.asarray(
            data.draw(st.lists(st.integers(-n, n - 1), max_size=5), label="indices"), dtype=ns.default("indexing")
        )
        out = (
            ns.module.take(x, ns.asarray(idx, ns.default("indexing")), axis=axis)
            if axis is not None
            else ns.module.take(x, ns.asarray(idx, ns.default("indexing")))
        )
        expected = np.take(xn, idx, axis=0 if axis is None else axis)
        properties.assert_result(
            ns, f"take({ns.describe(x)}, {idx.tolist()}, axis={axis})", out, d, expected.shape, expected
        )

    return body


@prop(INDEXING, "take_along_axis")
def take_along_axis(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        x, xn = arrays.draw(data, d, data.draw(properties.shapes(min_dims=1, min_side=1), label="shape"))
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
        shape = list(xn.shape)
        shape[axis] = data.draw(st.integers(0, 4), label="indices along axis")
        n = xn.shape[axis]
        idx = data.draw(
            hnp.arrays(np.dtype(ns.default("indexing")), tuple(shape), elements=st.integers(-n, n - 1)), label="indices"
        )
        out = ns.module.take_along_axis(x, ns.asarray(idx, ns.default("indexing")), axis=axis)
        expected = np.take_along_axis(xn, idx, axis=axis)
        properties.assert_result(
            ns,
            f"take_along_axis({ns.describe(x)}, <indices {tuple(shape)}>, axis={axis})",
            out,
            d,
            expected.shape,
            expected,
        )

    return body


def _pairs(ns: Namespace) -> list[tuple[str, str]]:
    table = spec.promotion_table()
    numeric = ns.available(spec.CATEGORIES["numeric"])
    return [(a, b) for a in numeric for b in numeric if table.get((a, b)) in ns.dtypes]


def _wide(xn: np.ndarray, result: str) -> np.ndarray:
    return (
        xn.astype(np.complex128 if result.startswith("complex") else np.float64)
        if result[0] in "fc"
        else xn.astype(result)
    )


@prop(LINALG, "matmul")
def matmul(ns: Namespace, arrays: properties.Arrays) -> Any:
    pairs = _pairs(ns)

    def body(data: Any) -> None:
        d1, d2 = pick(data, pairs, "dtypes")
        n, k, m = (data.draw(st.integers(1, 3), label=s) for s in "nkm")
        batch = data.draw(properties.broadcastable(2), label="batch shapes")
        s1 = (k,) if data.draw(st.booleans(), label="1-D x1") else (*batch.input_shapes[0], n, k)
        s2 = (k,) if data.draw(st.booleans(), label="1-D x2") else (*batch.input_shapes[1], k, m)
        x1, x1n = arrays.draw(data, d1, s1, label="x1", bound=10)
        x2, x2n = arrays.draw(data, d2, s2, label="x2", bound=10)
        result = spec.promotion_table()[d1, d2]
        out = x1 @ x2 if data.draw(st.booleans(), label="operator") else ns.module.matmul(x1, x2)
        expected = np.matmul(_wide(x1n, result), _wide(x2n, result))
        properties.assert_result(
            ns,
            f"matmul({ns.describe(x1)}, {ns.describe(x2)})",
            out,
            result,
            expected.shape,
            expected,
            atol=properties.tolerance(result) * 100 * k,
        )

    return body


@prop(LINALG, "matrix_transpose")
def matrix_transpose(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        x, xn = arrays.draw(data, d, data.draw(properties.shapes(min_dims=2), label="shape"))
        expected = np.swapaxes(xn, -1, -2)
        properties.assert_result(
            ns, f"matrix_transpose({ns.describe(x)})", ns.module.matrix_transpose(x), d, expected.shape, expected
        )

    return body


@prop(LINALG, "tensordot")
def tensordot(ns: Namespace, arrays: properties.Arrays) -> Any:
    pairs = _pairs(ns)

    def body(data: Any) -> None:
        d1, d2 = pick(data, pairs, "dtypes")
        contracted = tuple(data.draw(properties.shapes(max_dims=2, min_side=1), label="contracted shape"))
        s1 = tuple(data.draw(properties.shapes(max_dims=2), label="x1 free")) + contracted
        s2 = contracted + tuple(data.draw(properties.shapes(max_dims=2), label="x2 free"))
        x1, x1n = arrays.draw(data, d1, s1, label="x1", bound=10)
        x2, x2n = arrays.draw(data, d2, s2, label="x2", bound=10)
        result = spec.promotion_table()[d1, d2]
        out = ns.module.tensordot(x1, x2, axes=len(contracted))
        expected = np.tensordot(_wide(x1n, result), _wide(x2n, result), axes=len(contracted))
        atol = properties.tolerance(result) * 100 * max(1, math.prod(contracted))
        properties.assert_result(
            ns,
            f"tensordot({ns.describe(x1)}, {ns.describe(x2)}, axes={len(contracted)})",
            out,
            result,
            expected.shape,
            expected,
            atol=atol,
        )

    return body


@prop(LINALG, "vecdot")
def vecdot(ns: Namespace, arrays: properties.Arrays) -> Any:
    pairs = _pairs(ns)

    def body(data: Any) -> None:
        d1, d2 = pick(data, pairs, "dtypes")
        shapes = data.draw(properties.broadcastable(2, min_side=1), label="shapes")
        assume(len(shapes.result_shape) >= 1)
        axis = data.draw(st.integers(-len(shapes.result_shape), -1), label="axis")
        size = data.draw(st.integers(1, 3), label="size along axis")
        s1, s2 = (list(s) for s in shapes.input_shapes)
        for s in (s1, s2):
            while len(s) < -axis:
                s.insert(0, 1)
            s[axis] = size
        x1, x1n = arrays.draw(data, d1, s1, label="x1", bound=10)
        x2, x2n = arrays.draw(data, d2, s2, label="x2", bound=10)
        result = spec.promotion_table()[d1, d2]
        out = ns.module.vecdot(x1, x2, axis=axis)
        a, b = np.broadcast_arrays(_wide(x1n, result), _wide(x2n, result))
        expected = np.sum(np.conj(a) * b, axis=axis)
        properties.assert_result(
            ns,
            f"vecdot({ns.describe(x1)}, {ns.describe(x2)}, axis={axis})",
            out,
            result,
            expected.shape,
            expected,
            atol=properties.tolerance(result) * 100 * size,
        )

    return body
