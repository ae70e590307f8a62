"""The machinery of the property checks: running a hypothesis property as one check, drawing
arrays of the namespace, and comparing results with the NumPy oracle.

Arrays come from ``hypothesis.extra.array_api.make_strategies_namespace(namespace)`` when the
namespace can build them (probed once); otherwise from ``hypothesis.extra.numpy`` through the
namespace's ``asarray``. Either way each drawn array comes with its NumPy copy, which the oracle
computes on. Only the dtypes the namespace reports in ``__array_namespace_info__().dtypes()``
are drawn.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

import numpy as np
from hypothesis import HealthCheck, Phase, given, reporting, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from hypothesis.extra import numpy as hnp

from conformance import reproduce
from conformance.model import FAILED, PASSED, SKIPPED, Result, first_line
from conformance.namespaces import Namespace


class Skip(Exception):
    """Raised by a property when what it would check does not apply to this namespace."""


MAX_DIMS, MAX_SIDE = 3, 4

# Elements of drawn arrays: finite and of moderate size unless a check asks for more.
_FLOAT_BOUND = {"float32": 1e4, "float64": 1e6}


def elements(
    dtype: str, *, edge: bool = False, bound: float | None = None, low: float | None = None, high: float | None = None
) -> st.SearchStrategy[Any]:
    """A strategy for the elements of a ``dtype`` array: finite, of moderate size (at most
    ``bound`` in magnitude), within ``low``/``high`` (real dtypes); ``edge`` allows NaN and
    infinities (and lifts the bounds)."""
    if dtype == "bool":
        return st.booleans()
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        lo = info.min if low is None else max(info.min, math.ceil(low))
        hi = info.max if high is None else min(info.max, math.floor(high))
        if bound is not None:
            lo, hi = max(lo, -math.floor(bound)), min(hi, math.floor(bound))
        return st.integers(int(lo), int(hi))
    complex_ = dtype.startswith("complex")
    real = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
    width: Literal[32, 64] = 32 if real == "float32" else 64
    cwidth: Literal[64, 128] = 64 if real == "float32" else 128
    limit = _FLOAT_BOUND[real] if bound is None else bound
    if complex_:
        if edge:
            return st.complex_numbers(width=cwidth, allow_subnormal=False)
        return st.complex_numbers(max_magnitude=limit, width=cwidth, allow_subnormal=False)
    if edge:
        return st.floats(width=width, allow_subnormal=False)
    flo = -limit if low is None else max(-limit, low)
    fhi = limit if high is None else min(limit, high)
    return st.floats(flo, fhi, width=width, allow_subnormal=False, allow_nan=False, allow_infinity=False)


# The arrays drawn by the example running now, for the reproducer of a failure (one property runs
# at a time in a process).
RECORDER = reproduce.Recorder()


class Arrays:
    """Draws arrays of a namespace with their NumPy copies."""

    def __init__(self, ns: Namespace) -> None:
        self.ns = ns
        self.xps: Any = None
        self.source = "hypothesis.extra.numpy + asarray"
        if os.environ.get("CONFORMANCE_ARRAYS") == "numpy":
            return
        try:
            from hypothesis.extra.array_api import make_strategies_namespace

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                xps = make_strategies_namespace(ns.module, api_version=cast(Any, _api_version(ns)))
            self._probe(xps)
            self.xps = xps
            self.source = "hypothesis.extra.array_api"
        except Exception:
            self.xps = None

    def _probe(self, xps: Any) -> None:
        """Fail unless the namespace can build a few arrays for hypothesis, with the right contents."""
        names = list(self.ns.dtypes)
        for shape in ((), (3,), (2, 0), (2, 3, 2)):
            for name in names:
                strategy = xps.arrays(self.ns.dtypes[name], shape, elements=elements(name))
                x = _first(strategy)
                if tuple(x.shape) != shape or self.ns.dtype_name(x.dtype) != name:
                    raise ValueError("arrays of the wrong shape or dtype")
                self.ns.to_numpy(x)

    def draw(
        self, data: st.DataObject, dtype: str, shape: Sequence[int], label: str = "x", **kw: Any
    ) -> tuple[Any, np.ndarray]:
        """An array of ``dtype`` and ``shape``, and its NumPy copy. ``kw`` go to :func:`elements`."""
        shape = tuple(shape)
        el = kw.pop("elements", None) or elements(dtype, **kw)
        if self.xps is not None:
            x = data.draw(self.xps.arrays(self.ns.dtypes[dtype], shape, elements=el), label=label)
            xn = self.ns.to_numpy(x)
        else:
            xn = data.draw(hnp.arrays(np.dtype(dtype), shape, elements=el), label=label)
            x = self.ns.asarray(xn, dtype)
        RECORDER.add(label, self.ns.describe(x), dtype, xn)
        return x, xn


def _first(strategy: st.SearchStrategy[Any]) -> Any:
    """One value of a strategy, drawn deterministically without hypothesis's example() warnings."""
    found: list[Any] = []

    @settings(max_examples=1, database=None, derandomize=True, phases=[Phase.generate], deadline=None)
    @given(strategy)
    def grab(value: Any) -> None:
        found.append(value)

    grab()
    return found[0]


