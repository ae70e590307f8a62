"""Which sparse kernels a fresh process uses under the environment it was given (XP_NATIVE, CXX,
XP_NATIVE_CACHE; tests/sparse_arrays/test_native.py): prints whether the native kernel is
available, whether the lowered product calls it, and how many NativeKernelWarnings were raised."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from xp.sparse._products import kernels, native

a = np.array([[1.0, 0, 2], [0, 3, 0]], np.float32)
m = jsparse.BCSR.fromdense(jnp.asarray(a))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y = jax.jit(kernels.bcsr_matmul)(m, jnp.ones(3, jnp.float32))
    z = jax.jit(kernels.bcoo_rmatmul)(m.to_bcoo(), jnp.ones(2, jnp.float32))
assert np.allclose(y, a @ np.ones(3)) and np.allclose(z, a.T @ np.ones(2))
text = jax.jit(kernels.bcsr_matmul).lower(m, jnp.ones(3, jnp.float32)).as_text()
print(native.available(), "xp_c" in text, sum(w.category is native.NativeKernelWarning for w in caught))
