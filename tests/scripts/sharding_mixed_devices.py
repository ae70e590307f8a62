"""Arrays on different devices are a ValueError that names the function and the devices
(tests/test_sharding.py; 4 simulated CPU devices)."""

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import xp

d = jax.devices()
a = xp.asarray(jax.device_put(np.ones(4, np.float32), d[0]))
b = xp.asarray(jax.device_put(np.ones(4, np.float32), d[1]))
left = xp.ones(4, device=NamedSharding(jax.make_mesh((2,), ("x",), devices=d[:2]), P("x")))
right = xp.ones(4, device=NamedSharding(jax.make_mesh((2,), ("x",), devices=d[2:4]), P("x")))
calls = {
    "xp.add": lambda: a + b,
    "xp.where": lambda: xp.where(a > 0, a, b),
    "xp.concat": lambda: xp.concat([left, right]),
    "xp.Array.__setitem__": lambda: a.__setitem__(0, b[0]),
    "xp.Array.__getitem__": lambda: a[xp.asarray(jax.device_put(np.array([1], np.int32), d[1]))],
}
for where, call in calls.items():
    # JAX's message names the arguments of xp's internal kernels; xp's names the function
    # and the devices
    with pytest.raises(ValueError, match=rf"^{where}: the arrays are on different devices \(.*\); put them on one"):
        call()
with pytest.raises(
    ValueError, match=r"NamedSharding over the devices \[0, 1\], NamedSharding over the devices \[2, 3\]"
):
    left + right
assert np.asarray(a).tolist() == [1.0] * 4  # the failed write changed nothing
assert np.asarray(a + b.to_device(d[0])).tolist() == [2.0] * 4
print("ok")
