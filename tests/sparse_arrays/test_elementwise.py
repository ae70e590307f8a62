"""Element-wise functions of sparse arrays against the dense functions: the zero-preservation
table, sparse∘sparse (union, intersection, first operand's pattern), sparse∘scalar decided on
the scalar, sparse×dense, duplicates and padding, dtype rules and errors, jit and grad, astype,
clip, and generic array-API code mixing sparse and dense arrays."""

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from accuracy_requests import with_the_tpu_s_concatenation
from fixed_shapes import mutually_broadcastable_shapes
from hypothesis import given
from hypothesis import strategies as st
from jax.experimental import sparse as jsparse

import xp
import xp.sparse
from xp import _dtypes as dt
from xp import _elementwise as ew
from xp.sparse import _elementwise as sew

from .helpers import SHAPES, assert_like_dense, check_computed_densely, dense_arrays, layouts_for, sparse_of, to_numpy

AVAILABLE = dt.available()
X64 = dt.x64_enabled()


def accepts(op, dtype):
    return dtype in op.accepts or (op.lift and dtype in dt.INTEGER)


def dtypes_of(op):
    return [d for d in AVAILABLE if accepts(op, d)]


# --- the tables -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("op", ew.UNARY, ids=lambda op: op.name)
def test_zero_preserving_table(op):
    """ZERO_PRESERVING lists exactly the unary functions with f(0) == 0 in every dtype they take."""
    images = [np.asarray(ew.FUNCTIONS[op.name](xp.zeros((), dtype=d))) for d in dtypes_of(op)]
    assert all(v == 0 for v in images) == (op.name in sew.ZERO_PRESERVING)
    if op.name in sew.ZERO_PRESERVING:
        assert all(v == 0 for v in images)


SAMPLES = (-3, -1, 2, 5)


@pytest.mark.slow
@pytest.mark.parametrize("op", ew.BINARY, ids=lambda op: op.name)
def test_binary_kinds_table(op):
    """f(0, 0) == 0 for the listed functions (in every dtype), != 0 for some dtype otherwise;
    the intersection functions are 0 with either operand 0, the FIRST ones with the first."""
    fn = ew.FUNCTIONS[op.name]
    kind = sew.BINARY_KINDS.get(op.name)
    at_zero = [np.asarray(fn(xp.zeros((), dtype=d), xp.zeros((), dtype=d))) for d in dtypes_of(op)]
    assert all(v == 0 for v in at_zero) == (kind is not None)
    for d in dtypes_of(op):
        zero = xp.zeros((), dtype=d)
        for s in SAMPLES:
            if d == dt.bool:
                s = s > 0
            elif d.kind == "u":
                s = abs(s)
            other = xp.asarray(s, dtype=d)
            if kind == sew.INTERSECTION:
                assert np.asarray(fn(zero, other)) == 0 and np.asarray(fn(other, zero)) == 0
            if kind == sew.FIRST:
                assert np.asarray(fn(zero, other)) == 0


# --- unary ----------------------------------------------------------------------------------


@st.composite
def unary_cases(draw, names):
    name = draw(st.sampled_from(sorted(names)))
    op = ew.OPS[name]
    dtype = draw(st.sampled_from(dtypes_of(op)))
    a = draw(dense_arrays(dtype, SHAPES))
    return name, a, draw(st.sampled_from(layouts_for(a)))


@given(unary_cases(sew.ZERO_PRESERVING))
def test_unary_matches_dense(case):
    name, a, layout = case
    A = sparse_of(a, layout)
    fn = getattr(xp, name)
    out = fn(A)
    assert isinstance(out, type(A))  # format (and layout) kept
    assert (out.n_batch, out.n_dense) == (A.n_batch, A.n_dense)
    assert_like_dense(out, fn(xp.asarray(a)))
    assert_like_dense(jax.jit(fn)(A), fn(xp.asarray(a)), exact=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(sew.ZERO_PRESERVING))
def test_each_unary(name):
    op = ew.OPS[name]
    dtype = next(d for d in (dt.float32, dt.int32, dt.bool, dt.complex64) if accepts(op, d))
    a = np.array([[0, 1, 0], [3, 0, 2]]).astype(dtype)
    for layout in ("duplicates", "bcsr"):
        A = sparse_of(a, layout)
        assert_like_dense(getattr(xp, name)(A), getattr(xp, name)(xp.asarray(a)))


