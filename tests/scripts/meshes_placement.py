"""``to_device`` places the buffers of BCOO and BCSR arrays by the rule for index arrays
(tests/sparse_arrays/test_meshes.py; 8 simulated CPU devices)."""

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P
from mesh_checks import KINDS, check

import xp
import xp.sparse as xs

# xp.sum is declared for dense arrays (docs/DEVELOPING.md, "Known limits"): at run time it routes
# sparse ones, which is what this script checks, so it is called here without its declaration
sparse_sum: Callable[..., Any] = xp.sum
rng = np.random.default_rng(1)
a = np.where(rng.random((16, 16)) < 0.3, rng.standard_normal((16, 16)), 0).astype(np.float32)
count = int(np.count_nonzero(a))
for kind in KINDS:
    mesh = jax.make_mesh((8,), ("x",), axis_types=(kind,))
    rows = NamedSharding(mesh, P("x"))
    split = kind == AxisType.Auto  # Explicit axes split no buffer (the rule)
    layouts = {
        # nse divisible by 8: the entries are split over the axis (Auto); else replicated
        "bcoo nse 8k": xs.fromdense(xp.asarray(a), nse=8 * (count // 8 + 1)),
        "bcoo nse odd": xs.fromdense(xp.asarray(a), nse=8 * (count // 8 + 1) + 1),
        "bcsr nse 8k": xs.fromdense(xp.asarray(a), nse=8 * (count // 8 + 1), format="bcsr"),
    }
    for name, A in layouts.items():
        entries = "x" if split and A.nse % 8 == 0 else None
        for how, g in (
            ("to_device", lambda A: A.to_device(rows)),
            ("asarray", lambda A: xs.asarray(A, device=rows)),
            ("jit to_device", jax.jit(lambda A: A.to_device(rows))),
        ):
            B = g(A)
            assert type(B) is type(A), (kind, name, how)
            leaves = jax.tree.leaves(B.jax)
            specs = [tuple(leaf.sharding.spec) + (None,) * (leaf.ndim - len(leaf.sharding.spec)) for leaf in leaves]
            assert specs[0] == (entries,), (kind, name, how, specs)  # data
            if isinstance(B, xs.BCSR):
                assert specs[1:] == [(entries,), (None,)], (kind, name, how, specs)  # indices, indptr whole
            else:
                assert specs[1] == (entries, None), (kind, name, how, specs)
            assert all(len(leaf.sharding.device_set) == 8 for leaf in leaves)
            assert B.device == NamedSharding(mesh, P(entries, None)), (kind, name, how, B.device)
            np.testing.assert_array_equal(np.asarray(B.todense()), a)
            # a placed array computes like the original, where it is: a product with a vector
            # on one device is replicated over the mesh, an element-wise result keeps the
            # placement of the entries, a sum is replicated
            x = np.arange(16, dtype=np.float32)
            for out in (B @ xp.asarray(x), jax.jit(lambda B: B @ xp.asarray(x))(B)):
                check(out, a @ x, (None,), (kind, name, how, "B @ x"))
                assert len(out.jax.sharding.device_set) == 8
            for out in (B * 2, jax.jit(lambda B: B * 2)(B)):
                assert isinstance(out, xs.SparseArray), (kind, name, how, type(out))  # (a product may be dense)
                assert out.device == B.device, (kind, name, how, out.device)
                np.testing.assert_array_equal(np.asarray(out.todense()), 2 * a)
            total = sparse_sum(B)
            check(total, a.sum(), (), (kind, name, how, "sum"))
            assert len(total.jax.sharding.device_set) == 8
            # sums along one axis: by the native kernel only where the entries are on one
            # device (_reductions._on_one_device); split entries take XLA's scatter
            for axis in (0, 1):
                for out in (sparse_sum(B, axis=axis), jax.jit(lambda B: sparse_sum(B, axis=axis))(B)):
                    got = np.asarray(out.todense())
                    assert np.allclose(got, a.sum(axis), rtol=1e-5, atol=1e-5), (kind, name, how, axis)
        assert A.to_device(rows).to_device(jax.devices()[2]).device == jax.devices()[2]
        # placed again where it is: the same array
        placed = A.to_device(rows)
        assert placed.to_device(placed.device) is placed
print("ok")
