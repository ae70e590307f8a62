"""Type promotion and the data type functions.

- ``result_type`` and ``can_cast`` for every pair of the namespace's dtypes the standard's
  promotion table covers (the table is :func:`conformance.spec.promotion_table`, written from
  the standard's lattice, not from any library);
- the dtype of ``add`` and ``+`` (``bitwise_and`` and ``&`` for booleans) on arrays of each
  such pair, one of them 0-dimensional (0-D arrays promote like any other);
- Python scalars with arrays (``x + 1``, ``1.5 * x``, ``x + 1j`` for real floating ``x``);
- ``isdtype`` for every dtype and kind, ``finfo`` and ``iinfo`` against NumPy, and ``astype``.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator
from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance import reproduce, spec
from conformance.checks import properties
from conformance.model import FAILED, PASSED, SKIPPED, Result, Task, first_line, guarded
from conformance.namespaces import Namespace

CHAPTER = "Type promotion"
DTYPE_FUNCTIONS = "Data type functions"


def _one(ns: Namespace, chapter: str, function: str, check: str, thunk: Any, expected: Any) -> Result:
    """Call ``thunk()`` and compare with ``expected`` (a dtype name, or a value)."""
    if function != "operators" and not function.startswith("array.") and not ns.has(function):
        return Result(chapter, function, check, FAILED, f"{function} is missing from {ns.name}")
    try:
        got = thunk()
    except Exception as e:
        return Result(chapter, function, check, FAILED, first_line(e))
    if got == expected:
        return Result(chapter, function, check, PASSED)
    return Result(chapter, function, check, FAILED, f"{check}: {got}, expected {expected}")


def _dtype_of(ns: Namespace, x: Any) -> str:
    return ns.dtype_name(getattr(x, "dtype", x)) or repr(getattr(x, "dtype", x))


def check_result_type(ns: Namespace) -> Iterator[Result]:
    table = spec.promotion_table()
    for (a, b), c in table.items():
        if a in ns.dtypes and b in ns.dtypes and c in ns.dtypes:
            yield _one(
                ns, CHAPTER, "result_type", f"result_type({a}, {b})", functools.partial(_result_type, ns, a, b), c
            )
    if {"int8", "int16", "uint8"} <= set(ns.dtypes):
        three = functools.partial(_result_type, ns, "int8", "uint8", "int16")
        yield _one(ns, CHAPTER, "result_type", "result_type(int8, uint8, int16)", three, "int16")


def _result_type(ns: Namespace, *names: str) -> str | None:
    return ns.dtype_name(ns.module.result_type(*(ns.dtypes[n] for n in names)))


def check_array_promotion(ns: Namespace) -> Iterator[Result]:
    """``add``/``+`` (``bitwise_and``/``&`` for bool) on each pair: x1 of shape (2,), x2 0-D."""
    table = spec.promotion_table()
    for (a, b), c in table.items():
        if not (a in ns.dtypes and b in ns.dtypes and c in ns.dtypes):
            continue
        fn, op, symbol = ("bitwise_and", operator.and_, "&") if a == "bool" else ("add", operator.add, "+")

        def pair(a: str = a, b: str = b) -> tuple[Any, Any]:
            return ns.asarray(np.ones(2, dtype=a), a), ns.asarray(np.ones((), dtype=b), b)

        yield _one(ns, CHAPTER, fn, f"{fn}({a}, {b} 0-D)", lambda f=fn, p=pair: _dtype_of(ns, ns.get(f)(*p())), c)
        yield _one(
            ns,
            CHAPTER,
            f"array.__{op.__name__.strip('_')}__",
            f"{a} {symbol} {b} 0-D",
            lambda o=op, p=pair: _dtype_of(ns, o(*p())),
            c,
        )


_SCALARS: dict[str, list[tuple[str, Any]]] = {
    "bool": [("bool", True)],
    "integer": [("int", 1)],
    "real floating": [("int", 1), ("float", 1.5)],
    "complex floating": [("int", 1), ("float", 1.5), ("complex", 1.5 + 1j)],
}


def check_scalar_promotion(ns: Namespace) -> Iterator[Result]:
    """``x op scalar`` and ``scalar op x`` keep x's dtype; a complex scalar makes real floats complex."""
    for d in ns.dtypes:
        kind = (
            "bool"
            if d == "bool"
            else "integer"
            if d[0] in "iu"
            else "complex floating"
            if d[0] == "c"
            else "real floating"
        )
        cases = list(_SCALARS[kind])
        if kind == "real floating" and ns.version >= "2024.12":
            cases.append(("complex", 1j))
        for tname, value in cases:
            expected = {"float32": "complex64", "float64": "complex128"}[d] if tname == "complex" and d[0] == "f" else d
            if expected not in ns.dtypes:
                continue
            op, symbol = (operator.and_, "&") if d == "bool" else (operator.mul, "*")
            x = lambda d=d: ns.asarray(np.ones(3, dtype=d), d)  # noqa: E731
            method = f"array.__{op.__name__.strip('_')}__"
            yield _one(
                ns,
                CHAPTER,
                method,
                f"{d} array {symbol} {tname}",
                lambda x=x, o=op, v=value: _dtype_of(ns, o(x(), v)),
                expected,
            )
            reflected = f"array.__r{op.__name__.strip('_')}__"
            yield _one(
                ns,
                CHAPTER,
                reflected,
                f"{tname} {symbol} {d} array",
                lambda x=x, o=op, v=value: _dtype_of(ns, o(v, x())),
                expected,
            )


