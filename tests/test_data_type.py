"""Data types: the dtype objects, promotion, and the data type functions."""

import copy
import itertools
import pickle

import array_api_strict as strict
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xp
from xp import _dtypes as dt

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float32", "float64", "complex64", "complex128"]  # fmt: skip
DTYPES = [getattr(xp, n) for n in NAMES]


# --- dtype objects --------------------------------------------------------------------------


def test_dtype_objects_compare_only_with_dtypes():
    assert xp.float64 != None  # noqa: E711 - NumPy's dtypes compare equal to None; ours must not
    assert xp.float32 != "float32"
    assert xp.float32 == xp.float32
    assert xp.float32 != xp.float64
    assert xp.float32 == np.dtype("float32")  # interop with NumPy and JAX dtypes
    assert hash(xp.float32) == hash(np.dtype("float32"))
    for a, b in itertools.combinations(DTYPES, 2):
        assert a != b


def test_an_arrays_dtype_is_the_numpy_dtype_equal_to_the_dtype_object():
    # JAX's own machinery (lax.cond, lax.switch, full_like, NumPy's result_type) takes NumPy
    # dtypes only; the namespace's objects equal them and hash alike, so both sides agree.
    for name, dtype in zip(NAMES, DTYPES, strict=True):
        if dtype in dt.X64_ONLY and not jax.config.jax_enable_x64:
            continue
        got = xp.zeros((), dtype=dtype).dtype
        assert type(got) is not xp.DType and got is np.dtype(name)
        assert got == dtype and dtype == got and hash(got) == hash(dtype)
        assert {dtype: name}[got] == name and got in {dtype}
        assert xp.result_type(xp.zeros((), dtype=dtype)) == got


def test_dtype_objects_work_with_numpy_and_jax():
    assert np.dtype(xp.int16) == np.int16
    assert jnp.zeros(2, dtype=xp.float32).dtype == jnp.float32
    assert repr(xp.uint8) == "xp.uint8"
    assert np.result_type(xp.asarray(np.float32(1))) == np.float32
    assert jax.dtypes.result_type(xp.asarray(np.int16(1))) == np.int16
    assert pickle.loads(pickle.dumps(xp.complex64)) is xp.complex64


# --- promotion ------------------------------------------------------------------------------


def _strict(name):
    return getattr(strict, name)


WIDE = {"int64", "uint64", "float64", "complex128"}


def _pairs():
    """Every pair of dtype names; those that promote to a 64-bit dtype neither of them is need
    JAX's 64-bit mode (without it the promotion is an error, tested in test_x64_off.py)."""
    for a, b in itertools.product(NAMES, NAMES):
        result = dt.PROMOTION_TABLE.get((getattr(dt, a), getattr(dt, b)))
        widens = result is not None and result.name in WIDE and result.name not in (a, b)
        yield pytest.param(a, b, marks=pytest.mark.x64) if widens else (a, b)


@pytest.mark.parametrize(("a", "b"), list(_pairs()))
def test_promotion_table_matches_the_reference_namespace(a, b):
    """Where array-api-strict (the standard's reference) promotes, xp gives the same result."""
    try:
        expected = strict.result_type(_strict(a), _strict(b))
    except TypeError:
        return  # outside the standard's table: xp's own policy, tested below
    assert xp.result_type(getattr(xp, a), getattr(xp, b)).name == expected._np_dtype.name


def test_the_standard_table_has_the_standard_pairs():
    # 13 self pairs + the lattice's off-diagonal pairs, both orders
    assert len(dt.STANDARD_PAIRS) == 73
    assert all(dt.PROMOTION_TABLE[p] == dt.PROMOTION_TABLE[p[::-1]] for p in dt.PROMOTION_TABLE)


@pytest.mark.parametrize(
    ("a", "b", "result"),
    [
        ("bool", "int8", "int8"),
        ("int32", "float32", "float32"),
        ("int64", "float32", "float32"),
        ("uint8", "float64", "float64"),
        ("float32", "complex128", "complex128"),
        pytest.param("float64", "complex64", "complex128", marks=pytest.mark.x64),
        ("int16", "complex64", "complex64"),
    ],
)
def test_mixed_kind_promotion_follows_jax_lattice(a, b, result):
    assert xp.result_type(getattr(xp, a), getattr(xp, b)) == getattr(xp, result)


