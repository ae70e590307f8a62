"""Sharded arrays: ``device=`` takes a ``jax.sharding.Sharding``, ``x.device`` of a sharded array is
its sharding, and generic array-API code runs on sharded inputs unchanged, eagerly and jitted.

Runs in a subprocess with 8 host CPU devices (XLA_FLAGS must be set before JAX starts).
"""

import subprocess
import sys
import textwrap

import pytest
from subprocess_env import subprocess_env

pytestmark = pytest.mark.cpu_only(
    reason="meshes of 8 simulated devices (XLA_FLAGS=--xla_force_host_platform_device_count) exist on "
    "JAX's CPU backend only"
)

CHECKS = textwrap.dedent(
    """
    import jax, numpy as np
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    import xp

    assert len(jax.devices()) == 8

    def standardize(x):
        # generic array-API code: written once, knows nothing about JAX
        ns = x.__array_namespace__()
        mean = ns.mean(x, axis=0) if hasattr(ns, "mean") else ns.sum(x, axis=0) / x.shape[0]
        centered = x - mean
        return centered / ns.sqrt(ns.sum(centered * centered, axis=0) / x.shape[0])

    data = (np.arange(64.0).reshape(16, 4) ** 1.5).astype(np.float64 if jax.config.jax_enable_x64 else np.float32)
    expected = (data - data.mean(0)) / data.std(0)
    for axis_type in (AxisType.Auto, AxisType.Explicit):
        mesh = jax.make_mesh((8,), ("rows",), axis_types=(axis_type,))
        rows = NamedSharding(mesh, P("rows"))
        x = xp.asarray(data, device=rows)
        assert x.device == rows, x.device
        for out in (standardize(x), jax.jit(standardize)(x)):
            assert np.allclose(np.asarray(out), expected)
        # creation functions place their result
        for made in (xp.zeros(16, device=rows), xp.arange(16, device=rows), xp.linspace(0, 1, 16, device=rows),
                     xp.full((16,), 2.0, device=rows), xp.ones_like(x), xp.asarray([1.0] * 16, device=rows)):
            assert made.device == rows, made.device
        # device= is honoured under jit as well (JAX's own device= arguments are ignored there)
        placed = jax.jit(lambda v: xp.zeros(16, device=rows) + v[:, 0])(x)
        assert placed.jax.sharding.spec == P("rows"), placed.jax.sharding
        # to_device moves or reshards
        replicated = NamedSharding(mesh, P())
        assert x.to_device(replicated).device == replicated
        assert x.to_device(jax.devices()[3]).device == jax.devices()[3]
    print("ok")
    """
)


def run_with_devices(script: str, devices: int) -> None:
    """Run ``script`` in a fresh Python with ``devices`` simulated CPU devices (XLA_FLAGS must be
    set before JAX starts; JAX_ENABLE_X64 as in this session); it must print ``ok`` last."""
    env = subprocess_env(host_devices=devices)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout[-3000:] + out.stderr[-3000:]


def test_sharded_generic_code():
    # JAX_ENABLE_X64 as in this session (the suite runs with 64-bit mode on and off)
    run_with_devices(CHECKS, 8)


