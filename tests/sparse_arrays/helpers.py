"""Shared helpers of the sparse tests: value strategies, the layouts a sparse array can take
(JAX padding, duplicate entries, batch and dense dimensions, BCSR), and comparison with the dense
result."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fixed_shapes import shapes
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax.experimental import sparse as jsparse

import xp
import xp.sparse


def elements(dtype, nan=False):
    """Mostly zeros, else small values (so that sums, products and powers stay exact or
    well-conditioned); NaN too if ``nan``. No subnormals: XLA's CPU reductions flush them to zero,
    and summing duplicate or padding entries is a reduction that the dense computation does not
    make."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.sampled_from([False, False, True])
    if dtype.kind in "iu":
        return st.sampled_from([0, 0]) | st.integers(0 if dtype.kind == "u" else -3, 3)
    if dtype.kind == "f":
        nonzero = st.floats(-4, 4, width=dtype.itemsize * 8, allow_subnormal=False).filter(lambda v: v != 0)
        values = st.sampled_from([0.0, 0.0]) | nonzero
        return values | st.just(float("nan")) if nan else values
    part = st.floats(-4, 4, width=dtype.itemsize * 4, allow_subnormal=False)
    return st.sampled_from([0j, 0j]) | st.builds(complex, part, part)


def dense_arrays(dtype, shape):
    return hnp.arrays(dtype, shape, elements=elements(dtype))


SHAPES = shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
LAYOUTS = ("plain", "padded", "duplicates", "batched", "dense_block", "bcsr")


def layouts_for(a):
    return [k for k in LAYOUTS if (k not in ("batched", "dense_block") or a.ndim >= 2) and (k != "bcsr" or a.ndim == 2)]


def sparse_of(a, layout="plain"):
    """``a`` (NumPy) as an xp sparse array in a layout: JAX padding, duplicate entries, batch or
    dense dimensions, or BCSR."""
    x = xp.asarray(a)
    if layout == "plain":
        return xp.sparse.fromdense(x)
    if layout == "padded":
        return xp.sparse.fromdense(x, nse=int(np.count_nonzero(a)) + 2)
    if layout == "batched":
        return xp.sparse.fromdense(x, n_batch=1)
    if layout == "dense_block":
        return xp.sparse.fromdense(x, n_dense=1)
    if layout == "bcsr":
        return xp.sparse.fromdense(x, format="bcsr")
    assert layout == "duplicates"
    where = np.argwhere(a != 0)
    values = a.reshape(-1)[np.flatnonzero(a)]
    if a.dtype.kind == "b":
        first, second = values, values
    elif a.dtype.kind in "iu":
        first = values // 2
        second = values - first
    else:  # halves of the smallest normal numbers would be subnormal, which XLA flushes: not split
        tiny = np.finfo(a.dtype).tiny
        first = np.where(np.abs(values) >= 4 * tiny, values / 2, values)
        second = values - first
    indices = np.concatenate([where, where, np.array([a.shape])]).astype(np.int32)
    data = np.concatenate([first, second, np.zeros(1, a.dtype)]).astype(a.dtype)
    return xp.sparse.BCOO.from_jax(jsparse.BCOO((jnp.asarray(data), jnp.asarray(indices)), shape=a.shape))


def to_numpy(x):
    if isinstance(x, xp.sparse.SparseArray):
        x = x.todense()
    assert isinstance(x, xp.Array), type(x)
    return np.asarray(x)


def assert_like_dense(got, want, exact=True, loose=False):
    """``got`` (sparse or dense) has ``want``'s dtype, shape and values: exactly, or within a
    tolerance for the dtype (``loose``: ten times more, for reductions)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    g, w = to_numpy(got), to_numpy(want)
    if exact or g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
    else:
        scale = 10 if loose else 1
        rtol = (1e-6 if g.dtype.itemsize >= 8 else 1e-4) * scale
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6 * scale, equal_nan=True)


def dense_copy(x):
    """A sparse array's dense copy (anything else unchanged)."""
    return x.todense() if isinstance(x, xp.sparse.SparseArray) else x


def check_computed_densely(fn, *args, match="", **kwargs):
    """``fn(*args)`` says, with a SparseEfficiencyWarning whose message matches ``match``, that it
    computed on dense copies, and returns exactly what ``fn`` gives for the dense copies."""
    with pytest.warns(xp.sparse.SparseEfficiencyWarning, match=match) as record:
        out = fn(*args, **kwargs)
    assert all(".todense() first" in str(w.message) for w in record)
    want = fn(*(dense_copy(a) for a in args), **{k: dense_copy(v) for k, v in kwargs.items()})
    assert isinstance(out, xp.Array), type(out)
    assert_like_dense(out, want, exact=True)
    return out


def dense_product(a, x):
    """The dense reference of a product, differentiable, at float32's precision on every backend
    (XLA:TPU's default precision multiplies float32 in one bfloat16 pass)."""
    return jnp.matmul(a, x, precision=jax.lax.Precision.HIGHEST)