@pytest.mark.parametrize("op", [op for op in ew.UNARY if op.name not in sew.ZERO_PRESERVING], ids=lambda op: op.name)
def test_unary_not_preserving_zero_is_computed_densely(op):
    A = sparse_of(np.array([0, 1, 0]).astype(dtypes_of(op)[0]))
    check_computed_densely(getattr(xp, op.name), A, match=rf"^xp\.{op.name}: {op.name}\(0\) is not 0")


def test_unary_dtype_errors_are_the_dense_ones():
    A = sparse_of(np.array([True, False]))
    with pytest.raises(TypeError) as sparse_error:
        xp.sin(A)
    with pytest.raises(TypeError) as dense_error:
        xp.sin(xp.asarray([True, False]))
    assert str(sparse_error.value) == str(dense_error.value)


@pytest.mark.x64
def test_nonlinear_unary_sums_duplicates_first():
    a = np.array([0.0, 1.0, 0.0, 2.0])
    A = sparse_of(a, "duplicates")
    assert_like_dense(xp.square(A), xp.square(xp.asarray(a)))
    assert_like_dense(xp.sign(A), xp.sign(xp.asarray(a)))


# --- two sparse operands --------------------------------------------------------------------


def broadcastable_shapes():
    return mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)


@st.composite
def binary_cases(draw, names):
    name = draw(st.sampled_from(sorted(names)))
    op = ew.OPS[name]
    d1 = draw(st.sampled_from(dtypes_of(op)))
    d2 = draw(st.sampled_from([d for d in dtypes_of(op) if (d1, d) in dt.PROMOTION_TABLE]))
    shapes = draw(broadcastable_shapes()).input_shapes
    a1 = draw(dense_arrays(d1, shapes[0]))
    a2 = draw(dense_arrays(d2, shapes[1]))
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        a2 = np.abs(a2)
    return name, a1, a2, draw(st.sampled_from(layouts_for(a1))), draw(st.sampled_from(layouts_for(a2)))


def _promotable(op, d1, d2):
    try:
        dt.promote(d1, d2)
    except dt.PromotionError:
        return False
    return True


# slow: each function's sparse-sparse case runs in the dev loop in test_each_sparse_sparse
@pytest.mark.slow
@given(binary_cases(sew.BINARY_KINDS))
def test_sparse_sparse_matches_dense(case):
    name, a1, a2, l1, l2 = case
    op = ew.OPS[name]
    if not _promotable(op, a1.dtype, a2.dtype):
        return
    fn = getattr(xp, name)
    A1, A2 = sparse_of(a1, l1), sparse_of(a2, l2)
    want = fn(xp.asarray(a1), xp.asarray(a2))
    out = fn(A1, A2)
    assert isinstance(out, xp.sparse.BCOO)
    assert_like_dense(out, want)
    assert_like_dense(jax.jit(fn)(A1, A2), want, exact=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(sew.BINARY_KINDS))
def test_each_sparse_sparse(name):
    op = ew.OPS[name]
    dtype = next(d for d in (dt.float32, dt.int32, dt.bool) if accepts(op, d))
    a1 = np.array([[0, 1, 0, 2], [3, 0, 0, 1]]).astype(dtype)
    a2 = np.array([[0, 2, 1, 0], [0, 0, 3, 1]]).astype(dtype)
    fn = getattr(xp, name)
    out = fn(sparse_of(a1, "duplicates"), sparse_of(a2, "padded"))
    assert_like_dense(out, fn(xp.asarray(a1), xp.asarray(a2)))
    assert out.jax.unique_indices and out.jax.indices_sorted


@pytest.mark.x64
def test_intersection_keeps_structural_zeros_zero():
    """A structural zero times inf is 0 (the policy), a stored one NaN (as densely)."""
    A = sparse_of(np.array([0.0, 1.0, 0.0]), "padded")
    B = sparse_of(np.array([np.inf, np.inf, 0.0]))
    np.testing.assert_array_equal(to_numpy(A * B), [0.0, np.inf, 0.0])
    np.testing.assert_array_equal(to_numpy(A * np.inf), [0.0, np.inf, 0.0])


@pytest.mark.parametrize("op", [op for op in ew.BINARY if op.name not in sew.BINARY_KINDS], ids=lambda op: op.name)
def test_sparse_sparse_not_preserving_zero_is_computed_densely(op):
    dtype = dtypes_of(op)[0] if op.name != "divide" else dt.float32
    A = sparse_of(np.array([0, 1, 0]).astype(dtype))
    check_computed_densely(getattr(xp, op.name), A, A, match=rf"^xp\.{op.name}: {op.name}\(0, 0\) is not 0")