def check_can_cast(ns: Namespace) -> Iterator[Result]:
    """``can_cast(from, to)`` is whether promoting the two gives ``to`` (pairs within one kind)."""
    table = spec.promotion_table()
    for a in ns.dtypes:
        for b in ns.dtypes:
            if (a, b) in table:
                expected = table[a, b] == b
                thunk = lambda a=a, b=b: bool(ns.module.can_cast(ns.dtypes[a], ns.dtypes[b]))  # noqa: E731
                yield _one(ns, DTYPE_FUNCTIONS, "can_cast", f"can_cast({a}, {b})", thunk, expected)


def check_isdtype(ns: Namespace) -> Iterator[Result]:
    failures = []
    checked = 0
    if not ns.has("isdtype"):
        yield Result(DTYPE_FUNCTIONS, "isdtype", "every dtype and kind", FAILED, f"isdtype is missing from {ns.name}")
        return
    try:
        for d in ns.dtypes:
            for kind in spec.KIND_NAMES:
                checked += 1
                got = bool(ns.module.isdtype(ns.dtypes[d], kind))
                if got != (d in spec.kind_members(kind)):
                    failures.append(f"isdtype({d}, {kind!r}) is {got}")
            tuple_kind = ("bool", "real floating")
            if bool(ns.module.isdtype(ns.dtypes[d], tuple_kind)) != (d == "bool" or d.startswith("float")):
                failures.append(f"isdtype({d}, {tuple_kind}) is wrong")
            if not ns.module.isdtype(ns.dtypes[d], ns.dtypes[d]):
                failures.append(f"isdtype({d}, {d}) is False")
    except Exception as e:
        failures.append(first_line(e))
    yield Result(
        DTYPE_FUNCTIONS, "isdtype", "every dtype and kind", FAILED if failures else PASSED, "; ".join(failures[:3])
    )


