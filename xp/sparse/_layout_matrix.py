"""Sparse matrices kept in the layout of their kernels: what ``xp.sparse.DIA``, ``xp.sparse.BSR`` and
``xp.sparse.ELL`` share.

A DIA, BSR or ELL matrix is a 2-d sparse matrix whose storage is the layout its products read
(diagonals, dense blocks, padded rows: xp/sparse/_products/tpu_dia.py, tpu_bsr.py, tpu_ell.py), built once when the matrix
is made, so a product pays no conversion. It is a JAX pytree (its stored values and indices the
leaves, its layout static), its namespace is ``xp``, and xp's functions route it here
(``xp._routing.register_own_route``): ``matmul`` (``A @ x``, ``x @ A``, ``A.T @ x``, with ``x`` of
any number of dimensions, as ``xp.matmul``) and ``matrix_transpose`` (``A.T``, without moving
anything). Every other function raises NotImplementedError, naming the function: such a matrix is
made for its products, and nothing is densified but by ``todense()``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Self

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _devices, _operators
from xp import _linear_algebra as dense
from xp import _routing as routing
from xp._array import Array, namespace, wrap
from xp._errors import fail
from xp.sparse import _conversion as conversion
from xp.sparse._array import SparseArray


class LayoutMatrix:
    """A 2-d sparse matrix stored in its kernels' layout (the base of ``DIA``, ``BSR`` and ``ELL``): its
    transpose ``A.T`` is the same storage read the other way."""

    __slots__ = ("__weakref__", "_plan", "_transposed")
    __array_priority__ = 300  # above xp's arrays, dense and sparse: mixed operators come here
    __hash__ = None  # type: ignore[assignment]
    _plan: Any  # the layout: static, hashable, with the stored matrix's ``shape``
    _transposed: bool

    # --- what a format defines -------------------------------------------------------------------

    def _leaves(self) -> tuple[Any, ...]:
        """The stored arrays, the values first."""
        raise NotImplementedError

    @classmethod
    def _make(cls, leaves: tuple[Any, ...], static: Any, transposed: bool) -> Self:
        raise NotImplementedError

    _kernel: ClassVar[Callable[..., Any]]
    """The product's kernel: ``(leaves, x, plan, transposed, left, dtype)`` to ``A @ x`` (``x @ A``
    where ``left``) of the matrix (transposed where ``transposed``), in ``dtype``."""

    def _dense(self) -> Any:
        """The dense matrix (not transposed)."""
        raise NotImplementedError

    # --- attributes ------------------------------------------------------------------------------

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        return namespace(api_version, f"xp.sparse.{type(self).__name__}.__array_namespace__")

    @property
    def shape(self) -> tuple[int, int]:
        m, n = self._plan.shape
        return (n, m) if self._transposed else (m, n)

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._leaves()[0].dtype

    @property
    def ndim(self) -> int:
        return 2

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def device(self) -> Any:
        return _devices.device_of(self._leaves()[0])

    @property
    def T(self) -> Self:
        """The transpose: the same storage, its products the transposed products."""
        return type(self)._make(self._leaves(), self._plan, not self._transposed)

    @property
    def mT(self) -> Self:
        return self.T

    def todense(self) -> Array:
        """The dense matrix (the explicit way to densify)."""
        value = self._dense()
        return wrap(value.T if self._transposed else value)

    def block_until_ready(self) -> Self:
        jax.block_until_ready(self._leaves())
        return self

    def __repr__(self) -> str:
        traced = "traced " if isinstance(self._leaves()[0], jax.core.Tracer) else ""
        view = ", transposed" if self._transposed else ""
        return f"{type(self).__name__}({traced}{self.dtype}{list(self.shape)}{self._describe()}{view})"

    def _describe(self) -> str:
        return ""

    # --- what it refuses -------------------------------------------------------------------------

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        raise TypeError(f"xp.sparse.{type(self).__name__}: a sparse matrix does not convert to a NumPy array "
                        "implicitly; call .todense() first")  # fmt: skip

    def __dlpack__(self, /, **kwargs: Any) -> Any:
        raise BufferError(f"xp.sparse.{type(self).__name__}: DLPack has no sparse layout; call .todense() first")

    def __setitem__(self, key: Any, value: Any, /) -> None:
        raise TypeError(f"xp.sparse.{type(self).__name__}: sparse matrices are immutable")

    # --- operators: installed from xp._operators' table (each the routed xp function) -----------

    if TYPE_CHECKING:

        def __matmul__(self, other: Any, /) -> Array: ...
        def __rmatmul__(self, other: Any, /) -> Array: ...

    # --- the product ---------------------------------------------------------------------------

    def _times(self, x: Any, left: bool) -> Array:
        """``self @ x`` (``x @ self`` where ``left``) for a dense jax array ``x``, with xp.matmul's
        checks, messages and result dtype."""
        matrix = jax.ShapeDtypeStruct(self.shape, self.dtype)
        operands = (x, matrix) if left else (matrix, x)
        spec = jax.eval_shape(dense._matmul, *operands)
        if math.prod(spec.shape) == 0:
            return wrap(jnp.zeros(spec.shape, spec.dtype))
        return wrap(self._kernel(self._leaves(), x, self._plan, self._transposed, left, spec.dtype))


def product(left: bool, transposed: bool, x: Any, dtype: np.dtype, multiply: Any) -> Any:
    """Inside a kernel: ``A @ x`` (``x @ A`` where ``left``) of the matrix ``A`` (transposed where
    ``transposed``) whose product with a 1-d or 2-d array is ``multiply(columns, transposed)``,
    for ``x`` of any number of dimensions (as ``xp.matmul``: ``x`` of shape ``(..., n, k)`` is
    multiplied as ``n`` rows of ``prod(...) * k`` columns)."""
    x = x.astype(dtype)
    if left:  # x @ A = (A.T @ x.T).T, over x's last two axes
        transposed = not transposed
        x = x if x.ndim == 1 else jnp.swapaxes(x, -1, -2)
    if x.ndim <= 2:
        y = multiply(x, transposed)
    else:
        batch, k = x.shape[:-2], x.shape[-1]
        folded = jnp.moveaxis(x, -2, 0).reshape(x.shape[-2], math.prod(batch) * k)
        y = multiply(folded, transposed)
        y = jnp.moveaxis(y.reshape(y.shape[0], *batch, k), 0, -2)
    return y if not left or y.ndim == 1 else jnp.swapaxes(y, -1, -2)


# --- building from another array: entries on the host ------------------------------------------


def host_entries(matrix: Any, where: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """The entries (rows, columns, values, shape; NumPy) of a 2-d xp sparse array ``matrix`` (its
    padding left out), read eagerly: a layout depends on where the entries are."""
    if not isinstance(matrix, SparseArray):
        fail(TypeError, f"matrix must be an xp.sparse.BCOO or BCSR, got {type(matrix).__name__}")
    if matrix.ndim != 2:
        fail(ValueError, f"matrix must be 2-dimensional, got shape {matrix.shape}")
    value: Any = matrix.to_bcoo().jax
    if value.n_batch or value.n_dense:
        value = jsparse.bcoo_update_layout(value, n_batch=0, n_dense=0)
    if isinstance(value.data, jax.core.Tracer):
        fail(TypeError, f"matrix is traced: {where} reads where its entries are, so it runs eagerly (outside jax.jit)")
    shape = (int(value.shape[0]), int(value.shape[1]))
    indices, values = np.asarray(value.indices), np.asarray(value.data)
    inside = (indices[:, 0] < shape[0]) & (indices[:, 1] < shape[1])
    return indices[inside, 0].astype(np.int64), indices[inside, 1].astype(np.int64), values[inside], shape


def dense_entries(x: Any, where: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """The entries of a 2-d dense array ``x`` (as :func:`host_entries`), read eagerly: the elements
    ``xp.sparse.fromdense`` stores (nonzero, or a negative zero)."""
    value = boundary.array(x, "x")
    if value.ndim != 2:
        fail(ValueError, f"x must be 2-dimensional, got shape {tuple(value.shape)}")
    if isinstance(value, jax.core.Tracer):
        fail(TypeError, f"x is traced: {where} reads where x's nonzero elements are, so it runs eagerly (outside "
             "jax.jit)")  # fmt: skip
    host = np.asarray(value)
    rows, cols = np.nonzero(conversion._stored_host(host, 0))
    return rows.astype(np.int64), cols.astype(np.int64), host[rows, cols], (int(host.shape[0]), int(host.shape[1]))


MAX_FILL = 3.0
"""A layout may store this many values per entry by default: about the memory of the BCOO it
replaces (a value and two indices per entry)."""


def fill_limit(max_fill: Any) -> float:
    """The ``max_fill`` argument, checked: a number of at least 1."""
    if isinstance(max_fill, bool) or not isinstance(max_fill, (int, float)) or not max_fill >= 1:
        fail(TypeError, f"max_fill must be a number of at least 1, got {max_fill!r}")
    return float(max_fill)


def check_fill(stored: int, entries: int, max_fill: float, what: str) -> None:
    """Refuse a layout that would store more than ``max_fill`` values per entry (a random matrix by
    its diagonals would be as large as its dense copy: densifying it silently)."""
    if stored > max_fill * max(entries, 1):
        fail(ValueError, f"{what} would store {stored} values for {entries} entries ({stored / max(entries, 1):.1f} "
             f"per entry, above max_fill={max_fill}); this layout does not suit this matrix (pass a larger max_fill "
             "to build it anyway)")  # fmt: skip


def placed_like(host: np.ndarray, a: Any) -> Any:
    """``host`` on the device of ``a``'s values (a sparse or dense array, on one device), else on
    JAX's default device."""
    value = a.jax.data if isinstance(a, SparseArray) else a.jax if isinstance(a, Array) else a
    where = _devices.device_of(value) if isinstance(value, jax.Array) else None
    return jax.device_put(host, where) if isinstance(where, jax.Device) else jnp.asarray(host)


