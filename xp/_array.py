"""The array object: ``xp.Array``, a mutable wrapper around a ``jax.Array`` or a tracer.

Why a wrapper (see DESIGN.md): array-api-compat routes raw JAX arrays to ``jax.numpy`` by
class, so only a type of xp's own reaches xp; and generic code writes into arrays
(``x[mask] = 0``, ``x += 1``), which an immutable ``jax.Array`` cannot take.

- The wrapper is a JAX pytree with one leaf, so ``jax.jit``, ``grad``, ``vmap`` and
  ``jax.tree`` functions take and return xp arrays; under a trace it holds a tracer.
- Mutation rebinds: ``x[k] = v`` and ``x += y`` compute a new value functionally and store it in
  the same wrapper. The wrapped value is always a strongly typed array of an xp dtype.
- Views, with NumPy's semantics: ``x[basic_index]``, ``reshape``, ``permute_dims`` and the
  other layout functions return arrays linked to ``x`` by a *layout* (an object with
  ``get(base_value)`` and ``set(base_value, update)``, see :func:`view`). Writing into a view
  writes into ``x``; writing into ``x`` refreshes its live views; so no reader ever sees stale
  data. (Under the hood both are functional updates of immutable JAX arrays.)
- ``x.jax`` is the wrapped ``jax.Array``, zero-copy; ``xp.asarray(jax_array)`` is the way in.

This module is the foundation: it imports only the leaf modules (dtypes, devices, errors).
What needs the rest of the namespace is installed onto ``Array`` from above, when ``xp`` is
imported (``xp._array_methods``): indexing, the transposes ``T`` and ``mT``, ``to_device``, the
operators (each the xp function of the same meaning), and the namespace that
``__array_namespace__`` returns.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator
from types import EllipsisType, ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import jax
import jax.core
import jax.export
import jax.numpy as jnp
import numpy as np
from jaxlib import xla_client

from xp import _devices

API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

if TYPE_CHECKING:  # xp._typing imports this module; only type checkers read it from here
    from xp._typing import ArrayLike, Device

# What ``x[key]`` takes (``xp._indexing.parse``): integers, slices, ``...``, ``None``, integer or
# boolean arrays, or a tuple of them.
IndexItem: TypeAlias = "int | np.integer[Any] | np.bool_ | slice | EllipsisType | Array | jax.Array | np.ndarray | None"
Index: TypeAlias = "IndexItem | tuple[IndexItem, ...]"

_namespace: ModuleType | None = None


def set_namespace(module: ModuleType) -> None:
    """Called by ``xp/__init__.py`` once the namespace is complete."""
    global _namespace
    _namespace = module


def namespace(api_version: str | None, where: str) -> ModuleType:
    """``xp``, the namespace of xp's arrays (dense and sparse), for ``__array_namespace__``."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(f"{where}: api_version must be None or one of {', '.join(API_VERSIONS)}, got {api_version!r}")
    assert _namespace is not None, "xp is not fully imported"
    return _namespace


_NO_VALUE: Any = object()  # Array's constructor called without a value: not by JAX