@pytest.mark.x64
def test_binary_errors_are_the_dense_ones():
    A = sparse_of(np.array([1.0, 0.0]))
    B = sparse_of(np.array([1.0, 0.0, 2.0]))
    for fn, args, dense_args in [
        (xp.add, (A, B), (xp.asarray([1.0, 0.0]), xp.asarray([1.0, 0.0, 2.0]))),
        (xp.bitwise_and, (A, A), (xp.asarray([1.0, 0.0]),) * 2),
        (xp.multiply, (A, "a"), (xp.asarray([1.0, 0.0]), "a")),
    ]:
        with pytest.raises((TypeError, ValueError)) as sparse_error:
            fn(*args)
        with pytest.raises((TypeError, ValueError)) as dense_error:
            fn(*dense_args)
        assert type(sparse_error.value) is type(dense_error.value)
        assert str(sparse_error.value) == str(dense_error.value)


# --- a Python scalar ------------------------------------------------------------------------


SCALAR_OPS = [op.name for op in ew.BINARY]


@st.composite
def scalar_cases(draw):
    name = draw(st.sampled_from(SCALAR_OPS))
    op = ew.OPS[name]
    dtype = draw(st.sampled_from(dtypes_of(op)))
    a = draw(dense_arrays(dtype, SHAPES))
    if dtype.kind == "b":
        scalar = draw(st.booleans())
    elif dtype.kind in "iu":
        scalar = draw(st.integers(0 if dtype.kind == "u" else -3, 3))
    else:
        scalar = draw(st.sampled_from([0.0, 1.0, -2.0, 0.5, np.inf, np.nan]))
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        scalar = abs(scalar)
    return name, a, scalar, draw(st.booleans()), draw(st.sampled_from(layouts_for(a)))


@given(scalar_cases())
def test_sparse_scalar_decided_on_the_scalar(case):
    name, a, scalar, scalar_first, layout = case
    fn = getattr(xp, name)
    A = sparse_of(a, layout)
    args = (scalar, A) if scalar_first else (A, scalar)
    dense_args = (scalar, xp.asarray(a)) if scalar_first else (xp.asarray(a), scalar)
    zero = np.asarray(
        fn(scalar, xp.zeros((), dtype=a.dtype)) if scalar_first else fn(xp.zeros((), dtype=a.dtype), scalar)
    )
    if zero == 0 or sew.BINARY_KINDS.get(name) == sew.INTERSECTION:
        out = fn(*args)
        assert isinstance(out, type(A))
        want = fn(*dense_args)
        if zero == 0:
            assert_like_dense(out, want)
        else:  # multiply by inf or NaN: structural zeros stay zero, stored elements as densely
            stored = a != 0
            np.testing.assert_array_equal(to_numpy(out)[stored], to_numpy(want)[stored])
            assert not np.any(to_numpy(out)[~stored])
        jitted = jax.jit(lambda A: fn(scalar, A) if scalar_first else fn(A, scalar))(A)
        assert_like_dense(jitted, out, exact=False)  # XLA may fold a traced scalar
    else:
        check_computed_densely(fn, *args, match=rf"^xp\.{name}: ")


@pytest.mark.x64
def test_scalar_operators():
    a = np.array([[0.0, 2.0], [-3.0, 0.0]])
    A = sparse_of(a)
    X = xp.asarray(a)
    for got, want in [(A * 2, X * 2), (A / 2, X / 2), (-A, -X), (A**2, X**2), (A > 0, X > 0), (A != 0, X != 0),
                      (0 - A, 0 - X), (A + 0, X + 0), (abs(A), abs(X))]:  # fmt: skip
        assert_like_dense(got, want)
    for dense in (lambda A: A + 1, lambda A: A / 0, lambda A: A == 0, lambda A: 1 / A, lambda A: A**0, lambda A: A < 1):
        check_computed_densely(dense, A, match="so the result is dense")


# --- a dense operand ------------------------------------------------------------------------


