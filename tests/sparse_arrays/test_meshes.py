"""Sparse arrays on meshes (docs/sharding.md, "Sparse arrays on meshes"): products keep the dense
operand's sharding, ``to_device`` places the buffers of BCOO and BCSR arrays by the rule for index
arrays, and ``xp.sparse.RowPartitioned`` (rows partitioned over a mesh axis) computes products,
transposed products, sums and element-wise functions with collectives. Every result is checked
against NumPy and for its actual sharding, on Auto and Explicit meshes, eagerly and under jit.

Each check runs in a subprocess with 8 host CPU devices (XLA_FLAGS must be set before JAX starts).
"""

import socket
import subprocess
import sys
import textwrap

import pytest
from subprocess_env import subprocess_env

pytestmark = pytest.mark.cpu_only(
    reason="meshes of 8 simulated devices (XLA_FLAGS=--xla_force_host_platform_device_count) and a "
    "2-process cluster of CPU devices exist on JAX's CPU backend only"
)

COMMON = textwrap.dedent(
    """
    import jax, numpy as np, scipy.sparse as sp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    import xp, xp.sparse as xs

    assert len(jax.devices()) == 8
    KINDS = (AxisType.Auto, AxisType.Explicit)

    def spec_of(x):
        # a spec with one entry per axis (JAX leaves trailing Nones out in some results)
        spec = tuple(x.jax.sharding.spec)
        return spec + (None,) * (x.ndim - len(spec))

    def check(out, expected, spec, what):
        assert isinstance(out, xp.Array), (what, type(out))
        assert np.allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-4), (what, np.asarray(out), expected)
        assert spec_of(out) == spec, (what, out.jax.sharding)

    def both(f):
        # the call eagerly and under jax.jit
        return (("eager", f), ("jit", jax.jit(f)))
    """
)

PRODUCTS = COMMON + textwrap.dedent(
    """
    rng = np.random.default_rng(0)
    a = np.where(rng.random((16, 24)) < 0.25, rng.standard_normal((16, 24)), 0).astype(np.float32)
    for kind in KINDS:
        mesh = jax.make_mesh((8,), ("x",), axis_types=(kind,))
        def on(spec, value):
            return xp.asarray(value.astype(np.float32), device=NamedSharding(mesh, spec))
        X = on(P(None, "x"), rng.standard_normal((24, 16)))        # sharded by columns
        wide = on(P(None, "x"), rng.standard_normal((24, 64)))     # past the native kernel's threshold
        rows = on(P("x", None), rng.standard_normal((8, 16)))      # x @ A: sharded by rows
        v = on(P("x"), rng.standard_normal(24))                    # a sharded vector (contracted)
        for fmt in ("bcoo", "bcsr"):
            A = xs.fromdense(xp.asarray(a), format=fmt)
            cases = {
                "A @ X": (lambda A: A @ X, a @ np.asarray(X), (None, "x")),
                "A @ wide": (lambda A: xp.matmul(A, wide), a @ np.asarray(wide), (None, "x")),
                "rows @ A": (lambda A: rows @ A, np.asarray(rows) @ a, ("x", None)),
                "A @ v": (lambda A: A @ v, a @ np.asarray(v), (None,)),
                "tensordot(A, X)": (lambda A: xp.tensordot(A, X, axes=1), a @ np.asarray(X), (None, "x")),
            }
            for name, (f, expected, spec) in cases.items():
                for how, g in both(f):
                    check(g(A), expected, spec, (kind, fmt, name, how))
    print("ok")
    """
)

