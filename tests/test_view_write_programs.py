"""The view/write differential test (issue #10): random programs of views, copies, writes and
in-place operators, run on xp eagerly and under ``jax.jit``, against NumPy.

The generator, the NumPy mirror and what the mirror models differently from NumPy (and why)
are in ``tests/view_write_programs.py``. Each example runs ``PROGRAMS`` programs, so that the
thorough profile runs at least 500 programs in each mode.
"""

import warnings

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from view_write_programs import Program, programs, run_step, xp_arguments

import xp

PROGRAMS = 2  # per example: 300 examples of the thorough profile run 600 programs eagerly, 600 under jit


def _check_error(expected: type[Exception] | None, error: BaseException | None, where: str) -> None:
    if expected is None:
        if error is not None:
            raise AssertionError(f"{where}: xp raised {type(error).__name__}: {error}") from error
    else:
        assert error is not None, f"{where}: NumPy raised {expected.__name__}, xp raised nothing"
        assert isinstance(error, expected), f"{where}: NumPy raised {expected.__name__}, xp {error!r}"


def _compare(handles: list[xp.Array], expected: list[np.ndarray], where: str) -> None:
    assert len(handles) == len(expected), f"{where}: {len(handles)} handles, NumPy has {len(expected)}"
    for n, (h, e) in enumerate(zip(handles, expected, strict=True)):
        assert isinstance(h, xp.Array), f"{where}: h{n} is a {type(h).__name__}"
        np.testing.assert_array_equal(np.asarray(h), e, strict=True, err_msg=f"{where}: h{n}")


def _run_eagerly(program: Program) -> None:
    handles = [xp.asarray(program.initial)]
    for n, step in enumerate(program.steps):
        with warnings.catch_warnings():
            # x += A with a sparse A is computed densely, and says so
            warnings.simplefilter("ignore", xp.sparse.SparseEfficiencyWarning)
            error = run_step(handles, step, xp_arguments(step))
        where = f"{program!r}\nstep {n + 1} ({step!r})"
        _check_error(program.errors[n], error, where)
        _compare(handles, program.states[n], where)


def _run_under_jit(program: Program) -> None:
    arguments = [xp_arguments(step) for step in program.steps]
    errors: list[BaseException | None] = []

    def run(x: xp.Array) -> list[xp.Array]:
        handles = [x]
        for step, args in zip(program.steps, arguments, strict=True):
            errors.append(run_step(handles, step, args))
        return handles

    x = xp.asarray(program.initial)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", xp.sparse.SparseEfficiencyWarning)
        out = jax.jit(run)(x)
    for n, (expected, error) in enumerate(zip(program.errors, errors, strict=True)):
        _check_error(expected, error, f"{program!r}\nunder jit, step {n + 1} ({program.steps[n]!r})")
    _compare(out, program.states[-1], f"{program!r}\nunder jit")
    # the caller's array is unchanged: the program's writes went to the traced copy (docs/jax.md)
    np.testing.assert_array_equal(np.asarray(x), program.initial, strict=True)


@pytest.mark.slow
@given(st.lists(programs(), min_size=PROGRAMS, max_size=PROGRAMS))
def test_view_write_programs_match_numpy_eagerly(batch):
    """Every handle, after every step, has NumPy's value and dtype; a step NumPy refuses (or the
    standard does, see the mirror) raises the same exception class in xp and changes nothing."""
    for program in batch:
        _run_eagerly(program)


@pytest.mark.slow
@given(st.lists(programs(traced=True), min_size=PROGRAMS, max_size=PROGRAMS))
def test_view_write_programs_match_numpy_under_jit(batch):
    """The whole program as one jitted function of the starting array, returning every handle."""
    for program in batch:
        _run_under_jit(program)


# --- divergences the programs found, one example each ---------------------------------------


def test_a_numpy_mask_can_be_read_through_under_jit():
    """NumPy data is known when jax.jit traces: reading through a NumPy mask has a static shape
    (jax.numpy takes it too); xp converted the mask into a traced value and refused the read
    with DataDependentShapeError."""
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    for mask in (a % 2 == 0, np.array([False, True]), np.bool_(False), np.bool_(True)):
        out = jax.jit(lambda x, mask=mask: x[mask])(xp.asarray(a))
        np.testing.assert_array_equal(np.asarray(out), a[mask], strict=True)


