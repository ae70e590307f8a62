"""Generic array-API code on sharded arrays, eagerly and jitted; creation functions and
``to_device`` place their results (tests/test_sharding.py; 8 simulated CPU devices)."""

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import xp

assert len(jax.devices()) == 8


def standardize(x: xp.Array) -> xp.Array:
    # generic array-API code: written once, knows nothing about JAX
    ns = x.__array_namespace__()
    mean = ns.mean(x, axis=0) if hasattr(ns, "mean") else ns.sum(x, axis=0) / x.shape[0]
    centered = x - mean
    return centered / ns.sqrt(ns.sum(centered * centered, axis=0) / x.shape[0])


data = (np.arange(64.0).reshape(16, 4) ** 1.5).astype(np.float64 if jax.config.read("jax_enable_x64") else np.float32)
expected = (data - data.mean(0)) / data.std(0)
for axis_type in (AxisType.Auto, AxisType.Explicit):
    mesh = jax.make_mesh((8,), ("rows",), axis_types=(axis_type,))
    rows = NamedSharding(mesh, P("rows"))
    x = xp.asarray(data, device=rows)
    assert x.device == rows, x.device
    for out in (standardize(x), jax.jit(standardize)(x)):
        assert np.allclose(np.asarray(out), expected)
    # creation functions place their result
    for made in (
        xp.zeros(16, device=rows),
        xp.arange(16, device=rows),
        xp.linspace(0, 1, 16, device=rows),
        xp.full((16,), 2.0, device=rows),
        xp.ones_like(x),
        xp.asarray([1.0] * 16, device=rows),
    ):
        assert made.device == rows, made.device
    # device= is honoured under jit as well (JAX's own device= arguments are ignored there)
    placed = jax.jit(lambda v: xp.zeros(16, device=rows) + v[:, 0])(x)
    assert placed.jax.sharding.spec == P("rows"), placed.jax.sharding
    # to_device moves or reshards
    replicated = NamedSharding(mesh, P())
    assert x.to_device(replicated).device == replicated
    assert x.to_device(jax.devices()[3]).device == jax.devices()[3]
print("ok")
