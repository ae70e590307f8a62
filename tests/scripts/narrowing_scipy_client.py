"""SciPy's describe, which asks for int64, on xp arrays with 64-bit mode off, without and with
xp.narrow_64bit (tests/test_narrowing.py): prints the outcome as one JSON line. SciPy reads
SCIPY_ARRAY_API at import, hence a fresh process."""

import json
import warnings

import numpy as np
import scipy.stats

import xp

data = np.random.default_rng(0).normal(size=(50, 3)).astype(np.float32)
x = xp.asarray(data)
try:
    scipy.stats.describe(x)
    default = "no error"
except TypeError as e:
    default = str(e)
with warnings.catch_warnings(record=True) as record:
    warnings.simplefilter("always")
    with xp.narrow_64bit():
        got = scipy.stats.describe(x)
expected = scipy.stats.describe(data.astype(np.float64))
print(
    json.dumps(
        {
            "default": default,
            "warnings": sorted({str(w.message) for w in record if w.category is xp.NarrowingWarning}),
            "nobs": [int(got.nobs), int(expected.nobs)],
            "dtypes": sorted({str(v.dtype) for v in (got.mean, got.variance, got.skewness, got.kurtosis)}),
            "got": [np.asarray(v).tolist() for v in (*got.minmax, got.mean, got.variance, got.skewness, got.kurtosis)],
            "expected": [
                np.asarray(v).tolist()
                for v in (*expected.minmax, expected.mean, expected.variance, expected.skewness, expected.kurtosis)
            ],
        }
    )
)
