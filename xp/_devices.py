"""Devices: what ``device=`` accepts, what ``x.device`` returns, and placing arrays.

A device is a ``jax.Device`` or a ``jax.sharding.Sharding`` (for example a ``NamedSharding``
over a ``Mesh``): JAX's SPMD partitioner is the distributed engine, and xp adds none of its own.

Under ``jax.jit`` an array's placement is decided by the compiler, not known while tracing; a
traced array's ``.device`` is then ``TRACED``, a device object that means "wherever this
computation runs". Passing it back as ``device=`` places nothing, so generic code such as
``xp.zeros(n, device=x.device)`` works unchanged inside and outside ``jit``.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import jax
import jax.core
from jax.sharding import AxisType, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding

from xp._errors import fail

if TYPE_CHECKING:
    # ``jax.Device`` in annotations: jaxlib ships no type for it (type checkers see a variable of
    # unknown type, which they refuse in an annotation), so xp's annotations say ``JaxDevice``.
    JaxDevice: TypeAlias = Any
else:
    JaxDevice = jax.Device


class TracedDevice:
    """The device of an array inside a JAX transformation (see the module docstring)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TracedDevice()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TracedDevice)

    def __hash__(self) -> int:
        return hash(TracedDevice)


TRACED: Final = TracedDevice()

DEVICE_TYPES = (jax.Device, Sharding, TracedDevice)
DEVICE_EXPECTED = "a jax.Device or a jax.sharding.Sharding (such as x.device or jax.devices()[0])"


def default_device() -> JaxDevice:
    """Where an array made without ``device=`` lives: this process's first device, as JAX places
    it. (``jax.devices()[0]`` is the cluster's first device: on a ``jax.distributed`` cluster it
    belongs to process 0, and no other process can put an array there.)"""
    return jax.local_devices()[0]


def device_of(value: Any) -> JaxDevice | Sharding | TracedDevice:
    """``x.device`` of a jax array: its device, its sharding when it spans several devices."""
    if isinstance(value, jax.core.Tracer):
        return TRACED
    sharding = value.sharding
    if isinstance(sharding, SingleDeviceSharding):
        return next(iter(sharding.device_set))
    if len(sharding.device_set) == 1 and not isinstance(sharding, NamedSharding):
        return next(iter(sharding.device_set))
    return sharding


def place(value: Any, device: JaxDevice | Sharding | TracedDevice | None) -> Any:
    """``value`` put on ``device``; ``None`` and ``TRACED`` leave it where it is.

    Works eagerly and under ``jit`` (where JAX's own ``device=`` arguments are ignored).
    """
    if device is None or device is TRACED:
        return value
    check_divisible(value.shape, device)
    if isinstance(value, jax.core.Tracer):
        return _constrained(value, device)
    if device_of(value) == device:
        return value
    return jax.device_put(value, device)


def build(
    kernel: Callable[..., Any],
    device: JaxDevice | Sharding | TracedDevice | None,
    args: tuple[Any, ...],
    static: tuple[Any, ...],
) -> Any:
    """``kernel(*args, *static)`` (a creation kernel, whose static arguments come last and are
    passed positionally, as ``xp/_jit.py`` says why) computed on ``device``.

    Onto a sharding over several devices each device computes its own shard (the kernel jitted
    with the sharding as its output sharding), so the array is never whole on one device: its
    size is bounded by the memory of the mesh, not of device 0. Otherwise: computed, then placed.
    """
    if isinstance(device, Sharding) and len(device.device_set) > 1:
        shape = jax.eval_shape(lambda *a: kernel(*a, *static), *args).shape
        check_divisible(shape, device)
        return _sharded_constructor(kernel, device, static)(*args)
    return place(kernel(*args, *static), device)


