"""Sparse arrays on meshes: where their buffers go, and products that keep the dense operand's sharding.

The rule for the buffers (docs/sharding.md, "Sparse arrays on meshes"): a sharding names the axes
of the array; a sparse array's buffers are split accordingly:

- batch dimensions: their mesh axes split the batch axes of every buffer (``data``, ``indices``,
  ``indptr``); dense dimensions: the trailing axes of ``data``;
- sparse dimensions: their mesh axes split the stored entries (the ``nse`` axis of ``data`` and
  ``indices``) when they divide ``nse``, else the entries are replicated: an entry's position in
  the buffers says nothing about its row or column, so an equal split of the entries is the only
  even one;
- an ``indices`` buffer's coordinate axis and a BCSR's ``indptr`` (one more pointer than rows) are
  never split: every device holds the row pointers whole;
- Explicit mesh axes split nothing: the buffers are replicated over them. Over Explicit axes a
  sharding is part of a value's type, and JAX refuses (or fails on) the scatters and gathers at
  data-dependent positions that every sparse kernel makes into split entries; replicated, every
  xp function takes the array, and products still follow the dense operand (below).

Products with a dense operand sharded over a mesh (``A @ X``, ``X @ A``) are computed per shard
with ``jax.shard_map``: the sparse matrix replicated, the dense operand's contracted axis gathered,
its other axes kept, so the result is sharded as the dense operand (``P(None, 'x')`` for ``X``
sharded by columns, as JAX's own BCOO product gives). Under ``jax.jit`` over Auto mesh axes the
operand's sharding is not known while tracing; the product then uses the kernels XLA's partitioner
can split (gather and ``segment_sum``), not xp's native kernel or JAX's CSR kernel (custom calls it would run
replicated), and the compiler places the result.

Functions here take and return raw JAX values (``xp.sparse._conversion`` and the products call them).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.core
from jax.experimental import sparse as jsparse
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from xp import _devices
from xp import _resharding as resharding
from xp.sparse._transposed import Transposed

P = PartitionSpec


# --- the buffers of a sparse array on a mesh --------------------------------------------------


def buffer_shardings(v: Any, sharding: NamedSharding) -> list[NamedSharding]:
    """The sharding of each of the buffers of the JAX sparse array ``v`` (in ``tree_flatten``
    order) placed as ``sharding`` (the module's rule)."""
    explicit = {n for n, t in zip(sharding.mesh.axis_names, sharding.mesh.axis_types, strict=True)
                if t == AxisType.Explicit}  # fmt: skip
    spec = tuple(_without(entry, explicit) for entry in padded(sharding.spec, v.ndim))
    n_batch, n_sparse = v.n_batch, v.n_sparse
    batch, sparse, dense = spec[:n_batch], spec[n_batch : n_batch + n_sparse], spec[n_batch + n_sparse :]
    names: tuple[str, ...] = tuple(name for entry in sparse if entry is not None for name in names_of(entry))
    sizes = dict(sharding.mesh.shape)
    parts = math.prod(sizes[name] for name in names)
    entries: Any = None
    if names and v.nse % parts == 0:
        entries = names[0] if len(names) == 1 else names
    mesh = sharding.mesh
    data = NamedSharding(mesh, P(*batch, entries, *dense))
    if isinstance(v, jsparse.BCSR):
        return [data, NamedSharding(mesh, P(*batch, entries)), NamedSharding(mesh, P(*batch, None))]
    return [data, NamedSharding(mesh, P(*batch, entries, None))]


def place(v: Any, sharding: NamedSharding) -> Any:
    """``v`` with its buffers placed by the rule (eagerly a transfer, under a trace a placement)."""
    if is_placed(v, sharding):
        return v
    leaves, tree = jax.tree_util.tree_flatten(v)
    targets = buffer_shardings(v, sharding)
    return jax.tree_util.tree_unflatten(
        tree, [_devices.place(leaf, t) for leaf, t in zip(leaves, targets, strict=True)]
    )


def is_placed(v: Any, sharding: NamedSharding) -> bool:
    """Whether the concrete buffers of ``v`` are placed as ``sharding`` says already (traced ones
    never are: a placement under a trace is a constraint, free where it holds)."""
    leaves = jax.tree_util.tree_leaves(v)
    if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
        return False
    return all(_holds(leaf, target) for leaf, target in zip(leaves, buffer_shardings(v, sharding), strict=True))


def array_sharding(v: Any) -> Any:
    """``x.device`` of a sparse array: its buffers' placement read back as a sharding of the array
    (the inverse of the rule), or the device or sharding of its ``data`` when that is not a
    NamedSharding over several devices."""
    where = _devices.device_of(v.data)
    if not isinstance(where, NamedSharding) or len(where.device_set) == 1:
        return where
    spec = padded(where.spec, v.data.ndim)
    n_batch, n_sparse = v.n_batch, v.n_sparse
    entries = spec[n_batch]
    sparse = (entries,) + (None,) * (n_sparse - 1) if n_sparse else ()
    return NamedSharding(where.mesh, P(*spec[:n_batch], *sparse, *spec[n_batch + 1 :]))


def _holds(leaf: Any, target: NamedSharding) -> bool:
    sharding = getattr(leaf, "sharding", None)
    return sharding is not None and (sharding == target or sharding.is_equivalent_to(target, leaf.ndim))


# --- products with a dense operand on a mesh ------------------------------------------------------


def product(kernel: Callable[..., Any], x1: Any, x2: Any) -> Any:
    """``kernel(x1, x2, partitionable=...)`` (a sparse matrix product) computed where its dense
    operand's sharding says (the module's rule)."""
    sparse1, sparse2 = _is_sparse(x1), _is_sparse(x2)
    if sparse1 == sparse2 or (x1 if sparse1 else x2).ndim != 2:
        return kernel(x1, x2, partitionable=False)
    matrix, x = (x1, x2) if sparse1 else (x2, x1)
    known = known_sharding(x)
    if known is None:
        return kernel(x1, x2, partitionable=on_auto_mesh(x))
    # the checks and their messages, on the whole shapes (without the shardings, which JAX would check)
    jax.eval_shape(functools.partial(kernel, partitionable=False), _shapes(x1), _shapes(x2))
    mesh, spec = known[0], padded(known[1], x.ndim)
    if x.ndim == 1:
        operand, out = (None,), ()
    elif sparse1:  # A @ X: X's rows are contracted, its batch and column axes kept
        operand = out = (*spec[:-2], None, spec[-1])
    else:  # X @ A: X's columns are contracted, its batch and row axes kept
        operand = out = (*spec[:-1], None)

    def local(m: Any, x: Any) -> Any:
        return kernel(m, x, partitionable=False) if sparse1 else kernel(x, m, partitionable=False)

    mapped = jax.shard_map(local, mesh=mesh, in_specs=(P(), P(*operand)), out_specs=P(*out), check_vma=False)
    replicated = jax.tree_util.tree_map(lambda leaf: placed(leaf, mesh, P()), matrix)
    return mapped(replicated, placed(x, mesh, P(*operand)))


def known_sharding(x: Any) -> tuple[Any, PartitionSpec] | None:
    """The mesh and spec of a dense operand placed over several devices, when known: always for a
    concrete array, under a trace only over Explicit axes (Auto ones are the compiler's)."""
    if isinstance(x, jax.core.Tracer):
        sharding = resharding.explicit_sharding(x)
        return None if sharding is None else (sharding.mesh, sharding.spec)
    sharding = getattr(x, "sharding", None)
    if isinstance(sharding, NamedSharding) and len(sharding.device_set) > 1:
        return sharding.mesh, sharding.spec
    return None


def on_auto_mesh(x: Any) -> bool:
    """Whether a traced ``x`` lives on a mesh of several devices whose axes are Auto (its sharding
    then unknown while tracing)."""
    if not isinstance(x, jax.core.Tracer):
        return False
    mesh = getattr(jax.typeof(x).sharding, "mesh", None)
    if mesh is None or not mesh.axis_names:
        return False
    return any(t == AxisType.Auto and mesh.shape[n] > 1 for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True))


