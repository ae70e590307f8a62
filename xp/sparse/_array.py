"""Sparse array types: ``xp.sparse.BCOO`` and ``xp.sparse.BCSR``.

Each wraps the ``jax.experimental.sparse`` object of the same name (same data layout: ``data``,
``indices`` (and ``indptr``), batch and dense dimensions), so it interoperates with JAX's sparse
API, and each is a JAX pytree, so ``jit``, ``grad`` (with respect to ``data``) and ``vmap`` take
it. ``x.__array_namespace__()`` is ``xp``: every xp function accepts sparse arguments and routes
them (``xp._routing``) to the implementation registered with :func:`xp._routing.implements`;
the types are registered with the router here, where they are defined.

Sparse arrays are immutable (``__setitem__`` raises) and never convert to dense implicitly:
``numpy.asarray(A)`` and DLPack raise, and ``A.todense()`` is the explicit way.

Building and converting (``xp.sparse._build``, ``_dense_conversion``, ``_formats``,
``_interop``) work on the JAX sparse values and their buffers and never import this module: the
methods here call them, wrap what they return (``BCOO._wrap``, :func:`wrap_sparse`) and name
their argument errors (``xp.sparse.BCOO.to_scipy: ...``). The methods that need the routed xp
functions (``T``, ``mT``, indexing, operators) are installed from above by
``xp.sparse._array_methods``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

import jax
import jax.export
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _devices
from xp import _dtypes as dt
from xp import _routing as routing
from xp._array import Array, namespace, wrap
from xp._errors import ArgumentError, reported
from xp.sparse import _build as build
from xp.sparse import _dense_conversion as dense_conversion
from xp.sparse import _formats as formats
from xp.sparse import _interop as interop


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
        jax_type: Any = cls._jax_type
        if not isinstance(value, jax_type):
            raise TypeError(
                f"xp.sparse.{cls.__name__}.from_jax: value must be a jax.experimental.sparse."
                f"{cls.__name__}, got {type(value).__name__}"
            )
        if value.dtype not in dt.ANY:
            raise TypeError(
                f"xp.sparse.{cls.__name__}.from_jax: value has dtype {value.dtype}, which is not an array API dtype"
            )
        return cls._wrap(value)

    def _replaced(self, value: Any) -> Any:
        """This array if ``value`` is its own JAX array, else a new one of this format around
        ``value`` (internal)."""
        return self if value is self._value else type(self)._wrap(value)

    # --- the namespace and attributes ---------------------------------------------------------

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        return namespace(api_version, f"xp.sparse.{type(self).__name__}.__array_namespace__")

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
        """The indices of the stored values (an xp array, no copy)."""
        return wrap(self._value.indices)

    @property
    def indices_sorted(self) -> bool:
        """Whether the indices are known to be in lexicographic order (within each batch)."""
        return bool(self._value.indices_sorted)

    @property
    def unique_indices(self) -> bool:
        """Whether the indices are known to hold no duplicates."""
        return bool(self._value.unique_indices)

    def to_device(self, device: Any, /, *, stream: int | Any | None = None) -> Any:
        """The same array with its buffers on ``device``."""
        where = f"xp.sparse.{type(self).__name__}.to_device"
        if stream is not None:
            raise ValueError(f"{where}: stream must be None (JAX orders transfers itself)")
        try:
            return self._replaced(formats.place(self._value, boundary.device(device)))
        except ArgumentError as e:
            raise e.public(where) from None

    def block_until_ready(self) -> Any:
        """Wait until the array's buffers are computed (JAX dispatches asynchronously)."""
        jax.block_until_ready(self._value)
        return self

    # --- conversions ----------------------------------------------------------------------------

    def todense(self) -> Array:
        """The dense array (the explicit way to densify)."""
        return wrap(dense_conversion.todense(self._value))

    def to_bcoo(self) -> BCOO:
        """The same array in the BCOO format (the array itself if it is one)."""
        if isinstance(self, BCOO):
            return self
        return BCOO._wrap(formats.to_bcoo(self._value))

    @reported("xp.sparse.BCOO.to_bcsr")  # only a BCOO array converts, or is rejected
    def to_bcsr(self) -> BCSR:
        """The same array in the BCSR format (the array itself if it is one); a BCOO array must
        have two sparse dimensions."""
        if isinstance(self, BCSR):
            return self
        return BCSR._wrap(formats.to_bcsr(self._value))

    def to_scipy(self, *, format: str | None = None) -> Any:
        """A ``scipy.sparse`` array with the same values, duplicates summed and indices sorted.

        ``format``: ``"coo"`` (the default for BCOO, any number of dimensions), ``"csr"`` (the
        default for BCSR), ``"csc"``, ... (2-d only). Batch and dense dimensions become ordinary
        dimensions. Eager only.
        """
        try:
            return interop.to_scipy(self._value, format)
        except ArgumentError as e:
            raise e.public(f"xp.sparse.{type(self).__name__}.to_scipy") from None

    def sum_duplicates(self, nse: int | None = None) -> Any:
        """Entries with the same indices added together, indices sorted.

        ``nse``: how many entries to keep (per batch). By default, eagerly, the number of distinct
        indices; under a JAX transformation the current ``nse`` (the rest is padding).
        """
        try:
            count = build.nse_argument(nse)
        except ArgumentError as e:
            raise e.public(f"xp.sparse.{type(self).__name__}.sum_duplicates") from None
        summed = BCOO._wrap(formats.sum_duplicates(formats.to_bcoo(self._value), count))
        return summed if isinstance(self, BCOO) else summed.to_bcsr()

    def sort_indices(self) -> Any:
        """The same array with its entries in lexicographic order of their indices."""
        if self._value.indices_sorted:
            return self
        if isinstance(self, BCOO):
            return BCOO._wrap(formats.sort_indices(self._value))
        return BCOO._wrap(formats.to_bcoo(self._value).sort_indices()).to_bcsr()

    def __repr__(self) -> str:
        try:
            return self._describe()
        except (AttributeError, TypeError, IndexError):  # leaves that are not arrays (jax.tree.map)
            leaves = jax.tree_util.tree_leaves(self._value, is_leaf=lambda x: x is None)
            return f"{type(self).__name__}(shape={list(self._value.shape)}, leaves={leaves})"

    def _describe(self) -> str:
        extras = f", nse={self.nse}"
        if self.n_batch:
            extras += f", n_batch={self.n_batch}"
        if self.n_dense:
            extras += f", n_dense={self.n_dense}"
        traced = "traced " if isinstance(self._value.data, jax.core.Tracer) else ""
        return f"{type(self).__name__}({traced}{self._value.dtype}{list(self.shape)}{extras})"

    # --- installed by xp.sparse._array_methods; declared here for type checkers -------------

    if TYPE_CHECKING:
        __getitem__: Callable[[SparseArray, Any], Any]

        @property
        def T(self) -> Any: ...

        @property
        def mT(self) -> Any: ...

    # --- what a sparse array refuses ----------------------------------------------------------

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        raise TypeError(
            f"xp.sparse.{type(self).__name__}: a sparse array does not convert to a NumPy array "
            f"implicitly; call .todense() first"
        )

    def __dlpack__(
        self, /, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: bool | None = None
    ) -> Any:
        raise BufferError(f"xp.sparse.{type(self).__name__}: DLPack has no sparse layout; call .todense() first")

    def __dlpack_device__(self, /) -> tuple[Any, int]:
        """Where the buffers are, as DLPack names devices (``__dlpack__`` itself raises)."""
        return self._value.data.__dlpack_device__()

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

    def __iter__(self) -> Iterator[Any]:
        if self.ndim == 0:
            raise TypeError(f"xp.sparse.{type(self).__name__}: iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __copy__(self) -> Any:
        return type(self)._wrap(self._value)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return type(self)._wrap(self._value)  # immutable: sharing the buffers is safe


class BCOO(SparseArray):
    """A batched-coordinate (BCOO) sparse array.

    ``BCOO((data, indices), shape=shape)``: ``data`` has shape ``(*batch, nse, *dense)``,
    ``indices`` shape ``(*batch, nse, n_sparse)`` with an integer dtype. Indices are checked
    eagerly: an index outside ``[0, size)`` of its dimension is an IndexError, never clamped.
    """

    __slots__ = ()
    _jax_type = jsparse.BCOO

    @reported("xp.sparse.BCOO")
    def __init__(
        self,
        args: tuple[Any, Any],
        /,
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> None:
        self._value = build.build_bcoo(args, shape, indices_sorted, unique_indices)


class BCSR(SparseArray):
    """A batched compressed-sparse-row (BCSR) sparse array.

    ``BCSR((data, indices, indptr), shape=shape)``: two sparse dimensions after the batch ones;
    ``indices`` are column indices, ``indptr`` the row pointers (``n_rows + 1`` per batch).
    """

    __slots__ = ()
    _jax_type = jsparse.BCSR

    @reported("xp.sparse.BCSR")
    def __init__(
        self,
        args: tuple[Any, Any, Any],
        /,
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> None:
        self._value = build.build_bcsr(args, shape, indices_sorted, unique_indices)

    @property
    def indptr(self) -> Array:
        """The row pointers, shape ``(*batch, n_rows + 1)`` (an xp array, no copy)."""
        return wrap(self._value.indptr)


def wrap_sparse(value: Any) -> Any:
    """The xp sparse array around a ``jax.experimental.sparse`` BCOO or BCSR (internal)."""
    return BCSR._wrap(value) if isinstance(value, jsparse.BCSR) else BCOO._wrap(value)


# The pytree of a sparse array is the one of its JAX sparse array (data, indices[, indptr]) with the
# static facts as a hashable tuple, so that jax.export can serialize it (below) without xp
# registering anything for JAX's own types.
_INFO = ("shape", "indices_sorted", "unique_indices")


def _flatten(x: SparseArray) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    children, info = x._value.tree_flatten()
    return tuple(children), tuple(info[key] for key in _INFO)


def _unflattener(cls: type[SparseArray]) -> Any:
    jax_type: Any = cls._jax_type

    def unflatten(info: tuple[Any, ...], children: Any) -> Any:
        return cls._wrap(jax_type.tree_unflatten(dict(zip(_INFO, info, strict=True)), children))

    return unflatten


def _serialize_info(info: tuple[Any, ...]) -> bytes:
    shape, indices_sorted, unique_indices = info
    return json.dumps([list(shape), bool(indices_sorted), bool(unique_indices)]).encode()


def _deserialize_info(data: bytes) -> tuple[Any, ...]:
    shape, indices_sorted, unique_indices = json.loads(data)
    return (tuple(shape), indices_sorted, unique_indices)


for _cls in (BCOO, BCSR):
    jax.tree_util.register_pytree_node(_cls, _flatten, _unflattener(_cls))
    jax.export.register_pytree_node_serialization(
        _cls,
        serialized_name=f"xp.sparse.{_cls.__name__}",
        serialize_auxdata=_serialize_info,
        deserialize_auxdata=_deserialize_info,
    )

routing.register_sparse_types(SparseArray)