PLACEMENT = COMMON + textwrap.dedent(
    """
    rng = np.random.default_rng(1)
    a = np.where(rng.random((16, 16)) < 0.3, rng.standard_normal((16, 16)), 0).astype(np.float32)
    count = int(np.count_nonzero(a))
    for kind in KINDS:
        mesh = jax.make_mesh((8,), ("x",), axis_types=(kind,))
        rows = NamedSharding(mesh, P("x"))
        split = kind == AxisType.Auto  # Explicit axes split no buffer (the rule)
        layouts = {
            # nse divisible by 8: the entries are split over the axis (Auto); else replicated
            "bcoo nse 8k": xs.fromdense(xp.asarray(a), nse=8 * (count // 8 + 1)),
            "bcoo nse odd": xs.fromdense(xp.asarray(a), nse=8 * (count // 8 + 1) + 1),
            "bcsr nse 8k": xs.fromdense(xp.asarray(a), nse=8 * (count // 8 + 1), format="bcsr"),
        }
        for name, A in layouts.items():
            entries = "x" if split and A.nse % 8 == 0 else None
            for how, g in (("to_device", lambda A: A.to_device(rows)),
                           ("asarray", lambda A: xs.asarray(A, device=rows)),
                           ("jit to_device", jax.jit(lambda A: A.to_device(rows)))):
                B = g(A)
                assert type(B) is type(A), (kind, name, how)
                leaves = jax.tree.leaves(B.jax)
                specs = [tuple(leaf.sharding.spec) + (None,) * (leaf.ndim - len(leaf.sharding.spec)) for leaf in leaves]
                assert specs[0] == (entries,), (kind, name, how, specs)           # data
                if isinstance(B, xs.BCSR):
                    assert specs[1:] == [(entries,), (None,)], (kind, name, how, specs)  # indices, indptr whole
                else:
                    assert specs[1] == (entries, None), (kind, name, how, specs)
                assert all(len(leaf.sharding.device_set) == 8 for leaf in leaves)
                assert B.device == NamedSharding(mesh, P(entries, None)), (kind, name, how, B.device)
                np.testing.assert_array_equal(np.asarray(B.todense()), a)
                # a placed array computes like the original, where it is: a product with a vector
                # on one device is replicated over the mesh, an element-wise result keeps the
                # placement of the entries, a sum is replicated
                x = np.arange(16, dtype=np.float32)
                for out in (B @ xp.asarray(x), jax.jit(lambda B: B @ xp.asarray(x))(B)):
                    check(out, a @ x, (None,), (kind, name, how, "B @ x"))
                    assert len(out.jax.sharding.device_set) == 8
                for out in (B * 2, jax.jit(lambda B: B * 2)(B)):
                    assert out.device == B.device, (kind, name, how, out.device)
                    np.testing.assert_array_equal(np.asarray(out.todense()), 2 * a)
                total = xp.sum(B)
                check(total, a.sum(), (), (kind, name, how, "sum"))
                assert len(total.jax.sharding.device_set) == 8
                # sums along one axis: by the native kernel only where the entries are on one
                # device (_reductions._on_one_device); split entries take XLA's scatter
                for axis in (0, 1):
                    for out in (xp.sum(B, axis=axis), jax.jit(lambda B: xp.sum(B, axis=axis))(B)):
                        got = np.asarray(out.todense())
                        assert np.allclose(got, a.sum(axis), rtol=1e-5, atol=1e-5), (kind, name, how, axis)
            assert A.to_device(rows).to_device(jax.devices()[2]).device == jax.devices()[2]
            # placed again where it is: the same array
            placed = A.to_device(rows)
            assert placed.to_device(placed.device) is placed
    print("ok")
    """
)

ROW_PARTITIONED = COMMON + textwrap.dedent(
    """
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
        blocks = xs.RowPartitioned.from_blocks([S[i * 8:(i + 1) * 8] for i in range(8)], mesh, "x")
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
        cases = {
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
            "astype": (lambda A: xp.astype(A, xp.int32).todense(), D.astype(np.int32), ("x", None)),
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
        # what it does not do is an error that says so, never a silent densification
        for call, kind_ in ((lambda: xp.exp(A), NotImplementedError), (lambda: A + 1, NotImplementedError),
                            (lambda: A / 0, NotImplementedError), (lambda: A @ A, NotImplementedError),
                            (lambda: A == A, NotImplementedError), (lambda: A ** 2, NotImplementedError),
                            (lambda: A - A, NotImplementedError), (lambda: ~A, NotImplementedError)):
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
        def cg(L, b):
            def step(_, state):
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
    """
)

