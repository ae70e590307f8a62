"""Every public function called on arrays committed to device 1 returns its arrays on device 1
(tests/test_sharding.py; 2 simulated CPU devices)."""

import warnings

import jax
import numpy as np

import xp

warnings.simplefilter("ignore")  # (densifying sparse fallbacks are not what this checks)
device1 = jax.devices()[1]
inputs: dict[str, xp.Array | xp.sparse.SparseArray] = {
    "float32": xp.asarray(np.arange(1, 7, dtype=np.float32).reshape(2, 3) / 7, device=device1),
    "int32": xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3), device=device1),
    "bool": xp.asarray(np.arange(6).reshape(2, 3) % 2 == 0, device=device1),
    "complex64": xp.asarray((np.arange(6) + 1j).astype(np.complex64).reshape(2, 3), device=device1),
    "empty": xp.zeros((0, 3), device=device1),
    "0-d": xp.asarray(2.5, device=device1),
    "square": xp.asarray(np.eye(3, dtype=np.float32) * 2 + 0.1, device=device1),
}
sparse_matrix = np.array([[0, 1.5, 0], [2, 0, 0], [0, 0, 3]], np.float32)
for format in ("bcoo", "bcsr"):
    inputs[format] = xp.sparse.fromdense(xp.asarray(sparse_matrix, device=device1), format=format)
calls, misplaced = 0, []
for namespace, prefix in ((xp, ""), (xp.linalg, "linalg."), (xp.fft, "fft.")):
    names = getattr(namespace, "__all__", None) or [n for n in dir(namespace) if not n.startswith("_")]
    for name in names:
        function = getattr(namespace, name)
        if not callable(function) or isinstance(function, type):
            continue
        for kind, x in inputs.items():
            for args in ((x,), (x, x), (x, 2)):
                try:
                    result = function(*args)
                except Exception:  # (not a valid call: what matters is where valid calls put results)
                    continue
                calls += 1
                for leaf in result if isinstance(result, tuple) else (result,):
                    if hasattr(leaf, "__array_namespace__") and leaf.device != device1:  # dense or sparse
                        misplaced.append((prefix + name, kind, len(args), leaf.device))
assert calls > 800, calls
assert not misplaced, misplaced
print("ok")
