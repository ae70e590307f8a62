"""Generic per-shard code under jax.shard_map (tests/test_sharding.py; 8 simulated CPU devices)."""

import jax
import numpy as np
from jax import lax
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import xp
import xp.sparse


# generic per-shard code: constants made from Python scalars, lists and NumPy arrays, creation,
# writes, reductions, a sparse matrix closed over
def body(v: xp.Array) -> tuple[xp.Array, xp.Array]:
    assert type(v) is xp.Array, type(v)
    w = xp.asarray(v, copy=True)
    w[:, 0] = -1.0
    w[w > 40] = 0.5
    w *= 2
    w = w + xp.reshape(xp.arange(3, dtype=v.dtype), (1, 3)) * xp.asarray([1.0, 2.0, 3.0], dtype=v.dtype)
    w = xp.concat([w, xp.sum(v * 0.5, axis=1, keepdims=True), xp.zeros((v.shape[0], 1), dtype=v.dtype)], axis=1)
    w[:, np.array([False, True, False, False, False])] = 1.5  # a NumPy mask: a constant of the trace
    w = w + (v @ (A * 2.0).T)[:, :1]  # deciding that A * 2.0 stays sparse computes 0 * 2.0 on the host
    return xp.where(w < 3, w, xp.sort(w, axis=1)), lax.psum(xp.sum(v), "rows")


def reference(block: np.ndarray) -> np.ndarray:
    w = block.copy()
    w[:, 0] = -1.0
    w[w > 40] = 0.5
    w *= 2
    w = w + np.arange(3, dtype=block.dtype)[None] * np.array([1.0, 2.0, 3.0], block.dtype)
    w = np.concatenate([w, (block * 0.5).sum(1, keepdims=True), np.zeros((len(block), 1), block.dtype)], 1)
    w[:, 1] = 1.5
    w = w + (block @ (2 * dense).T)[:, :1]
    return np.where(w < 3, w, np.sort(w, 1))


dense = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]], np.float32)
A = xp.sparse.fromdense(xp.asarray(dense))
data = np.arange(48.0, dtype=np.float32).reshape(16, 3)
expected = np.concatenate([reference(data[2 * k : 2 * k + 2]) for k in range(8)])
for axis_type in (AxisType.Auto, AxisType.Explicit):
    mesh = jax.make_mesh((8,), ("rows",), axis_types=(axis_type,))
    x = xp.asarray(data, device=NamedSharding(mesh, P("rows")))
    mapped = jax.shard_map(body, mesh=mesh, in_specs=P("rows"), out_specs=(P("rows"), P()))
    # eagerly first: the constants it makes must not outlive its trace (the cached -1.0 of
    # w[:, 0] = -1.0 did, and the jitted call after it raised UnexpectedTracerError)
    for call in (mapped, jax.jit(mapped), mapped):
        out, total = call(x)
        assert type(out) is xp.Array and type(total) is xp.Array, (type(out), type(total))
        assert np.array_equal(np.asarray(out), expected), (np.asarray(out), expected)
        assert float(total) == data.sum(), float(total)
        assert out.jax.sharding.is_equivalent_to(NamedSharding(mesh, P("rows")), 2), out.device
print("ok")