class Array:
    """An n-dimensional array of the array API standard, running on JAX.

    Create arrays with ``xp.asarray``, ``xp.zeros`` and the other creation functions; the
    constructor is not public.
    """

    __slots__ = ("__weakref__", "_base", "_value", "_views")
    __array_priority__ = 100  # NumPy defers binary operators to ours
    __hash__ = None  # type: ignore[assignment]  # mutable, like NumPy arrays

    _value: Any  # a jax.Array or a tracer, strongly typed, of an xp dtype
    # unset, or None once the array is written (see _assign), where there is none:
    _base: tuple[Array, Any] | None  # for a view: the array it views and the BasicIndex into it
    _views: list[weakref.ref[Array]] | None  # the live views of this array

    def __init__(self, *args: Any, _value: Any = _NO_VALUE) -> None:
        # Only JAX's pytree machinery calls this, as Array(_value=leaf), to rebuild an array (see
        # the registration below; xp makes its arrays with wrap). An __init__ over object.__new__,
        # not a __new__ of xp's own, which cost about 1 µs more per result of a jitted call.
        if args or _value is _NO_VALUE:
            raise TypeError("xp.Array cannot be constructed directly; use xp.asarray (or another creation function)")
        if type(_value) is not JaxArrayImpl and isinstance(_value, ARRAY_TYPES):
            # An xp array as the leaf: ``jax.tree.map(xp.zeros_like, params)`` maps each leaf to one
            if type(_value) is not Array:
                raise TypeError(
                    f"a pytree function put a {type(_value).__name__} where an xp.Array's value goes (a "
                    "function mapped over xp arrays returned a sparse array); map it over the arrays "
                    "themselves: jax.tree.map(f, tree, is_leaf=lambda x: isinstance(x, xp.Array))"
                )
            _value = _value._value  # a new array of its value, not a wrapper around a wrapper
        self._value = _value

    # --- the namespace and attributes ---------------------------------------------------------

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        return namespace(api_version, "xp.Array.__array_namespace__")

    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype, equal to (and hashing as) the namespace's dtype object (``xp.float32``);
        JAX's machinery reads ``x.dtype`` and takes NumPy dtypes only (see ``xp/_dtypes.py``)."""
        # The dtype and shape are read from the value's abstract value, an attribute of jax arrays
        # and tracers alike: a jax array's own ``shape`` and ``dtype`` are Python properties over
        # it (about three times slower a read), a tracer's go through its __getattr__.
        # A ``jax.ShapeDtypeStruct`` (the leaves jax.eval_shape returns, an export's argument spec)
        # has none and holds them itself.
        try:
            return self._value.aval.dtype
        except AttributeError:
            return self._value.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        try:
            return self._value.aval.shape  # (see dtype)
        except AttributeError:
            return tuple(self._value.shape)

    @property
    def ndim(self) -> int:
        try:
            return len(self._value.aval.shape)  # (see dtype)
        except AttributeError:
            return len(self._value.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def device(self) -> Device:
        return _devices.device_of(self._value)

    def __jax_array__(self) -> jax.Array:
        """JAX's protocol: ``jax.numpy``, ``jax.scipy``, ``jax.nn``, ``jax.random`` take xp arrays."""
        return self._value

    @property
    def jax(self) -> jax.Array:
        """The wrapped ``jax.Array`` (a tracer under a transformation), without a copy."""
        return self._value

    def block_until_ready(self) -> Array:
        """Wait until the array's value is computed (JAX dispatches asynchronously)."""
        self._value.block_until_ready()
        return self

    # --- conversions ----------------------------------------------------------------------------

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self._value.__array__(dtype=dtype, copy=copy)

    def __dlpack__(
        self,
        /,
        *,
        stream: int | Any | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[Any, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        if max_version is not None and tuple(max_version) < (0, 5):
            # JAX refuses versions below its oldest; the standard lets a producer return another
            # version instead (the consumer must check the version it gets).
            max_version = None
        self._one_device("__dlpack__")
        platform = self._platform()
        if platform not in DLPACK_PLATFORMS:
            return _export_through_host(self._value, platform, stream, max_version, dl_device, copy)
        return self._value.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self, /) -> tuple[Any, int]:
        self._one_device("__dlpack_device__")
        if self._platform() not in DLPACK_PLATFORMS:
            return (DLPACK_CPU, 0)  # where its export lives: see _export_through_host
        return self._value.__dlpack_device__()

    def _platform(self) -> str:
        """The platform of the array's device (a tracer has none: JAX's own export then refuses it)."""
        if isinstance(self._value, jax.core.Tracer) or not isinstance(self._value, jax.Array):
            return "cpu"
        return next(iter(self._value.devices())).platform

    def _one_device(self, method: str) -> None:
        """DLPack exchanges one buffer on one device: a sharded array has several."""
        devices = getattr(getattr(self._value, "sharding", None), "device_set", ())
        if len(devices) > 1:
            raise BufferError(
                f"xp.Array.{method}: the array is spread over {len(devices)} devices ({self.device}); DLPack "
                "exchanges one device's buffer: gather it onto one device first (x.to_device(jax.devices()[0]))"
            )

    def __bool__(self, /) -> bool:
        return self._scalar(bool)

    def __int__(self, /) -> int:
        if self.dtype.kind == "c":
            raise TypeError("xp.Array.__int__: cannot convert a complex array to int")
        return self._scalar(int)

    def __float__(self, /) -> float:
        if self.dtype.kind == "c":
            raise TypeError("xp.Array.__float__: cannot convert a complex array to float (use xp.real first)")
        return self._scalar(float)

    def __complex__(self, /) -> complex:
        result: complex = self._scalar(complex)
        if result.real != result.real and self.dtype.kind == "f":
            return complex(result.real, result.real)  # "If self is NaN, the result is NaN + NaN j"
        return result

    def __index__(self, /) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"xp.Array.__index__: only integer arrays can be used as an index, got {self.dtype}")
        return self._scalar(int)

    def _scalar(self, convert: type) -> Any:
        """A Python scalar of a one-element array (a TypeError subclass under a trace)."""
        value = self._value
        if not isinstance(value, jax.core.Tracer) and value.size != 1:
            raise TypeError(
                f"xp.Array: only arrays of one element convert to a Python {convert.__name__}, got shape {self.shape}"
            )
        return convert(value)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("xp.Array: len() of a 0-d array")
        return int(self._value.shape[0])

    def __iter__(self) -> Iterator[Array]:
        if self.ndim == 0:
            raise TypeError("xp.Array: iteration over a 0-d array")
        for i in range(self._value.shape[0]):
            yield self[i]

    def __repr__(self) -> str:
        value = self._value
        if isinstance(value, jax.core.Tracer):
            return f"Array(traced {value.aval.str_short()})"
        return repr(value)  # jax's repr already reads "Array(..., dtype=...)"

    def __str__(self) -> str:
        return str(self._value)

    def __format__(self, spec: str) -> str:
        return format(self._value, spec)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_from_numpy, (np.asarray(self._value),))

    def __copy__(self) -> Array:
        return wrap(self._value)

    def __deepcopy__(self, memo: dict[int, Any]) -> Array:
        return wrap(self._value)

    # --- mutation -------------------------------------------------------------------------------

    def _assign(self, value: Any, _origin: Array | None = None) -> None:
        """Rebind the value (same shape and dtype); update the viewed array and live views."""
        self._value = value
        try:
            base, views = self._base, self._views
        except AttributeError:
            # An array written for the first time: its unset slots are set to None, so that the
            # next writes read them without an exception (a missing slot costs 0.2 µs a read,
            # on a write of about 8 µs). None means no base, no views, as an unset slot does.
            base, views = getattr(self, "_base", None), getattr(self, "_views", None)
            if base is None:
                self._base = None
            if views is None:
                self._views = None
        if base is not None and base[0] is not _origin:
            viewed, index = base
            viewed._assign(index.set(viewed._value, value), _origin=self)
        if views:
            self._refresh_views(skip=_origin)

    def _refresh_views(self, skip: Array | None) -> None:
        views = getattr(self, "_views", None)
        if not views:
            return
        alive = []
        for ref in views:
            view = ref()
            if view is None:
                continue
            alive.append(ref)
            if view is not skip:
                view._value = view._base[1].get(self._value)
                view._refresh_views(skip=None)
        self._views = alive

    # --- installed by xp._array_methods; declared here for type checkers ------------------------
    # (Only type checkers see these definitions: at runtime the class has no such attributes
    # until ``xp._array_methods.install`` sets them, so nothing here shadows them.) The operands
    # are ``ArrayLike``; an operator with a sparse operand is the sparse array's reflected one.

    if TYPE_CHECKING:

        def __getitem__(self, key: Index, /) -> Array: ...
        def __setitem__(self, key: Index, value: ArrayLike, /) -> None: ...
        def to_device(self, device: Device, /, *, stream: int | Any | None = None) -> Array: ...
        @property
        def T(self) -> Array: ...
        @property
        def mT(self) -> Array: ...
        def __add__(self, other: ArrayLike, /) -> Array: ...
        def __sub__(self, other: ArrayLike, /) -> Array: ...
        def __mul__(self, other: ArrayLike, /) -> Array: ...
        def __truediv__(self, other: ArrayLike, /) -> Array: ...
        def __floordiv__(self, other: ArrayLike, /) -> Array: ...
        def __mod__(self, other: ArrayLike, /) -> Array: ...
        def __pow__(self, other: ArrayLike, /) -> Array: ...
        def __matmul__(self, other: ArrayLike, /) -> Array: ...
        def __and__(self, other: ArrayLike, /) -> Array: ...
        def __or__(self, other: ArrayLike, /) -> Array: ...
        def __xor__(self, other: ArrayLike, /) -> Array: ...
        def __lshift__(self, other: ArrayLike, /) -> Array: ...
        def __rshift__(self, other: ArrayLike, /) -> Array: ...
        def __radd__(self, other: ArrayLike, /) -> Array: ...
        def __rsub__(self, other: ArrayLike, /) -> Array: ...
        def __rmul__(self, other: ArrayLike, /) -> Array: ...
        def __rtruediv__(self, other: ArrayLike, /) -> Array: ...
        def __rfloordiv__(self, other: ArrayLike, /) -> Array: ...
        def __rmod__(self, other: ArrayLike, /) -> Array: ...
        def __rpow__(self, other: ArrayLike, /) -> Array: ...
        def __rmatmul__(self, other: ArrayLike, /) -> Array: ...
        def __rand__(self, other: ArrayLike, /) -> Array: ...
        def __ror__(self, other: ArrayLike, /) -> Array: ...
        def __rxor__(self, other: ArrayLike, /) -> Array: ...
        def __rlshift__(self, other: ArrayLike, /) -> Array: ...
        def __rrshift__(self, other: ArrayLike, /) -> Array: ...
        def __iadd__(self, other: ArrayLike, /) -> Array: ...
        def __isub__(self, other: ArrayLike, /) -> Array: ...
        def __imul__(self, other: ArrayLike, /) -> Array: ...
        def __itruediv__(self, other: ArrayLike, /) -> Array: ...
        def __ifloordiv__(self, other: ArrayLike, /) -> Array: ...
        def __imod__(self, other: ArrayLike, /) -> Array: ...
        def __ipow__(self, other: ArrayLike, /) -> Array: ...
        def __imatmul__(self, other: ArrayLike, /) -> Array: ...
        def __iand__(self, other: ArrayLike, /) -> Array: ...
        def __ior__(self, other: ArrayLike, /) -> Array: ...
        def __ixor__(self, other: ArrayLike, /) -> Array: ...
        def __ilshift__(self, other: ArrayLike, /) -> Array: ...
        def __irshift__(self, other: ArrayLike, /) -> Array: ...
        def __lt__(self, other: ArrayLike, /) -> Array: ...
        def __le__(self, other: ArrayLike, /) -> Array: ...
        def __gt__(self, other: ArrayLike, /) -> Array: ...
        def __ge__(self, other: ArrayLike, /) -> Array: ...
        def __eq__(self, other: ArrayLike, /) -> Array: ...  # type: ignore[override]  # element-wise
        def __ne__(self, other: ArrayLike, /) -> Array: ...  # type: ignore[override]
        def __abs__(self, /) -> Array: ...
        def __neg__(self, /) -> Array: ...
        def __pos__(self, /) -> Array: ...
        def __invert__(self, /) -> Array: ...