def check_info_objects(ns: Namespace) -> Iterator[Result]:
    """``finfo`` and ``iinfo`` of each dtype (and of an array) against NumPy."""
    for d in ns.dtypes:
        if d == "bool":
            continue
        fn = "iinfo" if d[0] in "iu" else "finfo"
        if not ns.has(fn):
            yield Result(DTYPE_FUNCTIONS, fn, d, FAILED, f"{fn} is missing from {ns.name}")
            continue
        ref = np.iinfo(d) if fn == "iinfo" else np.finfo(d)
        fields = ["bits", "max", "min"] + (["eps", "smallest_normal"] if fn == "finfo" else [])
        problems = []
        try:
            for source in (ns.dtypes[d], ns.asarray(np.zeros(1, dtype=d), d)):
                info = getattr(ns.module, fn)(source)
                for f in fields:
                    got, want = getattr(info, f), getattr(ref, f)
                    if float(got) != float(want):
                        problems.append(f"{fn}({d}).{f} is {got!r}, expected {want!r}")
                want_dtype = {"complex64": "float32", "complex128": "float64"}.get(d, d)  # finfo of complex: real
                if ns.dtype_name(info.dtype) != want_dtype:
                    problems.append(f"{fn}({d}).dtype is {info.dtype!r}, expected {want_dtype}")
        except Exception as e:
            problems.append(first_line(e))
        if not problems:
            yield Result(DTYPE_FUNCTIONS, fn, d, PASSED)
            continue
        detail = "; ".join(dict.fromkeys(problems))
        calls = [f"xp.{fn}(xp.{d})", f"xp.{fn}(xp.asarray([0], dtype=xp.{d}))"]
        script = reproduce.calls_script(str(ns.name), fn, DTYPE_FUNCTIONS, detail, calls)
        yield Result(DTYPE_FUNCTIONS, fn, d, FAILED, detail, reproducer=script)


def _astype(ns: Namespace, arrays: properties.Arrays) -> Result:
    """``astype`` between dtypes, on values both dtypes represent (and bool, and int->float)."""
    names = list(ns.dtypes)

    def body(data: Any) -> None:
        src, dst = data.draw(st.sampled_from(names), label="from"), data.draw(st.sampled_from(names), label="to")
        if src.startswith("complex") and not dst.startswith("complex"):
            src = "float32"
        low, high = -100.0, 100.0
        if dst[0] == "u" or src[0] == "u":
            low = 0.0
        x, xn = arrays.draw(
            data,
            src,
            data.draw(properties.shapes(), label="shape"),
            elements=properties.elements(src, low=low, high=high, bound=100),
        )
        if src[0] in "fc" and dst[0] in "iu":
            xn = np.trunc(xn)
            x = ns.asarray(xn, src)
        out = ns.module.astype(x, ns.dtypes[dst])
        properties.assert_result(ns, f"astype({ns.describe(x)}, {dst})", out, dst, xn.shape, xn.astype(dst))

    return properties.run_property(ns, DTYPE_FUNCTIONS, "astype", body)


def tasks(ns: Namespace, arrays: properties.Arrays) -> Iterator[Task]:
    if not ns.dtypes:
        yield Task("promotion", lambda: [Result(CHAPTER, "dtypes", "dtypes", SKIPPED, "no dtypes found")])
        return
    required = set(spec.required(ns.version)["namespace"])
    yield Task("result_type", lambda: list(guarded(CHAPTER, "result_type", "table", lambda: check_result_type(ns))))
    yield Task(
        "array promotion", lambda: list(guarded(CHAPTER, "add", "table", lambda: check_array_promotion(ns))), weight=3
    )
    yield Task(
        "scalar promotion", lambda: list(guarded(CHAPTER, "operators", "scalars", lambda: check_scalar_promotion(ns)))
    )
    yield Task("can_cast", lambda: list(guarded(DTYPE_FUNCTIONS, "can_cast", "table", lambda: check_can_cast(ns))))
    if "isdtype" in required:
        yield Task("isdtype", lambda: list(check_isdtype(ns)))
    yield Task(
        "finfo, iinfo", lambda: list(guarded(DTYPE_FUNCTIONS, "finfo", "fields", lambda: check_info_objects(ns)))
    )
    yield Task("astype", lambda: [_astype(ns, arrays)], function="astype")
