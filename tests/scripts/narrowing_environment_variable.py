"""XP_NARROW_64BIT=1 read at import, in a fresh process (tests/test_narrowing.py): prints the
dtypes made and the warnings."""

import warnings

import numpy as np

import xp

with warnings.catch_warnings(record=True) as record:
    warnings.simplefilter("always")
    print(xp.asarray(np.arange(3)).dtype, xp.zeros(1, dtype=xp.float64).dtype)
print(*(str(w.message) for w in record), sep="\n")
