"""Reductions of sparse arrays: statistical functions, ``all``/``any``, counting, arg-extrema.

Implicit (unstored) elements are zeros and take part like any element: ``max`` of a line with
an implicit zero is ``max(stored, 0)``, ``prod`` of it is 0 (``prod(stored) * 0``, so a stored
NaN or infinity still gives NaN, as densely), ``mean``, ``var`` and ``std`` count them, ``all``
is False over them. Duplicate entries are summed first. Argument checks, dtype rules and error
messages are those of the dense functions.

Results:

- over every axis (``axis=None``, or all axes): a dense array, 0-d (all ones in shape with
  ``keepdims``), as the dense function returns it;
- over some axes: a sparse BCOO array (plain layout). A reduced line without stored elements is
  a structural zero of the result. Where that is not the reduction's value (``prod``, ``all``
  over an empty axis, ``mean`` over an empty axis, ``var`` with ``correction >= N``) the result
  is dense (computed densely, with a SparseEfficiencyWarning);
- ``argmax`` and ``argmin``: dense index arrays (an index is meaningful everywhere);
- ``count_nonzero`` over some axes: sparse integer counts.

``cumulative_prod`` is sparse: the product along a line is 0 from its first implicit zero on, so
the result stores the prefix of stored elements before it (``include_initial=True``, whose
leading ones is dense, is computed densely). ``cumulative_sum`` is dense: running sums fill the
zeros in.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp import _searching as dense_searching
from xp import _statistical as stat
from xp import _utility as utility
from xp._array import wrap
from xp._jit import kernel
from xp._routing import dense_result, implements
from xp.sparse import _coordinates as coordinates
from xp.sparse import _meshes as meshes
from xp.sparse import _reduction_kernels as lines
from xp.sparse._array import BCOO
from xp.sparse._dense_checks import abstract

STATIC = ("axes", "keepdims", "dtype", "shape")


def _axes(x: Any, axis: Any) -> tuple[int, ...]:
    return tuple(sorted(boundary.axes(axis, x.ndim)))


def _reduced(x: Any, axes: tuple[int, ...]) -> int:
    """The number of elements each result element reduces."""
    return math.prod(x.shape[a] for a in axes)


def _dense_result(name: str, why: str) -> None:
    dense_result(f"{name} of a sparse array over these axes {why}, so the result is dense")


def _lowest(dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return np.asarray(-np.inf, dtype)
    if dtype.kind == "b":
        return np.asarray(False)
    return np.asarray(np.iinfo(dtype).min, dtype)


def _highest(dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return np.asarray(np.inf, dtype)
    if dtype.kind == "b":
        return np.asarray(True)
    return np.asarray(np.iinfo(dtype).max, dtype)


class _Lines:
    """The stored elements (summed, in the computation dtype) sorted into runs, one per result
    element; per-run results are segment reductions over sorted segment numbers."""

    def __init__(self, value: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any) -> None:
        c = coordinates.coalesce(coordinates.coo(value))
        reduced = coordinates.drop_axes(c, axes, keepdims)
        x = c.data if dtype is None else c.data.astype(dtype)
        self.idx, (self.x, self.ok) = coordinates.sort_rows(reduced.idx, x, coordinates.valid(c))
        self.shape = reduced.shape
        self.n = coordinates.rows(c)
        self.first = coordinates.firsts(self.idx)
        self.seg = coordinates.run_numbers(self.first)
        self.count = self.sum(self.ok.astype(dt.int32))

    def sum(self, x: Any) -> Any:
        return jax.ops.segment_sum(x, self.seg, num_segments=self.n, indices_are_sorted=True)

    def reduce(self, fn: Any, x: Any) -> Any:
        return fn(x, self.seg, num_segments=self.n, indices_are_sorted=True)

    def out(self, data: Any, keep: Any) -> Any:
        """The result: per-run ``data`` where ``keep`` (per run) and the run stores something."""
        rows_keep = self.first & (keep & (self.count > 0))[self.seg]
        return coordinates.to_bcoo(coordinates.make(data[self.seg], self.idx, self.shape, rows_keep, True))


# --- sum, mean ------------------------------------------------------------------------------


@functools.partial(kernel, static_argnames=STATIC)
def _sum(value: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any, shape: tuple[int, ...]) -> Any:
    c = coordinates.coo(value)
    if len(axes) == len(c.shape):
        return jnp.sum(c.data.astype(dtype), dtype=dtype).reshape(shape)
    r = coordinates.drop_axes(c, axes, keepdims)
    return coordinates.to_bcoo(coordinates.Coo(r.data.astype(dtype), r.idx, r.shape))


def _full(x: Any, axes: tuple[int, ...]) -> bool:
    return len(axes) == x.ndim


def _source(x: Any, axes: tuple[int, ...]) -> Any:
    """The JAX value to reduce over ``axes``: over every axis, a transposed view's base (the same
    elements), so its transpose is not formed; else ``x``'s value."""
    base = x._plain_view()
    return base if base is not None and _full(x, axes) else x._value