SHARD_MAP = textwrap.dedent(
    """
    import jax, numpy as np
    from jax import lax
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    import xp, xp.sparse

    # generic per-shard code: constants made from Python scalars, lists and NumPy arrays, creation,
    # writes, reductions, a sparse matrix closed over
    def body(v):
        assert type(v) is xp.Array, type(v)
        w = xp.asarray(v, copy=True)
        w[:, 0] = -1.0
        w[w > 40] = 0.5
        w *= 2
        w = w + xp.reshape(xp.arange(3, dtype=v.dtype), (1, 3)) * xp.asarray([1.0, 2.0, 3.0], dtype=v.dtype)
        w = xp.concat([w, xp.sum(v * 0.5, axis=1, keepdims=True), xp.zeros((v.shape[0], 1), dtype=v.dtype)], axis=1)
        w[:, np.array([False, True, False, False, False])] = 1.5  # a NumPy mask: a constant of the trace
        w = w + (v @ (A * 2.0).T)[:, :1]  # deciding that A * 2.0 stays sparse computes 0 * 2.0 on the host
        return xp.where(w < 3, w, xp.sort(w, axis=1)), lax.psum(xp.sum(v), "rows")

    def reference(block):
        w = block.copy()
        w[:, 0] = -1.0
        w[w > 40] = 0.5
        w *= 2
        w = w + np.arange(3, dtype=block.dtype)[None] * np.array([1.0, 2.0, 3.0], block.dtype)
        w = np.concatenate([w, (block * 0.5).sum(1, keepdims=True), np.zeros((len(block), 1), block.dtype)], 1)
        w[:, 1] = 1.5
        w = w + (block @ (2 * dense).T)[:, :1]
        return np.where(w < 3, w, np.sort(w, 1))

    dense = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]], np.float32)
    A = xp.sparse.fromdense(xp.asarray(dense))
    data = np.arange(48.0, dtype=np.float32).reshape(16, 3)
    expected = np.concatenate([reference(data[2 * k : 2 * k + 2]) for k in range(8)])
    for axis_type in (AxisType.Auto, AxisType.Explicit):
        mesh = jax.make_mesh((8,), ("rows",), axis_types=(axis_type,))
        x = xp.asarray(data, device=NamedSharding(mesh, P("rows")))
        mapped = jax.shard_map(body, mesh=mesh, in_specs=P("rows"), out_specs=(P("rows"), P()))
        # eagerly first: the constants it makes must not outlive its trace (the cached -1.0 of
        # w[:, 0] = -1.0 did, and the jitted call after it raised UnexpectedTracerError)
        for call in (mapped, jax.jit(mapped), mapped):
            out, total = call(x)
            assert type(out) is xp.Array and type(total) is xp.Array, (type(out), type(total))
            assert np.array_equal(np.asarray(out), expected), (np.asarray(out), expected)
            assert float(total) == data.sum(), float(total)
            assert out.jax.sharding.is_equivalent_to(NamedSharding(mesh, P("rows")), 2), out.device
    print("ok")
    """
)


def test_generic_code_per_shard_under_shard_map():
    run_with_devices(SHARD_MAP, 8)


MIXED_DEVICES = textwrap.dedent(
    """
    import jax, numpy as np, pytest
    from jax.sharding import NamedSharding, PartitionSpec as P
    import xp

    d = jax.devices()
    a = xp.asarray(jax.device_put(np.ones(4, np.float32), d[0]))
    b = xp.asarray(jax.device_put(np.ones(4, np.float32), d[1]))
    left = xp.ones(4, device=NamedSharding(jax.make_mesh((2,), ("x",), devices=d[:2]), P("x")))
    right = xp.ones(4, device=NamedSharding(jax.make_mesh((2,), ("x",), devices=d[2:4]), P("x")))
    calls = {
        "xp.add": lambda: a + b,
        "xp.where": lambda: xp.where(a > 0, a, b),
        "xp.concat": lambda: xp.concat([left, right]),
        "xp.Array.__setitem__": lambda: a.__setitem__(0, b[0]),
        "xp.Array.__getitem__": lambda: a[xp.asarray(jax.device_put(np.array([1], np.int32), d[1]))],
    }
    for where, call in calls.items():
        # JAX's message names the arguments of xp's internal kernels; xp's names the function
        # and the devices
        with pytest.raises(ValueError, match=rf"^{where}: the arrays are on different devices \\(.*\\); put them on one"):
            call()
    with pytest.raises(ValueError, match=r"NamedSharding over the devices \\[0, 1\\], NamedSharding over the devices \\[2, 3\\]"):
        left + right
    assert np.asarray(a).tolist() == [1.0] * 4  # the failed write changed nothing
    assert np.asarray(a + b.to_device(d[0])).tolist() == [2.0] * 4
    print("ok")
    """
)


def test_arrays_on_different_devices_are_a_named_value_error():
    run_with_devices(MIXED_DEVICES, 4)