def _api_version(ns: Namespace) -> str:
    from hypothesis.extra.array_api import RELEASED_VERSIONS

    return ns.version if ns.version in RELEASED_VERSIONS else RELEASED_VERSIONS[-1]


# Shapes are drawn two times in three from small pools, else freely. The pools put many values in the
# first examples (hypothesis starts from the simplest, and a free shape starts at 0-D or empty), and
# repeat shapes, which matters where every new shape costs a compilation (JAX).
SHAPE_POOL = ((3, 4), (4,), (2, 1, 3), (), (4, 4), (1,), (3, 1), (0,))
BROADCAST_POOL = {
    2: (
        ((3, 4), (3, 4)),
        ((2, 3), (3,)),
        ((4, 1), (1, 3)),
        ((), (2, 2)),
        ((3,), ()),
        ((2, 1, 4), (3, 1)),
        ((0,), (1,)),
    ),
    3: (
        ((3, 4), (3, 4), (3, 4)),
        ((2, 3), (3,), ()),
        ((4, 1), (1, 3), (4, 3)),
        ((), (), ()),
        ((2, 1), (1,), (3, 1, 1)),
    ),
}


def shapes(min_dims: int = 0, max_dims: int = MAX_DIMS, min_side: int = 0, max_side: int = MAX_SIDE) -> Any:
    free = hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)
    pool = [s for s in SHAPE_POOL if min_dims <= len(s) <= max_dims and all(min_side <= d <= max_side for d in s)]
    return st.one_of(st.sampled_from(pool), st.sampled_from(pool), free) if pool else free


def broadcastable(n: int = 2, min_side: int = 0) -> Any:
    """``n`` mutually broadcastable shapes (a hypothesis ``BroadcastableShapes``)."""
    free = hnp.mutually_broadcastable_shapes(num_shapes=n, max_dims=MAX_DIMS, min_side=min_side, max_side=MAX_SIDE)
    pool = [
        hnp.BroadcastableShapes(input_shapes=p, result_shape=np.broadcast_shapes(*p))
        for p in BROADCAST_POOL.get(n, ())
        if all(d >= min_side for s in p for d in s)
    ]
    return st.one_of(st.sampled_from(pool), st.sampled_from(pool), free) if pool else free


def axes(data: st.DataObject, ndim: int, label: str = "axis", allow_none: bool = True) -> int | tuple[int, ...] | None:
    """``None``, one axis (maybe negative) or a tuple of distinct axes of an ``ndim`` array."""
    options: list[Any] = [st.none()] if allow_none else []
    if ndim > 0:
        options += [st.integers(-ndim, ndim - 1), hnp.valid_tuple_axes(ndim)]
    return data.draw(st.one_of(options), label=label)


def normalize_axes(axis: int | tuple[int, ...] | None, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in ((axis,) if isinstance(axis, int) else axis)))


# --- comparing with the oracle ------------------------------------------------------------------
def tolerance(dtype: str) -> float:
    return {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-11, "complex128": 1e-11}.get(dtype, 0.0)


def assert_result(
    ns: Namespace,
    label: str,
    out: Any,
    dtype: str | None,
    shape: Sequence[int] | None,
    expected: np.ndarray | None = None,
    *,
    rtol: float | None = None,
    atol: float = 0.0,
) -> np.ndarray:
    """Check an output's dtype, shape and values (against ``expected``); return its NumPy copy."""
    got_dtype = ns.dtype_name(getattr(out, "dtype", None))
    if dtype is not None and got_dtype != dtype:
        raise AssertionError(f"{label}: dtype {got_dtype or getattr(out, 'dtype', None)}, expected {dtype}")
    if shape is not None and tuple(out.shape) != tuple(shape):
        raise AssertionError(f"{label}: shape {tuple(out.shape)}, expected {tuple(shape)}")
    got = ns.to_numpy(out)
    if expected is not None:
        expected = np.asarray(expected)
        if expected.dtype != got.dtype and got.dtype.kind in "fc" and expected.dtype.kind in "fc":
            with np.errstate(all="ignore"):
                expected = expected.astype(got.dtype)  # the oracle's double precision, rounded
        assert_values(label, got, expected, rtol=rtol, atol=atol)
    return got


