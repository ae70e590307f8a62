"""Checked mode (``xp.checked``, docs/checked.md) and the bounds checks of constant index arrays.

- Out-of-bounds reads and writes (``x[i]``, ``x[i] = v``, ``take``, ``take_along_axis``, sparse
  indexing) under ``jax.jit`` and ``vmap`` raise in checked mode, with the eager message; in-bounds
  ones (negative included) give the unchecked result; a failing call changes nothing.
- Outside checked mode jitted indexing is what it was: no check in the jaxpr, JAX's clamping.
- Constant NumPy index arrays are checked on their own values (#10, defects 4 and 5).

Runs with JAX's 64-bit mode on or off.
"""

import functools
import warnings

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax.experimental import checkify

import xp
import xp.sparse as xs
from xp import _dtypes as dt

INT = dt.default_int()
OUT_OF_BOUNDS = r"index {} is out of bounds for axis {} with size {}"
TAKE_OUT_OF_BOUNDS = r"indices holds {}, which is out of bounds for axis {} of x with size {}"


def read(a, i):
    return a[i]


def write(a, i, v):
    a[i] = v
    return a


def take(a, i):
    return xp.take(a, i)


def take_along(a, i):
    return xp.take_along_axis(a, i, axis=0)


def mask_write(a, mask, values):
    a[mask] = values
    return a


# jitted once, so that hypothesis' examples reuse the compiled functions
CHECKED = {f.__name__: jax.jit(xp.checked(f)) for f in (read, write, take, take_along, mask_write)}
CHECKED_INSIDE = {f.__name__: xp.checked(jax.jit(f)) for f in (read, write, take)}
PLAIN = {f.__name__: jax.jit(f) for f in (read, write, take, take_along, mask_write)}


def values(x):
    return np.asarray(x).tolist()


def vector(n):
    return xp.asarray(np.arange(10, 10 + n), dtype=INT)


# --- defect 5 and constant index arrays (#10) -----------------------------------------------


def test_a_numpy_index_too_wide_for_int32_is_checked_on_its_value():
    # with 64-bit mode off, converting it to JAX would wrap 2**32 + 1 to 1 (V[1], silently)
    v = vector(5)
    huge = np.array([2**32 + 1])
    message = r"^xp\.Array\.__getitem__: " + OUT_OF_BOUNDS.format(4294967297, 0, 5)
    with pytest.raises(IndexError, match=message):
        v[huge]
    with pytest.raises(IndexError, match=message):
        jax.jit(lambda a: a[huge])(v)
    with pytest.raises(IndexError, match=r"^xp\.Array\.__setitem__: " + OUT_OF_BOUNDS.format(4294967297, 0, 5)):
        v[huge] = 0
    np.testing.assert_array_equal(np.asarray(v), np.arange(10, 15))  # the failed write changed nothing
    with pytest.raises(IndexError, match=r"^xp\.take: " + TAKE_OUT_OF_BOUNDS.format(-4294967297, 0, 5)):
        xp.take(v, np.array([0, -(2**32) - 1]))


@pytest.mark.x64_off
def test_a_numpy_int64_index_is_checked_before_narrowing():
    v = vector(5)
    with xp.narrow_64bit(), warnings.catch_warnings():
        warnings.simplefilter("ignore", xp.NarrowingWarning)
        with pytest.raises(IndexError, match=r"^xp\.take: " + TAKE_OUT_OF_BOUNDS.format(4294967297, 0, 5)):
            xp.take(v, np.array([2**32 + 1]))
        with pytest.raises(IndexError, match=r"^xp\.take_along_axis: " + TAKE_OUT_OF_BOUNDS.format(4294967297, 0, 5)):
            xp.take_along_axis(v, np.array([2**32 + 1]))


@pytest.mark.parametrize(
    ("call", "where", "message"),
    [
        (lambda a: a[np.array([1, 7])], r"xp\.Array\.__getitem__", OUT_OF_BOUNDS.format(7, 0, 5)),
        (lambda a: write(a, np.array([-6]), 1), r"xp\.Array\.__setitem__", OUT_OF_BOUNDS.format(-6, 0, 5)),
        (lambda a: xp.take(a, np.array([5], np.int32)), r"xp\.take", TAKE_OUT_OF_BOUNDS.format(5, 0, 5)),
        (
            lambda a: xp.take_along_axis(a, np.array([-6], np.int32)),
            r"xp\.take_along_axis",
            TAKE_OUT_OF_BOUNDS.format(-6, 0, 5),
        ),
    ],
)
def test_constant_numpy_indices_inside_a_traced_function_are_checked_when_traced(call, where, message):
    v = vector(5)
    with pytest.raises(IndexError, match=f"^{where}: {message}"):
        jax.jit(call)(v)
    with pytest.raises(IndexError, match=f"^{where}: {message}"):
        jax.vmap(lambda a: call(a))(xp.stack([v, v]))
    np.testing.assert_array_equal(np.asarray(v), np.arange(10, 15))


