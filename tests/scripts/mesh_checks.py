"""What the sparse mesh scripts share (tests/sparse_arrays/test_meshes.py): the two kinds of mesh
axes and checks of a result's values and sharding. Imported by the scripts beside it, in a
process started with 8 simulated CPU devices."""

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import numpy.typing as npt
from jax.sharding import AxisType, NamedSharding

import xp

assert len(jax.devices()) == 8
KINDS = (AxisType.Auto, AxisType.Explicit)


def spec_of(x: xp.Array) -> tuple[str | None, ...]:
    # a spec with one entry per axis (JAX leaves trailing Nones out in some results)
    sharding = x.jax.sharding
    assert isinstance(sharding, NamedSharding), sharding  # (on a mesh: the only sharding with a spec)
    spec = tuple(sharding.spec)
    return spec + (None,) * (x.ndim - len(spec))


def check(out: object, expected: npt.ArrayLike, spec: tuple[str | None, ...], what: object) -> None:
    assert isinstance(out, xp.Array), (what, type(out))
    assert np.allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-4), (what, np.asarray(out), expected)
    assert spec_of(out) == spec, (what, out.jax.sharding)


def both(f: Callable[..., Any]) -> tuple[tuple[str, Callable[..., Any]], ...]:
    # the call eagerly and under jax.jit
    return (("eager", f), ("jit", jax.jit(f)))