_new = object.__new__

# The class of concrete jax arrays (not tracers), for exact type checks on hot paths; named
# without computing anything at import.
JaxArrayImpl = xla_client.ArrayImpl


def wrap(value: Any) -> Array:
    """An Array around ``value`` (a strongly typed jax array or tracer of an xp dtype), unchecked."""
    result = _new(Array)
    result._value = value
    return result


class Layout(Protocol):
    """How a view's value derives from the value of the array it views."""

    def get(self, base_value: Any, /) -> Any: ...

    def set(self, base_value: Any, update: Any, /) -> Any:
        """``base_value`` with the view's whole new value ``update`` written in."""
        ...


def view(base: Array, layout: Layout) -> Array:
    """A view of ``base`` through ``layout``: writes go through to ``base`` and back."""
    result = wrap(layout.get(base._value))
    link(base, result, layout)
    return result


def link(base: Array, view: Array, layout: Layout) -> None:
    """Make ``view`` (whose value is already ``layout.get(base._value)``) a view of ``base``."""
    view._base = (base, layout)
    ref = weakref.ref(view)
    views = getattr(base, "_views", None)  # (unset, or None once written: see Array._assign)
    if views is None:
        base._views = [ref]
        return
    views.append(ref)
    if len(views) % 64 == 0:  # drop dead views now and then, so a base that is never written stays small
        views[:] = [r for r in views if r() is not None]


