"""Manipulation Functions (the standard's chapter of that name). Stub: being written."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from xp import _boundary as b
from xp._array import Array, wrap
from xp._typing import ArrayLike, DTypeLike


@b.api
def broadcast_arrays(*arrays: ArrayLike) -> tuple[Array, ...]:
    raise NotImplementedError("xp.broadcast_arrays is not implemented yet")


@b.api
def broadcast_shapes(*shapes: tuple[int | None, ...]) -> tuple[int | None, ...]:
    raise NotImplementedError("xp.broadcast_shapes is not implemented yet")


@b.api
def broadcast_to(x: ArrayLike, /, shape: tuple[int, ...]) -> Array:
    raise NotImplementedError("xp.broadcast_to is not implemented yet")


@b.api
def concat(arrays: tuple[ArrayLike, ...] | list[ArrayLike], /, *, axis: int | None = 0) -> Array:
    raise NotImplementedError("xp.concat is not implemented yet")


@b.api
def expand_dims(x: ArrayLike, /, axis: int | tuple[int, ...]) -> Array:
    raise NotImplementedError("xp.expand_dims is not implemented yet")


@b.api
def flip(x: ArrayLike, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    raise NotImplementedError("xp.flip is not implemented yet")


@b.api
def moveaxis(x: ArrayLike, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    raise NotImplementedError("xp.moveaxis is not implemented yet")


@b.api
def permute_dims(x: ArrayLike, /, axes: tuple[int, ...]) -> Array:
    raise NotImplementedError("xp.permute_dims is not implemented yet")


@b.api
def repeat(x: ArrayLike, repeats: int | ArrayLike, /, *, axis: int | None = None) -> Array:
    raise NotImplementedError("xp.repeat is not implemented yet")


@b.api
def reshape(x: ArrayLike, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Array:
    value = b.array(x, "x")
    target = tuple(b.integer(n, "shape") for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    return wrap(_reshape(value, shape=target))


@functools.partial(jax.jit, inline=True, static_argnames="shape")
def _reshape(x: Any, shape: tuple[int, ...]) -> Any:
    return jnp.reshape(x, shape)


@b.api
def roll(x: ArrayLike, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Array:
    raise NotImplementedError("xp.roll is not implemented yet")


@b.api
def squeeze(x: ArrayLike, /, axis: int | tuple[int, ...]) -> Array:
    raise NotImplementedError("xp.squeeze is not implemented yet")


@b.api
def stack(arrays: tuple[ArrayLike, ...] | list[ArrayLike], /, *, axis: int = 0) -> Array:
    raise NotImplementedError("xp.stack is not implemented yet")


@b.api
def tile(x: ArrayLike, repetitions: tuple[int, ...], /) -> Array:
    raise NotImplementedError("xp.tile is not implemented yet")


@b.api
def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Array, ...]:
    raise NotImplementedError("xp.unstack is not implemented yet")