@pytest.mark.slow
@given(
    st.sampled_from(["multiply", "bitwise_and", "logical_and", "bitwise_left_shift", "bitwise_right_shift"]),
    st.data(),
)
def test_sparse_dense(name, data):
    op = ew.OPS[name]
    dtype = data.draw(st.sampled_from(dtypes_of(op)))
    shapes = data.draw(broadcastable_shapes()).input_shapes
    a = data.draw(dense_arrays(dtype, shapes[0]))
    d = data.draw(dense_arrays(dtype, shapes[1]))
    if name.startswith("bitwise_") and "shift" in name:
        d = np.abs(d)
    A = sparse_of(a, data.draw(st.sampled_from(layouts_for(a))))
    fn = getattr(xp, name)
    want = fn(xp.asarray(a), xp.asarray(d))
    out = fn(A, xp.asarray(d))
    assert isinstance(out, xp.sparse.BCOO)
    assert_like_dense(out, want)
    assert_like_dense(jax.jit(fn)(A, xp.asarray(d)), want, exact=False)
    if "shift" not in name:
        assert_like_dense(fn(xp.asarray(d), A), fn(xp.asarray(d), xp.asarray(a)))


@pytest.mark.x64
def test_sparse_dense_with_dense_result_is_computed_densely():
    A = sparse_of(np.array([0.0, 1.0]))
    for fn in (xp.add, xp.subtract, xp.divide, xp.maximum, xp.less):
        check_computed_densely(fn, A, xp.ones(2), match="of a sparse and a dense array is not zero")
    shift = sparse_of(np.array([0, 1], dtype=np.int32))
    check_computed_densely(xp.bitwise_left_shift, xp.ones(2, dtype=xp.int32), shift)