def _along_line(x: Any, axes: tuple[int, ...]) -> tuple[Any, int] | None:
    """``(value, along)`` when reducing ``x`` over ``axes`` goes to ``_reduction_kernels``: a
    matrix (or a transposed view's base, along the other axis) over one axis; else None."""
    if len(axes) != 1 or x.ndim != 2:
        return None
    base = x._plain_view()
    value, along = (x._value, axes[0]) if base is None else (base, 1 - axes[0])
    return (value, along) if lines.applies(value, along) else None


@functools.partial(kernel, static_argnames=("along", "position", "keepdims", "dtype", "how", "custom_kernels"))
def _line_reduce(
    value: Any, along: int, position: int, keepdims: bool, dtype: Any, how: str, custom_kernels: bool
) -> Any:
    """A reduction of a matrix along one axis (``_reduction_kernels``); ``position``: where the
    reduced axis is in the result (``keepdims``); ``custom_kernels``: see :func:`_on_one_device`."""
    if how == "sum":
        out = lines.line_sums(value, along, dtype, custom_kernels)
    elif how == "mean":
        out = stat._divide(lines.line_sums(value, along, dtype, custom_kernels), value.shape[along])
    else:
        largest = how == "max"
        out = lines.line_extrema(value, along, largest, _lowest(dtype) if largest else _highest(dtype))
    return lines.as_result(out, position, keepdims)


def _by_line(x: Any, axes: tuple[int, ...], keepdims: Any, dtype: Any, how: str) -> Any:
    """The result of ``_line_reduce`` when it applies, else None."""
    found = _along_line(x, axes)
    if found is None:
        return None
    value, along = found
    if how in ("max", "min") and not value.unique_indices:
        return None  # duplicates must be summed first: the general path
    return BCOO._wrap(
        _line_reduce(
            value, along=along, position=axes[0], keepdims=bool(keepdims), dtype=dtype, how=how,
            custom_kernels=_on_one_device(value.data),
        )
    )  # fmt: skip


def _on_one_device(data: Any) -> bool:
    """Whether a sparse array's entries are known to be on one device, so that the native kernel
    may sum them: a custom call that XLA cannot partition would gather entries split over a mesh
    (the products' rule, ``xp.sparse._meshes``)."""
    if isinstance(data, jax.core.Tracer):
        return meshes.known_sharding(data) is None and not meshes.on_auto_mesh(data)
    return len(data.sharding.device_set) == 1


def _out(x: Any, axes: tuple[int, ...], out: Any) -> Any:
    return wrap(out) if _full(x, axes) else BCOO._wrap(out)