def placed(x: Any, mesh: Any, spec: PartitionSpec) -> Any:
    """``x`` placed as ``spec`` over ``mesh`` for ``shard_map`` (which reshards a value over Auto axes
    itself, but refuses one whose Explicit sharding differs from its ``in_specs``)."""
    target = NamedSharding(mesh, spec)
    if isinstance(x, jax.core.Tracer):
        explicit = any(t == AxisType.Explicit for t in mesh.axis_types)
        current = getattr(jax.typeof(x).sharding, "spec", P())
        if explicit and padded(current, x.ndim) != padded(spec, x.ndim):
            return jax.reshard(x, target)
        return x
    if not _holds(x, target):
        return jax.device_put(x, target)
    return x


# --- specs --------------------------------------------------------------------------------------


def padded(spec: Any, ndim: int) -> tuple[Any, ...]:
    """A spec as one entry per axis (``None`` for the axes it leaves out; 1-tuples unwrapped)."""
    entries = tuple(spec) + (None,) * (ndim - len(tuple(spec)))
    return tuple(e[0] if isinstance(e, tuple) and len(e) == 1 else (e or None) for e in entries)


def _without(entry: Any, axes: set[str]) -> Any:
    """A spec entry with the mesh axes ``axes`` left out."""
    names = tuple(name for name in names_of(entry) if name not in axes) if entry is not None else ()
    return None if not names else names[0] if len(names) == 1 else names


def names_of(entry: Any) -> tuple[str, ...]:
    return entry if isinstance(entry, tuple) else (entry,)


def _shapes(value: Any) -> Any:
    return jax.tree_util.tree_map(lambda leaf: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype), value)


def _is_sparse(x: Any) -> bool:
    return isinstance(x, (jsparse.BCOO, jsparse.BCSR, Transposed))  # (a transposed view too)
