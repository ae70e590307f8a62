"""Reductions of sparse arrays against the dense functions: every axis combination, keepdims,
dtype rules, implicit zeros (in max/min/prod/mean/var/all/argmax), duplicates and padding,
results dense over all axes and sparse otherwise, jit, grad, and the dense-result errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fixed_shapes import shapes
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax.experimental import sparse as jsparse

import xp
import xp.sparse
from xp import _dtypes as dt
from xp.sparse import _reduction_kernels as lines

from . import helpers
from .helpers import SHAPES, check_computed_densely, elements, layouts_for, sparse_of, to_numpy
from .test_native import bcoo as native_bcoo
from .test_native import bcsr as native_bcsr
from .test_native import check as native_check
from .test_native import dense as native_dense
from .test_native import needs_native, problems

AVAILABLE = dt.available()
REAL = [d for d in AVAILABLE if d in dt.REAL_NUMERIC]
NUMERIC = [d for d in AVAILABLE if d in dt.NUMERIC]


def assert_like_dense(got, want, exact=False):
    helpers.assert_like_dense(got, want, exact, loose=True)


@st.composite
def axes_for(draw, ndim):
    if ndim == 0:
        return draw(st.sampled_from([None, ()]))
    single = st.integers(-ndim, ndim - 1)
    several = st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(tuple)
    return draw(st.none() | single | several)


def normalized(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def reduced_count(shape, axis):
    return int(np.prod([shape[a] for a in normalized(axis, len(shape))]))


# --- every reduction ------------------------------------------------------------------------

REDUCTIONS = {
    "sum": NUMERIC,
    "prod": NUMERIC,
    "mean": [d for d in NUMERIC if d.kind != "u"],
    "var": [d for d in AVAILABLE if d.kind == "f"],
    "std": [d for d in AVAILABLE if d.kind == "f"],
    "max": REAL,
    "min": REAL,
    "all": AVAILABLE,
    "any": AVAILABLE,
    "count_nonzero": AVAILABLE,
}


def dense_result_expected(name, shape, axis, keepdims):
    """Whether the policy makes this reduction raise (a dense result over some axes)."""
    full = len(normalized(axis, len(shape))) == len(shape)
    if full:
        return False
    out_size = int(np.prod([n for i, n in enumerate(shape) if i not in normalized(axis, len(shape))]))
    empty_lines = reduced_count(shape, axis) == 0 and out_size > 0
    return empty_lines and name in ("prod", "mean", "all", "var", "std")


@st.composite
def reduction_cases(draw):
    name = draw(st.sampled_from(sorted(REDUCTIONS)))
    dtype = draw(st.sampled_from(REDUCTIONS[name]))
    a = draw(hnp.arrays(dtype, SHAPES, elements=elements(dtype, nan=name in ("max", "min", "sum"))))
    axis = draw(axes_for(a.ndim))
    return name, a, axis, draw(st.booleans()), draw(st.sampled_from(layouts_for(a)))


@pytest.mark.slow
@given(reduction_cases())
def test_reductions_match_dense(case):
    name, a, axis, keepdims, layout = case
    fn = getattr(xp, name)
    A = sparse_of(a, layout)
    out_size = int(np.prod([n for i, n in enumerate(a.shape) if i not in normalized(axis, a.ndim)]))
    if name in ("max", "min") and reduced_count(a.shape, axis) == 0 and out_size:
        with pytest.raises(ValueError, match=rf"^xp\.{name}: "):
            fn(A, axis=axis, keepdims=keepdims)
        return
    if dense_result_expected(name, a.shape, axis, keepdims):
        check_computed_densely(fn, A, axis=axis, keepdims=keepdims, match=rf"^xp\.{name}: ")
        return
    want = fn(xp.asarray(a), axis=axis, keepdims=keepdims)
    out = fn(A, axis=axis, keepdims=keepdims)
    full = len(normalized(axis, a.ndim)) == a.ndim
    assert isinstance(out, xp.Array if full else xp.sparse.BCOO)
    assert_like_dense(out, want)
    assert_like_dense(jax.jit(lambda A: fn(A, axis=axis, keepdims=keepdims))(A), want)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_each_reduction_with_implicit_zeros(name):
    """Lines that are full, that have implicit zeros, that are empty; duplicates summed first."""
    dtype = next(d for d in (dt.float32, dt.int32, dt.bool) if d in REDUCTIONS[name])
    a = np.array([[2, 3, 1, 4], [0, -2, 0, 5], [0, 0, 0, 0]]).astype(dtype)
    for layout in ("duplicates", "bcsr", "batched"):
        A = sparse_of(a, layout)
        for axis in (None, 0, 1, (0, 1), ()):
            if name in ("max", "min") and axis == ():
                continue
            for keepdims in (False, True):
                fn = getattr(xp, name)
                assert_like_dense(fn(A, axis=axis, keepdims=keepdims), fn(xp.asarray(a), axis=axis, keepdims=keepdims))


@pytest.mark.x64
def test_max_of_negative_line_with_implicit_zero_is_zero():
    A = sparse_of(np.array([[-1.0, 0.0, -3.0], [-1.0, -2.0, -3.0]]))
    np.testing.assert_array_equal(to_numpy(xp.max(A, axis=1)), [0.0, -1.0])
    np.testing.assert_array_equal(to_numpy(xp.min(-A, axis=1)), [0.0, 1.0])
    assert float(xp.max(A)) == 0.0


@pytest.mark.x64
def test_prod_with_implicit_zero_propagates_nan_and_inf():
    A = sparse_of(np.array([[np.nan, 0.0], [np.inf, 0.0], [2.0, 3.0], [2.0, 0.0]]))
    np.testing.assert_array_equal(to_numpy(xp.prod(A, axis=1)), [np.nan, np.nan, 6.0, 0.0])


@pytest.mark.slow
@pytest.mark.parametrize("layout", helpers.LAYOUTS)
def test_std_where_the_squared_deviations_overflow_or_underflow(layout):
    # float32 deviations of 1e20 and 1e-20 square out of range (std was inf and 0), stored and
    # implicit (the average's deviation, for each implicit zero); float64 holds the squares
    a = np.array([[1e20, 0, -1e20, 0], [0, 0, 0, 0], [1e-20, 0, 0, -3e-20], [2.0, 0, 5.0, 1.0]], np.float32)
    A = sparse_of(a, layout)
    for axis in (None, 0, 1):
        for correction in (0, 1):
            want = np.std(a.astype(np.float64), axis=axis, ddof=correction)
            np.testing.assert_allclose(to_numpy(xp.std(A, axis=axis, correction=correction)), want, rtol=1e-5)


def test_sum_dtype_rules_are_the_dense_ones():
    a = np.array([[0, 200], [100, 0]], dtype=np.uint8)
    A = sparse_of(a)
    for kwargs in ({}, {"dtype": xp.uint16}, {"axis": 0}, {"axis": 1, "dtype": xp.float32}):
        assert_like_dense(xp.sum(A, **kwargs), xp.sum(xp.asarray(a), **kwargs))
    with pytest.raises(TypeError) as sparse_error:
        xp.sum(sparse_of(np.array([True, False])))
    with pytest.raises(TypeError) as dense_error:
        xp.sum(xp.asarray([True, False]))
    assert str(sparse_error.value) == str(dense_error.value)


@pytest.mark.x64
def test_dense_results_are_computed_densely():
    A = sparse_of(np.zeros((3, 0)))
    for fn in (xp.prod, xp.mean, xp.all):
        check_computed_densely(fn, A, axis=1, match="so the result is dense")
    check_computed_densely(xp.var, sparse_of(np.ones((2, 3))), axis=1, correction=3)
    check_computed_densely(xp.cumulative_sum, sparse_of(np.ones(3)), match=r"^xp\.cumulative_sum: running sums")


# --- argmax, argmin -------------------------------------------------------------------------


# slow: test_arg_extrema_ties_with_implicit_zeros covers both functions in the dev loop
@pytest.mark.slow
@given(st.sampled_from(["argmax", "argmin"]), st.sampled_from(REAL), st.data())
def test_arg_extrema(name, dtype, data):
    a = data.draw(hnp.arrays(dtype, shapes(min_dims=1, max_dims=3, max_side=4), elements=elements(dtype, nan=True)))
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    keepdims = data.draw(st.booleans())
    A = sparse_of(a, data.draw(st.sampled_from(layouts_for(a))))
    fn = getattr(xp, name)
    want = fn(xp.asarray(a), axis=axis, keepdims=keepdims)
    out = fn(A, axis=axis, keepdims=keepdims)
    assert isinstance(out, xp.Array)
    assert_like_dense(out, want, exact=True)
    assert_like_dense(jax.jit(lambda A: fn(A, axis=axis, keepdims=keepdims))(A), want, exact=True)


@pytest.mark.slow
@pytest.mark.x64
def test_arg_extrema_ties_with_implicit_zeros():
    a = np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 2.0], [-2.0, -1.0, -3.0], [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]])
    for layout in ("plain", "duplicates"):
        A = sparse_of(a, layout)
        for axis in (None, 0, 1):
            assert_like_dense(xp.argmax(A, axis=axis), xp.argmax(xp.asarray(a), axis=axis), exact=True)
            assert_like_dense(xp.argmin(A, axis=axis), xp.argmin(xp.asarray(a), axis=axis), exact=True)


# --- cumulative -----------------------------------------------------------------------------


@pytest.mark.slow
@given(st.sampled_from([d for d in NUMERIC if d.kind != "c"]), st.data())
def test_cumulative_prod(dtype, data):
    a = data.draw(hnp.arrays(dtype, shapes(min_dims=1, max_dims=3, max_side=4), elements=elements(dtype)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1)) if a.ndim > 1 else data.draw(st.sampled_from([None, 0]))
    A = sparse_of(a, data.draw(st.sampled_from(layouts_for(a))))
    out = xp.cumulative_prod(A, axis=axis)
    assert isinstance(out, xp.sparse.BCOO)
    assert_like_dense(out, xp.cumulative_prod(xp.asarray(a), axis=axis))
    check_computed_densely(xp.cumulative_prod, A, axis=axis, include_initial=True, match="include_initial=True")


# --- transformations ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.x64
def test_grad_of_reductions():
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    A = sparse_of(a)
    indices = A.jax.indices

    def loss(data, reduce):
        S = xp.sparse.BCOO.from_jax(jsparse.BCOO((data, indices), shape=A.shape))
        rows = reduce(S)
        return jnp.sum(rows.todense()._value if isinstance(rows, xp.sparse.SparseArray) else rows._value)

    def dense_loss(data, reduce):
        return jnp.sum(reduce(jsparse.BCOO((data, indices), shape=A.shape).todense()))

    for sparse_fn, dense_fn in [
        (lambda S: xp.sum(S, axis=1) ** 2, lambda D: jnp.sum(D, axis=1) ** 2),
        (lambda S: xp.max(S, axis=0), lambda D: jnp.max(D, axis=0)),
        (lambda S: xp.var(S), lambda D: jnp.var(D)),
        (lambda S: xp.prod(S + S, axis=1), lambda D: jnp.prod(D + D, axis=1)),
    ]:
        np.testing.assert_allclose(
            jax.grad(loss)(A.jax.data, sparse_fn), jax.grad(dense_loss)(A.jax.data, dense_fn), rtol=1e-6
        )


# --- sums along one axis by the native kernel -------------------------------------------------


@pytest.mark.slow
@needs_native
@given(problems())
def test_sums_along_an_axis_are_products_with_ones_on_the_native_kernel(p):
    """``sum`` and ``mean`` along one axis of a matrix storing more entries than the result has
    elements: ``A @ 1`` or ``A.T @ 1`` by the native kernel (xp/sparse/_reduction_kernels.py),
    for sorted and unsorted BCOO and BCSR; padding entries, whose values are not zero here,
    add nothing."""
    expected = native_dense(p)
    dtype = xp.sum(xp.zeros((1, 1), dtype=p["data"].dtype), axis=0).dtype
    for make, cls in ((native_bcoo, xp.sparse.BCOO), (native_bcsr, xp.sparse.BCSR)):
        A = cls.from_jax(make(p))
        for axis in (0, 1):
            total = jax.jit(lambda A: xp.sum(A, axis=axis))  # noqa: B023 - called at once
            for out in (xp.sum(A, axis=axis), total(A)):
                native_check(np.asarray(out.todense()), expected.sum(axis), dtype)
            if lines.applies(make(p), axis):
                assert "xp_c" in total.lower(A).as_text()  # xp_csr_matmul, xp_csr_rmatmul or xp_coo_matmul
            if p["data"].dtype.kind == "f" and expected.shape[axis] > 0:
                mean = xp.mean(A, axis=axis)
                native_check(np.asarray(mean.todense()), expected.sum(axis) / expected.shape[axis], dtype)
