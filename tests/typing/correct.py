"""Typed user code that both mypy and pyright must accept with no error (tests/test_typing.py).

It also runs: the test executes it, so every line here is correct at runtime too, and
``assert_type`` pins what the checkers infer.
"""

from __future__ import annotations

from typing import Any, assert_type

import jax.numpy as jnp
import numpy as np

import xp


def scaled(x: xp.ArrayLike, factor: float = 2.0, *, dtype: xp.DTypeLike = "float32") -> xp.Array:
    return xp.asarray(x, dtype=dtype) * factor


def normalized(x: xp.Array) -> xp.Array:
    return (x - xp.mean(x)) / xp.std(x)


x = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
y = xp.ones((2, 2), dtype=xp.float32)

# operators
assert_type(-x, xp.Array)
assert_type(+x, xp.Array)
assert_type(abs(x), xp.Array)
assert_type(x + 1, xp.Array)
assert_type(1 + x, xp.Array)
assert_type(2.5 * x, xp.Array)
assert_type(x * y, xp.Array)
assert_type(x @ y, xp.Array)
assert_type(x / y - y // 2 % 3, xp.Array)
assert_type(x**2, xp.Array)
assert_type(x > 0.5, xp.Array)
assert_type(x == y, xp.Array)
assert_type(x != 1, xp.Array)
assert_type(~(x > 1) & (x < 3) | (x >= 0), xp.Array)
assert_type(xp.asarray([1, 2]) << 1, xp.Array)
x += 1
x *= y
x -= np.float32(1)
assert_type(x, xp.Array)
assert_type(x[0], xp.Array)
assert_type(x[0, 1:], xp.Array)
assert_type(x[..., None], xp.Array)
assert_type(x[x > 2], xp.Array)
x[1:] = 0
x[0, 0] = y[1, 1]
x[x > 10] = 1.5
assert_type(x.T, xp.Array)
assert_type(x.mT, xp.Array)
assert_type(x.to_device(x.device), xp.Array)
assert_type(x.shape, tuple[int, ...])
assert_type(x.dtype, np.dtype[Any])
assert_type(float(x[0, 0]), float)
assert_type(x.jax, jnp.ndarray)

# element-wise functions take xp, NumPy and JAX arrays and Python scalars
assert_type(xp.sin(x), xp.Array)
assert_type(xp.sin(np.ones(3, dtype=np.float32)), xp.Array)
assert_type(xp.sin(jnp.ones(3)), xp.Array)
assert_type(xp.sin(0.5), xp.Array)
assert_type(xp.exp(np.float32(1.0)), xp.Array)
assert_type(xp.add(x, 1), xp.Array)
assert_type(xp.add(1, x), xp.Array)
assert_type(xp.atan2(np.ones(2, dtype=np.float32), jnp.ones(2)), xp.Array)
assert_type(xp.logical_and(x > 1, True), xp.Array)
assert_type(xp.clip(x, 0, 1), xp.Array)
assert_type(xp.fft.fft(xp.asarray([1.0, 0.0]), n=4), xp.Array)
assert_type(xp.fft.rfftn(x, axes=(0, 1)), xp.Array)
assert_type(xp.linalg.matmul(x, y), xp.Array)
assert_type(xp.linalg.vector_norm(x), xp.Array)

# reductions and searching
assert_type(xp.sum(x), xp.Array)
assert_type(xp.sum(x, axis=0, dtype=xp.float32), xp.Array)
assert_type(xp.mean(x, axis=(0, 1), keepdims=True), xp.Array)
assert_type(xp.max(jnp.ones(3)), xp.Array)
assert_type(xp.argmax(x, axis=1), xp.Array)
assert_type(xp.cumulative_sum(x, axis=0), xp.Array)
assert_type(xp.where(x > 1, x, 0.0), xp.Array)

# creation functions and dtypes
assert_type(xp.zeros(3, dtype=xp.float32), xp.Array)
assert_type(xp.zeros((2, 3), dtype="float32"), xp.Array)
assert_type(xp.ones(3, dtype=float), xp.Array)
assert_type(xp.full(3, 7, dtype=np.int32), xp.Array)
assert_type(xp.asarray(1, dtype="int8"), xp.Array)
assert_type(xp.arange(5, dtype=xp.int32), xp.Array)
assert_type(xp.eye(3, dtype=complex), xp.Array)
assert_type(xp.linspace(0, 1, num=5), xp.Array)
assert_type(xp.empty_like(x, dtype=x.dtype), xp.Array)
assert_type(xp.astype(x, "int32"), xp.Array)
assert_type(xp.astype(x, bool), xp.Array)
assert_type(xp.isdtype(x.dtype, "real floating"), bool)
assert_type(xp.finfo(xp.float32).eps, float)
assert_type(scaled(xp.asarray([1, 2])), xp.Array)
assert_type(scaled(np.arange(3, dtype=np.int32), dtype=np.float32), xp.Array)
assert_type(scaled(3, dtype=xp.complex64), xp.Array)
assert_type(normalized(x), xp.Array)

# sparse arrays
d = xp.asarray([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
v = xp.asarray([1.0, 2.0, 3.0])
A = xp.sparse.asarray(d)
assert_type(A, xp.sparse.SparseArray)
assert_type(A.todense(), xp.Array)
assert_type(A @ v, xp.Array)
assert_type(v @ A, xp.Array)
assert_type(A @ A, xp.sparse.SparseArray | xp.Array)
assert_type(A * 2, xp.sparse.SparseArray | xp.Array)
assert_type(-A, xp.sparse.SparseArray)
assert_type(A.T, xp.sparse.SparseArray)
assert_type(xp.sin(A), xp.sparse.SparseArray | xp.Array)
assert_type(xp.multiply(A, v), xp.sparse.SparseArray | xp.Array)
B = xp.sparse.BCOO((xp.asarray([1.0, 2.0]), xp.asarray([[0, 0], [1, 2]])), shape=(2, 3))
assert_type(B, xp.sparse.BCOO)
assert_type(B.sum_duplicates(), xp.sparse.BCOO)
assert_type(B.to_bcsr(), xp.sparse.BCSR)
assert_type(B.data, xp.Array)
assert_type(xp.sparse.eye(3, dtype="float32"), xp.sparse.BCOO)
assert_type(xp.sparse.zeros_like(A), xp.sparse.SparseArray)
assert_type(xp.sparse.linalg.spsolve(A, v), xp.Array)
D = xp.sparse.DIA((xp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]), [0, 1]), shape=(3, 3))
assert_type(D, xp.sparse.DIA)
assert_type(D @ v, xp.Array)
assert_type(v @ D, xp.Array)
assert_type(D.T, xp.sparse.DIA)
assert_type(xp.sparse.DIA.from_sparse(A).offsets, tuple[int, ...])
W = xp.sparse.BSR.fromdense(d, block_shape=(3, 3))
assert_type(W, xp.sparse.BSR)
assert_type(W @ d, xp.Array)
