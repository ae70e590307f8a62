"""Layouts: how the value of a view derives from the value of the array it views.

``reshape`` (unless ``copy=True``), ``expand_dims``, ``squeeze``, ``permute_dims``, ``moveaxis``,
``flip``, ``unstack``, ``matrix_transpose`` and the transposes ``x.T`` and ``x.mT`` return
views with NumPy's semantics: writing into the result writes into the input, and writing into
the input refreshes the result (``xp._array`` links them; basic indexing's layout is
``xp._indexing.BasicIndex``). A layout has ``get(base_value)`` and ``set(base_value, update)``
(``base_value`` with the view's whole new value written in); each is one jitted kernel with
static shapes and axes, so the link works eagerly and under ``jax.jit`` and ``jax.vmap`` alike.
"""

from __future__ import annotations

import functools
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from xp._array import Array, Layout, view, wrap
from xp._jit import kernel


class _Identity:
    """A view with the base's shape and elements (``reshape`` to the same shape, ...)."""

    __slots__ = ()

    def get(self, base_value: Any) -> Any:
        return base_value

    def set(self, base_value: Any, update: Any) -> Any:
        return update


IDENTITY = _Identity()


class Reshaped:
    """``reshape`` (also ``expand_dims`` and ``squeeze``): the base's elements in row-major order."""

    __slots__ = ("shape",)

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def get(self, base_value: Any) -> Any:
        return _reshape(base_value, self.shape)

    def set(self, base_value: Any, update: Any) -> Any:
        return _reshape(update, tuple(base_value.shape))


class Permuted:
    """``permute_dims``, ``moveaxis``, ``.T``, ``.mT``: the base's axes in the order ``axes``."""

    __slots__ = ("axes", "inverse")

    def __init__(self, axes: tuple[int, ...]) -> None:
        self.axes = axes
        self.inverse = tuple(int(i) for i in np.argsort(axes))

    def get(self, base_value: Any) -> Any:
        return _transpose(base_value, self.axes)

    def set(self, base_value: Any, update: Any) -> Any:
        return _transpose(update, self.inverse)


class Flipped:
    """``flip``: the base reversed along ``axes`` (which is its own inverse)."""

    __slots__ = ("axes",)

    def __init__(self, axes: tuple[int, ...]) -> None:
        self.axes = axes

    def get(self, base_value: Any) -> Any:
        return _flip(base_value, self.axes)

    def set(self, base_value: Any, update: Any) -> Any:
        return _flip(update, self.axes)


class Unstacked:
    """One result of ``unstack``: index ``index`` along ``axis`` (the index is data: one kernel for all)."""

    __slots__ = ("axis", "index")

    def __init__(self, axis: int, index: int) -> None:
        self.axis = axis
        self.index = index

    def get(self, base_value: Any) -> Any:
        return _take(base_value, self.index, self.axis)

    def set(self, base_value: Any, update: Any) -> Any:
        return _put(base_value, update, self.index, self.axis)


class _MatrixTranspose:
    """``matrix_transpose``: the last two axes swapped (its own inverse)."""

    __slots__ = ()

    def get(self, base_value: Any) -> Any:
        return _matrix_transpose(base_value)

    def set(self, base_value: Any, update: Any) -> Any:
        return _matrix_transpose(update)


MATRIX_TRANSPOSE = _MatrixTranspose()

_PERMUTATIONS: dict[tuple[int, ...], Permuted | _Identity] = {}


def permutation(axes: tuple[int, ...]) -> Permuted | _Identity:
    """The layout of ``permute_dims(x, axes)`` (cached: generic code transposes the same ways)."""
    try:
        return _PERMUTATIONS[axes]
    except KeyError:
        pass
    layout = IDENTITY if axes == tuple(range(len(axes))) else Permuted(axes)
    if len(_PERMUTATIONS) >= 1024:
        _PERMUTATIONS.clear()
    _PERMUTATIONS[axes] = layout
    return layout


def view_or_copy(x: Any, value: Any, layout: Layout) -> Array:
    """A view of ``x`` through ``layout`` if ``x`` is an xp array; otherwise (a NumPy or JAX
    array, whose ``value`` is given) a new array."""
    if type(x) is Array:
        return view(x, layout)
    return wrap(layout.get(value))


def transposed(x: Array, axes: tuple[int, ...]) -> Array:
    """``x`` with its axes permuted to ``axes`` (normalized, a permutation), as a view of ``x``."""
    return view(x, permutation(axes))


# --- kernels --------------------------------------------------------------------------------


@functools.partial(kernel, static_argnames="shape")
def _reshape(x: Any, shape: tuple[int, ...]) -> Any:
    return lax.reshape(x, shape)


@functools.partial(kernel, static_argnames="axes")
def _transpose(x: Any, axes: tuple[int, ...]) -> Any:
    return lax.transpose(x, axes)


@functools.partial(kernel, static_argnames="axes")
def _flip(x: Any, axes: tuple[int, ...]) -> Any:
    return lax.rev(x, axes)


@functools.partial(kernel, static_argnames="axis")
def _take(x: Any, index: Any, axis: int) -> Any:
    return lax.dynamic_index_in_dim(x, index, axis, keepdims=False)


@functools.partial(kernel, static_argnames="axis")
def _put(x: Any, update: Any, index: Any, axis: int) -> Any:
    return lax.dynamic_update_index_in_dim(x, update.astype(x.dtype), index, axis)


@kernel
def _matrix_transpose(x: Any) -> Any:
    return jnp.swapaxes(x, -1, -2)