def check_divisible(shape: tuple[int, ...], device: Any) -> None:
    """An array of ``shape`` can be split by ``device`` (a NamedSharding's mesh axes must divide
    the sizes of the array axes they split: JAX does not pad a placement)."""
    if not isinstance(device, NamedSharding):
        return
    sizes = dict(device.mesh.shape)
    for axis, entry in enumerate(device.spec):
        if entry is None or axis >= len(shape):
            continue
        names = entry if isinstance(entry, tuple) else (entry,)
        parts = math.prod(sizes[name] for name in names)
        if type(shape[axis]) is int and shape[axis] % parts:
            fail(ValueError, f"device: an array of shape {tuple(shape)} cannot be split by {device.spec} over the "
                   f"mesh {dict(sizes)}: axis {axis} of size {shape[axis]} does not divide into {parts} equal parts "
                   f"(pad the array, or choose a spec whose mesh axes divide it)")  # fmt: skip


@functools.lru_cache(maxsize=512)
def _sharded_constructor(kernel: Callable[..., Any], sharding: Sharding, static: tuple[Any, ...]) -> Any:
    return jax.jit(lambda *args: kernel(*args, *static), out_shardings=sharding)


def _constrained(value: Any, device: JaxDevice | Sharding) -> Any:
    """A traced ``value`` placed on ``device`` when the computation runs.

    Inside ``jit``, ``jax.device_put`` onto a sharding over Auto mesh axes (or onto one device)
    gives a replicated result on the computation's first device: JAX reads it as a transfer, not
    as a placement of the output. A sharding constraint is what places a traced value there.
    Over Explicit axes the sharding is part of the value's type, and ``device_put`` is how it
    changes (a constraint naming Explicit axes is refused). A spec naming both kinds places the
    Explicit part; the compiler then decides the Auto part.
    """
    if not isinstance(device, Sharding):
        return jax.lax.with_sharding_constraint(value, SingleDeviceSharding(device))
    if not isinstance(device, NamedSharding):
        return jax.lax.with_sharding_constraint(value, device)
    explicit = {name for name, kind in zip(device.mesh.axis_names, device.mesh.axis_types, strict=True)
                if kind == AxisType.Explicit}  # fmt: skip
    named = {name for entry in device.spec if entry is not None
             for name in (entry if isinstance(entry, tuple) else (entry,))}  # fmt: skip
    if not named & explicit:
        return jax.lax.with_sharding_constraint(value, device)
    if named <= explicit:
        return jax.device_put(value, device)
    keep = [_only(entry, explicit) for entry in device.spec]
    return jax.device_put(value, NamedSharding(device.mesh, PartitionSpec(*keep)))


def _only(entry: Any, axes: set[str]) -> Any:
    """A spec entry with the mesh axes outside ``axes`` left out."""
    if entry is None:
        return None
    names = tuple(name for name in (entry if isinstance(entry, tuple) else (entry,)) if name in axes)
    return None if not names else names[0] if len(names) == 1 else names


def same_placement(value: Any, device: JaxDevice | Sharding | TracedDevice | None) -> bool:
    """Whether ``value`` already lives on ``device`` (``None`` and ``TRACED`` match anything)."""
    if device is None or device is TRACED:
        return True
    if isinstance(value, jax.core.Tracer):
        return False  # placed by a constraint (see place), which is free where it already holds
    return bool(device_of(value) == device)


# --- memory -----------------------------------------------------------------------------------


def memory_limit(device: JaxDevice | Sharding | TracedDevice | None) -> int | None:
    """The bytes an array placed on ``device`` can occupy at most (``None``: not known).

    Accelerators report their allocator's limit (``memory_stats()["bytes_limit"]``); JAX's CPU
    devices report nothing and share the host's memory, so the host's physical memory is the
    limit there. A sharded array may spread over all of its sharding's devices' memory.
    """
    if isinstance(device, Sharding):
        devices: set[Any] = device.device_set
        if all(d.platform == "cpu" for d in devices):
            return _host_memory()  # JAX's CPU devices share the host's memory
        limits = [memory_limit(d) for d in devices]
        known = [limit for limit in limits if limit is not None]
        return sum(known) if len(known) == len(limits) else None
    one: Any = default_device() if device is None or isinstance(device, TracedDevice) else device
    if one.platform == "cpu":
        return _host_memory()
    stats = one.memory_stats() or {}
    limit = stats.get("bytes_limit")
    return int(limit) if limit else None


def _host_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not a POSIX system: no limit known
        return None
