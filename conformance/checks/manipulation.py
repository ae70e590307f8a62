"""Property checks of the manipulation functions, against NumPy."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance import spec
from conformance.checks import properties
from conformance.checks.registry import pick, prop
from conformance.namespaces import Namespace

CHAPTER = "Manipulation functions"


def _x(
    ns: Namespace, arrays: properties.Arrays, data: Any, min_dims: int = 0, max_dims: int = properties.MAX_DIMS
) -> tuple[Any, np.ndarray, str]:
    d = pick(data, list(ns.dtypes), "dtype")
    x, xn = arrays.draw(data, d, data.draw(properties.shapes(min_dims=min_dims, max_dims=max_dims), label="shape"))
    return x, xn, d


def _check_all(ns: Namespace, label: str, outs: Any, expected: list[np.ndarray], dtype: str) -> None:
    outs = list(outs)
    if len(outs) != len(expected):
        raise AssertionError(f"{label}: {len(outs)} arrays, expected {len(expected)}")
    for i, (o, e) in enumerate(zip(outs, expected, strict=True)):
        properties.assert_result(ns, f"{label}[{i}]", o, dtype, e.shape, e)


@prop(CHAPTER, "broadcast_arrays")
def broadcast_arrays(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        n = data.draw(st.integers(1, 3), label="n")
        shapes = data.draw(properties.broadcastable(n), label="shapes")
        xs = [arrays.draw(data, d, s, label=f"x{i}") for i, s in enumerate(shapes.input_shapes)]
        out = ns.module.broadcast_arrays(*[x for x, _ in xs])
        _check_all(
            ns,
            f"broadcast_arrays(<shapes {shapes.input_shapes}>)",
            out,
            list(np.broadcast_arrays(*[xn for _, xn in xs])),
            d,
        )

    return body


@prop(CHAPTER, "broadcast_shapes")
def broadcast_shapes(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        shapes = data.draw(properties.broadcastable(data.draw(st.integers(1, 3), label="n")), label="shapes")
        out = ns.module.broadcast_shapes(*shapes.input_shapes)
        if tuple(out) != shapes.result_shape:
            raise AssertionError(f"broadcast_shapes{shapes.input_shapes}: {out!r}, expected {shapes.result_shape}")

    return body


@prop(CHAPTER, "broadcast_to")
def broadcast_to(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        shapes = data.draw(properties.broadcastable(2), label="shapes")
        x, xn = arrays.draw(data, d, shapes.input_shapes[0])
        out = ns.module.broadcast_to(x, shapes.result_shape)
        expected = np.broadcast_to(xn, shapes.result_shape)
        properties.assert_result(
            ns, f"broadcast_to({ns.describe(x)}, {shapes.result_shape})", out, d, shapes.result_shape, expected
        )

    return body


@prop(CHAPTER, "concat")
def concat(ns: Namespace, arrays: properties.Arrays) -> Any:
    table = spec.promotion_table()
    pairs = [(a, b) for a in ns.dtypes for b in ns.dtypes if table.get((a, b)) in ns.dtypes]

    def body(data: Any) -> None:
        d1, d2 = pick(data, pairs, "dtypes")
        shape = list(data.draw(properties.shapes(min_dims=1), label="shape"))
        axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1), label="axis")
        xs = []
        for i, d in enumerate((d1, d2)):
            s = list(shape)
            if axis is not None:
                s[axis] = data.draw(st.integers(0, 3), label=f"size of x{i} along axis")
            xs.append(arrays.draw(data, d, s, label=f"x{i}"))
        kw = {} if axis == 0 and data.draw(st.booleans(), label="default axis") else {"axis": axis}
        out = ns.module.concat([x for x, _ in xs], **kw)
        result = table[d1, d2]
        expected = np.concatenate([xn.astype(result) for _, xn in xs], axis=axis)
        properties.assert_result(
            ns,
            f"concat([{ns.describe(xs[0][0])}, {ns.describe(xs[1][0])}], axis={axis})",
            out,
            result,
            expected.shape,
            expected,
        )

    return body


@prop(CHAPTER, "expand_dims")
def expand_dims(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        x, xn, d = _x(ns, arrays, data)
        if data.draw(st.booleans(), label="int axis"):
            axis: Any = data.draw(st.integers(-x.ndim - 1, x.ndim), label="axis")
        else:
            k = data.draw(st.integers(1, 2), label="new axes")
            axis = data.draw(
                st.lists(
                    st.integers(-x.ndim - k, x.ndim + k - 1),
                    min_size=k,
                    max_size=k,
                    unique_by=lambda a: a % (x.ndim + k),
                ).map(tuple),
                label="axis",
            )
        out = ns.module.expand_dims(x, axis=axis)
        expected = np.expand_dims(xn, axis)
        properties.assert_result(ns, f"expand_dims({ns.describe(x)}, axis={axis})", out, d, expected.shape, expected)

    return body


@prop(CHAPTER, "flip")
def flip(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        x, xn, d = _x(ns, arrays, data)
        axis = properties.axes(data, x.ndim)
        out = ns.module.flip(x) if axis is None else ns.module.flip(x, axis=axis)
        properties.assert_result(ns, f"flip({ns.describe(x)}, axis={axis})", out, d, x.shape, np.flip(xn, axis))

    return body


@prop(CHAPTER, "moveaxis")
def moveaxis(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        x, xn, d = _x(ns, arrays, data, min_dims=1)
        src = data.draw(hnp.valid_tuple_axes(x.ndim, min_size=1), label="source")
        dst = data.draw(st.permutations(range(x.ndim)).map(lambda p: tuple(p[: len(src)])), label="destination")
        source: Any = src[0] if len(src) == 1 else src
        destination: Any = dst[0] if len(dst) == 1 else dst
        out = ns.module.moveaxis(x, source, destination)
        expected = np.moveaxis(xn, source, destination)
        properties.assert_result(
            ns, f"moveaxis({ns.describe(x)}, {source}, {destination})", out, d, expected.shape, expected
        )

    return body


@prop(CHAPTER, "permute_dims")
def permute_dims(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        x, xn, d = _x(ns, arrays, data)
        axes = tuple(data.draw(st.permutations(range(x.ndim)), label="axes"))
        out = ns.module.permute_dims(x, axes)
        expected = np.transpose(xn, axes)
        properties.assert_result(ns, f"permute_dims({ns.describe(x)}, {axes})", out, d, expected.shape, expected)

    return body


@prop(CHAPTER, "repeat")
def repeat(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        x, xn, d = _x(ns, arrays, data)
        axis = data.draw(st.none() | (st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()), label="axis")
        repeats = data.draw(st.integers(0, 3), label="repeats")
        out = ns.module.repeat(x, repeats, axis=axis)
        expected = np.repeat(xn, repeats, axis=axis)
        properties.assert_result(
            ns, f"repeat({ns.describe(x)}, {repeats}, axis={axis})", out, d, expected.shape, expected
        )

    return body


@prop(CHAPTER, "reshape")
def reshape(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        x, xn, d = _x(ns, arrays, data)
        size = math.prod(x.shape)
        shape = list(data.draw(properties.shapes(min_side=1 if size else 0), label="new shape"))
        assume(math.prod(shape) == size)
        if shape and size and data.draw(st.booleans(), label="use -1"):
            shape[data.draw(st.integers(0, len(shape) - 1), label="-1 at")] = -1
        out = ns.module.reshape(x, tuple(shape))
        expected = np.reshape(xn, shape)
        properties.assert_result(ns, f"reshape({ns.describe(x)}, {tuple(shape)})", out, d, expected.shape, expected)

    return body


@prop(CHAPTER, "roll")
def roll(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        x, xn, d = _x(ns, arrays, data)
        axis = properties.axes(data, x.ndim)
        if isinstance(axis, tuple):
            shift: Any = tuple(
                data.draw(st.lists(st.integers(-5, 5), min_size=len(axis), max_size=len(axis)), label="shift")
            )
        else:
            shift = data.draw(st.integers(-5, 5), label="shift")
        out = ns.module.roll(x, shift, axis=axis)
        properties.assert_result(
            ns, f"roll({ns.describe(x)}, {shift}, axis={axis})", out, d, x.shape, np.roll(xn, shift, axis)
        )

    return body


@prop(CHAPTER, "squeeze")
def squeeze(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        shape = data.draw(properties.shapes(min_dims=1, max_side=2), label="shape")
        ones = [i for i, s in enumerate(shape) if s == 1]
        assume(ones)
        x, xn = arrays.draw(data, d, shape)
        chosen = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True), label="axes")
        axis: Any = chosen[0] if len(chosen) == 1 else tuple(chosen)
        out = ns.module.squeeze(x, axis)
        expected = np.squeeze(xn, axis)
        properties.assert_result(ns, f"squeeze({ns.describe(x)}, {axis})", out, d, expected.shape, expected)

    return body


@prop(CHAPTER, "stack")
def stack(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        shape = data.draw(properties.shapes(), label="shape")
        n = data.draw(st.integers(1, 3), label="n")
        xs = [arrays.draw(data, d, shape, label=f"x{i}") for i in range(n)]
        axis = data.draw(st.integers(-len(shape) - 1, len(shape)), label="axis")
        out = ns.module.stack([x for x, _ in xs], axis=axis)
        expected = np.stack([xn for _, xn in xs], axis=axis)
        properties.assert_result(
            ns, f"stack(<{n} arrays of {d} {shape}>, axis={axis})", out, d, expected.shape, expected
        )

    return body


@prop(CHAPTER, "tile")
def tile(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        x, xn, d = _x(ns, arrays, data)
        reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4), label="reps"))
        out = ns.module.tile(x, reps)
        expected = np.tile(xn, reps)
        properties.assert_result(ns, f"tile({ns.describe(x)}, {reps})", out, d, expected.shape, expected)

    return body


@prop(CHAPTER, "unstack")
def unstack(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        x, xn, d = _x(ns, arrays, data, min_dims=1)
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
        out = ns.module.unstack(x, axis=axis)
        expected = [np.take(xn, i, axis=axis) for i in range(xn.shape[axis])]
        _check_all(ns, f"unstack({ns.describe(x)}, axis={axis})", out, expected, d)

    return body
