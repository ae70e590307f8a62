"""``device=`` is honoured eagerly and under jit on Auto and Explicit meshes; host data is split
on the host; sizes the mesh does not divide are named errors (tests/test_sharding.py; 8
simulated CPU devices)."""

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import xp


def spec_of(x: xp.Array) -> P:
    sharding = x.jax.sharding
    assert isinstance(sharding, NamedSharding), sharding  # (an array on one device has no spec)
    return sharding.spec


def recording(put: Callable[..., Any], seen: list[object], what: Callable[[Any], object]) -> Callable[..., Any]:
    """``put`` (jax.device_put) noting, in ``seen``, ``what`` of each value it is given."""

    def device_put(value: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(what(value))
        return put(value, *args, **kwargs)

    return device_put


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
    moved: list[object] = []
    put = jax.device_put
    jax.device_put = recording(put, moved, lambda value: getattr(value, "shape", None))
    try:
        for make in makers.values():
            make(rows)
    finally:
        jax.device_put = put
    assert not moved, moved
    # host data is split on the host, each shard sent to its device (never whole on device 0)
    sources: list[object] = []
    jax.device_put = recording(put, sources, type)
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
