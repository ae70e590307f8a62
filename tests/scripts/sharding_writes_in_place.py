"""Writes and results stay where the array is (tests/test_sharding.py; 4 simulated CPU devices)."""

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import xp

device1 = jax.devices()[1]
places = {"device 1": device1}
for axis_type in (AxisType.Auto, AxisType.Explicit):
    mesh = jax.make_mesh((4,), ("rows",), axis_types=(axis_type,))
    places[f"rows over {axis_type}"] = NamedSharding(mesh, P("rows"))
for name, place in places.items():
    x = xp.arange(8.0, device=place)
    scalar = xp.asarray(3.0, device=device1)
    view = x[:]
    writes = {
        "x[...] = 1.0": lambda: x.__setitem__(..., 1.0),  # a write of the whole array: from
        "x[:] = 2.0": lambda: x.__setitem__(slice(None), 2.0),  # a cached scalar, on device 0
        "view[...] = 3": lambda: view.__setitem__(..., 3),
        "x[1:3] = 4.0": lambda: x.__setitem__(slice(1, 3), 4.0),
        "x[0] = 5.0": lambda: x.__setitem__(0, 5.0),
        "x[x > 4] = 6.0": lambda: x.__setitem__(x > 4, 6.0),
        "x[index array] = 7.0": lambda: x.__setitem__(xp.asarray([0, 7]), 7.0),
        "x += 1": lambda: x.__iadd__(1),
    }
    for what, write in writes.items():
        write()
        assert x.device == place and view.device == place, (name, what, x.device, view.device)
        assert np.array_equal(np.asarray(view), np.asarray(x)), (name, what)
    scalar[...] = 0.5
    assert scalar.device == device1 and float(scalar) == 0.5
# results that do not depend on the input's values: kernels keep such inputs (xp/_jit.py)
integers = xp.asarray([1, 2, 3], device=device1)
square = xp.eye(3, device=device1)
for what, result in {
    "isinf of integers": xp.isinf(integers),
    "isfinite of integers": xp.isfinite(integers),
    "imag of reals": xp.imag(square),
    "linalg.matrix_power(x, 0)": xp.linalg.matrix_power(square, 0),
    "broadcast_arrays(0-d, 2)": xp.broadcast_arrays(xp.asarray(1.0, device=device1), 2)[1],
}.items():
    assert result.device == device1, (what, result.device)
    assert np.asarray(x).tolist() == [8.0, 5.0, 5.0, 4.0, 4.0, 4.0, 4.0, 8.0], (name, np.asarray(x))
print("ok")
