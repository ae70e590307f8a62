"""xp.special.expn of huge orders (arguments: n and x, comma-separated), printed comma-separated
(tests/test_special_functions.py): in a process of its own, so that a computation that never
finishes can be stopped."""

import sys

import numpy as np

import xp

n, x = (np.array(v.split(","), np.float32) for v in sys.argv[1:])
print(",".join(map(repr, np.asarray(xp.special.expn(xp.asarray(n), xp.asarray(x))).tolist())))
