"""What the sparse mesh scripts share (tests/sparse_arrays/test_meshes.py): the two kinds of mesh
axes and checks of a result's values and sharding. Imported by the scripts beside it, in a
process started with 8 simulated CPU devices."""

import jax
import numpy as np
from jax.sharding import AxisType

import xp

assert len(jax.devices()) == 8
KINDS = (AxisType.Auto, AxisType.Explicit)


def spec_of(x):
    # a spec with one entry per axis (JAX leaves trailing Nones out in some results)
    spec = tuple(x.jax.sharding.spec)
    return spec + (None,) * (x.ndim - len(spec))


def check(out, expected, spec, what):
    assert isinstance(out, xp.Array), (what, type(out))
    assert np.allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-4), (what, np.asarray(out), expected)
    assert spec_of(out) == spec, (what, out.jax.sharding)


def both(f):
    # the call eagerly and under jax.jit
    return (("eager", f), ("jit", jax.jit(f)))
