"""Sparse array types: ``xp.sparse.BCOO`` and ``xp.sparse.BCSR``.

Each wraps the ``jax.experimental.sparse`` object of the same name (same data layout: ``data``,
``indices`` (and ``indptr``), batch and dense dimensions), so it interoperates with JAX's sparse
API, and each is a JAX pytree, so ``jit``, ``grad`` (with respect to ``data``) and ``vmap`` take
it. ``x.__array_namespace__()`` is ``xp``: every xp function accepts sparse arguments and routes
them (``xp._routing``) to the implementation registered with :func:`xp._routing.implements`;
the types are registered with the router here, where they are defined.

Sparse arrays are immutable (``__setitem__`` raises) and never convert to dense implicitly:
``numpy.asarray(A)`` and DLPack raise, and ``A.todense()`` is the explicit way.

Building and converting (``xp.sparse._build``, ``xp.sparse._conversion``) work on the JAX
sparse values and their buffers and never import this module: the methods here call them, wrap
what they return (``BCOO._wrap``, :func:`wrap_sparse`) and name their argument errors
(``xp.sparse.BCOO.to_scipy: ...``). The methods that need the routed xp functions (``T``,
``mT``, indexing, operators) are installed from above by ``xp.sparse._array_methods``.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeAlias, overload

import jax
import jax.core
import jax.export
import numpy as np
from jax.experimental import sparse as jsparse

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp import _routing as routing
from xp._array import Array, namespace, wrap
from xp._routing import reported
from xp._typing import ArrayLike, Device
from xp.sparse import _build as build
from xp.sparse import _conversion as conversion
from xp.sparse import _meshes as meshes
from xp.sparse import _transposed as transposed

if TYPE_CHECKING:
    from xp._array import IndexItem

# What the operators take: anything an xp function does (ArrayLike or a sparse array), and what
# indexing takes: what a dense array's indexing does, or sparse index arrays (read as values).
_Operand: TypeAlias = "ArrayLike | SparseArray"
_SparseIndexItem: TypeAlias = "IndexItem | SparseArray"
_SparseIndex: TypeAlias = "_SparseIndexItem | tuple[_SparseIndexItem, ...]"


class SparseArray:
    """The common base of :class:`BCOO` and :class:`BCSR`."""

    __slots__ = ("__weakref__", "_base", "_value")
    __array_priority__ = 200  # above xp.Array: mixed operators reach the sparse implementation
    __hash__ = None  # type: ignore[assignment]
    _jax_type: ClassVar[type]

    # The jax.experimental.sparse BCOO or BCSR. A transposed view (xp.sparse._transposed) starts
    # with this slot empty: reading it forms the transpose (__getattr__), so code that reads
    # ``_value`` never sees the untransposed base.
    _value: Any
    # None, or for a transposed view the JAX sparse array it transposes (its last two axes).
    _base: Any

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        result = object.__new__(cls)
        result._base = None
        return result

    @classmethod
    def _wrap(cls, value: Any) -> Self:
        """Wrap a JAX sparse array, unchecked (internal)."""
        result = object.__new__(cls)
        result._value = value
        result._base = None
        return result

    @classmethod
    def _view(cls, base: Any) -> Any:
        """The transposed view of the JAX sparse array ``base`` (internal; always a BCOO)."""
        result = object.__new__(BCOO)
        result._base = base
        return result

    if not TYPE_CHECKING:  # (type checkers would take every attribute as defined)

        def __getattr__(self, name: str) -> Any:
            # Only reached when normal lookup fails: for ``_value``, the empty slot of a view.
            if name == "_value":
                base = self._base
                if base is not None:
                    try:
                        value = transposed.materialize(base)
                    except AttributeError as e:  # not "no attribute _value" (that would mislead)
                        raise RuntimeError(f"xp.sparse: forming a transpose failed: {e}") from e
                    if transposed.cacheable(base, value):
                        self._value = value
                    return value
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def from_jax(cls, value: jsparse.JAXSparse) -> Self:
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

    def _replaced(self, value: Any) -> Self:
        """This array if ``value`` is its own JAX array, else a new one of this format around
        ``value`` (internal)."""
        return self if value is self._value else type(self)._wrap(value)

    def _plain_view(self) -> Any:
        """The base of a transposed view of a plain 2-d array, else None (internal): what the
        view-aware operations work on."""
        base = self._base
        return base if base is not None and transposed.is_plain(base) else None

    # --- the namespace and attributes ---------------------------------------------------------

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        return namespace(api_version, f"xp.sparse.{type(self).__name__}.__array_namespace__")

    @property
    def jax(self) -> jsparse.JAXSparse:
        """The wrapped ``jax.experimental.sparse`` array, without a copy (of a transposed view:
        the transpose, formed once)."""
        return self._value

    # A transposed view answers these from its base (never forming the transpose), the others
    # from the transpose itself.

    @property
    def dtype(self) -> np.dtype[Any]:
        base = self._base
        return (self._value if base is None else base).dtype  # NumPy's dtype, as xp.Array's

    @property
    def shape(self) -> tuple[int, ...]:
        base = self._base
        return tuple(self._value.shape) if base is None else transposed.view_shape(base)

    @property
    def ndim(self) -> int:
        base = self._base
        return len((self._value if base is None else base).shape)

    @property
    def size(self) -> int:
        base = self._base
        return math.prod((self._value if base is None else base).shape)

    @property
    def device(self) -> Device:
        # the transpose's data is the base's, and both are plain: the same placement
        return meshes.array_sharding(self._plain_view() or self._value)

    @property
    def nse(self) -> int:
        """The number of specified elements (stored entries, padding included) per batch."""
        return int((self._plain_view() or self._value).nse)

    @property
    def n_batch(self) -> int:
        return 0 if self._plain_view() is not None else int(self._value.n_batch)

    @property
    def n_sparse(self) -> int:
        return 2 if self._plain_view() is not None else int(self._value.n_sparse)

    @property
    def n_dense(self) -> int:
        return 0 if self._plain_view() is not None else int(self._value.n_dense)

    @property
    def data(self) -> Array:
        """The stored values, shape ``(*batch, nse, *dense)`` (an xp array, no copy; of a
        transposed view the base's, in the order of the view's ``indices``)."""
        return wrap((self._plain_view() or self._value).data)

    @property
    def indices(self) -> Array:
        """The indices of the stored values (an xp array, no copy; of a transposed view those of
        the transpose, formed once)."""
        return wrap(self._value.indices)

    @property
    def indices_sorted(self) -> bool:
        """Whether the indices are known to be in lexicographic order (within each batch)."""
        if self._plain_view() is not None:
            return False  # (the formed transpose is column-major: never marked sorted)
        return bool(self._value.indices_sorted)

    @property
    def unique_indices(self) -> bool:
        """Whether the indices are known to hold no duplicates."""
        base = self._plain_view()
        return bool((self._value if base is None else base).unique_indices)

    def to_device(self, device: Device, /, *, stream: int | Any | None = None) -> Self:
        """The same array with its buffers on ``device``."""
        where = f"xp.sparse.{type(self).__name__}.to_device"
        if stream is not None:
            raise ValueError(f"{where}: stream must be None (JAX orders transfers itself)")
        try:
            base = self._plain_view()
            if base is not None and isinstance(device, jax.Device):  # the view of the base, moved
                placed = conversion.place(base, boundary.device(device))  # (a sharding names the
                return self if placed is base else self._view(placed)  # view's axes: formed)
            return self._replaced(conversion.place(self._value, boundary.device(device)))
        except Exception as error:
            return routing.failed(error, where, type(self).to_device, (self, device), {"stream": stream})

    def block_until_ready(self) -> Self:
        """Wait until the array's buffers are computed (JAX dispatches asynchronously)."""
        base = self._base
        jax.block_until_ready(self._value if base is None else base)
        return self

    # --- conversions ----------------------------------------------------------------------------

    def todense(self) -> Array:
        """The dense array (the explicit way to densify)."""
        return wrap(conversion.todense(self._value))

    def to_bcoo(self) -> BCOO:
        """The same array in the BCOO format (the array itself if it is one)."""
        if isinstance(self, BCOO):
            return self
        return BCOO._wrap(conversion.to_bcoo(self._value))

    @reported("xp.sparse.BCOO.to_bcsr")  # only a BCOO array converts, or is rejected
    def to_bcsr(self) -> BCSR:
        """The same array in the BCSR format (the array itself if it is one); a BCOO array must
        have two sparse dimensions."""
        if isinstance(self, BCSR):
            return self
        return BCSR._wrap(conversion.to_bcsr(self._value))

    def to_scipy(self, *, format: str | None = None) -> Any:
        """A ``scipy.sparse`` array with the same values, duplicates summed and indices sorted.

        ``format``: ``"coo"`` (the default for BCOO, any number of dimensions), ``"csr"`` (the
        default for BCSR), ``"csc"``, ... (2-d only). Batch and dense dimensions become ordinary
        dimensions. Eager only.
        """
        try:
            base = self._plain_view()
            if base is not None:  # the base's entries, coordinates swapped (no transpose formed)
                return conversion.to_scipy(base, format or "coo", transposed=True)
            return conversion.to_scipy(self._value, format)
        except Exception as error:
            where = f"xp.sparse.{type(self).__name__}.to_scipy"
            return routing.failed(error, where, type(self).to_scipy, (self,), {"format": format})

    def sum_duplicates(self, nse: int | None = None) -> Self:
        """Entries with the same indices added together, indices sorted.

        ``nse``: how many entries to keep (per batch). By default, eagerly, the number of distinct
        indices; under a JAX transformation the current ``nse`` (the rest is padding).
        """
        try:
            count = build.nse_argument(nse)
        except Exception as error:
            where = f"xp.sparse.{type(self).__name__}.sum_duplicates"
            return routing.failed(error, where, type(self).sum_duplicates, (self, nse), {})
        summed = conversion.sum_duplicates(conversion.to_bcoo(self._value), count)
        return type(self)._wrap(conversion.to_bcsr(summed) if isinstance(self, BCSR) else summed)

    def sort_indices(self) -> Self:
        """The same array with its entries in lexicographic order of their indices."""
        if self._value.indices_sorted:
            return self
        if isinstance(self, BCOO):
            return type(self)._wrap(conversion.sort_indices(self._value))
        return type(self)._wrap(conversion.to_bcsr(conversion.to_bcoo(self._value).sort_indices()))

    def __repr__(self) -> str:
        try:
            return self._describe()
        except (AttributeError, TypeError, IndexError):  # leaves that are not arrays (jax.tree.map)
            base = self._base
            value = self._value if base is None else base  # (a view's transpose is not formed)
            leaves = jax.tree_util.tree_leaves(value, is_leaf=lambda x: x is None)
            shape = list(value.shape) if base is None else list(transposed.view_shape(base))
            view = "" if base is None else ", transposed"
            return f"{type(self).__name__}(shape={shape}{view}, leaves={leaves})"

    def _describe(self) -> str:
        extras = f", nse={self.nse}"
        if self.n_batch:
            extras += f", n_batch={self.n_batch}"
        if self.n_dense:
            extras += f", n_dense={self.n_dense}"
        traced = "traced " if isinstance(self.data._value, jax.core.Tracer) else ""
        return f"{type(self).__name__}({traced}{self.dtype}{list(self.shape)}{extras})"

    # --- installed by xp.sparse._array_methods; declared here for type checkers -------------
    # (Only type checkers see these definitions; at runtime ``install`` sets the attributes.)
    # Results: an element-wise operator gives a sparse array where the result's zeros are
    # structural (``A * x``, ``A * 2``, ``-A``), else a dense one (``A + x``, ``~A``); a product
    # with a dense operand is dense, of two sparse ones sparse (dense when 0-d). Sparse arrays are
    # immutable: ``A *= 2`` rebinds ``A`` to ``A * 2``.

    if TYPE_CHECKING:

        def __getitem__(self, key: _SparseIndex, /) -> SparseArray | Array: ...
        @property
        def T(self) -> SparseArray: ...
        @property
        def mT(self) -> SparseArray: ...
        def __add__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __radd__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __sub__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rsub__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __mul__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rmul__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __truediv__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rtruediv__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __floordiv__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rfloordiv__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __mod__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rmod__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __pow__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rpow__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __and__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rand__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __or__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __ror__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __xor__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rxor__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __lshift__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rlshift__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rshift__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rrshift__(self, other: _Operand, /) -> SparseArray | Array: ...
        @overload
        def __matmul__(self, other: ArrayLike, /) -> Array: ...
        @overload
        def __matmul__(self, other: SparseArray, /) -> SparseArray | Array: ...
        def __matmul__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __rmatmul__(self, other: ArrayLike, /) -> Array: ...
        def __lt__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __le__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __gt__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __ge__(self, other: _Operand, /) -> SparseArray | Array: ...
        def __eq__(self, other: _Operand, /) -> SparseArray | Array: ...  # type: ignore[override]
        def __ne__(self, other: _Operand, /) -> SparseArray | Array: ...  # type: ignore[override]
        def __abs__(self, /) -> Self: ...
        def __neg__(self, /) -> Self: ...
        def __pos__(self, /) -> Self: ...
        def __invert__(self, /) -> Array: ...  # ~0 is not 0: dense

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
        return self.data._value.__dlpack_device__()

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

    def __iter__(self) -> Iterator[SparseArray | Array]:
        if self.ndim == 0:
            raise TypeError(f"xp.sparse.{type(self).__name__}: iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __copy__(self) -> Self:
        base = self._base
        return type(self)._wrap(self._value) if base is None else self._view(base)

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self.__copy__()  # immutable: sharing the buffers is safe


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
        args: tuple[ArrayLike, ArrayLike],
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
        args: tuple[ArrayLike, ArrayLike, ArrayLike],
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


def _flatten(x: SparseArray) -> tuple[tuple[Any], bool]:
    # The JAX sparse array stays one child: JAX registers BCOO and BCSR with vmap as units
    # (batching.register_vmappable), which their leaves alone would not be. A transposed view is
    # its base and a static True (so jit, vmap and grad carry it without forming the transpose).
    base = x._base
    if base is None:
        return (x._value,), False
    return (base,), True


def _unflattener(cls: type[SparseArray]) -> Any:
    def unflatten(aux: bool, children: Any) -> Any:
        return cls._view(children[0]) if aux else cls._wrap(children[0])

    return unflatten


def _serialize_info(info: dict[str, Any]) -> bytes:
    return json.dumps({"shape": list(info["shape"]), **{k: bool(v) for k, v in info.items() if k != "shape"}}).encode()


def _deserialize_info(data: bytes) -> dict[str, Any]:
    info = json.loads(data)
    return {**info, "shape": tuple(info["shape"])}


for _cls in (BCOO, BCSR):
    jax.tree_util.register_pytree_node(_cls, _flatten, _unflattener(_cls))
    # So that jax.export serializes functions taking or returning xp sparse arrays: xp's types,
    # and JAX's sparse types inside them, which JAX itself does not register for serialization
    # (unless someone already did: then theirs is used).
    jax.export.register_pytree_node_serialization(
        _cls,
        serialized_name=f"xp.sparse.{_cls.__name__}",
        serialize_auxdata=lambda aux: b"T" if aux else b"",  # b"": not a view (as before views)
        deserialize_auxdata=lambda data: data == b"T",
    )
    with contextlib.suppress(ValueError):  # ValueError: registered already
        jax.export.register_pytree_node_serialization(
            _cls._jax_type,
            serialized_name=f"jax.experimental.sparse.{_cls.__name__}",
            serialize_auxdata=_serialize_info,
            deserialize_auxdata=_deserialize_info,
        )

routing.register_sparse_types(SparseArray)