# Two processes of 4 CPU devices each (jax.distributed over 127.0.0.1, CPU collectives over gloo):
# each process gives only the blocks of its own devices; the products gather and reduce across them.
PROCESSES = textwrap.dedent(
    """
    import sys
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    process, port = int(sys.argv[1]), sys.argv[2]
    jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=process)
    import numpy as np, scipy.sparse as sp
    from jax.experimental import multihost_utils
    from jax.sharding import AxisType, PartitionSpec as P
    import xp, xp.sparse as xs

    S = sp.random(64, 40, density=0.1, random_state=3, format="csr", dtype=np.float32)
    D = S.toarray()
    x = np.arange(40, dtype=np.float32)
    for kind in (AxisType.Auto, AxisType.Explicit):
        mesh = jax.make_mesh((8,), ("x",), axis_types=(kind,))
        mine = {i: S[i * 8:(i + 1) * 8] for i in range(8) if mesh.devices[i].process_index == process}
        assert len(mine) == 4, mine
        A = xs.RowPartitioned.from_blocks(mine, mesh, "x")
        assert A.shape == (64, 40)
        y = jax.jit(lambda A: A @ xp.asarray(x))(A)
        z = jax.jit(lambda A, v: A.T @ v)(A, y)
        assert tuple(y.jax.sharding.spec) == ("x",) and tuple(z.jax.sharding.spec) == ("x",)
        whole_y = multihost_utils.process_allgather(y.jax, tiled=True)
        whole_z = multihost_utils.process_allgather(z.jax, tiled=True)
        assert np.allclose(whole_y, D @ x, rtol=1e-4, atol=1e-3), (kind, whole_y)
        assert np.allclose(whole_z, D.T @ (D @ x), rtol=1e-4, atol=1e-2), (kind, whole_z)
    print("ok")
    """
)


# The results NumPy computes eagerly on CPU (a product of two sparse matrices, rows taken) go where
# JAX puts a computation: on a committed operand's device; operands committed to two devices are
# JAX's error, as they were before those results were made on the host.
HOST_RESULTS = textwrap.dedent(
    """
    import jax, numpy as np, pytest
    import xp, xp.sparse as xs

    devices = jax.devices()
    a = np.where(np.arange(36).reshape(6, 6) % 4 == 0, np.arange(36.0).reshape(6, 6), 0).astype(np.float32)
    A = xs.fromdense(xp.asarray(a))
    moved = A.to_device(devices[3])
    rows = xp.asarray(np.array([4, 0, 4], np.int32))
    for out in (A @ moved, moved @ A, moved[rows], moved[rows.to_device(devices[3])]):
        assert out.device == devices[3] and out.jax.data.committed, out.device
    assert np.array_equal(np.asarray((A @ moved).todense()), a @ a)
    with pytest.raises(ValueError, match="incompatible devices"):
        moved @ A.to_device(devices[5])
    with pytest.raises(ValueError, match="^xp.sparse.BCOO.__getitem__: the arrays are on different devices .cpu:3, cpu:5."):
        moved[rows.to_device(devices[5])]  # (said in xp's words by every entry point: xp._routing.failed)
    print("ok")
    """
)


def run(script: str) -> None:
    env = subprocess_env(host_devices=8)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout[-3000:] + out.stderr[-3000:]


def test_products_keep_the_dense_operands_sharding():
    run(PRODUCTS)


def test_to_device_places_buffers_by_the_rule_for_index_arrays():
    run(PLACEMENT)


def test_row_partitioned_matrix_on_auto_and_explicit_meshes():
    run(ROW_PARTITIONED)


def test_row_partitioned_from_each_processs_blocks():
    with socket.socket() as probe:  # a free port for the coordinator
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    env = subprocess_env(host_devices=4)
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", PROCESSES, str(i), port],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outputs = []
    for process in runs:
        try:
            outputs.append(process.communicate(timeout=300))
        except subprocess.TimeoutExpired:
            for other in runs:
                other.kill()
            raise
    for process, (out, err) in zip(runs, outputs, strict=True):
        assert process.returncode == 0 and out.strip().endswith("ok"), out[-3000:] + err[-3000:]


def test_results_made_on_the_host_are_placed_as_jax_places_them():
    run(HOST_RESULTS)
