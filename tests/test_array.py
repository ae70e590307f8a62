"""The array object: attributes, operators, indexing, mutation and views, conversions, JAX
transformations."""

import copy
import math
import operator
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from view_write_programs import basic_keys

import xp

# --- namespace and attributes ---------------------------------------------------------------


@pytest.mark.parametrize("version", [None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12"])
def test_array_namespace(version):
    assert xp.asarray(1.0).__array_namespace__(api_version=version) is xp


def test_array_namespace_rejects_unknown_versions():
    with pytest.raises(ValueError, match="api_version must be None or one of"):
        xp.asarray(1.0).__array_namespace__(api_version="2020.10")


def test_attributes():
    x = xp.zeros((2, 3, 4), dtype=xp.int16)
    assert x.shape == (2, 3, 4) and type(x.shape) is tuple
    assert x.ndim == 3 and x.size == 24 and x.dtype == xp.int16
    assert x.device == jax.devices()[0]
    assert x.mT.shape == (2, 4, 3)
    assert xp.zeros((2, 3)).T.shape == (3, 2)


def test_transpose_needs_the_right_rank():
    with pytest.raises(ValueError, match="xp.Array.T: the array must be 2-dimensional"):
        xp.zeros((2, 3, 4)).T
    with pytest.raises(ValueError, match="xp.Array.mT: the array must have at least 2 dimensions"):
        xp.zeros(3).mT


def test_the_constructor_is_not_public():
    with pytest.raises(TypeError, match="use xp.asarray"):
        xp.Array(jnp.ones(3))


def test_jax_round_trip_is_zero_copy():
    raw = jnp.arange(4.0)
    x = xp.asarray(raw)
    assert x.jax is raw


# --- operators ------------------------------------------------------------------------------

BINARY = [
    (operator.add, np.add), (operator.sub, np.subtract), (operator.mul, np.multiply),
    (operator.truediv, np.true_divide), (operator.floordiv, np.floor_divide), (operator.mod, np.mod),
    (operator.pow, np.power), (operator.lt, np.less), (operator.le, np.less_equal),
    (operator.gt, np.greater), (operator.ge, np.greater_equal), (operator.eq, np.equal), (operator.ne, np.not_equal),
]  # fmt: skip

# XLA flushes subnormal results to zero, so values stay well away from them
finite = st.one_of(st.just(0.0), st.floats(1e-3, 100), st.floats(-100, -1e-3))


@pytest.mark.slow
@pytest.mark.x64
@given(hnp.arrays(np.float64, 5, elements=finite), hnp.arrays(np.float64, 5, elements=st.floats(0.5, 3)))
@pytest.mark.parametrize(("op", "reference"), BINARY)
def test_binary_operators_match_numpy(op, reference, a, b):
    out = op(xp.asarray(a), xp.asarray(b))
    with np.errstate(invalid="ignore"):  # (a negative base's fractional power: NaN, as xp's)
        want = reference(a, b)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-12)
    # with a Python scalar on either side
    np.testing.assert_allclose(np.asarray(op(xp.asarray(a), 2.0)), reference(a, 2.0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(op(2.0, xp.asarray(b))), reference(2.0, b), rtol=1e-12)


@given(hnp.arrays(np.int32, 6, elements=st.integers(-1000, 1000)), st.integers(0, 8))
def test_bitwise_operators_match_numpy(a, shift):
    x = xp.asarray(a)
    assert np.array_equal(np.asarray(x & 7), a & 7)
    assert np.array_equal(np.asarray(x | 7), a | 7)
    assert np.array_equal(np.asarray(x ^ 7), a ^ 7)
    assert np.array_equal(np.asarray(x << shift), a << shift)
    assert np.array_equal(np.asarray(x >> shift), a >> shift)
    assert np.array_equal(np.asarray(~x), ~a)
    assert np.array_equal(np.asarray(-x), -a)
    assert np.array_equal(np.asarray(+x), a)
    assert np.array_equal(np.asarray(abs(x)), np.abs(a))


@pytest.mark.x64
def test_matmul_operator():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(3.0)
    assert np.allclose(np.asarray(xp.asarray(a) @ xp.asarray(b)), a @ b)
    assert np.allclose(np.asarray(b @ xp.asarray(a).T), b @ a.T)


@pytest.mark.x64
def test_operators_take_foreign_arrays_on_either_side():
    x = xp.asarray([1.0, 2.0])
    for other in (np.array([1.0, 1.0]), jnp.array([1.0, 1.0]), np.float64(1.0)):
        assert isinstance(x + other, xp.Array)
    for other in (np.array([1.0, 1.0]), np.float64(1.0)):
        assert isinstance(other + x, xp.Array), type(other)  # NumPy defers (__array_priority__)
    # A jax.Array on the left computes in JAX, which converts x through __jax_array__ (docs/jax.md)
    out = jnp.array([1.0, 1.0], dtype=x.dtype) + x
    assert isinstance(out, jax.Array) and not isinstance(out, xp.Array)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x + 1.0))


