"""The main namespace's linear algebra functions (matmul, matrix_transpose, tensordot, vecdot):
values against NumPy on generated arrays, the dtype and broadcasting rules, matrix_transpose as
a view, behaviour under jit, vmap and grad, and the error messages. Runs with JAX's 64-bit mode
on or off."""

import fixed_shapes
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xp
from xp import _dtypes as dt

AVAILABLE = dt.available()
NUMERIC = [d for d in AVAILABLE if d in dt.NUMERIC]
FLOAT = dt.default_float()


def promoted(d1, d2):
    """The promoted dtype of ``d1`` and ``d2``, or None where there is none available now."""
    try:
        result = dt.promote(np.dtype(d1), np.dtype(d2))
    except dt.PromotionError:
        return None
    return result if result in AVAILABLE else None


def elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        return st.integers(0 if dtype.kind == "u" else -3, 3)
    width = dtype.itemsize * 8 if dtype.kind == "f" else dtype.itemsize * 4
    part = st.floats(-2, 2, width=width)
    return part if dtype.kind == "f" else st.builds(complex, part, part)


@st.composite
def dtype_pairs(draw, dtypes=NUMERIC):
    """Two dtypes with a promoted dtype that is available."""
    d1 = draw(st.sampled_from(dtypes))
    d2 = draw(st.sampled_from(dtypes))
    if promoted(d1, d2) is None:
        d2 = d1
    return d1, d2


def check(result, expected, dtype, size=1):
    """``result`` matches ``expected`` (exactly for integers; within a few ulps times the
    number of summed terms for floats) and has ``dtype``, strongly typed."""
    assert isinstance(result, xp.Array)
    assert not result.jax.weak_type
    assert result.dtype == dtype, (result.dtype, dtype)
    expected = np.asarray(expected)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    actual = np.asarray(result)
    if actual.dtype.kind in "fc":
        eps = np.finfo(actual.dtype).eps
        np.testing.assert_allclose(actual, expected, rtol=eps * 16 * size, atol=eps * 64 * size)
    else:
        np.testing.assert_array_equal(actual, expected)


# --- matmul ---------------------------------------------------------------------------------


@st.composite
def matmul_arguments(draw):
    d1, d2 = draw(dtype_pairs())
    m, k, n = (draw(fixed_shapes.sides(0, 4)) for _ in range(3))
    batch1, batch2 = draw(fixed_shapes.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3)).input_shapes
    form = draw(st.sampled_from(["matrices", "vector @ matrix", "matrix @ vector", "vectors"]))
    shape1 = (k,) if form in ("vector @ matrix", "vectors") else (*batch1, m, k)
    shape2 = (k,) if form in ("matrix @ vector", "vectors") else (*batch2, k, n)
    x1 = draw(hnp.arrays(d1, shape1, elements=elements(d1)))
    x2 = draw(hnp.arrays(d2, shape2, elements=elements(d2)))
    return x1, x2


@given(args=matmul_arguments())
def test_matmul_matches_numpy(args):
    x1, x2 = args
    want = dt.promote(x1.dtype, x2.dtype)
    result = xp.matmul(xp.asarray(x1), xp.asarray(x2))
    expected = np.matmul(x1.astype(want), x2.astype(want))
    check(result, expected, want, size=x1.shape[-1])
    operator = xp.asarray(x1) @ xp.asarray(x2)
    check(operator, expected, want, size=x1.shape[-1])


def test_matmul_integers_wrap():
    x = xp.asarray(np.full((1, 2), 100, np.int8))
    check(xp.matmul(x, xp.matrix_transpose(x)), [[32]], dt.int8)  # 100 * 100 * 2 = 20000 = 32 (mod 256)


def test_matmul_does_not_conjugate():
    a = np.array([[1j, 2]], dtype=np.complex64)
    check(xp.matmul(xp.asarray(a), xp.asarray(a.T)), a @ a.T, dt.complex64)