def assert_values(
    label: str, got: np.ndarray, expected: np.ndarray, *, rtol: float | None = None, atol: float = 0.0
) -> None:
    """Equal values: exactly for bool and integer results, else within ``rtol``/``atol``, NaN where NaN."""
    got = np.asarray(got)
    expected = np.broadcast_to(np.asarray(expected), got.shape) if got.shape != np.shape(expected) else expected
    if got.shape != np.shape(expected):
        raise AssertionError(f"{label}: shape {got.shape}, expected {np.shape(expected)}")
    if got.dtype.kind in "biu" or (np.asarray(expected).dtype.kind in "biu" and got.dtype.kind in "biu"):
        bad = got != expected
    else:
        tol = tolerance(got.dtype.name) if rtol is None else rtol
        g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
        e = np.asarray(expected).astype(np.complex128 if got.dtype.kind == "c" else np.float64)
        bad = np.zeros(got.shape, dtype=bool)
        for part in (np.real, np.imag) if got.dtype.kind == "c" else (lambda a: a,):
            gp, ep = part(g), part(e)
            with np.errstate(all="ignore"):
                finite = np.isfinite(ep) & np.isfinite(gp)
                # complex results: relative to |z|, and at least to 1 (single-precision complex
                # functions are commonly computed without care for tiny components)
                scale = np.maximum(np.abs(e), 1.0) if got.dtype.kind == "c" else np.abs(ep)
                # subnormal results may be flushed to zero (XLA on CPU does): tiny counts as zero
                tiny = float(np.finfo(got.dtype).smallest_normal)
                close = np.abs(gp - ep) <= atol + tol * scale + tiny
            same_special = (np.isnan(gp) & np.isnan(ep)) | (np.isinf(gp) & (gp == ep))
            if got.dtype.kind == "c":
                # complex infinities and NaNs have many spellings (inf+nanj, nan+nanj, ...): any
                # non-finite result matches a non-finite expected one
                same_special |= ~np.isfinite(e) & ~np.isfinite(g)
            bad |= ~np.where(finite, close, same_special)
    if np.any(bad):
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        where = f" at index {i}" if i else ""
        raise AssertionError(f"{label}: {_show(got[i])}{where}, expected {_show(np.asarray(expected)[i])}")


def _show(v: Any) -> str:
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float) and math.isfinite(v) and v != 0:
        return f"{v:.9g}"
    return repr(v)


# --- running a property ---------------------------------------------------------------------------
def _recording(body: Callable[[st.DataObject], None]) -> Callable[[st.DataObject], None]:
    def recorded(data: st.DataObject) -> None:
        RECORDER.reset()
        body(data)

    return recorded


def run_property(
    ns: Namespace,
    chapter: str,
    function: str,
    body: Callable[[st.DataObject], None],
    check: str = "properties",
    max_examples: int | None = None,
) -> Result:
    """Run ``body`` as a hypothesis property over ``ns.max_examples`` examples: one result."""
    if not function.startswith("array.") and not ns.has(function):
        return Result(chapter, function, check, FAILED, f"{function} is missing from {ns.name}")
    n = max(1, max_examples if max_examples is not None else ns.max_examples)
    lines: list[object] = []
    # each example records its own arrays; reset here, not in ``prop``, whose source seeds the
    # derandomized examples (a change to it would change every check's inputs)
    body = _recording(body)

    @settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate] + ([Phase.shrink] if ns.shrink else []),
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
    )
    @given(st.data())
    def prop(data: st.DataObject) -> None:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            body(data)

    try:
        with reporting.with_reporter(lines.append), contextlib.redirect_stdout(io.StringIO()):
            prop()
    except Skip as e:
        return Result(chapter, function, check, SKIPPED, str(e))
    except Unsatisfiable:
        return Result(chapter, function, check, SKIPPED, "no valid examples for this namespace")
    except KeyboardInterrupt:
        raise
    except Exception as e:
        # hypothesis reports the falsifying example as notes on the exception (older versions
        # through the reporter)
        notes = [*lines, *getattr(e, "__notes__", ())]
        example = "\n".join(str(line) for line in notes if str(line).strip())
        script = reproduce.property_script(str(ns.name), function, chapter, first_line(e), RECORDER.drawn)
        return Result(chapter, function, check, FAILED, first_line(e), example=example[:2000], reproducer=script)
    return Result(chapter, function, check, PASSED)
