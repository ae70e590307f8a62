"""Products of sparse arrays keep the dense operand's sharding, eagerly and under jit, on Auto
and Explicit meshes (tests/sparse_arrays/test_meshes.py; 8 simulated CPU devices)."""

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from mesh_checks import KINDS, both, check

import xp
import xp.sparse as xs

rng = np.random.default_rng(0)
a = np.where(rng.random((16, 24)) < 0.25, rng.standard_normal((16, 24)), 0).astype(np.float32)
for kind in KINDS:
    mesh = jax.make_mesh((8,), ("x",), axis_types=(kind,))

    def on(spec: P, value: np.ndarray) -> xp.Array:
        return xp.asarray(value.astype(np.float32), device=NamedSharding(mesh, spec))

    X = on(P(None, "x"), rng.standard_normal((24, 16)))  # sharded by columns
    wide = on(P(None, "x"), rng.standard_normal((24, 64)))  # past the native kernel's threshold
    rows = on(P("x", None), rng.standard_normal((8, 16)))  # x @ A: sharded by rows
    v = on(P("x"), rng.standard_normal(24))  # a sharded vector (contracted)
    for fmt in ("bcoo", "bcsr"):
        A = xs.fromdense(xp.asarray(a), format=fmt)
        cases = {
            "A @ X": (lambda A: A @ X, a @ np.asarray(X), (None, "x")),
            "A @ wide": (lambda A: xp.matmul(A, wide), a @ np.asarray(wide), (None, "x")),
            "rows @ A": (lambda A: rows @ A, np.asarray(rows) @ a, ("x", None)),
            "A @ v": (lambda A: A @ v, a @ np.asarray(v), (None,)),
            "tensordot(A, X)": (lambda A: xp.tensordot(A, X, axes=1), a @ np.asarray(X), (None, "x")),
        }
        for name, (f, expected, spec) in cases.items():
            for how, g in both(f):
                check(g(A), expected, spec, (kind, fmt, name, how))
print("ok")