def _from_numpy(value: np.ndarray) -> Array:
    return wrap(jnp.asarray(value))


ARRAY_TYPES: tuple[type, ...] = (Array,)
"""xp's array types: Array, and the sparse ones once ``xp.sparse`` is imported."""


def add_array_types(*types: type) -> None:
    """Add the sparse array types to :data:`ARRAY_TYPES` (``xp._routing.register_sparse_types``)."""
    global ARRAY_TYPES
    ARRAY_TYPES = (*ARRAY_TYPES, *(t for t in types if t not in ARRAY_TYPES))


# A pytree node of one child, its value: a dataclass node, whose child JAX's C++ reads without
# calling Python, and which it rebuilds by calling Array(_value=...). JAX's other kind, a node with
# Python functions to flatten and rebuild it, costs less per result of a jitted call but more per
# argument, so more wherever a call takes more arrays than it returns, as a prediction does
# (bench/RESULTS.md, "Jitted calls: generic functions, per call", the table of pytree nodes:
# bench/overhead.py measures both kinds in every run).
jax.tree_util.register_dataclass(Array, data_fields=["_value"], meta_fields=[])
# So that a function exported with jax.export, whose inputs or outputs are xp arrays, serializes.
jax.export.register_pytree_node_serialization(
    Array,
    serialized_name="xp.Array",
    serialize_auxdata=lambda _: b"",
    deserialize_auxdata=lambda _: (),  # a dataclass node's metadata: its (no) meta fields
)