def test_a_numpy_index_out_of_bounds_is_an_index_error_under_jit_too():
    """An out-of-bounds NumPy index array is known when jax.jit traces, so it is refused there as
    eagerly, not clamped (xp read x[2] for x[5] under jit)."""
    x = xp.arange(3, dtype=xp.int32)
    index = np.array([0, 5], dtype=np.int32)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        x[index]
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        jax.jit(lambda v: v[index])(x)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        jax.jit(lambda v: v.__setitem__(index, 1))(x)


def test_from_dlpack_of_an_xp_array_shares_writes_eagerly_and_under_jit():
    """``from_dlpack(x)`` shares x's memory where it can (the standard's copy=None, and NumPy's
    from_dlpack is a view): writes into either reach the other, as with a view. xp gave an
    unlinked array eagerly, and under jax.jit failed (a traced value has no ``__dlpack__``)."""

    def program(x):
        y = xp.from_dlpack(x)
        y[0] = 7
        x[1] = 8
        independent = xp.from_dlpack(x, copy=True)
        independent[2] = 9
        return x, y, independent

    a = np.arange(4, dtype=np.int32)
    for run in (program, jax.jit(program)):
        x, y, independent = run(xp.asarray(a))
        np.testing.assert_array_equal(np.asarray(x), [7, 8, 2, 3])
        np.testing.assert_array_equal(np.asarray(y), [7, 8, 2, 3])
        np.testing.assert_array_equal(np.asarray(independent), [7, 8, 9, 3])


def test_a_value_that_does_not_fit_an_advanced_index_is_a_value_error():
    """A value of the wrong shape is a ValueError (DESIGN.md's rule; NumPy's; xp's own for basic
    indices); through integer arrays and masks xp raised IndexError."""
    x = xp.zeros((2, 3), dtype=xp.int32)
    rows, cols = np.array([0, 1], dtype=np.int32), np.array([0, 0], dtype=np.int32)
    mask = xp.asarray([[True, False, False], [True, False, False]])

    def write(a, key, value):
        a[key] = value
        return a

    with pytest.raises(ValueError, match="value of shape"):
        x[:, 0] = xp.zeros((1, 2), dtype=xp.int32)  # basic: as it was
    for run in (write, jax.jit(write)):
        with pytest.raises(ValueError, match=r"cannot write a value of shape \(1, 1\)"):
            run(x, (xp.asarray(rows), xp.asarray(cols)), xp.zeros((1, 1), dtype=xp.int32))
    with pytest.raises(ValueError, match=r"cannot write a value of shape \(3,\)"):
        x[mask] = xp.zeros(3, dtype=xp.int32)
    with pytest.raises(ValueError, match="3 values cannot go to the at most 2 elements"):
        jax.jit(write)(xp.zeros(2), xp.asarray([True, True]), xp.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match=r"cannot write a value of shape \(0,\)"):
        x[mask] = xp.zeros((0,), dtype=xp.int32)
    with pytest.raises(ValueError, match="no elements through a traced boolean mask"):
        jax.jit(write)(xp.zeros(2), xp.asarray([False, False]), xp.zeros((0,)))
    np.testing.assert_array_equal(np.asarray(x), np.zeros((2, 3)))


def test_a_write_through_a_mask_followed_by_whole_axes_works_under_jit():
    """``x[mask, ...] = v`` and ``x[mask, :] = v`` are ``x[mask] = v``, which works through a traced
    mask; with the whole axes written out xp refused it under jax.jit ("reading through a boolean
    mask has a data-dependent shape")."""
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    values = [0, np.array([[-1, -2, -3, -4]], dtype=np.int32), np.arange(8, dtype=np.int32).reshape(2, 4)]
    for rest in [(), (Ellipsis,), (slice(None),)]:
        for value in values:

            def write(x, rest=rest, value=value):
                x[(x[:, 0] > 3, *rest)] = value
                return x

            expected = a.copy()
            expected[(a[:, 0] > 3, *rest)] = value
            for run in (write, jax.jit(write)):
                np.testing.assert_array_equal(np.asarray(run(xp.asarray(a))), expected, strict=True)