# --- checked mode: reads and writes ---------------------------------------------------------


@pytest.mark.slow
@given(n=st.integers(1, 6), i=st.integers(-14, 13))
def test_checked_reads_and_writes_under_jit(n, i):
    v = vector(n)
    index = xp.asarray(i, dtype=INT)
    if -n <= i < n:
        assert int(CHECKED["read"](v, index)) == 10 + i % n
        assert int(CHECKED_INSIDE["read"](v, index)) == 10 + i % n
        expected = np.arange(10, 10 + n)
        expected[i] = -1
        np.testing.assert_array_equal(np.asarray(CHECKED["write"](v, index, -1)), expected)
        np.testing.assert_array_equal(np.asarray(CHECKED_INSIDE["write"](v, index, -1)), expected)
    else:
        message = OUT_OF_BOUNDS.format(i, 0, n)
        for checked in (CHECKED, CHECKED_INSIDE):
            with pytest.raises(xp.CheckError, match=r"^xp\.Array\.__getitem__: " + message):
                checked["read"](v, index)
            with pytest.raises(IndexError, match=r"^xp\.Array\.__setitem__: " + message):
                checked["write"](v, index, -1)
    np.testing.assert_array_equal(np.asarray(v), np.arange(10, 10 + n))  # the input is never changed


@pytest.mark.slow
@given(n=st.integers(1, 6), indices=st.lists(st.integers(-9, 8), min_size=1, max_size=4))
def test_checked_take_and_take_along_axis(n, indices):
    v = vector(n)
    index = xp.asarray(np.array(indices), dtype=INT)
    bad = [i for i in indices if not -n <= i < n]
    # named as eagerly: the smallest index if it is below -n, else the largest
    offending = min(indices) if min(indices) < -n else max(indices)
    for name in ("take", "take_along"):
        if not bad:
            expected = np.take(np.arange(10, 10 + n), indices)
            np.testing.assert_array_equal(np.asarray(CHECKED[name](v, index)), expected)
            continue
        public = "take" if name == "take" else "take_along_axis"
        message = TAKE_OUT_OF_BOUNDS.format(offending, 0, n)
        with pytest.raises(IndexError, match=rf"^xp\.{public}: {message}"):
            CHECKED[name](v, index)
    if bad:
        with pytest.raises(IndexError, match=r"^xp\.take: " + TAKE_OUT_OF_BOUNDS.format(offending, 0, n)):
            CHECKED_INSIDE["take"](v, index)


def test_checked_of_a_jitted_function_compiles_it_once_with_its_checks():
    traces = []

    @functools.partial(jax.jit, static_argnums=2)
    def window(a, start, length):  # length static in f's own jit: it stays static
        traces.append(length)
        return a[start] + a[start + length - 1]

    checked = xp.checked(window)
    v = vector(6)
    for start in (0, 1, 2):
        assert int(checked(v, xp.asarray(start, dtype=INT), 3)) == 2 * 10 + 2 * start + 2
    assert int(checked(v, xp.asarray(0, dtype=INT), 2)) == 21
    assert traces == [3, 2]  # traced once per static value, not once per call
    with pytest.raises(IndexError, match=r"^xp\.Array\.__getitem__: index 7 is out of bounds for axis 0 with size 6"):
        checked(v, xp.asarray(5, dtype=INT), 3)


