"""Property checks of the creation functions, against NumPy."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from conformance import spec
from conformance.checks import properties
from conformance.checks.registry import pick, prop
from conformance.namespaces import Namespace

CHAPTER = "Creation functions"
_SCALAR_KIND = {bool: "bool", int: "integral", float: "real floating", complex: "complex floating"}


def _default_of(ns: Namespace, value: Any) -> str:
    kind = _SCALAR_KIND[type(value)]
    return "bool" if kind == "bool" else ns.default(kind)


def _shape(data: Any, min_dims: int = 0) -> tuple[int, ...]:
    return tuple(data.draw(properties.shapes(min_dims=min_dims), label="shape"))


def _dtype_kw(ns: Namespace, data: Any, dtypes: list[str]) -> tuple[dict[str, Any], str | None]:
    """Maybe a ``dtype=`` keyword, with its name."""
    name = pick(data, [None, *dtypes], "dtype")
    return ({} if name is None else {"dtype": ns.dtypes[name]}), name


@prop(CHAPTER, "arange")
def arange(ns: Namespace, arrays: properties.Arrays) -> Any:
    ints = ns.available(spec.CATEGORIES["integer"])

    def body(data: Any) -> None:
        if data.draw(st.booleans(), label="integers"):
            start, stop = data.draw(st.integers(-20, 20), label="start"), data.draw(st.integers(-20, 20), label="stop")
            step = data.draw(st.integers(-4, 4).filter(bool), label="step")
            form = pick(data, ["stop", "start-stop", "start-stop-step"], "form")
            kw, dname = _dtype_kw(ns, data, [d for d in ints if d.startswith("int")])
            args: tuple[Any, ...] = {
                "stop": (stop,),
                "start-stop": (start, stop),
                "start-stop-step": (start, stop, step),
            }[form]
            expected = np.arange(*args)
            dtype = dname or ns.default("integral")
        else:
            start, stop = (data.draw(st.integers(-40, 40), label=n) / 4 for n in ("start", "stop"))
            step = pick(data, [0.25, 0.5, 1.0, 2.0, -0.25, -0.5, -1.0, -2.0], "step")
            args, dtype = (start, stop, step), ns.default("real floating")
            expected = np.array([start + i * step for i in range(max(0, math.ceil((stop - start) / step)))])
            kw = {}
        out = ns.module.arange(*args, **kw)
        properties.assert_result(ns, f"arange{args}", out, dtype, expected.shape, expected)

    return body


@prop(CHAPTER, "asarray")
def asarray(ns: Namespace, arrays: properties.Arrays) -> Any:
    scalars = {
        "bool": st.booleans(),
        "int": st.integers(-100, 100),
        "float": st.floats(-1e3, 1e3, width=32),
        "complex": st.complex_numbers(max_magnitude=1e3, width=64),
    }
    if "complex64" not in ns.dtypes:
        del scalars["complex"]

    def body(data: Any) -> None:
        kind = pick(data, list(scalars), "kind")
        shape = tuple(data.draw(properties.shapes(max_dims=2, max_side=3, min_side=1), label="shape"))
        flat = data.draw(st.lists(scalars[kind], min_size=math.prod(shape), max_size=math.prod(shape)), label="values")
        nested: Any = np.array(flat, dtype=object).reshape(shape).tolist() if shape else flat[0]
        out = ns.module.asarray(nested)
        dtype = _default_of(ns, flat[0])
        expected = np.array(flat, dtype=dtype).reshape(shape)
        properties.assert_result(
            ns, f"asarray(<{kind} {'list' if shape else 'scalar'} of shape {shape}>)", out, dtype, shape, expected
        )

    return body


def _fill(ns: Namespace, arrays: properties.Arrays, name: str, value: int) -> Any:
    fn = ns.get(name)

    def body(data: Any) -> None:
        shape = _shape(data)
        kw, dname = _dtype_kw(ns, data, list(ns.dtypes))
        shape_arg: Any = shape[0] if len(shape) == 1 and data.draw(st.booleans(), label="int shape") else shape
        out = fn(shape_arg, **kw)
        dtype = dname or ns.default("real floating")
        properties.assert_result(
            ns,
            f"{name}({shape_arg!r}, dtype={dname})",
            out,
            dtype,
            shape,
            None if value < 0 else np.full(shape, value, dtype=dtype),
        )

    return body


def _like(ns: Namespace, arrays: properties.Arrays, name: str, value: int) -> Any:
    fn = ns.get(name)

    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "x dtype")
        x, _ = arrays.draw(data, d, _shape(data))
        kw, dname = _dtype_kw(ns, data, list(ns.dtypes))
        out = fn(x, **kw)
        dtype = dname or d
        properties.assert_result(
            ns,
            f"{name}({ns.describe(x)}, dtype={dname})",
            out,
            dtype,
            x.shape,
            None if value < 0 else np.full(x.shape, value, dtype=dtype),
        )

    return body


for _name, _value in (("empty", -1), ("ones", 1), ("zeros", 0)):
    prop(CHAPTER, _name)(functools.partial(_fill, name=_name, value=_value))
    prop(CHAPTER, f"{_name}_like")(functools.partial(_like, name=f"{_name}_like", value=_value))


def _fill_value(data: Any, dtype: str) -> Any:
    if dtype == "bool":
        return data.draw(st.booleans(), label="fill_value")
    if dtype[0] in "iu":
        return data.draw(st.integers(0 if dtype[0] == "u" else -100, 100), label="fill_value")
    if dtype.startswith("complex"):
        return data.draw(
            st.complex_numbers(max_magnitude=1e3, width=64 if dtype == "complex64" else 128), label="fill_value"
        )
    return data.draw(st.floats(-1e3, 1e3, width=32 if dtype == "float32" else 64), label="fill_value")


@prop(CHAPTER, "full")
def full(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        shape = _shape(data)
        kw, dname = _dtype_kw(ns, data, list(ns.dtypes))
        value = _fill_value(
            data, dname or pick(data, [n for n in ("bool", "int32", "float32", "complex64") if n in ns.dtypes], "kind")
        )
        out = ns.module.full(shape, value, **kw)
        dtype = dname or _default_of(ns, value)
        properties.assert_result(
            ns, f"full({shape}, {value!r}, dtype={dname})", out, dtype, shape, np.full(shape, value, dtype=dtype)
        )

    return body


@prop(CHAPTER, "full_like")
def full_like(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "x dtype")
        x, _ = arrays.draw(data, d, _shape(data))
        value = _fill_value(data, d)
        out = ns.module.full_like(x, value)
        properties.assert_result(
            ns, f"full_like({ns.describe(x)}, {value!r})", out, d, x.shape, np.full(x.shape, value, dtype=d)
        )

    return body


@prop(CHAPTER, "eye")
def eye(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        n = data.draw(st.integers(0, 5), label="n_rows")
        m = data.draw(st.none() | st.integers(0, 5), label="n_cols")
        k = data.draw(st.integers(-6, 6), label="k")
        kw, dname = _dtype_kw(ns, data, list(ns.dtypes))
        out = ns.module.eye(n, m, k=k, **kw)
        dtype = dname or ns.default("real floating")
        expected = np.eye(n, m, k=k, dtype=dtype)
        properties.assert_result(ns, f"eye({n}, {m}, k={k}, dtype={dname})", out, dtype, expected.shape, expected)

    return body


@prop(CHAPTER, "linspace")
def linspace(ns: Namespace, arrays: properties.Arrays) -> Any:
    floats = ns.available(spec.CATEGORIES["real-valued floating-point"])

    def body(data: Any) -> None:
        start, stop = (data.draw(st.floats(-100, 100, width=32), label=n) for n in ("start", "stop"))
        num = data.draw(st.integers(0, 8), label="num")
        endpoint = data.draw(st.booleans(), label="endpoint")
        kw, dname = _dtype_kw(ns, data, floats)
        out = ns.module.linspace(start, stop, num, endpoint=endpoint, **kw)
        dtype = dname or ns.default("real floating")
        expected = np.linspace(start, stop, num, endpoint=endpoint)
        span = max(abs(start), abs(stop), 1.0)
        properties.assert_result(
            ns,
            f"linspace({start}, {stop}, {num}, endpoint={endpoint})",
            out,
            dtype,
            (num,),
            expected,
            atol=properties.tolerance(dtype) * span,
        )

    return body


@prop(CHAPTER, "meshgrid")
def meshgrid(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        n = data.draw(st.integers(1, 3), label="number of arrays")
        xs = [arrays.draw(data, d, (data.draw(st.integers(1, 3), label="size"),), label=f"x{i}") for i in range(n)]
        indexing = pick(data, ["xy", "ij"], "indexing")
        out = ns.module.meshgrid(*[x for x, _ in xs], indexing=indexing)
        expected = np.meshgrid(*[xn for _, xn in xs], indexing=indexing)
        if len(out) != len(expected):
            raise AssertionError(f"meshgrid of {n} arrays gave {len(out)} arrays")
        for i, (o, e) in enumerate(zip(out, expected, strict=True)):
            properties.assert_result(ns, f"meshgrid(..., indexing={indexing!r})[{i}]", o, d, e.shape, e)

    return body


def _triangle(ns: Namespace, arrays: properties.Arrays, name: str) -> Any:
    fn, oracle = ns.get(name), getattr(np, name)

    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        x, xn = arrays.draw(data, d, _shape(data, min_dims=2))
        k = data.draw(st.integers(-4, 4), label="k")
        out = fn(x, k=k)
        properties.assert_result(ns, f"{name}({ns.describe(x)}, k={k})", out, d, x.shape, oracle(xn, k=k))

    return body


prop(CHAPTER, "tril")(lambda ns, arrays: _triangle(ns, arrays, "tril"))
prop(CHAPTER, "triu")(lambda ns, arrays: _triangle(ns, arrays, "triu"))


@prop(CHAPTER, "from_dlpack")
def from_dlpack(ns: Namespace, arrays: properties.Arrays) -> Any:
    def body(data: Any) -> None:
        d = pick(data, list(ns.dtypes), "dtype")
        x, xn = arrays.draw(data, d, _shape(data, min_dims=1))
        assume(math.prod(x.shape) > 0)
        out = ns.module.from_dlpack(x)
        properties.assert_result(ns, f"from_dlpack({ns.describe(x)})", out, d, x.shape, xn)

    return body