# --- DLPack on devices it has no type for -------------------------------------------------------

DLPACK_PLATFORMS = frozenset({"cpu", "gpu", "cuda", "rocm"})
"""The platforms whose memory DLPack can describe (JAX exports these itself)."""

DLPACK_CPU = 1  # DLPack's kDLCPU


def _export_through_host(
    value: Any, platform: str, stream: Any, max_version: tuple[int, int] | None, dl_device: Any, copy: bool | None
) -> Any:
    """A DLPack export of an array on a device DLPack has no type for (a TPU): a copy in host memory.

    The standard asks every library to export to ``kDLCPU`` (with a copy where one is needed, and a
    BufferError where one is needed but ``copy=False``), and has no device type for TPU memory; so
    such an array reports ``(kDLCPU, 0)`` from ``__dlpack_device__`` (where its export lives) and
    exports a host copy, flagged as copied, unless the consumer forbids the copy.
    """
    if dl_device is not None and int(dl_device[0]) != DLPACK_CPU:
        raise BufferError(
            f"xp.Array.__dlpack__: dl_device={tuple(dl_device)!r}, but an array on {platform.upper()} exports "
            f"to the CPU only (dl_device=({DLPACK_CPU}, 0), kDLCPU): DLPack has no device type for its memory"
        )
    if copy is False:
        raise BufferError(
            f"xp.Array.__dlpack__: copy=False, but the array is on {platform.upper()}, whose memory DLPack "
            "cannot describe: it exports as a copy in host memory (copy=None or copy=True)"
        )
    if stream is not None:
        raise BufferError(f"xp.Array.__dlpack__: stream={stream!r}: an export to the CPU takes no stream (None)")
    host = np.asarray(value)  # the device-to-host transfer
    # copy=True: NumPy sets DLPack's "is copied" flag, and exports a writable buffer (JAX's host
    # view is read-only, which a DLPack 0.x capsule cannot signal)
    return host.__dlpack__(max_version=max_version, copy=True)
