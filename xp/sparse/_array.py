"""Sparse array types: ``xp.sparse.BCOO`` and ``xp.sparse.BCSR``.

Each wraps the ``jax.experimental.sparse`` object of the same name (same data layout: ``data``,
``indices`` (and ``indptr``), batch and dense dimensions), so it interoperates with JAX's sparse
API, and each is a JAX pytree, so ``jit``, ``grad`` (with respect to ``data``) and ``vmap`` take
it. ``x.__array_namespace__()`` is ``xp``: every xp function accepts sparse arguments and routes
them, at one point (``xp._boundary``), to the implementation registered with
:func:`xp.sparse._dispatch.implements`.

Sparse arrays are immutable (``__setitem__`` raises) and never convert to dense implicitly:
``numpy.asarray(A)`` and DLPack raise, and ``A.todense()`` is the explicit way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType
from typing import Any, ClassVar

import jax
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _devices
from xp import _dtypes as dt
from xp._array import API_VERSIONS, Array, wrap


class SparseArray:
    """The common base of :class:`BCOO` and :class:`BCSR`."""

    __slots__ = ("__weakref__", "_value")
    __array_priority__ = 200  # above xp.Array: mixed operators reach the sparse implementation
    __hash__ = None  # type: ignore[assignment]
    _jax_type: ClassVar[type]

    _value: Any  # the jax.experimental.sparse BCOO or BCSR

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return object.__new__(cls)

    @classmethod
    def _wrap(cls, value: Any) -> Any:
        """Wrap a JAX sparse array, unchecked (internal)."""
        result = object.__new__(cls)
        result._value = value
        return result

    @classmethod
    def from_jax(cls, value: Any) -> Any:
        """Wrap a ``jax.experimental.sparse`` array of this format, without a copy.

        JAX's own conventions are kept as they are (padding entries with out-of-range indices
        are allowed), since JAX made the array.
        """
        if not isinstance(value, cls._jax_type):
            raise TypeError(
                f"xp.sparse.{cls.__name__}.from_jax: value must be a jax.experimental.sparse."
                f"{cls.__name__}, got {type(value).__name__}"
            )
        if value.dtype not in dt.ANY:
            raise TypeError(
                f"xp.sparse.{cls.__name__}.from_jax: value has dtype {value.dtype}, which is not an array API dtype"
            )
        return cls._wrap(value)

    # --- the namespace and attributes ---------------------------------------------------------

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        if api_version is not None and api_version not in API_VERSIONS:
            raise ValueError(
                f"xp.sparse.{type(self).__name__}.__array_namespace__: api_version must be None or one of "
                f"{', '.join(API_VERSIONS)}, got {api_version!r}"
            )
        import xp

        return xp

    @property
    def jax(self) -> Any:
        """The wrapped ``jax.experimental.sparse`` array, without a copy."""
        return self._value

    @property
    def dtype(self) -> dt.DType:
        return dt.PUBLIC[self._value.dtype]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._value.shape)

    @property
    def ndim(self) -> int:
        return len(self._value.shape)

    @property
    def size(self) -> int:
        return math.prod(self._value.shape)

    @property
    def device(self) -> Any:
        return _devices.device_of(self._value.data)

    @property
    def nse(self) -> int:
        """The number of specified elements (stored entries, padding included) per batch."""
        return int(self._value.nse)

    @property
    def n_batch(self) -> int:
        return int(self._value.n_batch)

    @property
    def n_sparse(self) -> int:
        return int(self._value.n_sparse)

    @property
    def n_dense(self) -> int:
        return int(self._value.n_dense)

    @property
    def data(self) -> Array:
        """The stored values, shape ``(*batch, nse, *dense)`` (an xp array, no copy)."""
        return wrap(self._value.data)

    @property
    def indices(self) -> Array:
        return wrap(self._value.indices)

    def todense(self) -> Array:
        """The dense array (the explicit way to densify)."""
        from xp.sparse import _convert

        return _convert.todense(self)

    def __repr__(self) -> str:
        extras = f", nse={self.nse}"
        if self.n_batch:
            extras += f", n_batch={self.n_batch}"
        if self.n_dense:
            extras += f", n_dense={self.n_dense}"
        traced = "traced " if isinstance(self._value.data, jax.core.Tracer) else ""
        return f"{type(self).__name__}({traced}{self._value.dtype}{list(self.shape)}{extras})"

    # --- what a sparse array refuses ----------------------------------------------------------

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        raise TypeError(
            f"xp.sparse.{type(self).__name__}: a sparse array does not convert to a NumPy array "
            f"implicitly; call .todense() first"
        )

    def __dlpack__(self, /, **kwargs: Any) -> Any:
        raise BufferError(f"xp.sparse.{type(self).__name__}: DLPack has no sparse layout; call .todense() first")

    def __setitem__(self, key: Any, value: Any, /) -> None:
        raise TypeError(
            f"xp.sparse.{type(self).__name__}: sparse arrays are immutable; build a new one (or write into .todense())"
        )

    def __bool__(self) -> bool:
        return bool(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __float__(self) -> float:
        return float(self._scalar())

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        return self._scalar().__index__()

    def _scalar(self) -> Array:
        if self.size != 1:
            raise TypeError(
                f"xp.sparse.{type(self).__name__}: only arrays of one element convert to a Python scalar, "
                f"got shape {self.shape}"
            )
        return self.todense()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError(f"xp.sparse.{type(self).__name__}: len() of a 0-d array")
        return int(self.shape[0])


class BCOO(SparseArray):
    """A batched-coordinate (BCOO) sparse array.

    ``BCOO((data, indices), shape=shape)``: ``data`` has shape ``(*batch, nse, *dense)``,
    ``indices`` shape ``(*batch, nse, n_sparse)`` with an integer dtype. Indices are checked
    eagerly: an index outside ``[0, size)`` of its dimension is an IndexError, never clamped.
    """

    __slots__ = ()
    _jax_type = jsparse.BCOO

    def __init__(
        self,
        args: tuple[Any, Any],
        /,
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> None:
        from xp.sparse import _convert

        self._value = _convert.build_bcoo(args, shape, indices_sorted, unique_indices)

    def sum_duplicates(self, nse: int | None = None) -> BCOO:
        """Entries with the same indices added together (``nse`` entries kept, padding included)."""
        from xp.sparse import _convert

        return _convert.sum_duplicates(self, nse)

    def sort_indices(self) -> BCOO:
        """The same array with its entries in lexicographic order of their indices."""
        from xp.sparse import _convert

        return _convert.sort_indices(self)


class BCSR(SparseArray):
    """A batched compressed-sparse-row (BCSR) sparse array.

    ``BCSR((data, indices, indptr), shape=shape)``: two sparse dimensions after the batch ones;
    ``indices`` are column indices, ``indptr`` the row pointers (``n_rows + 1`` per batch).
    """

    __slots__ = ()
    _jax_type = jsparse.BCSR

    def __init__(self, args: tuple[Any, Any, Any], /, *, shape: Sequence[int]) -> None:
        from xp.sparse import _convert

        self._value = _convert.build_bcsr(args, shape)

    @property
    def indptr(self) -> Array:
        return wrap(self._value.indptr)

    def sum_duplicates(self, nse: int | None = None) -> BCSR:
        from xp.sparse import _convert

        return _convert.sum_duplicates(self, nse)

    def sort_indices(self) -> BCSR:
        from xp.sparse import _convert

        return _convert.sort_indices(self)


for _cls in (BCOO, BCSR):
    jax.tree_util.register_pytree_node(
        _cls,
        lambda x: ((x._value,), None),
        lambda _, children, cls=_cls: cls._wrap(children[0]),
    )