@pytest.mark.x64
def test_uint64_and_signed_have_no_common_dtype():
    with pytest.raises(TypeError, match=r"xp.result_type: .*uint64 and int8 have no common dtype|int8 and uint64"):
        xp.result_type(xp.uint64, xp.int8)
    with pytest.raises(TypeError, match="no common dtype"):
        xp.add(xp.asarray([1], dtype=xp.uint64), xp.asarray([1], dtype=xp.int64))


@pytest.mark.parametrize(
    ("array_dtype", "scalar", "result"),
    [
        ("int8", 1, "int8"),
        ("uint8", True, "uint8"),
        ("float32", 1, "float32"),
        ("float32", 2.5, "float32"),
        ("complex64", 2.5, "complex64"),
        ("float32", 1j, "complex64"),
        pytest.param("float64", 1j, "complex128", marks=pytest.mark.x64),
    ],
)
def test_python_scalars_take_the_array_dtype(array_dtype, scalar, result):
    x = xp.ones(3, dtype=getattr(xp, array_dtype))
    assert (x + scalar).dtype == getattr(xp, result)
    assert (scalar + x).dtype == getattr(xp, result)
    assert xp.result_type(x, scalar) == getattr(xp, result)


def test_bool_scalars_with_bool_arrays():
    assert (xp.asarray([True, False]) & True).dtype == xp.bool
    with pytest.raises(
        TypeError, match="xp.add: x2 is a Python bool, which xp.add does not take with an array of dtype bool"
    ):
        xp.asarray([True]) + True


def test_higher_kind_scalars_take_the_default_dtype_of_their_kind():
    x = xp.ones(3, dtype=xp.int16)
    assert (x * 0.5).dtype == xp.__array_namespace_info__().default_dtypes()["real floating"]
    assert (xp.asarray([True]) & 1).dtype == xp.__array_namespace_info__().default_dtypes()["integral"]


@pytest.mark.x64
def test_no_weak_type_leaks():
    # JAX would give int8 (the scalar is weakly typed); the standard says int64.
    out = xp.asarray(1) + xp.asarray([1], dtype=xp.int8)
    assert out.dtype == xp.int64
    assert not out.jax.weak_type
    assert not (xp.asarray([1.0]) * 2).jax.weak_type
    assert not xp.asarray(jnp.asarray(1.0)).jax.weak_type


@given(st.integers(min_value=128, max_value=10**6))
def test_out_of_range_python_int_raises(value):
    x = xp.zeros(2, dtype=xp.int8)
    with pytest.raises(OverflowError, match=r"xp.add: Python int \d+ in x2 is out of bounds for int8"):
        x + value


# --- the functions --------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b"), list(itertools.product(NAMES, NAMES)))
def test_can_cast_follows_the_standard_table(a, b):
    # the table, not dt.promote: can_cast knows all 13 dtypes with JAX's 64-bit mode off too
    pair = (getattr(dt, a), getattr(dt, b))
    expected = a == b or (pair in dt.STANDARD_PAIRS and dt.PROMOTION_TABLE[pair] == getattr(dt, b))
    assert xp.can_cast(getattr(xp, a), getattr(xp, b)) is expected
    try:
        assert strict.can_cast(_strict(a), _strict(b)) is expected
    except TypeError:
        pass


def test_can_cast_takes_arrays():
    assert xp.can_cast(xp.asarray([1], dtype=xp.int8), xp.int16)
    assert not xp.can_cast(xp.asarray([1.0]), xp.int64)


@pytest.mark.parametrize(
    "name",
    [
        "float32",
        pytest.param("float64", marks=pytest.mark.x64),
        "complex64",
        pytest.param("complex128", marks=pytest.mark.x64),
    ],
)
def test_finfo(name):
    info = xp.finfo(getattr(xp, name))
    real = np.finfo(np.dtype(name))
    assert isinstance(info.eps, float) and info.eps == float(real.eps)
    assert info.max == float(real.max) and info.min == float(real.min)
    assert info.smallest_normal == float(real.smallest_normal)
    assert info.bits == real.bits
    assert info.dtype == (xp.float32 if name in ("float32", "complex64") else xp.float64)
    assert xp.finfo(xp.ones(1, dtype=getattr(xp, name))) == info


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_iinfo(name):
    info = xp.iinfo(getattr(xp, name))
    assert (info.min, info.max, info.bits) == (np.iinfo(name).min, np.iinfo(name).max, np.iinfo(name).bits)
    assert info.dtype == getattr(xp, name)