# --- the routed functions -------------------------------------------------------------------


def _operand(x: Any, param: str) -> Any:
    try:
        return boundary.array(x, param)
    except routing.SparseArgument:
        fail(NotImplementedError, f"{param}: a product of xp.sparse.DIA, BSR or ELL with a {type(x).__name__} is not "
             "implemented (convert one of them)")  # fmt: skip


def _matmul(x1: Any, x2: Any, /) -> Array:
    if isinstance(x1, LayoutMatrix):
        return x1._times(_operand(x2, "x2"), left=False)
    assert isinstance(x2, LayoutMatrix)
    return x2._times(_operand(x1, "x1"), left=True)


def _transpose(x: Any, /) -> LayoutMatrix:
    return x.T


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "matmul": _matmul,
    "linalg.matmul": _matmul,
    "matrix_transpose": _transpose,
    "linalg.matrix_transpose": _transpose,
}


def route(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    function = FUNCTIONS.get(name)
    if function is None:
        kinds = sorted({type(a).__name__ for a in (*args, *kwargs.values()) if isinstance(a, LayoutMatrix)})
        raise NotImplementedError(
            f"xp.{name}: not implemented for xp.sparse.{' and '.join(kinds)} (which has matmul and matrix_transpose: "
            "A @ x, x @ A, A.T); call .todense() for a dense copy, or use a BCOO or BCSR"
        )
    return function(*args, **kwargs)


def register(cls: type[LayoutMatrix]) -> None:
    """Make the format ``cls`` a JAX pytree (its stored arrays the leaves, its layout and
    orientation static), route xp's functions to it (:func:`route`), and install the operators,
    each the routed public function (immutable: none in place; those without an implementation
    raise NotImplementedError)."""

    def flatten(a: LayoutMatrix) -> tuple[tuple[Any, ...], tuple[Any, bool]]:
        return a._leaves(), (a._plan, a._transposed)

    def unflatten(aux: tuple[Any, bool], children: Any) -> LayoutMatrix:
        return cls._make(tuple(children), *aux)

    jax.tree_util.register_pytree_node(cls, flatten, unflatten)
    routing.register_own_route(cls, route)
    _operators.install(cls, in_place=False)