@pytest.mark.slow
def test_checked_under_vmap_names_the_first_failing_example():
    v = vector(5)
    indices = xp.asarray([1, 7, 9, -2], dtype=INT)
    with pytest.raises(IndexError, match=r"index 7 is out of bounds for axis 0 with size 5 \(at mapped index 1\)"):
        jax.vmap(xp.checked(read), in_axes=(None, 0))(v, indices)
    with pytest.raises(IndexError, match=r"index 7 is out of bounds .* \(at mapped index 1\)"):
        jax.jit(jax.vmap(xp.checked(read), in_axes=(None, 0)))(v, indices)
    # vmap inside: JAX reduces the batch of checks to one failing example
    with pytest.raises(IndexError, match=r"^xp\.Array\.__getitem__: index (7|9) is out of bounds"):
        xp.checked(jax.vmap(read, in_axes=(None, 0)))(v, indices)
    good = xp.asarray([1, -5, 4], dtype=INT)
    out = jax.vmap(xp.checked(read), in_axes=(None, 0))(v, good)
    assert type(out) is xp.Array and values(out) == [11, 10, 14]
    assert values(xp.checked(jax.vmap(read, in_axes=(None, 0)))(v, good)) == [11, 10, 14]


def test_checked_results_are_what_f_returns():
    v = vector(3)
    out = CHECKED["read"](v, xp.asarray(1, dtype=INT))
    assert type(out) is xp.Array
    raw = jax.jit(xp.checked(lambda a, i: (a[i].jax, {"a": a})))(v, xp.asarray(2, dtype=INT))
    assert type(raw[0]) is not xp.Array and int(raw[0]) == 12 and type(raw[1]["a"]) is xp.Array


def test_checked_eager_call_with_concrete_arguments_raises_the_eager_error():
    with pytest.raises(IndexError, match=r"^xp\.Array\.__getitem__: index 5 is out of bounds"):
        xp.checked(read)(vector(5), xp.asarray(5, dtype=INT))


def test_checked_retraces_a_function_jitted_outside_checked_mode():
    jitted = jax.jit(read)
    v = vector(4)
    assert int(jitted(v, xp.asarray(9, dtype=INT))) == 13  # outside checked mode: clamped
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        xp.checked(jitted)(v, xp.asarray(9, dtype=INT))
    assert int(jitted(v, xp.asarray(9, dtype=INT))) == 13


def test_a_failing_checked_write_changes_nothing():
    v = vector(4)

    def update(a, i):
        a[0] = 100
        a[i] = -1
        return a

    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        jax.jit(xp.checked(update))(v, xp.asarray(4, dtype=INT))
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        xp.checked(jax.jit(update))(v, xp.asarray(4, dtype=INT))
    np.testing.assert_array_equal(np.asarray(v), np.arange(10, 14))


# --- mask writes ----------------------------------------------------------------------------


@pytest.mark.slow
def test_checked_mask_write_with_too_few_or_too_many_values():
    v = vector(5)
    mask = v > 11  # three elements selected
    message = r"^xp\.Array\.__setitem__: {} values cannot be written to the 3 elements the boolean mask selects"
    with pytest.raises(ValueError, match=message.format(2)):  # as the same write raises eagerly
        CHECKED["mask_write"](v, mask, xp.asarray([1, 2], dtype=INT))
    with pytest.raises(ValueError, match=message.format(4)):
        CHECKED["mask_write"](v, mask, xp.asarray([1, 2, 3, 4], dtype=INT))
    out = CHECKED["mask_write"](v, mask, xp.asarray([1, 2, 3], dtype=INT))
    assert values(out) == [10, 11, 1, 2, 3]
    assert values(CHECKED["mask_write"](v, mask, xp.asarray([7], dtype=INT))) == [10, 11, 7, 7, 7]
    # unchecked (docs/checked.md): the selected elements past the last value take the last value
    assert values(PLAIN["mask_write"](v, mask, xp.asarray([1, 2], dtype=INT))) == [10, 11, 1, 2, 2]
    assert values(v) == [10, 11, 12, 13, 14]


# --- outside checked mode -------------------------------------------------------------------


def every_index_operation(a, i, idx, mask):
    a[i] = 1
    a[idx] = 2
    a[mask] = xp.asarray([5, 6], dtype=INT)
    return a[i] + xp.take(a, idx) + xp.take_along_axis(a, idx)


def test_outside_checked_mode_jitted_indexing_is_unchanged():
    v = vector(5)
    index = xp.asarray(10, dtype=INT)
    arguments = (v, index, xp.asarray([1, 2], dtype=INT), v > 12)
    # nothing of the checks (their predicates are reductions: a minimum, a maximum, a count)
    jaxpr = str(jax.make_jaxpr(every_index_operation)(*arguments))
    assert "check" not in jaxpr and "reduce_" not in jaxpr
    checked = str(jax.make_jaxpr(xp.checked(every_index_operation))(*arguments))
    assert "reduce_min" in checked and "reduce_max" in checked and "reduce_sum" in checked
    # JAX's behaviour, documented: reads clamp, writes out of bounds are dropped
    assert int(PLAIN["read"](v, index)) == 14
    assert int(PLAIN["read"](v, xp.asarray(-9, dtype=INT))) == 10
    assert values(PLAIN["write"](v, index, -1)) == [10, 11, 12, 13, 14]
    assert values(PLAIN["take"](v, xp.asarray([7, -9], dtype=INT))) == [14, 10]
    assert values(PLAIN["take_along"](v, xp.asarray([7], dtype=INT))) == [14]