@implements("sum")
def sum(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    spec = abstract(stat.sum, x, axis=axis, dtype=dtype, keepdims=keepdims)
    axes = _axes(x, axis)
    fast = _by_line(x, axes, keepdims, spec.dtype, "sum")
    if fast is not None:
        return fast
    out = _sum(_source(x, axes), axes=axes, keepdims=bool(keepdims), dtype=spec.dtype, shape=tuple(spec.shape))
    return _out(x, axes, out)


@functools.partial(kernel, static_argnames=(*STATIC, "count"))
def _mean(value: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any, shape: tuple[int, ...], count: int) -> Any:
    c = coordinates.coo(value)
    if len(axes) == len(c.shape):
        return stat._divide(jnp.sum(c.data.astype(dtype)), count).reshape(shape)
    r = coordinates.drop_axes(c, axes, keepdims)
    return coordinates.to_bcoo(coordinates.Coo(stat._divide(r.data.astype(dtype), count), r.idx, r.shape))


@implements("mean")
def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    spec = abstract(stat.mean, x, axis=axis, keepdims=keepdims)
    axes = _axes(x, axis)
    count = _reduced(x, axes)
    if not _full(x, axes) and count == 0 and math.prod(spec.shape):
        _dense_result("mean", "has no elements to average (the mean of none is NaN)")
    fast = _by_line(x, axes, keepdims, spec.dtype, "mean")
    if fast is not None:
        return fast
    out = _mean(
        _source(x, axes), axes=axes, keepdims=bool(keepdims), dtype=spec.dtype, shape=tuple(spec.shape), count=count
    )
    return _out(x, axes, out)


# --- var, std -------------------------------------------------------------------------------


@functools.partial(kernel, static_argnames=(*STATIC, "correction", "root"))
def _var(
    value: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any, shape: tuple[int, ...], correction: float, root: bool
) -> Any:
    count = math.prod(value.shape[a] for a in axes)
    divisor = count - correction
    if len(axes) == len(value.shape):
        if not divisor > 0:
            return jnp.full(shape, np.nan, dtype)
        c = coordinates.coalesce(coordinates.coo(value))
        ok = coordinates.valid(c)
        x = c.data.astype(dtype)
        average = jnp.sum(x) / np.asarray(count, dtype)
        stored = jnp.sum(ok.astype(dtype))
        deviation = jnp.where(ok, x - average, 0)
        scale: Any = 1.0
        if root:  # std: the deviations over the largest (stored, and the average: each implicit zero's), as densely
            scale = stat.scale_of(
                jnp.maximum(jnp.max(jnp.abs(deviation), initial=0), jnp.where(count > stored, jnp.abs(average), 0))
            )
        squares = jnp.sum((deviation / scale) ** 2) + (count - stored) * (average / scale) ** 2
        out = squares / np.asarray(divisor, dtype)
        return (scale * jnp.sqrt(out) if root else out).reshape(shape)
    lines = _Lines(value, axes, keepdims, dtype)
    average = lines.sum(lines.x) / np.asarray(count, dtype)
    deviation = jnp.where(lines.ok, lines.x - average[lines.seg], np.zeros((), dtype))
    implicit = count - lines.count.astype(dtype)
    scale, per_entry = 1.0, 1.0
    if root:
        stored_largest = lines.reduce(jax.ops.segment_max, jnp.abs(deviation))
        scale = stat.scale_of(jnp.maximum(stored_largest, jnp.where(implicit > 0, jnp.abs(average), 0)))
        per_entry = scale[lines.seg]
    squares = lines.sum((deviation / per_entry) ** 2) + implicit * (average / scale) ** 2
    out = squares / np.asarray(divisor, dtype)
    return lines.out(scale * jnp.sqrt(out) if root else out, lines.count > 0)


def _variance(name: str, x: Any, axis: Any, correction: Any, keepdims: Any, root: bool) -> Any:
    fn = stat.std if root else stat.var
    spec = abstract(fn, x, axis=axis, correction=correction, keepdims=keepdims)
    axes = _axes(x, axis)
    c = float(correction)
    if not _full(x, axes) and not _reduced(x, axes) - c > 0 and math.prod(spec.shape):
        _dense_result(name, f"has N - correction = {_reduced(x, axes) - c} <= 0 (the result is NaN)")
    out = _var(_source(x, axes), axes=axes, keepdims=bool(keepdims), dtype=spec.dtype, shape=tuple(spec.shape),
               correction=c, root=root)  # fmt: skip
    return _out(x, axes, out)


@implements("var")
def var(x: Any, /, *, axis: Any = None, correction: Any = 0.0, keepdims: bool = False) -> Any:
    return _variance("var", x, axis, correction, keepdims, root=False)


@implements("std")
def std(x: Any, /, *, axis: Any = None, correction: Any = 0.0, keepdims: bool = False) -> Any:
    return _variance("std", x, axis, correction, keepdims, root=True)


# --- prod, max, min -------------------------------------------------------------------------


def _segment_prod(x: Any, seg: Any, n: int) -> Any:
    """Per-segment products of ``x`` over sorted segment numbers ``seg``, by a segmented scan:
    ``jax.ops.segment_prod`` (a multiplicative scatter) has no gradient for repeated indices."""
    if n == 0:
        return x
    starts = jnp.concatenate([jnp.ones(1, dt.bool), seg[1:] != seg[:-1]])
    ends = jnp.concatenate([seg[1:] != seg[:-1], jnp.ones(1, dt.bool)])

    def step(a: tuple[Any, Any], b_: tuple[Any, Any]) -> tuple[Any, Any]:
        return jnp.where(b_[1], b_[0], a[0] * b_[0]), a[1] | b_[1]

    running, _ = lax.associative_scan(step, (x, starts))
    ones = jnp.ones((n,), x.dtype)
    return ones.at[jnp.where(ends, seg, n)].set(running, mode="drop", unique_indices=True)


@functools.partial(kernel, static_argnames=STATIC)
def _prod(value: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any, shape: tuple[int, ...]) -> Any:
    count = math.prod(value.shape[a] for a in axes)
    one = np.ones((), dtype)
    if len(axes) == len(value.shape):
        c = coordinates.coalesce(coordinates.coo(value))
        ok = coordinates.valid(c)
        p = jnp.prod(jnp.where(ok, c.data.astype(dtype), one))
        full = jnp.sum(ok.astype(dt.int32)) == count
        return jnp.where(full, p, p * np.zeros((), dtype)).reshape(shape)
    lines = _Lines(value, axes, keepdims, dtype)
    p = _segment_prod(jnp.where(lines.ok, lines.x, one), lines.seg, lines.n)
    return lines.out(jnp.where(lines.count == count, p, p * np.zeros((), dtype)), lines.count > 0)


@implements("prod")
def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    spec = abstract(stat.prod, x, axis=axis, dtype=dtype, keepdims=keepdims)
    axes = _axes(x, axis)
    if not _full(x, axes) and _reduced(x, axes) == 0 and math.prod(spec.shape):
        _dense_result("prod", "has no elements (the product of none is 1)")
    out = _prod(_source(x, axes), axes=axes, keepdims=bool(keepdims), dtype=spec.dtype, shape=tuple(spec.shape))
    return _out(x, axes, out)


@functools.partial(kernel, static_argnames=(*STATIC, "largest"))
def _extremum(
    value: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any, shape: tuple[int, ...], largest: bool
) -> Any:
    count = math.prod(value.shape[a] for a in axes)
    worst = _lowest(dtype) if largest else _highest(dtype)
    pick = jnp.maximum if largest else jnp.minimum
    zero = np.zeros((), dtype)
    if len(axes) == len(value.shape):
        c = coordinates.coalesce(coordinates.coo(value))
        ok = coordinates.valid(c)
        stored = jnp.where(ok, c.data, worst)
        best = jnp.max(stored, initial=worst) if largest else jnp.min(stored, initial=worst)
        full = jnp.sum(ok.astype(dt.int32)) == count
        return jnp.where(full, best, pick(best, zero)).reshape(shape)
    lines = _Lines(value, axes, keepdims, None)
    reduce = jax.ops.segment_max if largest else jax.ops.segment_min
    best = lines.reduce(reduce, jnp.where(lines.ok, lines.x, worst))
    return lines.out(jnp.where(lines.count == count, best, pick(best, zero)), lines.count > 0)


def _extremum_call(fn: Any, x: Any, axis: Any, keepdims: Any, largest: bool) -> Any:
    spec = abstract(fn, x, axis=axis, keepdims=keepdims)
    axes = _axes(x, axis)
    fast = _by_line(x, axes, keepdims, spec.dtype, "max" if largest else "min")
    if fast is not None:
        return fast
    out = _extremum(_source(x, axes), axes=axes, keepdims=bool(keepdims), dtype=spec.dtype, shape=tuple(spec.shape),
                    largest=largest)  # fmt: skip
    return _out(x, axes, out)


@implements("max")
def max(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _extremum_call(stat.max, x, axis, keepdims, largest=True)


@implements("min")
def min(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _extremum_call(stat.min, x, axis, keepdims, largest=False)


# --- all, any, count_nonzero ----------------------------------------------------------------


@functools.partial(kernel, static_argnames=(*STATIC, "how"))
def _truth_reduce(
    value: Any, axes: tuple[int, ...], keepdims: bool, dtype: Any, shape: tuple[int, ...], how: str
) -> Any:
    count = math.prod(value.shape[a] for a in axes)
    if len(axes) == len(value.shape):
        c = coordinates.coalesce(coordinates.coo(value))
        true = (utility.truth(c.data) & coordinates.valid(c)).astype(dt.int32)
        if how == "all":
            out = jnp.sum(true) == count
        elif how == "any":
            out = jnp.any(true > 0)
        else:
            out = jnp.sum(true, dtype=dtype)
        return out.astype(dtype).reshape(shape)
    lines = _Lines(value, axes, keepdims, None)
    true = lines.sum((utility.truth(lines.x) & lines.ok).astype(dt.int32))
    if how == "all":
        return lines.out(true == count, true == count)
    if how == "any":
        return lines.out(true > 0, true > 0)
    return lines.out(true.astype(dtype), true > 0)


def _truth_call(how: str, fn: Any, x: Any, axis: Any, keepdims: Any) -> Any:
    spec = abstract(fn, x, axis=axis, keepdims=keepdims)
    axes = _axes(x, axis)
    if how == "all" and not _full(x, axes) and _reduced(x, axes) == 0 and math.prod(spec.shape):
        _dense_result("all", "has no elements (all of none is True)")
    out = _truth_reduce(_source(x, axes), axes=axes, keepdims=bool(keepdims), dtype=spec.dtype, shape=tuple(spec.shape),
                        how=how)  # fmt: skip
    return _out(x, axes, out)


@implements("all")
def all(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _truth_call("all", utility.all, x, axis, keepdims)


@implements("any")
def any(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _truth_call("any", utility.any, x, axis, keepdims)


@implements("count_nonzero")
def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return _truth_call("count", dense_searching.count_nonzero, x, axis, keepdims)


# --- argmax, argmin -------------------------------------------------------------------------


def _along_last(value: Any, axis: int | None) -> tuple[coordinates.Coo, tuple[int, ...]]:
    """The stored elements summed, sorted by (other coordinates, position along ``axis``), with
    ``axis`` the last coordinate (the flattened array for None); and the shape of the others."""
    c = coordinates.coo(value)
    if axis is None:
        c = coordinates.general_reshape(c, (math.prod(c.shape),))
        axis = 0
    order = [i for i in range(len(c.shape)) if i != axis] + [axis]
    moved = coordinates.Coo(c.data, c.idx[:, order], tuple(c.shape[i] for i in order))
    return coordinates.coalesce(moved), moved.shape[:-1]


@functools.partial(kernel, static_argnames=("axis", "shape", "largest"))
def _arg(value: Any, axis: int | None, shape: tuple[int, ...], largest: bool) -> Any:
    c, others = _along_last(value, axis)
    n = coordinates.rows(c)
    length = c.shape[-1]
    index = dt.default_int()
    out = jnp.zeros(others, index)
    if n == 0:
        return out.reshape(shape)
    ok = coordinates.valid(c)
    x = c.data
    position = c.idx[:, -1]
    seg, seg_idx = coordinates.runs(c.idx[:, :-1], others)

    def per_line(fn: Any, values: Any) -> Any:
        return fn(values, seg, num_segments=n, indices_are_sorted=True)

    iota = lax.iota(dt.int32, n)
    rank = (iota - per_line(jax.ops.segment_min, iota)[seg]).astype(position.dtype)
    count = per_line(jax.ops.segment_sum, ok.astype(position.dtype))
    big = np.asarray(length, position.dtype)
    gap = jnp.minimum(per_line(jax.ops.segment_min, jnp.where(ok & (position != rank), rank, big)), count)
    worst = _lowest(x.dtype) if largest else _highest(x.dtype)
    best = per_line(jax.ops.segment_max if largest else jax.ops.segment_min, jnp.where(ok, x, worst))
    at_best = per_line(jax.ops.segment_min, jnp.where(ok & (x == best[seg]), position, big))
    zero = np.zeros((), x.dtype)
    beats_zero = best > zero if largest else best < zero
    implicit = jnp.where(beats_zero, at_best, jnp.where(best == zero, jnp.minimum(at_best, gap), gap))
    line = jnp.where(count == length, at_best, implicit)
    if x.dtype.kind == "f":
        nan = per_line(jax.ops.segment_min, jnp.where(ok & jnp.isnan(x), position, big))
        line = jnp.where(nan < big, nan, line)
    line = line.astype(index)
    if not others:
        return line[0].reshape(shape)
    key = tuple(seg_idx[:, j] for j in range(len(others)))
    return out.at[key].set(line, mode="drop").reshape(shape)


def _arg_call(fn: Any, x: Any, axis: Any, keepdims: Any, largest: bool) -> Any:
    spec = abstract(fn, x, axis=axis, keepdims=keepdims)
    position = None if axis is None else boundary.axis(axis, x.ndim)
    return wrap(_arg(x._value, axis=position, shape=tuple(spec.shape), largest=largest))


@implements("argmax")
def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    return _arg_call(dense_searching.argmax, x, axis, keepdims, largest=True)


@implements("argmin")
def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    return _arg_call(dense_searching.argmin, x, axis, keepdims, largest=False)


# --- cumulative functions -------------------------------------------------------------------


@functools.partial(kernel, static_argnames=("axis", "dtype"))
def _cumulative_prod(value: Any, axis: int, dtype: Any) -> Any:
    shape = tuple(value.shape)
    c, others = _along_last(value, axis)
    n = coordinates.rows(c)
    ok = coordinates.valid(c)
    position = c.idx[:, -1]
    seg, _ = coordinates.runs(c.idx[:, :-1], others)
    starts = jnp.concatenate([jnp.ones(1 if n else 0, dt.bool), seg[1:] != seg[:-1]])
    first = jax.ops.segment_min(lax.iota(dt.int32, n), seg, num_segments=n, indices_are_sorted=True)
    rank = (lax.iota(dt.int32, n) - first[seg]).astype(position.dtype)
    prefix = ok & (position == rank)  # no implicit zero before it in its line

    def step(a: tuple[Any, Any], b_: tuple[Any, Any]) -> tuple[Any, Any]:
        return jnp.where(b_[1], b_[0], a[0] * b_[0]), a[1] | b_[1]

    products, _ = lax.associative_scan(step, (c.data.astype(dtype), starts)) if n else (c.data.astype(dtype), None)
    back = np.argsort([i for i in range(len(shape)) if i != axis] + [axis])  # the coordinates in x's order
    idx = c.idx[:, back]
    return coordinates.to_bcoo(coordinates.make(products, idx, shape, prefix))


@implements("cumulative_prod")
def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
    spec = abstract(stat.cumulative_prod, x, axis=axis, dtype=dtype, include_initial=include_initial)
    if include_initial:
        dense_result("include_initial=True starts every line with a 1, so the result would be "
               "dense")  # fmt: skip
    position = 0 if axis is None else boundary.axis(axis, x.ndim)
    return BCOO._wrap(_cumulative_prod(x._value, axis=position, dtype=spec.dtype))


@implements("cumulative_sum")
def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
    abstract(stat.cumulative_sum, x, axis=axis, dtype=dtype, include_initial=include_initial)
    dense_result("running sums of a sparse array are non-zero after its first stored element, "
           "so the result is dense")  # fmt: skip