@pytest.mark.x64
def test_computing_densely_can_be_forbidden():
    A = sparse_of(np.array([0.0, 1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", xp.sparse.SparseEfficiencyWarning)
        with pytest.raises(xp.sparse.SparseEfficiencyWarning, match=r"^xp\.exp: exp\(0\) is not 0"):
            xp.exp(A)
        assert_like_dense(xp.sin(A), xp.sin(A.todense()))  # sparse results do not warn


# --- transformations ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.x64
def test_grad_through_elementwise():
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    b = np.array([[1.0, 0.0, 0.0], [3.0, 2.0, -2.0]])
    A, B = sparse_of(a), sparse_of(b)
    indices = A.jax.indices

    def sparse_loss(data):
        S = xp.sparse.BCOO.from_jax(jsparse.BCOO((data, indices), shape=A.shape))
        return jnp.sum(((xp.sin(S) * B + S * 2) / 3).todense()._value ** 2)

    def dense_loss(data):
        S = jsparse.BCOO((data, indices), shape=A.shape).todense()
        return jnp.sum(((jnp.sin(S) * b + S * 2) / 3) ** 2)

    np.testing.assert_allclose(jax.grad(sparse_loss)(A.jax.data), jax.grad(dense_loss)(A.jax.data), rtol=1e-6)


@pytest.mark.x64
def test_vmap_over_sparse_stored_values():
    A = sparse_of(np.array([0.0, 1.0, 2.0]))
    out = jax.vmap(lambda s: (A * s).todense()._value)(jnp.arange(3.0))
    np.testing.assert_array_equal(out, np.outer(np.arange(3.0), [0.0, 1.0, 2.0]))


# --- astype and clip ------------------------------------------------------------------------


@given(st.sampled_from(AVAILABLE), st.sampled_from(AVAILABLE), st.data())
def test_astype(source, target, data):
    a = data.draw(dense_arrays(source, SHAPES))
    if source.kind == "c" and target.kind != "c":
        with pytest.raises(TypeError, match=r"^xp\.astype: "):
            xp.astype(sparse_of(a), target)
        return
    if source.kind == "f" and target.kind in "iu":
        a = np.trunc(a).clip(0 if target.kind == "u" else -3, 3).astype(source)
    A = sparse_of(a, data.draw(st.sampled_from(layouts_for(a))))
    out = xp.astype(A, target)
    assert isinstance(out, type(A))
    assert_like_dense(out, xp.astype(xp.asarray(a), target))
    assert_like_dense(jax.jit(lambda A: xp.astype(A, target))(A), xp.astype(xp.asarray(a), target))
    if source == target:
        assert xp.astype(A, target, copy=False) is A


@pytest.mark.x64
def test_astype_to_integer_sums_duplicates_first():
    a = np.array([0.0, 3.0, 0.0])  # stored as 1.5 + 1.5: truncating each would give 2
    assert_like_dense(xp.astype(sparse_of(a, "duplicates"), xp.int32), xp.asarray([0, 3, 0], dtype=xp.int32))


@pytest.mark.x64
def test_clip():
    a = np.array([[0.0, 5.0, -4.0], [0.5, 0.0, 2.0]])
    A = sparse_of(a, "duplicates")
    assert_like_dense(xp.clip(A, -1.0, 1.0), xp.clip(xp.asarray(a), -1.0, 1.0))
    assert_like_dense(xp.clip(A, max=1.0), xp.clip(xp.asarray(a), max=1.0))
    for bounds in ((1.0, 2.0), (None, -1.0)):
        check_computed_densely(xp.clip, A, *bounds, match=r"^xp\.clip: clip\(0, ")
    check_computed_densely(xp.clip, A, xp.zeros(3), None, match=r"^xp\.clip: an array min bound")


def test_data_type_functions_of_sparse_arrays():
    """The sparse implementations (xp's data type functions reach them once they route arrays)."""
    from xp import _routing as routing

    A = sparse_of(np.array([0.0, 1.0], dtype=np.float32))
    assert routing.route_sparse("result_type", (A, 1.0), {}) == xp.float32
    assert routing.route_sparse("can_cast", (A, xp.float64 if X64 else xp.float32), {})
    assert routing.route_sparse("finfo", (A,), {}).bits == 32
    assert routing.route_sparse("iinfo", (sparse_of(np.array([0, 1], dtype=np.int16)),), {}).bits == 16


# --- generic code ---------------------------------------------------------------------------


def generic_score(x, w):
    """Array-API code that knows nothing of sparse arrays."""
    from array_api_compat import array_namespace

    ns = array_namespace(x, w)
    scaled = ns.multiply(x, w)
    positive = ns.maximum(scaled, ns.negative(scaled) * 0)
    return ns.sum(ns.sqrt(ns.abs(positive)), axis=-1)


@pytest.mark.slow
@pytest.mark.x64
def test_generic_code_mixing_sparse_and_dense():
    a = np.array([[0.0, 4.0, 0.0], [9.0, 0.0, 1.0]])
    w = xp.asarray([1.0, 2.0, 3.0])
    from array_api_compat import array_namespace

    assert array_namespace(sparse_of(a), w) is xp
    got = generic_score(sparse_of(a), w)
    want = generic_score(xp.asarray(a), w)
    assert isinstance(got, xp.sparse.SparseArray)
    assert_like_dense(got, want, exact=False)
    assert_like_dense(jax.jit(generic_score)(sparse_of(a), w), want, exact=False)
    assert math.isclose(float(xp.sum(got)), float(xp.sum(want)))


@pytest.mark.slow
@pytest.mark.x64
@pytest.mark.parametrize("shape", [(), (2,)])
def test_signed_zeros_of_a_sum_with_a_structural_zero(shape):
    """-0.0 + (structural) 0.0 is +0.0, as densely (0-d arrays took a path where the compiler
    folded the sum into -0.0)."""
    for a, b in ((-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0)):
        x1, x2 = np.full(shape, a), np.full(shape, b)
        for fn in (xp.add, lambda u, v: u + v, xp.subtract):
            out, want = fn(sparse_of(x1), sparse_of(x2)), fn(xp.asarray(x1), xp.asarray(x2))
            got, expected = to_numpy(out), to_numpy(want)
            np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("dtype", list(xp.__array_namespace_info__().dtypes(kind="real floating").values()))
def test_copysign_reads_the_sign_of_a_stored_nan_with_the_tpu_s_concatenation(dtype):
    """copysign(x1, NaN with its sign bit set) is -|x1| for sparse operands (a special case of the
    standard) with XLA:TPU's concatenation too, which clears a NaN's sign bit: the union of the two
    patterns carries the bit beside each value in an integer mark."""
    x1 = np.array([np.inf, np.nan, 2.0, 0.0, -3.0], np.float32)
    x2 = np.array([-np.nan, -np.nan, -np.nan, 5.0, 0.0], np.float32)
    dense = xp.copysign(*(xp.asarray(x, dtype=dtype) for x in (x1, x2)))
    a1, a2 = (xp.sparse.asarray(x, dtype=dtype) for x in (x1, x2))
    for copysign in (xp.copysign, with_the_tpu_s_concatenation(xp.copysign)):
        got, want = to_numpy(copysign(a1, a2).todense()), to_numpy(dense)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
