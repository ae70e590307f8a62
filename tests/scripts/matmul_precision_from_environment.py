"""Prints the precision of xp.matmul's and jax.numpy.matmul's dot_general, one line each, in a
process started with JAX_DEFAULT_MATMUL_PRECISION set (tests/test_precision.py): JAX reads it
at import."""

import jax
import jax.numpy as jnp
import numpy as np

import xp

a = np.ones((3, 3), np.float32)
for function in (xp.matmul, jnp.matmul):
    jaxpr = jax.make_jaxpr(function)(a, a)
    print([str(e.params["precision"]) for e in jaxpr.eqns if e.primitive.name == "dot_general"])
