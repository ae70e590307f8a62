"""``xp.sparse.DIA``: a banded matrix stored by its diagonals, multiplied by shifted slices.

For stencils and other banded matrices (a 2-D Poisson matrix: the offsets ``-nx, -1, 0, 1, nx``).
Its products (``A @ x``, ``A @ X``, ``A.T @ x``, ``x @ A``) read each diagonal and a shifted slice
of ``x``: no index is stored or gathered. On a TPU they are Pallas kernels, elsewhere XLA's fused
slices (xp/sparse/_products/tpu_dia.py, which also describes the stored layout; docs/sparse.md,
"On a TPU").

Made from its diagonals (``DIA((data, offsets), shape=...)``, under ``jax.jit`` too: the offsets
are its structure, static), from a BCOO or BCSR (``DIA.from_sparse(A)``) or from a dense matrix
(``DIA.fromdense(x)``), the last two eagerly: they read where the entries are. A matrix whose
entries are not on a few diagonals is refused (``max_fill``) rather than stored as large as its
dense copy.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any, Self

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from xp import _boundary as boundary
from xp import _routing as routing
from xp._array import Array, wrap
from xp._errors import fail
from xp._jit import kernel
from xp._routing import reported
from xp._typing import ArrayLike
from xp.sparse import _buffers as buffers
from xp.sparse import _layout_matrix as layout
from xp.sparse._products import kernels, tpu_dia


def _shape(shape: Any) -> tuple[int, int]:
    dims = boundary.shape(shape, "shape")
    if len(dims) != 2:
        fail(ValueError, f"shape must have 2 dimensions, got {tuple(dims)}")
    return int(dims[0]), int(dims[1])


def _offsets(offsets: Any, m: int, n: int) -> tuple[int, ...]:
    """The offsets as Python integers, checked: distinct, each of a diagonal of an ``m x n`` matrix."""
    if isinstance(offsets, jax.core.Tracer):
        fail(TypeError, "offsets must be concrete (Python integers): they are the matrix's structure, static under "
             "jax.jit")  # fmt: skip
    try:
        given = tuple(operator.index(o) for o in np.asarray(offsets).reshape(-1).tolist())
    except TypeError:
        fail(TypeError, f"offsets must be a sequence of integers, got {offsets!r}")
    if len(set(given)) != len(given):
        fail(ValueError, f"offsets must be distinct, got {list(given)}")
    outside = [o for o in given if not -m < o < n]
    if outside:
        fail(ValueError, f"offsets must lie in (-m, n) = ({-m}, {n}) for shape {(m, n)}, got {outside}")
    return given


@functools.partial(kernel, static_argnames=("order", "plan"))
def _stored(values: Any, order: tuple[int, ...], plan: tpu_dia.Plan) -> Any:
    if order != tuple(range(len(order))):
        values = values[jnp.asarray(order, np.int32)]
    return tpu_dia.stored(plan, values)


@functools.partial(kernel, static_argnames="plan")
def _from_dense(x: Any, plan: tpu_dia.Plan) -> Any:
    m, n = plan.shape
    rows = jnp.arange(m)
    diagonals = [x[rows, jnp.clip(rows + o, 0, max(n - 1, 0))] for o in plan.offsets]
    return tpu_dia.stored(plan, jnp.stack(diagonals) if diagonals else jnp.zeros((0, m), x.dtype))


@functools.partial(kernel, static_argnames=("plan", "transposed"))
def _diagonals(data: Any, plan: tpu_dia.Plan, transposed: bool) -> Any:
    values = tpu_dia.diagonals(plan, data)
    if not transposed:
        return values
    n = plan.shape[1]  # the transpose's diagonal -o, row-aligned: A.T[j, j - o] = data[d, j - o]
    stored = tpu_dia.flat(data)
    base = plan.front * tpu_dia.LANES
    turned = [stored[d, base - o : base - o + n] for d, o in enumerate(plan.offsets)]
    return jnp.stack(turned[::-1]) if turned else jnp.zeros((0, n), data.dtype)


@functools.partial(kernel, static_argnames="plan")
def _todense(data: Any, plan: tpu_dia.Plan) -> Any:
    m, n = plan.shape
    out = jnp.zeros((m, n), data.dtype)
    rows = jnp.arange(m)
    for d, o in enumerate(plan.offsets):  # (a column outside the matrix: n, dropped; not wrapped around)
        cols = jnp.where((rows + o >= 0) & (rows + o < n), rows + o, n)
        out = out.at[rows, cols].set(tpu_dia.diagonals(plan, data)[d], mode="drop")
    return out


@functools.partial(kernel, static_argnums=(2, 3, 4, 5))  # plan, transposed, left, dtype
def _product(leaves: tuple[Any, ...], x: Any, plan: tpu_dia.Plan, transposed: bool, left: bool, dtype: Any) -> Any:
    data = leaves[0].astype(dtype)
    return layout.product(left, transposed, x, dtype, lambda x, t: kernels.dia_matmul(data, x, plan, t))


class DIA(layout.LayoutMatrix):
    """A 2-d matrix stored by diagonals: ``DIA((data, offsets), shape=(m, n))``.

    ``data[d, i]`` is the element ``A[i, i + offsets[d]]`` (row-aligned: SciPy's ``dia_array`` aligns
    by column); ``data`` has shape ``(len(offsets), m)``, its values outside the matrix are ignored.
    ``offsets`` are distinct Python integers in ``(-m, n)``. The stored zeros of a diagonal are
    stored entries: ``0 * inf`` in ``x`` makes a NaN there, as for any stored zero.
    """

    __slots__ = ("_data",)
    _data: Any
    _plan: tpu_dia.Plan

    @reported("xp.sparse.DIA")
    def __init__(self, args: tuple[ArrayLike, Sequence[int]], /, *, shape: Sequence[int]) -> None:
        if not isinstance(args, tuple) or len(args) != 2:
            fail(TypeError, f"args must be a tuple (data, offsets), got {type(args).__name__}")
        data, offsets = args
        m, n = _shape(shape)
        given = _offsets(offsets, m, n)
        values = boundary.array(data, "data")
        if tuple(values.shape) != (len(given), m):
            fail(ValueError, f"data must have shape (len(offsets), m) = {(len(given), m)}, got {tuple(values.shape)}")
        order = tuple(sorted(range(len(given)), key=given.__getitem__))
        self._plan = tpu_dia.plan((m, n), tuple(given[d] for d in order))
        self._data = _stored(values, order, self._plan)
        self._transposed = False

    @classmethod
    def _make(cls, leaves: tuple[Any, ...], static: Any, transposed: bool) -> Self:
        made = object.__new__(cls)
        (made._data,), made._plan, made._transposed = leaves, static, transposed
        return made

    @classmethod
    def from_sparse(cls, matrix: Any, /, *, max_fill: float = layout.MAX_FILL) -> Self:
        """The DIA matrix of a 2-d ``xp.sparse.BCOO`` or ``BCSR`` (duplicates summed), eagerly: its
        offsets are the diagonals that hold an entry. ``max_fill``: the most values stored per
        entry (the diagonals' zeros count), else a ValueError."""
        try:
            rows, cols, values, shape = layout.host_entries(matrix, "DIA.from_sparse")
            return cls._from_entries(rows, cols, values, shape, max_fill, matrix)
        except Exception as error:
            return routing.failed(
                error, "xp.sparse.DIA.from_sparse", cls.from_sparse, (matrix,), {"max_fill": max_fill}
            )

    @classmethod
    def fromdense(
        cls, x: ArrayLike, /, *, offsets: Sequence[int] | None = None, max_fill: float = layout.MAX_FILL
    ) -> Self:
        """The DIA matrix of a 2-d dense array: its diagonals at ``offsets`` (the elements elsewhere
        are left out; under ``jax.jit`` too), or by default those that hold a nonzero element
        (eagerly; ``max_fill`` as for :meth:`from_sparse`)."""
        try:
            if offsets is None:
                rows, cols, values, shape = layout.dense_entries(x, "DIA.fromdense without offsets")
                return cls._from_entries(rows, cols, values, shape, max_fill, x)
            value = boundary.array(x, "x")
            if value.ndim != 2:
                fail(ValueError, f"x must be 2-dimensional, got shape {tuple(value.shape)}")
            m, n = (int(s) for s in value.shape)
            plan = tpu_dia.plan((m, n), tuple(sorted(_offsets(offsets, m, n))))
            return cls._make((_from_dense(value, plan),), plan, False)
        except Exception as error:
            kwargs = {"offsets": offsets, "max_fill": max_fill}
            return routing.failed(error, "xp.sparse.DIA.fromdense", cls.fromdense, (x,), kwargs)

    @classmethod
    def _from_entries(cls, rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int],
                      max_fill: Any, source: Any) -> Self:  # fmt: skip
        limit = layout.fill_limit(max_fill)
        found = np.unique(cols - rows)
        layout.check_fill(len(found) * shape[0], len(values), limit, "DIA")
        diagonals = np.zeros((len(found), shape[0]), values.dtype)
        buffers.added_host(diagonals, (np.searchsorted(found, cols - rows), rows), values)
        plan = tpu_dia.plan(shape, tuple(int(o) for o in found))
        order = tuple(range(len(found)))
        return cls._make((_stored(layout.placed_like(diagonals, source), order, plan),), plan, False)

    # --- attributes ------------------------------------------------------------------------------

    @property
    def offsets(self) -> tuple[int, ...]:
        """The diagonals' offsets, sorted (of the transpose: negated, sorted)."""
        offsets = self._plan.offsets
        return tuple(sorted(-o for o in offsets)) if self._transposed else offsets

    @property
    def data(self) -> Array:
        """The diagonals, row-aligned: shape ``(len(offsets), m)``, ``data[d, i] = A[i, i + offsets[d]]``
        (zero outside the matrix; of the transpose: its own diagonals, a copy)."""
        return wrap(_diagonals(self._data, self._plan, self._transposed))

    def _describe(self) -> str:
        return f", offsets={list(self.offsets)}"

    # --- the layout matrix's parts ---------------------------------------------------------------

    def _leaves(self) -> tuple[Any, ...]:
        return (self._data,)

    _kernel = staticmethod(_product)

    def _dense(self) -> Any:
        return _todense(self._data, self._plan)


layout.register(DIA)