PLACEMENT = textwrap.dedent(
    """
    import jax, numpy as np
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P, SingleDeviceSharding
    import xp

    def spec_of(x):
        sharding = x.jax.sharding
        return sharding.device_set if isinstance(sharding, SingleDeviceSharding) else sharding.spec

    device3 = jax.devices()[3]
    for axis_type in (AxisType.Auto, AxisType.Explicit):
        mesh = jax.make_mesh((8,), ("rows",), axis_types=(axis_type,))
        rows = NamedSharding(mesh, P("rows"))
        makers = {
            "zeros": lambda d: xp.zeros(16, device=d),
            "ones": lambda d: xp.ones((16, 2), device=d),
            "empty": lambda d: xp.empty(16, device=d),
            "full": lambda d: xp.full(16, 2.5, device=d),
            "arange": lambda d: xp.arange(16, device=d),
            "arange of floats": lambda d: xp.arange(0.0, 8.0, 0.5, device=d),
            "linspace": lambda d: xp.linspace(0, 1, 16, device=d),
            "eye": lambda d: xp.eye(16, device=d),
        }
        for name, make in makers.items():
            eager = make(rows)
            # the result alone, not combined with a sharded input: placement is the function's own
            jitted = jax.jit(lambda: make(rows))()
            on_device3 = jax.jit(lambda: make(device3))()
            assert eager.device == rows and spec_of(eager)[0] == "rows", (axis_type, name, eager.device)
            assert spec_of(jitted)[0] == "rows", (axis_type, name, jitted.jax.sharding)
            assert on_device3.device == device3, (axis_type, name, on_device3.device)
            assert np.array_equal(np.asarray(jitted), np.asarray(eager))
        # eagerly, a sharded array is built shard by shard: nothing whole is put on the mesh
        moved = []
        put = jax.device_put
        jax.device_put = lambda value, *a, **k: (moved.append(getattr(value, "shape", None)), put(value, *a, **k))[1]
        try:
            for make in makers.values():
                make(rows)
        finally:
            jax.device_put = put
        assert not moved, moved
        # host data is split on the host, each shard sent to its device (never whole on device 0)
        sources = []
        jax.device_put = lambda value, *a, **k: (sources.append(type(value)), put(value, *a, **k))[1]
        try:
            from_host = {
                "asarray of a NumPy array": xp.asarray(np.arange(32.0, dtype=np.float32).reshape(16, 2), device=rows),
                "asarray of a list": xp.asarray([1, 2] * 8, device=rows),
                "asarray with a dtype": xp.asarray(np.arange(16), dtype=xp.float32, device=rows),
            }
        finally:
            jax.device_put = put
        assert sources and all(source is np.ndarray for source in sources), sources
        for name, made in from_host.items():
            assert made.device == rows and spec_of(made)[0] == "rows", (axis_type, name, made.device)
        assert np.array_equal(np.asarray(from_host["asarray of a list"]), [1, 2] * 8)
        # *_like without device=: where the input is; under jit, as far as the trace knows it (over
        # Explicit axes the input's sharding; over Auto axes the compiler's choice, on the mesh)
        x = xp.asarray(np.arange(32.0, dtype=np.float32).reshape(16, 2), device=rows)
        likes = {
            "zeros_like": lambda v: xp.zeros_like(v),
            "ones_like": lambda v: xp.ones_like(v, dtype=xp.int32),
            "empty_like": lambda v: xp.empty_like(v),
            "full_like": lambda v: xp.full_like(v, -0.0),
        }
        for name, like in likes.items():
            expected = np.full((16, 2), 1 if name == "ones_like" else (-0.0 if name == "full_like" else 0.0))
            eager, jitted = like(x), jax.jit(like)(x)
            for out in (eager, jitted):
                assert np.array_equal(np.asarray(out), expected) and np.array_equal(np.signbit(out), np.signbit(expected))
                assert len(out.jax.sharding.device_set) == 8, (axis_type, name, out.jax.sharding)
            assert eager.device == rows, (axis_type, name, eager.device)
            if axis_type == AxisType.Explicit:
                assert spec_of(jitted)[0] == "rows", (axis_type, name, jitted.jax.sharding)
        # asarray, to_device and astype place traced values too
        data = np.arange(16.0, dtype=np.float32)
        for name, f in {
            "asarray": lambda v: xp.asarray(v, device=rows),
            "to_device": lambda v: xp.asarray(v).to_device(rows),
            "astype": lambda v: xp.astype(xp.asarray(v), xp.int32, device=rows),
        }.items():
            out = jax.jit(f)(data)
            assert spec_of(out)[0] == "rows", (axis_type, name, out.jax.sharding)
            assert np.array_equal(np.asarray(out), data)
            assert jax.jit(lambda v: xp.asarray(v).to_device(device3))(data).device == device3
        # the size check counts the memory of the sharding's devices, which on CPU is the host's
        try:
            xp.zeros(2**40, device=rows)
            raise AssertionError("4 TiB on 8 CPU devices of one host")
        except MemoryError as e:
            assert str(e).startswith("xp.zeros: shape asks for an array of shape (1099511627776,)"), e
        # sizes the mesh does not divide, and DLPack of a sharded array, in xp's words
        uneven = {
            "xp.zeros": lambda: xp.zeros(10, device=rows),
            "xp.asarray": lambda: xp.asarray(np.ones(10, np.float32), device=rows),
            "xp.Array.to_device": lambda: xp.ones(10).to_device(rows),
        }
        uneven["xp.zeros "] = lambda: jax.jit(lambda: xp.zeros(10, device=rows))()
        for where, call in uneven.items():
            try:
                call()
                raise AssertionError(f"{where}: 10 elements split 8 ways")
            except ValueError as e:
                assert str(e).startswith(f"{where.strip()}: device: an array of shape (10,) cannot be split by "
                                         "P('rows',) over the mesh {'rows': 8}: axis 0 of size 10 does not divide "
                                         "into 8 equal parts"), e  # fmt: skip
        for consumer in (np.from_dlpack, lambda x: x.__dlpack_device__()):
            try:
                consumer(xp.arange(16.0, device=rows))
                raise AssertionError("DLPack of a sharded array")
            except BufferError as e:
                assert "the array is spread over 8 devices" in str(e) and str(e).startswith("xp.Array.__dlpack"), e
    print("ok")
    """
)