def test_under_checked_mode_without_the_index_category_indices_are_not_checked():
    v = vector(5)
    assert int(jax.jit(xp.checked(read, errors=("nan",)))(v, xp.asarray(10, dtype=INT))) == 14


# --- sparse ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_checked_sparse_indexing():
    A = xs.asarray(xp.asarray([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))
    get = jax.jit(xp.checked(lambda a, i: a[i].todense()))
    assert values(get(A, xp.asarray(-1, dtype=INT))) == [2.0, 0.0, 3.0]
    with pytest.raises(
        IndexError, match=r"^xp\.sparse\.BCOO\.__getitem__: index 2 is out of bounds for axis 0 with size 2"
    ):
        get(A, xp.asarray(2, dtype=INT))
    sparse_take = jax.jit(xp.checked(lambda a, i: xp.take(a, i, axis=1).todense()))
    assert values(sparse_take(A, xp.asarray([2, -3], dtype=INT))) == [[0.0, 0.0], [3.0, 2.0]]
    with pytest.raises(IndexError, match=r"^xp\.take: " + TAKE_OUT_OF_BOUNDS.format(-4, 1, 3)):
        sparse_take(A, xp.asarray([0, -4], dtype=INT))
    along = jax.jit(xp.checked(lambda a, i: xp.take_along_axis(a, i, axis=1).todense()))
    with pytest.raises(IndexError, match=r"^xp\.take_along_axis: " + TAKE_OUT_OF_BOUNDS.format(3, 1, 3)):
        along(A, xp.asarray([[0], [3]], dtype=INT))
    # a sparse result carries the check out of jax.jit too
    with pytest.raises(IndexError, match=r"^xp\.take: "):
        jax.jit(xp.checked(lambda a, i: xp.take(a, i, axis=1)))(A, xp.asarray([3], dtype=INT))


# --- NaN and division -----------------------------------------------------------------------


def test_nan_checks_are_opt_in():
    x = xp.asarray([1.0, -1.0])
    assert np.isnan(np.asarray(jax.jit(xp.checked(xp.log))(x))[1])
    with pytest.raises(xp.CheckError, match=r"^xp\.checked: a NaN was produced by the JAX primitive log") as info:
        jax.jit(xp.checked(xp.log, errors=("nan",)))(x)
    assert isinstance(info.value, FloatingPointError)
    with pytest.raises(FloatingPointError, match=r"primitive log, in test_checked\.py:\d+"):
        xp.checked(lambda a: xp.log(a), errors=("index", "nan"))(x)


def test_division_checks_are_opt_in():
    a, zero = xp.asarray([7, 8], dtype=INT), xp.asarray([2, 0], dtype=INT)
    jax.jit(xp.checked(xp.floor_divide))(a, zero)  # not checked by default
    with pytest.raises(ZeroDivisionError, match=r"^xp\.checked: division by zero") as info:
        jax.jit(xp.checked(xp.floor_divide, errors=("division",)))(a, zero)
    assert isinstance(info.value, xp.CheckError)
    assert values(xp.checked(xp.floor_divide, errors=("division",))(a, xp.asarray([2, 3], dtype=INT))) == [3, 2]
    # checkify checks every division primitive: a floating division by zero too
    with pytest.raises(ZeroDivisionError):
        xp.checked(xp.divide, errors=("division",))(xp.asarray(1.0), xp.asarray(0.0))


# --- the API --------------------------------------------------------------------------------


def test_users_own_checkify_checks_are_raised_as_checkify_raises_them():
    def f(a):
        checkify.check(xp.all(a > 0).jax, "a must be positive")
        return a

    with pytest.raises(checkify.JaxRuntimeError, match="a must be positive"):
        jax.jit(xp.checked(f))(xp.asarray([1, -1]))
    with pytest.raises(checkify.JaxRuntimeError, match="a must be positive"):
        jax.jit(xp.checked(f, errors=("nan",)))(xp.asarray([1, -1]))


def test_checked_rejects_bad_arguments():
    with pytest.raises(TypeError, match=r"^xp\.checked: f must be callable, got int 3"):
        xp.checked(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^xp\.checked: errors must be a tuple of 'index', 'nan', 'division'"):
        xp.checked(read, errors="index")
    with pytest.raises(ValueError, match=r"^xp\.checked: errors must name categories among .*, got 'bounds'"):
        xp.checked(read, errors=("bounds",))


# --- the remaining statements of docs/checked.md --------------------------------------------


def test_unchecked_mask_writes_under_jit_as_documented():
    v = vector(5)
    mask = v > 11  # three elements selected, of five
    with pytest.raises(ValueError, match=r"^xp\.Array\.__setitem__: cannot write a value of shape \(2,\)"):
        v[mask] = xp.asarray([1, 2], dtype=INT)  # eagerly, the numbers must match
    assert values(v) == [10, 11, 12, 13, 14]
    assert values(PLAIN["mask_write"](v, mask, xp.asarray([1, 2, 3, 4], dtype=INT))) == [10, 11, 1, 2, 3]
    with pytest.raises(ValueError, match=r"^xp\.Array\.__setitem__: 6 values cannot go to the at most 5 elements"):
        PLAIN["mask_write"](v, mask, xp.asarray([1, 2, 3, 4, 5, 6], dtype=INT))


def test_concrete_indices_inside_jit_are_checked_when_traced():
    v = vector(5)
    with pytest.raises(IndexError, match=r"^xp\.Array\.__getitem__: " + OUT_OF_BOUNDS.format(7, 0, 5)):
        jax.jit(lambda a: a[xp.asarray(7, dtype=INT)])(v)


@pytest.mark.slow
def test_unchecked_sparse_indices_out_of_range_select_nothing_under_jit():
    A = xs.asarray(xp.asarray([[0.0, 1.0], [2.0, 0.0]]))
    out = jax.jit(lambda a, i: xp.take(a, i, axis=1).todense())(A, xp.asarray([0, 2], dtype=INT))
    assert values(out) == [[0.0, 0.0], [2.0, 0.0]]
    get = jax.jit(lambda a, i: a[i].todense())
    assert values(get(A, xp.asarray(5, dtype=INT))) == [0.0, 0.0]
    assert values(get(A, xp.asarray([1, -5], dtype=INT))) == [[2.0, 0.0], [0.0, 0.0]]
    along = jax.jit(lambda a, i: xp.take_along_axis(a, i, axis=1).todense())
    assert values(along(A, xp.asarray([[1], [3]], dtype=INT))) == [[1.0], [0.0]]


def test_nan_checks_are_per_primitive_a_nan_passed_on_raises_too():
    with pytest.raises(FloatingPointError, match=r"^xp\.checked: a NaN was produced by the JAX primitive add"):
        xp.checked(lambda a: a + 1, errors=("nan",))(xp.asarray(float("nan")))


def test_division_by_zero_is_not_checked_outside_checked_mode():
    seven, zero = xp.asarray(7, dtype=INT), xp.asarray(0, dtype=INT)
    xp.floor_divide(seven, zero)
    jax.jit(xp.floor_divide)(seven, zero)
    assert float(xp.divide(1.0, xp.asarray(0.0))) == float("inf")


def test_a_checked_result_used_inside_the_trace_leaves_the_check_behind():
    inner = xp.checked(read)
    assert int(jax.jit(lambda a, i: inner(a, i) + 1)(vector(5), xp.asarray(10, dtype=INT))) == 15


def test_under_a_transformation_f_must_return_an_array():
    def nothing(a, i):
        a[i]
        return None

    with pytest.raises(TypeError, match=r"^xp\.checked: under jax\.jit or vmap, f must return at least one array"):
        jax.jit(xp.checked(nothing))(vector(5), xp.asarray(1, dtype=INT))


def test_checked_outside_a_gradient():
    def loss(w, i):
        return xp.sum(w[i] * 2.0)

    gradient = jax.jit(xp.checked(xp.transforms.grad(loss)))
    w = xp.asarray([0.0, 1.0, 2.0, 3.0, 4.0])
    assert values(gradient(w, xp.asarray(-3, dtype=INT))) == [0.0, 0.0, 2.0, 0.0, 0.0]
    with pytest.raises(IndexError, match=r"^xp\.Array\.__getitem__: index -7 is out of bounds"):
        gradient(w, xp.asarray(-7, dtype=INT))
