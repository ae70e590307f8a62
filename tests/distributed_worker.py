"""One process of the 2-process cluster of tests/test_distributed.py (not a test module itself).

    python tests/distributed_worker.py PROCESS_ID PORT

Each process has 4 CPU devices (``XLA_FLAGS=--xla_force_host_platform_device_count=4``, set by the
test), so the cluster's global mesh has 8. Every process runs the same program (JAX's
multi-controller model); each result, a global array, is gathered onto every process
(``process_allgather``) and compared with NumPy on the whole data, which every process can compute
here because the data are small. The process prints ``ok`` at the end; any failure raises.
"""

from __future__ import annotations

import sys
import time

import jax

START = time.monotonic()
PROCESS_ID, PORT = int(sys.argv[1]), int(sys.argv[2])
# CPU devices of different processes talk through gloo (JAX's CPU default has no collectives
# across processes); both must be configured before the backend starts.
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(
    coordinator_address=f"127.0.0.1:{PORT}",
    num_processes=2,
    process_id=PROCESS_ID,
    local_device_ids=[0, 1, 2, 3],
    initialization_timeout=60,  # the other process may be slow to start on a loaded machine
)

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import xp  # noqa: E402
import xp.sparse  # noqa: E402

assert jax.process_count() == 2 and len(jax.devices()) == 8 and len(jax.local_devices()) == 4