def test_device_is_honoured_eagerly_and_under_jit_on_auto_and_explicit_meshes():
    run_with_devices(PLACEMENT, 8)


WRITES_IN_PLACE = textwrap.dedent(
    """
    import jax, numpy as np
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    import xp

    device1 = jax.devices()[1]
    places = {"device 1": device1}
    for axis_type in (AxisType.Auto, AxisType.Explicit):
        mesh = jax.make_mesh((4,), ("rows",), axis_types=(axis_type,))
        places[f"rows over {axis_type}"] = NamedSharding(mesh, P("rows"))
    for name, place in places.items():
        x = xp.arange(8.0, device=place)
        scalar = xp.asarray(3.0, device=device1)
        view = x[:]
        writes = {
            "x[...] = 1.0": lambda: x.__setitem__(..., 1.0),  # a write of the whole array: from
            "x[:] = 2.0": lambda: x.__setitem__(slice(None), 2.0),  # a cached scalar, on device 0
            "view[...] = 3": lambda: view.__setitem__(..., 3),
            "x[1:3] = 4.0": lambda: x.__setitem__(slice(1, 3), 4.0),
            "x[0] = 5.0": lambda: x.__setitem__(0, 5.0),
            "x[x > 4] = 6.0": lambda: x.__setitem__(x > 4, 6.0),
            "x[index array] = 7.0": lambda: x.__setitem__(xp.asarray([0, 7]), 7.0),
            "x += 1": lambda: x.__iadd__(1),
        }
        for what, write in writes.items():
            write()
            assert x.device == place and view.device == place, (name, what, x.device, view.device)
            assert np.array_equal(np.asarray(view), np.asarray(x)), (name, what)
        scalar[...] = 0.5
        assert scalar.device == device1 and float(scalar) == 0.5
    # results that do not depend on the input's values: kernels keep such inputs (xp/_jit.py)
    integers = xp.asarray([1, 2, 3], device=device1)
    square = xp.eye(3, device=device1)
    for what, result in {
        "isinf of integers": xp.isinf(integers),
        "isfinite of integers": xp.isfinite(integers),
        "imag of reals": xp.imag(square),
        "linalg.matrix_power(x, 0)": xp.linalg.matrix_power(square, 0),
        "broadcast_arrays(0-d, 2)": xp.broadcast_arrays(xp.asarray(1.0, device=device1), 2)[1],
    }.items():
        assert result.device == device1, (what, result.device)
        assert np.asarray(x).tolist() == [8.0, 5.0, 5.0, 4.0, 4.0, 4.0, 4.0, 8.0], (name, np.asarray(x))
    print("ok")
    """
)


def test_writes_and_results_stay_where_the_array_is():
    # found by these checks: a write of the whole array (x[...] = v, x[:] = v) made the new value
    # from the (cached, default-device) scalar alone, and jax.jit dropped the inputs a result does
    # not depend on, with their placement: both moved results to the default device
    run_with_devices(WRITES_IN_PLACE, 4)


EVERY_FUNCTION_KEEPS_PLACEMENT = textwrap.dedent(
    """
    import warnings
    import jax, numpy as np
    import xp

    warnings.simplefilter("ignore")  # (densifying sparse fallbacks are not what this checks)
    device1 = jax.devices()[1]
    inputs = {
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
    """
)


