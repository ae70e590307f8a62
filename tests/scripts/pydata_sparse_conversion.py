"""``xp.sparse.from_pydata`` and ``xp.sparse.asarray`` of pydata sparse arrays
(tests/sparse_arrays/test_construction.py), in a process of its own: pydata sparse imports numba."""

import numpy as np
import sparse

import xp.sparse as xs

x = np.zeros((3, 4, 2))
x[0, 1, 0], x[2, 3, 1], x[1, 0, 0] = 1.5, -2.0, 3.0
for s in (sparse.COO.from_numpy(x), sparse.GCXS.from_numpy(x), sparse.DOK.from_numpy(x)):
    A = xs.from_pydata(s)
    assert isinstance(A, xs.BCOO) and A.nse == 3, A
    np.testing.assert_array_equal(np.asarray(A.todense()), x)
    np.testing.assert_array_equal(np.asarray(xs.asarray(s).todense()), x)
B = xs.from_pydata(sparse.COO.from_numpy(x[0]), format="bcsr")
assert isinstance(B, xs.BCSR)
np.testing.assert_array_equal(np.asarray(B.todense()), x[0])
try:
    xs.from_pydata(sparse.COO.from_numpy(x, fill_value=1.0))
except ValueError as e:
    assert str(e).startswith(
        "xp.sparse.from_pydata: s has fill_value 1.0; only arrays whose unstored elements are zero convert"
    ), e
else:
    raise AssertionError("no error")
try:
    xs.from_pydata(x)
except TypeError as e:
    assert str(e).startswith("xp.sparse.from_pydata: s must be a pydata sparse array"), e
print("ok")