X64 = jax.config.read("jax_enable_x64")
FLOAT = np.float64 if X64 else np.float32
TOL = {"rtol": 1e-9, "atol": 1e-9} if X64 else {"rtol": 2e-4, "atol": 2e-4}
N, D = 32, 8  # the global data: 32 rows (16 per process, 4 per device) of 8 columns
DATA = (np.random.default_rng(0).standard_normal((N, D)) * np.arange(1, D + 1) + 0.5).astype(FLOAT)
MINE = slice(PROCESS_ID * N // 2, (PROCESS_ID + 1) * N // 2)  # this process's rows


def gathered(a: xp.Array) -> np.ndarray:
    """The whole value of a global array, on every process (a collective: all processes call it)."""
    return np.asarray(multihost_utils.process_allgather(a.jax, tiled=True))


def check(name: str, out: xp.Array, expected: np.ndarray) -> None:
    assert isinstance(out, xp.Array), (name, type(out))
    got = gathered(out)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    assert np.allclose(got, expected, **TOL), (name, np.max(np.abs(got - expected)))


# --- generic array-API pipelines: they know only x.__array_namespace__() ----------------------


def standardize(x):
    ns = x.__array_namespace__()
    return (x - ns.mean(x, axis=0)) / ns.std(x, axis=0)


def reductions(x):
    ns = x.__array_namespace__()
    by_column = ns.stack([ns.sum(x, axis=0), ns.mean(x, axis=0), ns.std(x, axis=0), ns.max(x, axis=0)])
    return ns.concat([ns.reshape(by_column, (-1,)), ns.stack([ns.sum(x), ns.mean(x), ns.min(x)])])


def gram(x):
    return x.T @ x


def outer_products(x):
    return x @ x.T


def solve(x):
    ns = x.__array_namespace__()
    return ns.linalg.solve(x.T @ x + x.shape[0] * ns.eye(x.shape[1], dtype=x.dtype), x.T @ x[:, 0])


def spectrum(x):
    ns = x.__array_namespace__()
    return ns.abs(ns.fft.rfft(x, axis=1))


def sort_rows(x):
    return x.__array_namespace__().sort(x, axis=0)


def running_sum(x):
    return x.__array_namespace__().cumulative_sum(x, axis=0)


def clipped(x):
    ns = x.__array_namespace__()
    return ns.where(x > ns.mean(x), x, ns.zeros_like(x))


def written(x):
    y = x * 1  # a copy: the writes below must not change the caller's x
    y[3] = 1.0
    y[:, 1] = -2.0
    y[y > 3] = 0.0
    return y


def joined(x):
    ns = x.__array_namespace__()
    return ns.concat([x, 2 * x], axis=0), ns.stack([x[:, 0], x[:, 1]], axis=1)


def _reductions(d):
    by_column = np.stack([d.sum(0), d.mean(0), d.std(0), d.max(0)]).ravel()
    return np.concatenate([by_column, [d.sum(), d.mean(), d.min()]])


def _written(d):
    y = d.copy()
    y[3], y[:, 1] = 1.0, -2.0
    y[y > 3] = 0.0
    return y


PIPELINES = {
    "standardize": (standardize, lambda d: (d - d.mean(0)) / d.std(0)),
    "reductions": (reductions, _reductions),
    "x.T @ x": (gram, lambda d: d.T @ d),
    "x @ x.T": (outer_products, lambda d: d @ d.T),
    "linalg.solve": (solve, lambda d: np.linalg.solve(d.T @ d + N * np.eye(D), d.T @ d[:, 0])),
    "fft.rfft": (spectrum, lambda d: np.abs(np.fft.rfft(d, axis=1))),
    "sort along the sharded axis": (sort_rows, lambda d: np.sort(d, axis=0)),
    "cumulative_sum along the sharded axis": (running_sum, lambda d: np.cumsum(d, axis=0)),
    "where": (clipped, lambda d: np.where(d > d.mean(), d, 0)),
    "setitem": (written, _written),
    "concat, stack": (joined, lambda d: (np.concatenate([d, 2 * d]), np.stack([d[:, 0], d[:, 1]], axis=1))),
}

# --- xp's default device is this process's: arrays made without device= are local -------------

info = xp.__array_namespace_info__()
assert info.default_device() == jax.local_devices()[0], (info.default_device(), jax.local_devices())
local = xp.arange(4.0, device=info.default_device())
assert local.device == jax.local_devices()[0] and np.asarray(local).tolist() == [0.0, 1.0, 2.0, 3.0]


def cg(matvec, b, tol, max_iterations):
    """Conjugate gradients, generic: only b's namespace and the given product."""
    ns = b.__array_namespace__()
    x = ns.zeros_like(b)
    r = b - matvec(x)
    p, rs = r, ns.vecdot(r, r)
    for iteration in range(1, max_iterations + 1):
        Ap = matvec(p)
        alpha = rs / ns.vecdot(p, Ap)
        x, r = x + alpha * p, r - alpha * Ap
        rs_next = ns.vecdot(r, r)
        if float(ns.sqrt(rs_next)) < tol:  # a replicated scalar: every process reads the same
            return x, iteration
        p, rs = r + (rs_next / rs) * p, rs_next
    raise AssertionError(f"CG did not converge in {max_iterations} iterations")


def row_blocked_matvec(A_mine, rows: NamedSharding, n: int):
    """``v -> A @ v`` for a global vector ``v`` sharded by ``rows``, where this process holds only
    ``A_mine``, its block of rows of ``A`` (a sparse array on one of its devices)."""
    replicated = NamedSharding(rows.mesh, P())

    def matvec(v: xp.Array) -> xp.Array:
        whole = xp.asarray(v, device=replicated)  # an all-gather: every device has all of v
        mine = A_mine @ xp.asarray(whole.jax.addressable_data(0)).to_device(A_mine.device)  # my rows of A @ v
        return xp.asarray(jax.make_array_from_process_local_data(rows, mine.jax, (n,)))

    return matvec


def on_mesh(axis_type: AxisType) -> None:
    mesh = jax.make_mesh((8,), ("rows",), axis_types=(axis_type,))
    rows = NamedSharding(mesh, P("rows"))

    # global arrays from process-local data: each process holds only its own rows
    x = xp.asarray(jax.make_array_from_process_local_data(rows, DATA[MINE], DATA.shape))
    assert x.device == rows and x.shape == (N, D) and not x.jax.is_fully_addressable
    pieces = rows.addressable_devices_indices_map(DATA.shape).items()
    shards = [jax.device_put(DATA[index], device) for device, index in pieces]
    check(
        "from single-device arrays",
        xp.asarray(jax.make_array_from_single_device_arrays(DATA.shape, rows, shards)),
        DATA,
    )
    check("from process-local data", x, DATA)
    # what stays local: a process reads its own shards; the whole value only through a collective
    assert np.array_equal(np.concatenate([np.asarray(s.data) for s in x.jax.addressable_shards]), DATA[MINE])
    try:
        np.asarray(x)
        raise AssertionError("np.asarray of an array spread over two processes")
    except RuntimeError as e:  # JAX's message, which names the way: process_allgather
        assert "non-addressable" in str(e) and "process_allgather" in str(e), e
    # the same data on every process, placed by xp on the global mesh
    check("asarray(device=rows)", xp.asarray(DATA, device=rows), DATA)

    # creation on the global mesh: each device computes its own shard, eagerly and under jit
    makers = {
        "zeros": (lambda: xp.zeros((N, D), device=rows), np.zeros((N, D))),
        "full": (lambda: xp.full(N, 2.5, device=rows), np.full(N, 2.5)),
        "arange": (lambda: xp.arange(N, device=rows), np.arange(N)),
        "linspace": (lambda: xp.linspace(0, 1, N, device=rows), np.linspace(0, 1, N)),
        "eye": (lambda: xp.eye(N, device=rows), np.eye(N)),
    }
    for name, (make, expected) in makers.items():
        for out in (make(), jax.jit(make)()):
            assert out.jax.sharding.spec[0] == "rows", (axis_type, name, out.jax.sharding)
            check(f"{axis_type} {name}", out, expected)

    # the pipelines, eagerly and jitted, against NumPy on the whole data
    for name, (pipeline, reference) in PIPELINES.items():
        expected = reference(DATA.astype(np.float64))
        for how, f in (("eager", pipeline), ("jit", jax.jit(pipeline))):
            out = f(x)
            for got, want in zip(out, expected, strict=True) if isinstance(out, tuple) else [(out, expected)]:
                assert set(got.jax.sharding.device_set) == set(jax.devices()), (axis_type, how, name)
                check(f"{axis_type} {how} {name}", got, want)
    check("x unchanged by the pipelines", x, DATA)

    # a distributed sparse matvec and a CG solve: a SciPy CSR matrix of which each process holds
    # only its block of rows, as an xp BCSR on its first device
    n = 64
    lap = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    noise = sp.random(n, n, density=0.05, random_state=1)
    A = (lap + 0.1 * (noise + noise.T) + sp.identity(n)).tocsr()  # symmetric, positive definite
    block = slice(PROCESS_ID * n // 2, (PROCESS_ID + 1) * n // 2)
    matvec = row_blocked_matvec(xp.sparse.from_scipy(A[block], format="bcsr", dtype=FLOAT), rows, n)
    v = np.linspace(-1, 1, n).astype(FLOAT)
    check(f"{axis_type} sparse matvec", matvec(xp.asarray(v, device=rows)), A @ v.astype(np.float64))
    b = xp.asarray(np.cos(np.arange(n)).astype(FLOAT), device=rows)
    solution, iterations = cg(matvec, b, tol=1e-10 if X64 else 1e-5, max_iterations=2 * n)
    assert solution.device == rows, solution.device
    check(f"{axis_type} CG", solution, np.linalg.solve(A.toarray(), np.cos(np.arange(n))))
    if PROCESS_ID == 0:
        print(f"{axis_type}: CG converged in {iterations} iterations", flush=True)


for axis_type in (AxisType.Auto, AxisType.Explicit):
    on_mesh(axis_type)

if PROCESS_ID == 0:
    print(f"process 0 done in {time.monotonic() - START:.1f} s", flush=True)
multihost_utils.sync_global_devices("done")  # neither process leaves while the other still needs it
print("ok", flush=True)