def test_unknown_operands_give_not_implemented():
    x = xp.asarray([1.0])
    with pytest.raises(TypeError, match="unsupported operand"):
        x + "a"
    assert (x == "a") is False  # Python falls back to identity when both sides decline


def test_in_place_operators_rebind():
    x = xp.asarray([1.0, 2.0])
    same = x
    x += 1
    x *= 2
    assert x is same
    assert x.jax.tolist() == [4.0, 6.0]


def test_in_place_operators_keep_dtype_and_shape():
    x = xp.asarray([1, 2], dtype=xp.int8)
    with pytest.raises(TypeError, match="in-place operation cannot change the array's dtype int8"):
        x += 1.5
    y = xp.zeros(3)
    with pytest.raises(ValueError, match="cannot change the array's shape"):
        y += xp.zeros((2, 3))
    assert x.jax.tolist() == [1, 2]


def test_in_place_operators_do_not_store_a_sparse_result_in_a_dense_array():
    x = xp.ones((2, 2))
    A = xp.sparse.eye(2)
    with pytest.raises(TypeError, match=r"__imul__: the result is a sparse BCOO, .* \(x = x \* A\)"):
        x *= A  # (type checkers flag this line too: x * A may be sparse)
    assert type(x.jax) is type(xp.ones(2).jax) and x.jax.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    x *= A.todense()
    assert x.jax.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_a_failing_in_place_operator_with_a_sparse_operand_changes_nothing_views_included():
    """Issue #10, defect 1: ``d *= A`` / ``d &= A`` stored JAX's sparse object in ``d`` (and, with a
    live view, failed half-way); eagerly and under jax.jit."""
    cases = [
        ("__imul__", xp.ones((2, 3)), xp.sparse.fromdense(xp.eye(2, 3))),
        ("__iand__", xp.ones((2, 3), dtype=xp.bool), xp.sparse.fromdense(xp.astype(xp.eye(2, 3), xp.bool))),
    ]
    for name, d, A in cases:
        view = d[0]
        before = np.asarray(d).copy()
        with pytest.raises(TypeError, match=rf"^xp.Array.{name}: the result is a sparse BCOO"):
            getattr(d, name)(A)
        np.testing.assert_array_equal(np.asarray(d), before)
        np.testing.assert_array_equal(np.asarray(view), before[0])
        assert type(d.jax) is type(xp.ones(1).jax)  # still a dense array
        with pytest.raises(TypeError, match=rf"^xp.Array.{name}: the result is a sparse BCOO"):
            jax.jit(lambda a, b, name=name: getattr(a, name)(b))(d, A)


# --- indexing -------------------------------------------------------------------------------


def _array_and_basic_key(data, min_dims):
    shape = data.draw(st.lists(st.integers(1, 5), min_size=min_dims, max_size=3).map(tuple))
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return a, data.draw(basic_keys(shape))


@given(st.data())
def test_basic_getitem_matches_numpy(data):
    a, key = _array_and_basic_key(data, min_dims=0)
    assert np.array_equal(np.asarray(xp.asarray(a)[key]), a[key])


