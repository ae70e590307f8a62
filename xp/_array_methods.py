"""The methods of ``xp.Array`` that need the rest of the namespace, installed from above.

``xp._array`` defines the array object on the leaf modules alone; indexing, the transposes, the
device transfer and the operators need the boundary, indexing, layouts and the element-wise
functions, which themselves build on ``Array``. ``xp/__init__.py`` calls :func:`install` once
every module is imported (as ``jax/_src/numpy/array_methods.py`` does for ``jax.Array``), so no
module imports one that imports it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from xp import _array, _devices, _indexing, _indexing_advanced, _operators, _views
from xp import _boundary as boundary
from xp import _resharding as resharding
from xp import _routing as routing
from xp._array import Array, link, wrap
from xp._errors import fail


def _getitem(self: Array, key: Any, /) -> Array:
    if type(key) is Array:  # x[i] with an index array, the usual advanced index: see in_bounds
        value, index = self._value, key._value
        try:
            shape = value.aval.shape  # (see Array.shape)
            if shape and _indexing_advanced.in_bounds(index, shape[0]):
                return wrap(_indexing_advanced.get_by_array(value, index))
        except Exception:  # mixed devices, a refusal over Explicit mesh axes, no value: the general path decides
            pass
    try:
        index = _indexing.parse(key, self.shape)
        try:
            result = wrap(index.get(self._value))
        except Exception as e:  # JAX's ShardingTypeError (not exported): xp's rule decides
            sharding = resharding.explicit_sharding(self._value)
            if not resharding.is_refusal(e) or sharding is None:
                raise
            result = wrap(resharding.on_mesh_of(index.get(resharding.replicated(self._value, sharding)), self._value))
    except Exception as error:
        return routing.failed(error, "xp.Array.__getitem__", _getitem, (self, key), {})
    if type(index) is not _indexing.AdvancedIndex:  # a view
        link(self, result, index)
    return result


def _setitem(self: Array, key: Any, value: Any, /) -> None:
    where = "xp.Array.__setitem__"
    try:
        index = _indexing.parse(key, self.shape, where)
        update = boundary.update_value(value, self.dtype, "value")
        if (
            type(index) is not _indexing.AdvancedIndex
            and (update_shape := update.shape)  # (a scalar broadcasts to any shape)
            and update_shape != index.shape
            and not _broadcastable(update_shape, index.shape)
        ):
            fail(
                ValueError,
                f"value of shape {tuple(update_shape)} cannot be broadcast to the indexed shape {index.shape}",
            )
        try:
            new_value = index.set(self._value, update)
        except Exception as e:  # JAX's ShardingTypeError (not exported): xp's rule decides
            sharding = resharding.explicit_sharding(self._value)
            if not resharding.is_refusal(e) or sharding is None:
                raise
            whole = resharding.replicated(self._value, sharding)
            update = resharding.replicated(update, sharding)  # on the mesh, as the operand now is
            new_value = resharding.on_mesh_of(index.set(whole, update), self._value)
    except Exception as error:
        return routing.failed(error, where, _setitem, (self, key, value), {})
    self._assign(new_value)


def _broadcastable(source: tuple[int, ...], target: tuple[int, ...]) -> bool:
    if len(source) > len(target):
        return False
    return all(s == 1 or s == t for s, t in zip(reversed(source), reversed(target), strict=False))


def _transpose(self: Array) -> Array:
    """The transpose of a 2-d array (a view)."""
    if self.ndim != 2:
        raise ValueError(f"xp.Array.T: the array must be 2-dimensional, got {self.ndim} dimensions (use .mT)")
    return _views.transposed(self, (1, 0))


def _matrix_transpose(self: Array) -> Array:
    """The transpose of the last two axes (a view)."""
    if self.ndim < 2:
        raise ValueError(f"xp.Array.mT: the array must have at least 2 dimensions, got {self.ndim}")
    n = self.ndim
    return _views.transposed(self, (*range(n - 2), n - 1, n - 2))


def _to_device(self: Array, device: Any, /, *, stream: int | Any | None = None) -> Array:
    """The same values on ``device`` (a ``jax.Device`` or a ``jax.sharding.Sharding``)."""
    if stream is not None:
        raise ValueError("xp.Array.to_device: stream must be None (JAX orders transfers itself)")
    try:
        return wrap(_devices.place(self._value, boundary.device(device)))
    except Exception as error:
        return routing.failed(error, "xp.Array.to_device", _to_device, (self, device), {"stream": stream})


def install(namespace: ModuleType) -> None:
    """Complete ``xp.Array`` (and make ``namespace`` what ``__array_namespace__`` returns)."""
    for name, method in (("__getitem__", _getitem), ("__setitem__", _setitem), ("to_device", _to_device)):
        method.__name__ = name
        method.__qualname__ = f"Array.{name}"
        setattr(Array, name, method)
    Array.T = property(_transpose)  # type: ignore[assignment]
    Array.mT = property(_matrix_transpose)  # type: ignore[assignment]
    _operators.install(Array)
    _array.set_namespace(namespace)
