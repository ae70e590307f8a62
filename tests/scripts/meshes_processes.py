"""One of two processes of a cluster (arguments: the process's index, the coordinator's port),
each with 4 CPU devices: a RowPartitioned matrix from each process's own blocks
(tests/sparse_arrays/test_meshes.py). jax.distributed starts before anything else uses JAX."""

import sys

import jax

jax.config.update("jax_cpu_collectives_implementation", "gloo")
process, port = int(sys.argv[1]), sys.argv[2]
jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=process)
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402
from jax.sharding import AxisType  # noqa: E402

import xp  # noqa: E402
import xp.sparse as xs  # noqa: E402

S = sp.random(64, 40, density=0.1, random_state=3, format="csr", dtype=np.float32)
D = S.toarray()
x = np.arange(40, dtype=np.float32)
for kind in (AxisType.Auto, AxisType.Explicit):
    mesh = jax.make_mesh((8,), ("x",), axis_types=(kind,))
    mine = {i: S[i * 8 : (i + 1) * 8] for i in range(8) if mesh.devices[i].process_index == process}
    assert len(mine) == 4, mine
    A = xs.RowPartitioned.from_blocks(mine, mesh, "x")
    assert A.shape == (64, 40)
    y = jax.jit(lambda A: A @ xp.asarray(x))(A)
    z = jax.jit(lambda A, v: A.T @ v)(A, y)
    assert tuple(y.jax.sharding.spec) == ("x",) and tuple(z.jax.sharding.spec) == ("x",)
    whole_y = multihost_utils.process_allgather(y.jax, tiled=True)
    whole_z = multihost_utils.process_allgather(z.jax, tiled=True)
    assert np.allclose(whole_y, D @ x, rtol=1e-4, atol=1e-3), (kind, whole_y)
    assert np.allclose(whole_z, D.T @ (D @ x), rtol=1e-4, atol=1e-2), (kind, whole_z)
print("ok")