@given(st.data())
def test_basic_setitem_matches_numpy(data):
    a, key = _array_and_basic_key(data, min_dims=1)
    x = xp.asarray(a)
    target = a.copy()
    target[key] = -1.0
    x[key] = -1.0
    assert np.array_equal(np.asarray(x), target)
    update = np.arange(target[key].size, dtype=np.float32).reshape(target[key].shape) + 100
    target[key] = update
    x[key] = xp.asarray(update)
    assert np.array_equal(np.asarray(x), target)


@given(st.data())
def test_a_basic_key_used_again_reads_and_writes_the_same(data):
    # the second use of a plain key is parsed from xp._indexing's cache, the third and later pass
    # the starts kept on the device: each must read and write what NumPy does
    a, key = _array_and_basic_key(data, min_dims=1)
    x = xp.asarray(a)
    target = a.copy()
    for i in range(3):
        assert np.array_equal(np.asarray(x[key]), target[key])
        x[key] = float(-i)
        target[key] = float(-i)
        assert np.array_equal(np.asarray(x), target)


def test_a_plain_key_is_parsed_once_and_its_starts_kept_on_the_device():
    from xp import _indexing

    x = xp.arange(17.0)  # (a shape no other test indexes: the cache is the process's)
    first = _indexing.parse(slice(3, 11, 2), x.shape)
    assert _indexing.parse((slice(3, 11, 2),), x.shape) is first  # a key alone is a key of one entry
    assert first.device_starts is None  # not for an index used once (a loop over positions)
    for _ in range(2):
        assert x[3:11:2].jax.tolist() == [3.0, 5.0, 7.0, 9.0]
    assert isinstance(first.device_starts, jax.Array) and first.device_starts.tolist() == first.starts.tolist()
    assert _indexing.parse(slice(3, 11, 2), (18,)) is not first  # another shape, another plan


def test_the_parse_cache_keeps_apart_keys_that_compare_equal():
    x = xp.arange(5)
    for _ in range(2):
        assert int(x[1]) == 1
        assert x[1:3].jax.tolist() == [1, 2]
    assert x[True].shape == (1, 5)  # True == 1 and hashes alike; a bool index adds an axis
    assert x[True:3].jax.tolist() == [1, 2]  # as NumPy (a bool is an int there)
    with pytest.raises(IndexError, match=r"slice bounds must be integers or None, got slice\(1.0, 3, None\)"):
        x[1.0:3]  # 1.0 == 1 and hashes alike
    assert x[np.int64(1) : np.int32(3)].jax.tolist() == [1, 2]
    for _ in range(2):
        assert x[::1].jax.tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(IndexError, match=r"slice bounds must be integers or None, got slice\(None, None, 1.0\)"):
        x[::1.0]


def test_a_key_reused_first_within_a_trace_leaves_no_tracer_behind():
    x = xp.arange(19.0)  # (a shape no other test indexes)
    for offset in (0.0, 1.0):  # the first use parses, the second would move the starts to the device
        out = jax.jit(lambda offset=offset: x[2:9:3] + offset)()
        assert out.jax.tolist() == [2.0 + offset, 5.0 + offset, 8.0 + offset]
    with jax.checking_leaks():
        assert x[2:9:3].jax.tolist() == [2.0, 5.0, 8.0]
        x[2:9:3] = -1.0
    assert jax.jit(lambda v: v[2:9:3])(x).jax.tolist() == [-1.0, -1.0, -1.0]


