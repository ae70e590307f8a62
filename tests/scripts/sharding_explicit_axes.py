"""Standard calls JAX refuses on Explicit axes follow xp's rule of placement (docs/sharding.md;
tests/test_sharding.py; 8 simulated CPU devices)."""

from collections.abc import Callable

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import xp

data = (np.arange(128.0).reshape(16, 8) / 7).astype(np.float32)


def write(key: int | slice | tuple[slice, int], value: float) -> Callable[[xp.Array], xp.Array]:
    def f(x: xp.Array) -> xp.Array:
        x[key] = value
        return x

    return f


# generic calls JAX refuses on Explicit axes without an out_sharding (ShardingTypeError)
calls = {
    "x @ x.T": lambda x: x @ x.T,
    "x.T @ x": lambda x: x.T @ x,
    "x @ x.T[:, :8]": lambda x: x @ x.T[:, :8],
    "tensordot": lambda x: xp.tensordot(x, x, axes=([0], [0])),
    "sort": lambda x: xp.sort(x, axis=0),
    "argsort": lambda x: xp.argsort(x, axis=0),
    "cumulative_sum": lambda x: xp.cumulative_sum(x, axis=0),
    "cumulative_prod": lambda x: xp.cumulative_prod(x / 10 + 1, axis=0),
    "x[9]": lambda x: x[9],
    "x[idx]": lambda x: x[xp.asarray([1, 5, 9])],
    "take": lambda x: xp.take(x, xp.asarray([1, 5, 9]), axis=0),
    "take_along_axis": lambda x: xp.take_along_axis(x, xp.zeros((16, 8), dtype=xp.int32), axis=0),
    "x[3] = v": write(3, 1.0),
    "x[:, 1] = v": write((slice(None), 1), 1.0),
    "x[2:40] = 0": write(slice(2, 40), 0.0),
    "reshape": lambda x: xp.reshape(x, (8, 16)),
    "diff": lambda x: xp.diff(x, axis=0),
    "tile": lambda x: xp.tile(x, (2, 1)),
    "linalg.solve": lambda x: xp.linalg.solve(x[:8] + 8 * xp.eye(8), x[:8, 0]),
    "linalg.inv": lambda x: xp.linalg.inv(x[:8] @ x[:8].T + xp.eye(8)),
    "linalg.qr": lambda x: xp.linalg.qr(x)[1],
    "linalg.outer": lambda x: xp.linalg.outer(x[:, 0], x[:, 1]),
    "searchsorted": lambda x: xp.searchsorted(xp.sort(x[:, 0]), x[:, 1]),
    "unique_values": lambda x: xp.unique_values(xp.round(x)),
}
# the rule (docs/sharding.md): sharded like the first sharded operand where the result has its
# number of dimensions and the mesh divides it, else replicated; matmul: rows as x1's, an
# all-reduce over a sharded contraction
rows, replicated = ("rows", None), (None, None)
expected = {
    "x @ x.T": rows,
    "x.T @ x": replicated,
    "sort": rows,
    "cumulative_sum": rows,
    "x[3] = v": rows,
    "x[2:40] = 0": rows,
    "x[9]": (None,),
    "take": replicated,
    "linalg.outer": replicated,
}
for axis_type in (AxisType.Auto, AxisType.Explicit):
    mesh = jax.make_mesh((8,), ("rows",), axis_types=(axis_type,))
    sharded = NamedSharding(mesh, P("rows"))
    for name, f in calls.items():
        reference = np.asarray(f(xp.asarray(data)))
        for how in ("eager", "jit"):
            if how == "jit" and name == "unique_values":
                continue  # a data-dependent shape: not traceable, on any mesh
            x = xp.asarray(data, device=sharded)
            out = f(x) if how == "eager" else jax.jit(f)(x)
            assert np.allclose(np.asarray(out), reference, rtol=1e-5, atol=1e-4), (axis_type, how, name)
            if axis_type == AxisType.Explicit and name in expected:
                spec = tuple(out.jax.sharding.spec) + (None,) * (out.ndim - len(out.jax.sharding.spec))
                assert spec == expected[name], (how, name, out.jax.sharding.spec)
print("ok")