def test_finfo_and_iinfo_objects_are_read_only_values():
    info, other = xp.finfo(xp.float32), xp.iinfo(xp.int8)
    assert info == xp.finfo(xp.float32) and hash(info) == hash(xp.finfo(xp.float32))
    assert xp.finfo(xp.complex64) == info != other  # complex64's limits are its float32 components'
    assert other == xp.iinfo(xp.int8) and other != xp.iinfo(xp.uint8) and other != (8, 127, -128, xp.int8)
    assert repr(other) == "iinfo_object(bits=8, max=127, min=-128, dtype=xp.int8)"
    assert info.tiny == info.smallest_normal
    for obj, name in ((info, "eps"), (other, "max"), (info, "new_field")):
        with pytest.raises(AttributeError, match="is read-only"):
            setattr(obj, name, 1)
        with pytest.raises(AttributeError, match="is read-only"):
            delattr(obj, name)
    assert xp.iinfo(xp.int8).max == 127  # unchanged
    for obj in (info, other):
        assert copy.copy(obj) == obj and pickle.loads(pickle.dumps(obj)) == obj


def test_finfo_and_iinfo_reject_the_wrong_kind():
    with pytest.raises(TypeError, match="xp.finfo: type must be a floating-point dtype, got int32"):
        xp.finfo(xp.int32)
    with pytest.raises(TypeError, match="xp.iinfo: type must be an integer dtype, got float32"):
        xp.iinfo(xp.float32)


@pytest.mark.parametrize("name", NAMES)
def test_isdtype_kinds(name):
    dtype = getattr(xp, name)
    for kind in (
        "bool",
        "signed integer",
        "unsigned integer",
        "integral",
        "real floating",
        "complex floating",
        "numeric",
    ):
        assert xp.isdtype(dtype, kind) == strict.isdtype(_strict(name), kind)
    assert xp.isdtype(dtype, dtype)
    assert xp.isdtype(dtype, ("bool", dtype))


def test_isdtype_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="xp.isdtype: kind must be a dtype or one of"):
        xp.isdtype(xp.float32, "floating")


def test_result_type_needs_an_array_or_dtype():
    with pytest.raises(ValueError, match="at least one argument must be an array or a dtype"):
        xp.result_type(1, 2.0)


# --- astype ---------------------------------------------------------------------------------


@pytest.mark.x64
@given(st.sampled_from(NAMES), st.sampled_from(NAMES))
def test_astype_matches_numpy(source, target):
    if source.startswith("complex") and not target.startswith("complex"):
        return
    values = np.array([0, 1, 2, 3], dtype=source)
    out = xp.astype(xp.asarray(values), getattr(xp, target))
    assert out.dtype == getattr(xp, target)
    np.testing.assert_array_equal(np.asarray(out), values.astype(target))


def test_astype_out_of_range_conversions_are_the_documented_ones():
    # floats to integers: truncated toward zero, saturated at the dtype's bounds, NaN to 0
    floats = xp.asarray([300.0, -300.0, np.inf, -np.inf, np.nan, 2.7, -2.7, -0.7])
    assert xp.astype(floats, xp.int8).jax.tolist() == [127, -128, 127, -128, 0, 2, -2, 0]
    assert xp.astype(floats, xp.uint8).jax.tolist() == [255, 0, 255, 0, 0, 2, 0, 0]
    assert xp.astype(xp.asarray([1e10, -1e10]), xp.int32).jax.tolist() == [2**31 - 1, -(2**31)]
    # integers to a narrower integer dtype: modulo 2**bits
    assert xp.astype(xp.asarray([300, -1, 128]), xp.int8).jax.tolist() == [44, -1, -128]
    assert xp.astype(xp.asarray([-1, 256]), xp.uint8).jax.tolist() == [255, 0]


def test_astype_complex_to_real_is_an_error():
    with pytest.raises(TypeError, match="xp.astype: cannot convert complex x to float32"):
        xp.astype(xp.asarray([1j]), xp.float32)


@pytest.mark.x64
def test_astype_copy_semantics():
    x = xp.asarray([1.0, 2.0])
    assert xp.astype(x, xp.float64, copy=False) is x
    y = xp.astype(x, xp.float64)
    assert y is not x
    y[0] = 5.0
    assert float(x[0]) == 1.0


def test_astype_under_jit():
    f = jax.jit(lambda v: xp.astype(v, xp.int32))
    out = f(xp.asarray([1.7, -2.2]))
    assert out.dtype == xp.int32
    assert out.jax.tolist() == [1, -2]