@given(st.data())
def test_a_sole_integer_array_index_matches_numpy(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    dtype = data.draw(st.sampled_from([np.int8, np.int32, np.uint8, np.uint16]))
    low = 0 if np.dtype(dtype).kind == "u" else -shape[0]
    index_shape = data.draw(st.lists(st.integers(0, 3), max_size=2).map(tuple))
    index = data.draw(hnp.arrays(dtype, index_shape, elements=st.integers(low, shape[0] - 1)))
    x = xp.asarray(a)
    i = xp.asarray(index)
    assert np.array_equal(np.asarray(x[i]), a[index])
    x[i] = -1.0
    a[index] = -1.0
    assert np.array_equal(np.asarray(x), a)


def test_integer_loop_compiles_once():
    from xp import _indexing

    x = xp.zeros(50)
    # first writes: the kernel exists from here, x's buffer is its output (a jitted function caches
    # one entry per argument placement, committed or not), and index 0 (a static start) has its entry
    x[0] = 0.0
    x[1] = 0.0
    before = _indexing._basic_set._cache_size()
    for i in range(50):
        x[i] = float(i)
    assert x.jax.tolist() == [float(i) for i in range(50)]
    assert _indexing._basic_set._cache_size() - before <= 1  # not one compilation per index


@pytest.mark.x64
def test_integer_array_indexing():
    a = np.arange(20).reshape(4, 5)
    x = xp.asarray(a)
    rows, cols = np.array([0, 3, -1]), np.array([1, 4, 0])
    assert np.array_equal(np.asarray(x[xp.asarray(rows), xp.asarray(cols)]), a[rows, cols])
    assert np.array_equal(np.asarray(x[xp.asarray(1), 2]), a[1, 2])
    x[xp.asarray(rows), xp.asarray(cols)] = -5
    a[rows, cols] = -5
    assert np.array_equal(np.asarray(x), a)


def test_out_of_bounds_indices_raise_eagerly():
    x = xp.arange(5)
    with pytest.raises(IndexError, match=r"xp.Array.__getitem__: index 5 is out of bounds for axis 0 with size 5"):
        x[5]
    with pytest.raises(IndexError, match=r"xp.Array.__getitem__: index 7 is out of bounds for axis 0 with size 5"):
        x[xp.asarray([0, 7])]
    with pytest.raises(IndexError, match=r"xp.Array.__getitem__: index -6 is out of bounds for axis 0 with size 5"):
        x[xp.asarray([[-6], [1]])]
    with pytest.raises(IndexError, match=r"xp.Array.__getitem__: too many indices for an array of 0 dimensions"):
        xp.asarray(1.0)[xp.asarray([0])]
    with pytest.raises(IndexError, match="index arrays must have an integer or boolean dtype, got float"):
        x[xp.asarray([0.0])]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="lists are not valid indices"):
        x[[0, 1]]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[1.5]


@given(hnp.arrays(np.float32, (4, 3), elements=st.floats(-5, 5, width=32)))
def test_boolean_masks(a):
    x = xp.asarray(a)
    mask = a > 0
    assert np.array_equal(np.asarray(x[xp.asarray(mask)]), a[mask])
    assert np.array_equal(np.asarray(x[xp.asarray(mask[:, 0])]), a[mask[:, 0]])
    x[xp.asarray(mask)] = 0.0
    b = a.copy()
    b[mask] = 0.0
    assert np.array_equal(np.asarray(x), b)


def test_zero_dimensional_boolean_index():
    x = xp.arange(3)
    assert x[True].shape == (1, 3)
    assert x[xp.asarray(False)].shape == (0, 3)


@pytest.mark.x64
def test_setitem_value_dtype_rules():
    x = xp.zeros(3, dtype=xp.float32)
    x[0] = 1  # a Python int fits a float array
    x[1] = xp.asarray(2, dtype=xp.int16)  # int16 promotes to float32 (JAX's lattice)
    x[2] = xp.asarray(1 / 3, dtype=xp.float64)  # a wider float is rounded to the array's precision
    assert x.dtype == xp.float32 and float(x[2]) == float(np.float32(1 / 3))
    x[2] = 0.0
    with pytest.raises(
        TypeError, match="value has dtype complex64, which does not promote to the array's dtype float32"
    ):
        x[2] = xp.asarray(1j, dtype=xp.complex64)
    i = xp.zeros(2, dtype=xp.int8)
    with pytest.raises(TypeError, match="value has dtype int64, which does not promote to the array's dtype int8"):
        i[0] = xp.asarray(3, dtype=xp.int64)  # integers are never narrowed: a cast could wrap
    with pytest.raises(TypeError, match="value is a Python float, which int8 cannot hold"):
        i[0] = 1.5
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        i[0] = 300
    with pytest.raises(ValueError, match="cannot be broadcast to the indexed shape"):
        x[:2] = xp.zeros(3, dtype=xp.float32)
    assert x.jax.tolist() == [1.0, 2.0, 0.0]


