"""xp.all, xp.any and xp.count_nonzero of subnormals, in a process started with XLA's CPU loop
emitters (tests/test_utility.py): subnormals are true."""

import numpy as np

import xp

for dtype in (np.complex64, np.float32):
    tiny = np.finfo(dtype).smallest_subnormal
    for value in (tiny, complex(0, tiny), complex(-tiny, -0.0)):
        if np.dtype(dtype).kind == "f" and isinstance(value, complex):
            continue
        x = xp.asarray(np.array([value, value], dtype))
        assert bool(xp.any(x)) and bool(xp.all(x)), (dtype, value)
        assert xp.all(xp.any(xp.reshape(x, (2, 1)), axis=1)), (dtype, value)
        assert int(xp.count_nonzero(x)) == 2 and not xp.any(xp.logical_not(x)), (dtype, value)
print("ok")