@pytest.mark.parametrize(
    ("shape1", "shape2", "pattern"),
    [
        ((), (3,), r"x1 and x2 must have at least one dimension, got shapes \(\) and \(3,\)"),
        ((3,), (4,), r"the last axis of x1 \(3\) must have the size of the only axis of x2 \(4\)"),
        ((2, 3), (2, 3), r"the last axis of x1 \(3\) must have the size of the second-to-last axis of x2 \(2\)"),
        (
            (2, 2, 3),
            (3, 3, 1),
            r"the batch axes of x1 and x2 cannot be broadcast together: shapes \(2, 2, 3\) and \(3, 3, 1\)",
        ),
    ],
)
def test_matmul_shape_errors(shape1, shape2, pattern):
    with pytest.raises(ValueError, match=r"xp\.matmul: " + pattern):
        xp.matmul(xp.ones(shape1), xp.ones(shape2))


def test_matmul_dtype_errors():
    with pytest.raises(TypeError, match=r"xp\.matmul: x1 must have a numeric dtype, got bool"):
        xp.matmul(xp.ones((2, 2), dtype=xp.bool), xp.ones((2, 2)))
    if dt.x64_enabled():
        with pytest.raises(TypeError, match=r"xp\.matmul: x1 and x2: uint64 and int8 have no common dtype"):
            xp.matmul(xp.ones(2, dtype=xp.uint64), xp.ones(2, dtype=xp.int8))
    with pytest.raises(ValueError, match=r"xp\.matmul: x1 and x2 must have at least one dimension"):
        _ = xp.ones((2, 2)) @ 2


# --- matrix_transpose -----------------------------------------------------------------------


@given(
    x=st.sampled_from(AVAILABLE).flatmap(
        lambda d: hnp.arrays(
            d, fixed_shapes.shapes(min_dims=2, max_dims=4, min_side=0, max_side=3), elements=elements(d)
        )
    )
)
def test_matrix_transpose_matches_numpy(x):
    check(xp.matrix_transpose(xp.asarray(x)), np.swapaxes(x, -1, -2), x.dtype)
    check(xp.matrix_transpose(x), np.swapaxes(x, -1, -2), x.dtype)  # a NumPy array: not a view


def test_matrix_transpose_is_a_view():
    x = xp.asarray(np.arange(6.0).reshape(2, 3).astype(FLOAT))
    t = xp.matrix_transpose(x)
    t[0, 1] = -1.0  # t[0, 1] is x[1, 0]
    assert float(x[1, 0]) == -1.0
    x[0, 2] = 7.0  # x[0, 2] is t[2, 0]
    assert float(t[2, 0]) == 7.0
    assert t.shape == (3, 2)


def test_matrix_transpose_errors():
    with pytest.raises(ValueError, match=r"xp\.matrix_transpose: x must have at least 2 dimensions, got shape \(3,\)"):
        xp.matrix_transpose(xp.ones(3))


# --- tensordot ------------------------------------------------------------------------------


@st.composite
def tensordot_arguments(draw):
    d1, d2 = draw(dtype_pairs())
    shape1 = draw(fixed_shapes.shapes(min_dims=0, max_dims=4, min_side=0, max_side=3))
    ndim2 = draw(st.integers(0, 4))
    if draw(st.booleans()):  # an int: the last `count` axes of x1 with the first of x2
        count = draw(st.integers(0, min(len(shape1), ndim2)))
        contracted = shape1[len(shape1) - count :]
        rest = draw(fixed_shapes.shapes(min_dims=ndim2 - count, max_dims=ndim2 - count, min_side=0, max_side=3))
        shape2 = contracted + rest
        axes = count
        np_axes = count
    else:  # pairs of axes, in any order, negative or not
        first = draw(st.lists(st.integers(0, len(shape1) - 1), unique=True, max_size=3)) if shape1 else []
        ndim2 = len(first) + draw(st.integers(0, 2))
        second = list(draw(st.permutations(range(ndim2)))[: len(first)])
        shape2 = [draw(st.integers(0, 3)) for _ in range(ndim2)]
        for a1, a2 in zip(first, second, strict=True):
            shape2[a2] = shape1[a1]
        shape2 = tuple(shape2)
        negate = draw(st.booleans())
        axes = ([a - len(shape1) if negate else a for a in first], tuple(second))
        np_axes = (first, second)
    x1 = draw(hnp.arrays(d1, shape1, elements=elements(d1)))
    x2 = draw(hnp.arrays(d2, shape2, elements=elements(d2)))
    return x1, x2, axes, np_axes