# --- views ----------------------------------------------------------------------------------


def test_writing_into_a_view_writes_into_the_base():
    covariances = xp.zeros((2, 3, 3))
    block = covariances[1, :, :]
    for i in range(3):
        block[i, i] += 1.0  # scikit-learn's _add_to_diagonal pattern
    assert np.array_equal(np.asarray(covariances[1]), np.eye(3))
    assert np.array_equal(np.asarray(covariances[0]), np.zeros((3, 3)))


def test_writing_into_the_base_refreshes_views():
    x = xp.arange(6.0)
    tail = x[3:]
    x[4] = 40.0
    assert tail.jax.tolist() == [3.0, 40.0, 5.0]
    x += 1
    assert tail.jax.tolist() == [4.0, 41.0, 6.0]


def test_views_of_an_array_written_before_they_were_made():
    # a first write marks the array as having no base and no views (xp.Array._assign): views
    # made after it must still be linked both ways
    x = xp.arange(6.0)
    x[0] = -1.0
    x[5] = -6.0
    tail = x[3:]
    x[4] = 40.0
    assert tail.jax.tolist() == [3.0, 40.0, -6.0]
    tail[0] = 30.0
    assert x.jax.tolist() == [-1.0, 1.0, 2.0, 30.0, 40.0, -6.0]
    head = tail[:1]  # a view of a view that was itself written
    head[0] = 3.5
    assert x.jax.tolist()[3] == 3.5 and tail.jax.tolist()[0] == 3.5


def test_views_of_views():
    x = xp.zeros((4, 4))
    row = x[2]
    part = row[1:3]
    part[...] = 7.0
    assert x.jax[2].tolist() == [0.0, 7.0, 7.0, 0.0]
    sibling = x[2, ::-1]
    part[0] = 1.0
    assert sibling.jax.tolist() == [0.0, 7.0, 1.0, 0.0]


def test_copies_are_independent():
    x = xp.arange(3.0)
    y = xp.asarray(x, copy=True)
    y[0] = 9.0
    assert float(x[0]) == 0.0
    z = copy.copy(x)
    z[1] = 9.0
    assert float(x[1]) == 1.0


# --- conversions ----------------------------------------------------------------------------


def test_python_scalar_conversions():
    assert bool(xp.asarray(2.0)) is True
    assert int(xp.asarray(-2.7)) == -2
    assert float(xp.asarray(3)) == 3.0
    assert complex(xp.asarray(1.5)) == 1.5 + 0j
    assert operator.index(xp.asarray(4)) == 4
    assert [10, 20, 30][xp.asarray(1)] == 20
    with pytest.raises(TypeError, match="only integer arrays can be used as an index"):
        operator.index(xp.asarray(1.0))
    with pytest.raises(TypeError, match="only arrays of one element"):
        bool(xp.asarray([1, 2]))
    with pytest.raises(TypeError, match="cannot convert a complex array to float"):
        float(xp.asarray(1j))


def test_conversion_special_cases():
    nan = xp.asarray(float("nan"))
    assert bool(nan) is True
    with pytest.raises(ValueError):
        int(nan)
    with pytest.raises(OverflowError):
        int(xp.asarray(float("inf")))
    z = complex(nan)
    assert z.real != z.real and z.imag != z.imag  # NaN + NaN j


@pytest.mark.x64
def test_numpy_conversion_and_dlpack():
    x = xp.asarray([1.0, 2.0])
    assert np.array_equal(np.asarray(x), [1.0, 2.0])
    assert np.array_equal(np.from_dlpack(x), [1.0, 2.0])
    assert x.__dlpack_device__()[1] == 0
    y = xp.from_dlpack(np.arange(3.0))
    assert y.jax.tolist() == [0.0, 1.0, 2.0]
    # a consumer's max_version below JAX's oldest still gets a capsule (of another version)
    for version in ((0, 0), (1, 0), (2, 0)):
        assert x.__dlpack__(max_version=version, copy=False) is not None


