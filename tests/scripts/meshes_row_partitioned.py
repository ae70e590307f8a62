"""``xp.sparse.RowPartitioned``: products, transposed products, sums and element-wise functions
with collectives, against NumPy and for their sharding (tests/sparse_arrays/test_meshes.py;
8 simulated CPU devices)."""

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from mesh_checks import KINDS, both, check, spec_of

import xp
import xp.sparse as xs

# xp.astype is declared for dense arrays (docs/DEVELOPING.md, "Known limits"): at run time it routes
# the matrix, whose type it keeps, so it is called here without its declaration
sparse_astype: Callable[..., Any] = xp.astype
rng = np.random.default_rng(2)
m, n = 64, 40
S = sp.random(m, n, density=0.1, random_state=3, format="csr", dtype=np.float32)
D = S.toarray()
laplacian = sp.diags([-np.ones(63), 4 * np.ones(64), -np.ones(63)], [-1, 0, 1], format="csr", dtype=np.float32)
b = rng.standard_normal(64).astype(np.float32)
for kind in KINDS:
    mesh = jax.make_mesh((8,), ("x",), axis_types=(kind,))
    rows = NamedSharding(mesh, P("x"))
    A = xs.RowPartitioned.from_scipy(S, mesh, "x")
    # per-device blocks give the same matrix
    blocks = xs.RowPartitioned.from_blocks([S[i * 8 : (i + 1) * 8] for i in range(8)], mesh, "x")
    assert A.shape == (m, n) and A.dtype == xp.float32 and A.ndim == 2 and A.size == m * n
    assert A.__array_namespace__() is xp and A.T.shape == (n, m)
    assert A.device == NamedSharding(mesh, P("x")) and A.T.device == NamedSharding(mesh, P(None, "x"))
    assert xp.matmul is xs.matmul
    x = rng.standard_normal(n).astype(np.float32)
    X = rng.standard_normal((n, 3)).astype(np.float32)
    y = rng.standard_normal(m).astype(np.float32)
    Y = rng.standard_normal((2, m)).astype(np.float32)
    x_rep, x_rows = xp.asarray(x), xp.asarray(x, device=rows)
    y_rows = xp.asarray(y, device=rows)
    # the matrix is routed by xp's functions at run time, outside what they declare (dense arrays,
    # and BCOO or BCSR for the element-wise ones: docs/DEVELOPING.md, "Known limits"): the cases
    # take it untyped
    cases: dict[str, tuple[Callable[[Any], Any], npt.ArrayLike, tuple[str | None, ...]]] = {
        # products: x gathered, the result sharded by rows; transposed: a reduce-scatter
        "A @ x": (lambda A: A @ x_rep, D @ x, ("x",)),
        "A @ x (x sharded)": (lambda A: A @ x_rows, D @ x, ("x",)),
        "xp.matmul(A, X)": (lambda A: xp.matmul(A, xp.asarray(X)), D @ X, ("x", None)),
        "A.T @ y": (lambda A: A.T @ y_rows, D.T @ y, ("x",)),
        "y @ A": (lambda A: y_rows @ A, y @ D, ("x",)),
        "Y @ A": (lambda A: xp.asarray(Y) @ A, Y @ D, (None, "x")),
        "from_blocks A @ x": (lambda A: blocks @ x_rep, D @ x, ("x",)),
        # sums: row sums stay on their devices; column sums are reduce-scattered; all: all-reduced
        "sum": (lambda A: xp.sum(A), D.sum(), ()),
        "sum axis=1": (lambda A: xp.sum(A, axis=1), D.sum(1), ("x",)),
        "sum axis=0": (lambda A: xp.sum(A, axis=0), D.sum(0), ("x",)),
        "sum A.T axis=0": (lambda A: xp.sum(A.T, axis=0), D.sum(1), ("x",)),
        "sum keepdims": (lambda A: xp.sum(A, axis=1, keepdims=True), D.sum(1, keepdims=True), ("x", None)),
        # element-wise functions with f(0) == 0, on the stored values
        "A * 2": (lambda A: (A * 2).todense(), 2 * D, ("x", None)),
        "3 * A": (lambda A: (3 * A).todense(), 3 * D, ("x", None)),
        "A / 4": (lambda A: (A / 4).todense(), D / 4, ("x", None)),
        "-A": (lambda A: (-A).todense(), -D, ("x", None)),
        "+A": (lambda A: (+A).todense(), D, ("x", None)),
        "abs(A)": (lambda A: abs(-A).todense(), np.abs(D), ("x", None)),
        "abs": (lambda A: xp.abs(-A).todense(), np.abs(D), ("x", None)),
        "sqrt(abs)": (lambda A: xp.sqrt(xp.abs(A)).todense(), np.sqrt(np.abs(D)), ("x", None)),
        "sin": (lambda A: xp.sin(A).todense(), np.sin(D), ("x", None)),
        "astype": (lambda A: sparse_astype(A, xp.int32).todense(), D.astype(np.int32), ("x", None)),
        "todense": (lambda A: A.todense(), D, ("x", None)),
        "A.T todense": (lambda A: A.T.todense(), D.T, (None, "x")),
    }
    for name, (f, expected, spec) in cases.items():
        for how, g in both(f):
            check(g(A), expected, spec, (kind, name, how))
    # duplicates are summed; a COO input is converted
    duplicates = sp.coo_array((np.ones(3, np.float32), ([0, 0, 9], [1, 1, 2])), shape=(m, n))
    dense = np.asarray(xs.RowPartitioned.from_scipy(duplicates, mesh, "x").todense())
    np.testing.assert_array_equal(dense, duplicates.toarray())
    assert dense[0, 1] == 2
    # a pytree: through jit and back
    doubled = jax.jit(lambda A: A * 2)(A)
    assert type(doubled) is xs.RowPartitioned and doubled.device == A.device
    assert spec_of(doubled.todense()) == ("x", None)
    # what it does not do is an error that says so, never a silent densification (calls its type
    # refuses too: made on an untyped reference, their run-time error being the point)
    untyped: Any = A
    for call, kind_ in (
        (lambda: xp.exp(untyped), NotImplementedError),
        (lambda: untyped + 1, NotImplementedError),
        (lambda: untyped / 0, NotImplementedError),
        (lambda: untyped @ untyped, NotImplementedError),
        (lambda: untyped == untyped, NotImplementedError),
        (lambda: untyped**2, NotImplementedError),
        (lambda: untyped - untyped, NotImplementedError),
        (lambda: ~untyped, NotImplementedError),
    ):
        try:
            call()
            raise AssertionError("expected an error")
        except kind_ as e:
            assert str(e).startswith("xp."), e
    try:
        xs.RowPartitioned.from_scipy(S[:60], mesh, "x")
        raise AssertionError("60 rows in 8 blocks")
    except ValueError as e:
        assert "do not divide into 8 equal blocks" in str(e), e
    # end to end: conjugate gradients under jit, x sharded by rows like the matrix
    L = xs.RowPartitioned.from_scipy(laplacian, mesh, "x")

    @jax.jit
    def cg(L: xs.RowPartitioned, b: xp.Array) -> xp.Array:
        def step(_: int, state: tuple[xp.Array, xp.Array, xp.Array, xp.Array]) -> tuple[xp.Array, ...]:
            x, r, p, rr = state
            q = L @ p
            alpha = rr / xp.sum(p * q)
            x, r = x + alpha * p, r - alpha * q
            rr_new = xp.sum(r * r)
            return x, r, r + (rr_new / rr) * p, rr_new

        x0 = xp.zeros(b.shape, device=rows)  # placed (zeros_like of a traced b would not be)
        return jax.lax.fori_loop(0, 12, step, (x0, b, b, xp.sum(b * b)))[0]

    solution = cg(L, xp.asarray(b, device=rows))
    check(solution, np.linalg.solve(laplacian.toarray(), b), ("x",), (kind, "cg"))
print("ok")