@given(args=tensordot_arguments())
def test_tensordot_matches_numpy(args):
    x1, x2, axes, np_axes = args
    want = dt.promote(x1.dtype, x2.dtype)
    result = xp.tensordot(xp.asarray(x1), xp.asarray(x2), axes=axes)
    expected = np.tensordot(x1.astype(want), x2.astype(want), axes=np_axes)
    contracted = np_axes if isinstance(np_axes, int) else len(np_axes[0])
    check(result, expected, want, size=max(1, x1.size) if contracted else 1)


def test_tensordot_forms():
    a = np.arange(24.0).reshape(2, 3, 4).astype(FLOAT)
    c = np.arange(12.0).reshape(4, 3).astype(FLOAT)
    check(
        xp.tensordot(xp.asarray(a), xp.asarray(c), axes=([1, 2], [1, 0])), np.tensordot(a, c, ([1, 2], [1, 0])), FLOAT
    )
    check(xp.tensordot(xp.asarray(a), xp.asarray(c), axes=(2, 0)), np.tensordot(a, c, (2, 0)), FLOAT)
    check(xp.tensordot(xp.asarray(a), xp.asarray(c), axes=0), np.tensordot(a, c, 0), FLOAT)
    check(xp.tensordot(xp.asarray(a), xp.asarray(c), axes=np.int64(1)), np.tensordot(a, c, 1), FLOAT)


@pytest.mark.parametrize(
    ("axes", "kind", "pattern"),
    [
        (3, ValueError, r"axes=3 exceeds the dimensions of x1 \(3\) or x2 \(2\)"),
        (-1, ValueError, r"axes must be non-negative, got -1"),
        (True, TypeError, r"axes must be a non-negative int or a pair of sequences of axes"),
        ("1", TypeError, r"axes must be a non-negative int or a pair of sequences of axes .*got str"),
        ((1, 2, 3), TypeError, r"axes must be .* got a sequence of length 3"),
        (([1], "a"), TypeError, r"axes\[1\] must be a sequence of axes, got str"),
        (([1, 2], [0]), ValueError, r"axes must name as many axes of x1 as of x2, got 2 and 1"),
        (([1, 1], [0, 1]), ValueError, r"axes\[0\] has repeated axes: \(1, 1\)"),
        (([3], [0]), IndexError, r"axes\[0\]=3 is out of bounds for an array of 3 dimensions"),
        (([1], [1]), ValueError, r"axis 1 of x1 \(size 3\) and axis 1 of x2 \(size 5\) must have the same size"),
    ],
)
def test_tensordot_errors(axes, kind, pattern):
    with pytest.raises(kind, match=r"xp\.tensordot: " + pattern):
        xp.tensordot(xp.ones((2, 3, 4)), xp.ones((3, 5)), axes=axes)


# --- vecdot ---------------------------------------------------------------------------------


@st.composite
def vecdot_arguments(draw):
    d1, d2 = draw(dtype_pairs())
    shape1, shape2 = draw(
        fixed_shapes.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, min_side=0, max_side=3)
    ).input_shapes
    low = min(len(shape1), len(shape2))
    axis = draw(st.integers(-low, -1))
    size = draw(fixed_shapes.sides(0, 4))
    shape1, shape2 = list(shape1), list(shape2)
    shape1[axis] = shape2[axis] = size
    x1 = draw(hnp.arrays(d1, tuple(shape1), elements=elements(d1)))
    x2 = draw(hnp.arrays(d2, tuple(shape2), elements=elements(d2)))
    return x1, x2, axis


@given(args=vecdot_arguments())
def test_vecdot_matches_numpy(args):
    x1, x2, axis = args
    want = dt.promote(x1.dtype, x2.dtype)
    result = xp.vecdot(xp.asarray(x1), xp.asarray(x2), axis=axis)
    a, c = x1.astype(want), x2.astype(want)
    expected = np.sum(np.conj(a) * c, axis=axis, dtype=want)
    check(result, expected, want, size=x1.shape[axis])
    check(xp.linalg.vecdot(xp.asarray(x1), xp.asarray(x2), axis=axis), expected, want, size=x1.shape[axis])