def test_an_array_on_a_device_dlpack_has_no_type_for_exports_a_host_copy(monkeypatch):
    """DLPack has no device type for TPU memory; the standard asks every library for an export to
    the CPU (kDLCPU), copying where needed, and a BufferError where a copy is needed but refused.
    Simulated here by taking the CPU off the platforms DLPack describes."""
    from xp import _array

    monkeypatch.setattr(_array, "DLPACK_PLATFORMS", frozenset())
    x = xp.asarray([1.5, -2.0, 3.0], dtype=xp.float32)
    assert x.__dlpack_device__() == (1, 0)  # kDLCPU: where its export lives
    for version in (None, (1, 0)):
        exported = np.from_dlpack(x) if version is None else np.from_dlpack(x, copy=True)
        assert exported.tolist() == [1.5, -2.0, 3.0] and exported.dtype == np.float32
        assert x.__dlpack__(max_version=version, dl_device=(1, 0)) is not None
    exported[0] = 9  # a copy: writable, and x is unchanged
    assert np.asarray(x).tolist() == [1.5, -2.0, 3.0]
    for refused in ({"copy": False}, {"dl_device": (2, 0)}, {"stream": 1}):
        with pytest.raises(BufferError, match=r"xp\.Array\.__dlpack__: "):
            x.__dlpack__(**refused)
    # xp's own arrays, and JAX's, are taken without a capsule: same device, shared where asked
    assert xp.from_dlpack(x).device == x.device
    assert xp.from_dlpack(x, copy=False).device == x.device
    shared = xp.from_dlpack(x.jax, copy=False)
    assert shared.jax is x.jax
    assert np.asarray(xp.from_dlpack(x.jax, copy=True)).tolist() == [1.5, -2.0, 3.0]


def test_from_dlpack_of_an_xp_array_shares_it_writes_included():
    x = xp.zeros(4, dtype=xp.float32)
    for sharing in (None, False):
        shared = xp.from_dlpack(x, copy=sharing)
        shared[0] += 1
        view = xp.from_dlpack(x[1:], copy=sharing)  # a view stays a view of x
        view[0] = 7
    assert np.asarray(x).tolist() == [2.0, 7.0, 0.0, 0.0]
    copied = xp.from_dlpack(x, copy=True)
    copied[3] = 9
    assert np.asarray(x).tolist() == [2.0, 7.0, 0.0, 0.0] and np.asarray(copied)[3] == 9


def test_iteration_and_len():
    x = xp.asarray([[1, 2], [3, 4]])
    assert len(x) == 2
    assert [row.jax.tolist() for row in x] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(xp.asarray(1)).__next__()


@pytest.mark.x64
def test_repr_and_pickle():
    x = xp.asarray([1.0, 2.0])
    assert repr(x) == "Array([1., 2.], dtype=float64)"
    assert np.array_equal(np.asarray(pickle.loads(pickle.dumps(x))), [1.0, 2.0])
    seen = []
    jax.jit(lambda v: seen.append(repr(v)) or v)(x)
    assert seen == ["Array(traced float64[2])"]


def test_to_device():
    x = xp.asarray([1.0])
    device = jax.devices()[0]
    assert x.to_device(device).device == device
    with pytest.raises(TypeError, match="device must be a jax.Device"):
        x.to_device("cpu")


# --- JAX transformations --------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.x64
def test_pytree_jit_grad_vmap():
    x = xp.asarray([1.0, 2.0, 3.0])

    @jax.jit
    def f(v):
        return xp.sum(xp.sin(v) * v)

    assert isinstance(f(x), xp.Array)
    g = jax.grad(lambda v: f(v).jax)(x)
    assert isinstance(g, xp.Array)
    np.testing.assert_allclose(np.asarray(g), np.sin([1, 2, 3.0]) + np.array([1, 2, 3.0]) * np.cos([1, 2, 3.0]))
    batched = jax.vmap(lambda v: v * 2 + 1)(xp.asarray(np.arange(6.0).reshape(2, 3)))
    assert batched.shape == (2, 3)
    leaves = jax.tree.leaves({"a": x})
    assert leaves[0] is x.jax


