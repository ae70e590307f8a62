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