def test_vecdot_conjugates_x1():
    x1 = xp.asarray(np.array([1j, 2j, 3j], np.complex64))
    x2 = xp.asarray(np.array([1, 2j, 3], np.complex64))
    assert complex(xp.vecdot(x1, x2)) == pytest.approx(4 - 10j)


def test_vecdot_non_negative_axis_needs_equal_ranks():
    x = xp.asarray(np.arange(6.0).reshape(2, 3).astype(FLOAT))
    check(xp.vecdot(x, x, axis=0), np.sum(np.arange(6.0).reshape(2, 3) ** 2, axis=0), FLOAT)
    with pytest.raises(IndexError, match=r"xp\.vecdot: axis=0 must be negative .*shapes \(2, 3\) and \(3,\)"):
        xp.vecdot(x, xp.ones(3), axis=0)


@pytest.mark.parametrize(
    ("shape1", "shape2", "axis", "kind", "pattern"),
    [
        (
            (2, 3),
            (2, 4),
            -1,
            ValueError,
            r"x1 and x2 must have the same size along axis -1: shapes \(2, 3\) and \(2, 4\)",
        ),
        ((3, 1), (1, 3), -1, ValueError, r"x1 and x2 must have the same size along axis -1"),  # not broadcast
        ((2, 3), (3,), -2, IndexError, r"axis=-2 is out of bounds: it must be in \[-1, -1\]"),
        ((2, 3), (4, 3), -1, ValueError, r"x1 and x2 cannot be broadcast together \(apart from axis -1\)"),
        ((), (3,), -1, ValueError, r"x1 and x2 must have at least one dimension"),
        ((2, 3), (2, 3), 2, IndexError, r"axis=2 is out of bounds"),
    ],
)
def test_vecdot_errors(shape1, shape2, axis, kind, pattern):
    with pytest.raises(kind, match=r"xp\.vecdot: " + pattern):
        xp.vecdot(xp.ones(shape1), xp.ones(shape2), axis=axis)


def test_vecdot_rejects_bool():
    with pytest.raises(TypeError, match=r"xp\.vecdot: x2 must have a numeric dtype, got bool"):
        xp.vecdot(xp.ones(2), xp.ones(2, dtype=xp.bool))


# --- jit, vmap, grad ------------------------------------------------------------------------


def test_jit_vmap_grad():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3, 3)).astype(FLOAT)
    v = rng.standard_normal((4, 3)).astype(FLOAT)
    av, vv = xp.asarray(a), xp.asarray(v)
    check(jax.jit(xp.matmul)(av, vv[0]), a @ v[0], FLOAT, 3)
    check(jax.vmap(xp.matmul)(av, vv), np.einsum("bij,bj->bi", a, v), FLOAT, 3)
    check(jax.vmap(lambda x, y: xp.vecdot(x, y))(vv, vv), np.sum(v * v, axis=1), FLOAT, 3)
    check(
        jax.jit(lambda x: xp.tensordot(x, x, axes=([1, 2], [1, 2])))(av), np.tensordot(a, a, ([1, 2], [1, 2])), FLOAT, 9
    )
    check(jax.jit(xp.matrix_transpose)(av), np.swapaxes(a, -1, -2), FLOAT)
    # d/dx (x . y) = y ; d/dA sum(A @ v) = 1 v^T
    grad = jax.grad(lambda x: xp.vecdot(x, vv[1]).jax)(vv[0])
    np.testing.assert_allclose(np.asarray(grad), v[1], rtol=1e-6)
    grad_a = jax.grad(lambda m: jnp.sum(xp.matmul(m, vv[0]).jax))(av[0])
    np.testing.assert_allclose(np.asarray(grad_a), np.outer(np.ones(3), v[0]), rtol=1e-6)


def test_transpose_view_under_jit():
    def f(x):
        t = xp.matrix_transpose(x)
        t[0, 1] = 0.0
        return x

    x = np.arange(4.0).reshape(2, 2).astype(FLOAT)
    expected = x.copy()
    expected[1, 0] = 0.0
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(xp.asarray(x))), expected)