def test_tracers_have_a_device_and_refuse_python_conversion():
    devices = []

    @jax.jit
    def f(v):
        devices.append(v.device)
        y = xp.zeros(3, device=v.device)
        with pytest.raises(TypeError):
            bool(v[0] > 0)
        with pytest.raises(TypeError):
            np.asarray(v)
        return y + v

    f(xp.asarray([1.0, 2.0, 3.0]))
    assert devices and devices[0] == devices[0]


def test_mutation_under_jit():
    @jax.jit
    def f(v):
        v[0] = 10.0
        v[v < 3] = 0.0  # a mask write is a where(): it traces
        v += 1
        return v

    out = f(xp.asarray([1.0, 2.0, 5.0]))
    assert out.jax.tolist() == [11.0, 1.0, 6.0]


def test_mask_reads_under_jit_say_why_they_fail():
    with pytest.raises(TypeError, match="data-dependent shape.*xp.where"):
        jax.jit(lambda v: v[v > 0])(xp.asarray([1.0, -1.0]))


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
@pytest.mark.parametrize("selected", [True, False])
def test_writes_through_a_0d_mask_match_numpy(shape, selected):
    """``x[m] = v[m]`` with a 0-d mask (array-api-extra's ``at``/``apply_where`` write it): the
    selection has a leading axis of length 1 (True) or 0 (False)."""
    base = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    source = base + 10
    x, mask = xp.asarray(base), xp.asarray(selected)
    x[mask] = xp.asarray(source)[mask]
    expected = base.copy()
    expected[np.bool_(selected)] = source[np.bool_(selected)]
    np.testing.assert_array_equal(np.asarray(x), expected)


def test_a_write_of_nothing_through_a_0d_mask_needs_a_false_mask():
    x = xp.asarray(1.0)
    with pytest.raises(ValueError, match="mask that selects elements"):
        x[xp.asarray(True)] = xp.zeros((0,))
    assert float(x) == 1.0
    with pytest.raises(ValueError, match="traced boolean mask"):
        jax.jit(lambda a, m: a.__setitem__(m, xp.zeros((0,))))(x, xp.asarray(False))


@pytest.mark.slow
@given(
    hnp.arrays(np.bool_, st.sampled_from([(4,), (2, 3), (3, 1), (2, 2, 2)])),
    st.data(),
)
def test_mask_writes_of_one_value_per_selected_element_match_numpy_under_jit(mask, data):
    """NumPy's ``x[mask] = values``: the k-th value goes to the k-th True element in row-major
    order. Under jax.jit the mask is a tracer, so xp places the values by a running count."""
    tail = data.draw(st.sampled_from([(), (2,)]))
    base = np.arange(mask.size * max(1, math.prod(tail)), dtype=np.float32).reshape(mask.shape + tail)
    if not mask.any():  # no values under a traced mask is a ValueError (tested below)
        mask = mask.copy()
        mask.flat[0] = True
    count = int(mask.sum())
    values = np.arange(100, 100 + count * max(1, math.prod(tail)), dtype=np.float32).reshape((count, *tail))
    expected = base.copy()
    expected[mask] = values

    def write(x, m, v):
        x = xp.asarray(x, copy=True)
        x[m] = v
        return x

    for run in (write, jax.jit(write)):
        out = run(xp.asarray(base), xp.asarray(mask), xp.asarray(values))
        assert out.shape == expected.shape
        np.testing.assert_array_equal(np.asarray(out), expected)


def test_a_mask_write_with_more_values_than_elements_is_a_value_error_under_jit():
    def write(x, m, v):
        x[m] = v
        return x

    with pytest.raises(ValueError, match="3 values cannot go to the at most 2 elements"):
        jax.jit(write)(xp.zeros(2), xp.asarray([True, True]), xp.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="no elements through a traced boolean mask"):
        jax.jit(write)(xp.zeros(2), xp.asarray([False, False]), xp.zeros((0,)))
    x = xp.zeros(2)
    x[xp.asarray([False, False])] = xp.zeros((0,))  # eagerly: checked, nothing selected, nothing written
    with pytest.raises(ValueError):
        x[xp.asarray([True, False])] = xp.zeros((0,))
    assert x.jax.tolist() == [0.0, 0.0]