@pytest.mark.slow
# (run once, with 64-bit mode on: where a kernel's results go is decided by where its arguments
# are, whatever their dtypes or the ops inside, native sparse kernels or XLA's; CI runs the suite
# a second time with the mode and the native kernels off, where this slow sweep would repeat itself)
@pytest.mark.x64
def test_every_function_puts_its_results_where_its_array_arguments_are():
    # every public function called on arrays committed to device 1 (dense of several dtypes and
    # shapes, BCOO, BCSR), with one, two or a Python scalar argument: each call that is valid
    # returns arrays on device 1
    run_with_devices(EVERY_FUNCTION_KEEPS_PLACEMENT, 2)


EXPLICIT_AXES = textwrap.dedent(
    """
    import jax, numpy as np
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    import xp

    data = (np.arange(128.0).reshape(16, 8) / 7).astype(np.float32)

    def write(key, value):
        def f(x):
            x[key] = value
            return x
        return f

    # generic calls JAX refuses on Explicit axes without an out_sharding (ShardingTypeError)
    calls = {
        "x @ x.T": lambda x: x @ x.T,
        "x.T @ x": lambda x: x.T @ x,
        "x @ x.T[:, :8]": lambda x: x @ x.T[:, :8],
        "tensordot": lambda x: xp.tensordot(x, x, axes=([0], [0])),
        "sort": lambda x: xp.sort(x, axis=0),
        "argsort": lambda x: xp.argsort(x, axis=0),
        "cumulative_sum": lambda x: xp.cumulative_sum(x, axis=0),
        "cumulative_prod": lambda x: xp.cumulative_prod(x / 10 + 1, axis=0),
        "x[9]": lambda x: x[9],
        "x[idx]": lambda x: x[xp.asarray([1, 5, 9])],
        "take": lambda x: xp.take(x, xp.asarray([1, 5, 9]), axis=0),
        "take_along_axis": lambda x: xp.take_along_axis(x, xp.zeros((16, 8), dtype=xp.int32), axis=0),
        "x[3] = v": write(3, 1.0),
        "x[:, 1] = v": write((slice(None), 1), 1.0),
        "x[2:40] = 0": write(slice(2, 40), 0.0),
        "reshape": lambda x: xp.reshape(x, (8, 16)),
        "diff": lambda x: xp.diff(x, axis=0),
        "tile": lambda x: xp.tile(x, (2, 1)),
        "linalg.solve": lambda x: xp.linalg.solve(x[:8] + 8 * xp.eye(8), x[:8, 0]),
        "linalg.inv": lambda x: xp.linalg.inv(x[:8] @ x[:8].T + xp.eye(8)),
        "linalg.qr": lambda x: xp.linalg.qr(x)[1],
        "linalg.outer": lambda x: xp.linalg.outer(x[:, 0], x[:, 1]),
        "searchsorted": lambda x: xp.searchsorted(xp.sort(x[:, 0]), x[:, 1]),
        "unique_values": lambda x: xp.unique_values(xp.round(x)),
    }
    # the rule (docs/sharding.md): sharded like the first sharded operand where the result has its
    # number of dimensions and the mesh divides it, else replicated; matmul: rows as x1's, an
    # all-reduce over a sharded contraction
    rows, replicated = ("rows", None), (None, None)
    expected = {"x @ x.T": rows, "x.T @ x": replicated, "sort": rows, "cumulative_sum": rows, "x[3] = v": rows,
                "x[2:40] = 0": rows, "x[9]": (None,), "take": replicated, "linalg.outer": replicated}
    for axis_type in (AxisType.Auto, AxisType.Explicit):
        mesh = jax.make_mesh((8,), ("rows",), axis_types=(axis_type,))
        sharded = NamedSharding(mesh, P("rows"))
        for name, f in calls.items():
            reference = np.asarray(f(xp.asarray(data)))
            for how in ("eager", "jit"):
                if how == "jit" and name == "unique_values":
                    continue  # a data-dependent shape: not traceable, on any mesh
                x = xp.asarray(data, device=sharded)
                out = f(x) if how == "eager" else jax.jit(f)(x)
                assert np.allclose(np.asarray(out), reference, rtol=1e-5, atol=1e-4), (axis_type, how, name)
                if axis_type == AxisType.Explicit and name in expected:
                    spec = tuple(out.jax.sharding.spec) + (None,) * (out.ndim - len(out.jax.sharding.spec))
                    assert spec == expected[name], (how, name, out.jax.sharding.spec)
    print("ok")
    """
)


def test_standard_calls_jax_refuses_on_explicit_axes_follow_xps_rule():
    run_with_devices(EXPLICIT_AXES, 8)
