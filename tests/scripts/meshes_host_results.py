"""Results NumPy computes on the host (sparse products, rows taken) go where JAX would put them:
on a committed operand's device (tests/sparse_arrays/test_meshes.py; 8 simulated CPU devices)."""

import jax
import numpy as np
import pytest

import xp
import xp.sparse as xs

devices = jax.devices()
a = np.where(np.arange(36).reshape(6, 6) % 4 == 0, np.arange(36.0).reshape(6, 6), 0).astype(np.float32)
A = xs.fromdense(xp.asarray(a))
moved = A.to_device(devices[3])
rows = xp.asarray(np.array([4, 0, 4], np.int32))
for out in (A @ moved, moved @ A, moved[rows], moved[rows.to_device(devices[3])]):
    assert isinstance(out, xs.SparseArray), type(out)  # (a product or rows of sparse arrays may be dense)
    assert out.device == devices[3] and out.jax.data.committed, out.device
product = A @ moved
assert isinstance(product, xs.SparseArray), type(product)
assert np.array_equal(np.asarray(product.todense()), a @ a)
with pytest.raises(ValueError, match="incompatible devices"):
    moved @ A.to_device(devices[5])
with pytest.raises(ValueError, match="^xp.sparse.BCOO.__getitem__: the arrays are on different devices .cpu:3, cpu:5."):
    moved[rows.to_device(devices[5])]  # (said in xp's words by every entry point: xp._routing.failed)
print("ok")
