"""Standard calls on arrays sharded over Explicit mesh axes, where JAX asks for a choice.

Over Explicit mesh axes (the default of ``jax.make_mesh``) a sharding is part of an array's type,
and JAX refuses, with a ``ShardingTypeError``, operations whose result sharding it will not infer:
a contraction over a sharded axis, a sort or scan along one, a dynamic slice or update of one, a
gather, some reshapes, factorizations of sharded matrices. JAX's answer is an ``out_sharding``
argument; the standard has none, so generic code cannot choose. xp chooses, by one rule
(docs/sharding.md):

    the call is computed on its operands replicated over their mesh, and each result is then
    sharded like the first sharded operand where it has that operand's number of dimensions and
    the mesh axes divide its sizes; otherwise it stays replicated.

The rule is correct for every function (replication changes no value), it is what JAX computes
anyway for these operations once told where the result goes, and it costs the gather only where
JAX refused: calls JAX can shard keep JAX's placement, as they never reach this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.core
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from xp._array import Array, wrap
from xp._errors import mismatched_devices


def is_refusal(error: BaseException) -> bool:
    """Whether ``error`` is JAX's refusal to infer a sharding over Explicit axes. (Its class,
    ``ShardingTypeError``, is not exported by JAX; its name is how it is recognised. ``vmap``, which
    some jax.numpy functions use inside, refuses with a ValueError of its own.)"""
    if type(error).__name__ == "ShardingTypeError":
        return True
    return isinstance(error, ValueError) and "cannot be sharded along the mesh axis" in str(error)


def recover(
    error: Exception, where: str, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """What a public function does when JAX raised ``error`` for placement reasons: the call
    computed by the rule (a refusal over Explicit axes), or the error in xp's words (arrays on
    different devices); any other error is raised unchanged."""
    if isinstance(error, ValueError):
        mismatch = mismatched_devices(error, where, (*args, *kwargs.values()))
        if mismatch is not None:
            raise mismatch from None
    if is_refusal(error):
        result = retry(call, args, kwargs)
        if result is not NotImplemented:
            return result
    raise error


def explicit_sharding(value: Any) -> NamedSharding | None:
    """The sharding of a jax array or tracer when it names Explicit mesh axes, else None."""
    # a concrete array's sharding has the concrete mesh; inside a trace the type's has an
    # abstract one, which stands for it in the same computation
    sharding = jax.typeof(value).sharding if isinstance(value, jax.core.Tracer) else getattr(value, "sharding", None)
    if not isinstance(sharding, NamedSharding):
        return None
    explicit = {
        n for n, t in zip(sharding.mesh.axis_names, sharding.mesh.axis_types, strict=True) if t == AxisType.Explicit
    }
    named = {
        n for entry in sharding.spec if entry is not None for n in (entry if isinstance(entry, tuple) else (entry,))
    }
    return sharding if named & explicit else None


def replicated(value: Any, sharding: NamedSharding) -> Any:
    """``value`` replicated over the mesh of ``sharding`` (a copy on each of its devices)."""
    return jax.device_put(value, NamedSharding(sharding.mesh, PartitionSpec()))


def like(value: Any, template: NamedSharding, ndim: int) -> Any:
    """``value`` sharded as ``template`` (the sharding of an operand of ``ndim`` dimensions) where it
    has as many dimensions and the mesh axes divide its sizes (the rule of the module), else as it is."""
    if value.ndim != ndim or value.ndim == 0:
        return value
    spec = tuple(template.spec) + (None,) * (value.ndim - len(template.spec))
    sizes = dict(template.mesh.shape)
    for size, entry in zip(value.shape, spec, strict=True):
        parts = 1
        for name in () if entry is None else entry if isinstance(entry, tuple) else (entry,):
            parts *= sizes[name]
        if size % parts:
            return value
    return jax.device_put(value, template)


def retry(call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``call(*args, **kwargs)`` again on replicated operands, its results sharded by the rule;
    ``NotImplemented`` when no operand is sharded over Explicit axes (the refusal stands)."""
    template, ndim = None, 0
    for leaf in jax.tree.leaves((args, kwargs), is_leaf=_is_array):
        if type(leaf) is Array:
            template, ndim = explicit_sharding(leaf._value), leaf._value.ndim
            if template is not None:
                break
    if template is None:
        return NotImplemented

    def gather(x: Any) -> Any:
        if type(x) is Array and explicit_sharding(x._value) is not None:
            return wrap(replicated(x._value, template))
        return x

    out = call(*jax.tree.map(gather, args, is_leaf=_is_array), **jax.tree.map(gather, kwargs, is_leaf=_is_array))
    return jax.tree.map(
        lambda x: wrap(like(x._value, template, ndim)) if type(x) is Array else x, out, is_leaf=_is_array
    )


def _is_array(x: Any) -> bool:
    return isinstance(x, Array)


def on_mesh_of(value: Any, template_value: Any) -> Any:
    """``value`` (computed on replicated operands) placed back as ``template_value`` is sharded."""
    sharding = explicit_sharding(template_value)
    return value if sharding is None else like(value, sharding, template_value.ndim)


def product_sharding(x1: Any, x2: Any) -> NamedSharding | None:
    """Where ``matmul(x1, x2)`` goes when an operand is sharded over Explicit axes (``None``: JAX's
    inference): the batch and row axes sharded as ``x1``'s, the column axis as ``x2``'s unless that
    reuses a mesh axis. A contraction over a sharded axis is then an all-reduce (each device
    multiplies its blocks, the partial products are summed), not a gather of the operands."""
    s1, s2 = explicit_sharding(x1), explicit_sharding(x2)
    if s1 is None and s2 is None:
        return None
    spec1 = _padded(s1, x1.ndim)
    spec2 = _padded(s2, x2.ndim)
    batch_ndim = max(x1.ndim, x2.ndim) - 2
    batch1 = spec1[:-2] if x1.ndim > 2 else ()
    batch = (None,) * (batch_ndim - len(batch1)) + tuple(batch1) if batch_ndim > 0 else ()
    rows = (spec1[-2],) if x1.ndim > 1 else ()
    used = {name for entry in (*batch, *rows) if entry is not None for name in _names(entry)}
    column = spec2[-1] if x2.ndim > 1 else None
    if column is not None and set(_names(column)) & used:
        column = None
    columns = (column,) if x2.ndim > 1 else ()
    mesh = (s1 or s2).mesh  # type: ignore[union-attr]
    return NamedSharding(mesh, PartitionSpec(*batch, *rows, *columns))


def _padded(sharding: NamedSharding | None, ndim: int) -> tuple[Any, ...]:
    spec = () if sharding is None else tuple(sharding.spec)
    return spec + (None,) * (ndim - len(spec))


def _names(entry: Any) -> tuple[str, ...]:
    return entry if isinstance(entry, tuple) else (entry,)
