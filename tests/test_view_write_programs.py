"""The view/write differential test (issue #10) against NumPy; here, one example of each
divergence it found."""

import jax
import numpy as np
import pytest

import xp

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
