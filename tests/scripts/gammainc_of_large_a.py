"""xp.special.gammainc and gammaincc of large a (arguments: a and x, comma-separated), printed
comma-separated (tests/test_special_functions.py): in a process of its own, so that a
computation that never finishes can be stopped."""

import sys

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
import xp  # noqa: E402

a, x = (xp.asarray(np.array(v.split(","), np.float64)) for v in sys.argv[1:])
print(
    ",".join(map(repr, np.asarray(xp.stack([xp.special.gammainc(a, x), xp.special.gammaincc(a, x)])).ravel().tolist()))
)