# --- 64-bit integer products where XLA has no 64-bit integer dot (a TPU) ----------------------


def _dots_of_wide_integers(stablehlo):
    return [line for line in stablehlo.splitlines() if "dot_general" in line and ("xi64>" in line or "xui64>" in line)]


@pytest.mark.x64
@pytest.mark.parametrize(
    ("name", "product"),
    [
        ("matmul", lambda a, b: xp.matmul(a, b)),
        ("@", lambda a, b: a @ b),
        ("linalg.matmul", lambda a, b: xp.linalg.matmul(a, b)),
        ("tensordot", lambda a, b: xp.tensordot(a, b, axes=1)),
        ("linalg.tensordot", lambda a, b: xp.linalg.tensordot(a, b, axes=([1], [0]))),
    ],
)
@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_64_bit_integer_products_lowered_for_a_tpu_use_no_dot(name, product, dtype):
    # XLA:TPU cannot lower a dot of 64-bit integers ("While rewriting computation to not contain
    # X64 element types ... not implemented"); the program xp lowers for a TPU sums products
    # instead, and the CPU's keeps XLA's dot (the choice is made when the program is lowered)
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    b = np.arange(12, dtype=dtype).reshape(3, 4)

    def program(a, b):
        return product(xp.asarray(a), xp.asarray(b))._value

    traced = jax.jit(program).trace(a, b)
    assert _dots_of_wide_integers(traced.lower(lowering_platforms=("cpu",)).as_text()), name
    assert not _dots_of_wide_integers(traced.lower(lowering_platforms=("tpu",)).as_text()), name
    np.testing.assert_array_equal(np.asarray(jax.jit(program)(a, b)), np.tensordot(a, b, 1))


WIDE = st.sampled_from([np.int64, np.uint64])


@pytest.mark.x64
@given(
    dtype=WIDE,
    batch1=hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3),
    batch2=st.sampled_from([(), (1,), (3,)]),
    sizes=st.tuples(*[st.integers(0, 5)] * 3),
    vectors=st.sampled_from([(False, False), (True, False), (False, True), (True, True)]),
    chunk=st.sampled_from([1, 3, 1 << 22]),
    data=st.data(),
)
def test_wide_integer_matmul_is_numpy_s_product(dtype, batch1, batch2, sizes, vectors, chunk, data):
    # the TPU's formulation, run here: exact, wrapping around as NumPy's 64-bit products do,
    # through the chunked inner axis too
    from xp import _linear_algebra

    n, k, m = sizes
    shape1 = (k,) if vectors[0] else (*batch1, n, k)
    shape2 = (k,) if vectors[1] else (*batch2, k, m)
    info = np.iinfo(dtype)
    values = st.integers(int(info.min), int(info.max))
    a = data.draw(hnp.arrays(dtype, shape1, elements=values))
    b = data.draw(hnp.arrays(dtype, shape2, elements=values))
    try:
        with np.errstate(over="ignore"):
            want = np.matmul(a, b)
    except ValueError:  # batch axes that do not broadcast: not this function's concern
        return
    got = np.asarray(_linear_algebra.wide_integer_matmul(jnp.asarray(a), jnp.asarray(b), chunk))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.x64
@pytest.mark.parametrize("axes", [((1, 2), (1, 0)), ((), ()), ((2,), (0,)), ((0, 1, 2), (2, 1, 0))])
def test_wide_integer_tensordot_is_numpy_s(axes):
    from xp import _linear_algebra

    a = (np.arange(24, dtype=np.int64).reshape(2, 3, 4) - 5) * (2**40 + 3)
    b = np.arange(24, dtype=np.int64).reshape(4, 3, 2) * (2**30 + 7)
    if axes == ((0, 1, 2), (2, 1, 0)):
        b = b.reshape(2, 3, 4).transpose(2, 1, 0)
    with np.errstate(over="ignore"):
        want = np.tensordot(a, b, axes)
    got = _linear_algebra.wide_integer_tensordot(jnp.asarray(a), jnp.asarray(b), axes)
    np.testing.assert_array_equal(np.asarray(got), want)
