"""xp's exceptions and warnings, and how a rejected argument becomes a public error.

Inside xp, code that rejects an argument calls :func:`fail`, which raises an internal
:class:`ArgumentError` carrying the public exception type and a message that names the
parameter, what was expected and what came. At the public surface (``xp._routing.failed``, which
every entry point calls with what it raised: the functions, the array methods, the sparse API)
:meth:`ArgumentError.public` turns it into that exception, prefixed with the public name:
``xp.add: x2 must be an array or a Python scalar, got str 'a'``. Helpers can thus reject arguments without knowing which public function called them.

A leaf module: it imports nothing from xp.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np


class ArgumentError(Exception):
    """A rejected argument (internal). ``kind`` is the public exception type to raise."""

    def __init__(self, kind: type[Exception], message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def public(self, where: str) -> Exception:
        """The public exception: ``kind("<where>: <message>")``, e.g. ``where="xp.add"``."""
        return self.kind(f"{where}: {self.message}")


def fail(kind: type[Exception], message: str) -> NoReturn:
    """Reject an argument: ``kind`` is the public exception type, ``message`` names the parameter."""
    raise ArgumentError(kind, message)


def mismatched_devices(error: ValueError, where: str, arguments: tuple[Any, ...]) -> ValueError | None:
    """JAX's error for arrays on different devices, said in xp's terms (``None`` for any other
    ValueError). JAX's own message names the arguments of xp's internal kernel; this one names
    the function and the devices of the arrays it was given."""
    if "incompatible devices" not in str(error):
        return None
    devices = []
    for argument in _flattened(arguments):
        device = getattr(argument, "device", None)
        if device is None or isinstance(device, str):
            continue
        ids = sorted(d.id for d in device.device_set) if hasattr(device, "device_set") else None
        named = str(device) if ids is None else f"{type(device).__name__} over the devices {ids}"
        if named not in devices:
            devices.append(named)
    return ValueError(
        f"{where}: the arrays are on different devices ({', '.join(devices) or 'see the arguments'}); "
        "put them on one first (x.to_device(device) or xp.asarray(x, device=device))"
    )


def _flattened(arguments: Any) -> list[Any]:
    items: list[Any] = []
    for argument in arguments:
        if type(argument) in (list, tuple):
            items.extend(_flattened(argument))
        else:
            items.append(argument)
    return items


def describe(x: object) -> str:
    """How an unexpected argument is named in messages: its type, and dtype and shape if it has them."""
    if x is None or isinstance(x, (bool, int, float, complex, str)):
        return f"{type(x).__name__} {x!r}"
    if isinstance(x, np.generic):
        return type(x).__name__
    dtype, shape = getattr(x, "dtype", None), getattr(x, "shape", None)
    if dtype is not None and isinstance(shape, tuple):
        return f"{type(x).__name__} of dtype {dtype} and shape {tuple(shape)}"
    return type(x).__name__


class AxisError(ValueError, IndexError):
    """An axis out of range (both a ValueError and an IndexError, as in NumPy)."""


class DataDependentShapeError(TypeError):
    """An operation whose output shape depends on array values was called under a JAX trace.

    A TypeError, like JAX's ConcretizationTypeError, so that code probing for lazy arrays
    recognises it.
    """


class CheckError(Exception):
    """A check of ``xp.checked`` failed (docs/checked.md): an out-of-bounds index under
    ``jax.jit`` or ``vmap`` (also an IndexError), a mask write whose values do not match (a
    ValueError), a NaN produced (a FloatingPointError) or a
    division by zero (a ZeroDivisionError), in the categories asked for."""


class CheckedIndexError(CheckError, IndexError):
    """An index out of bounds, found by ``xp.checked``."""


class CheckedValueError(CheckError, ValueError):
    """A mask write whose values do not match the elements the mask selects, found by
    ``xp.checked`` (a ValueError, as the same write raises eagerly)."""


class CheckedNaNError(CheckError, FloatingPointError):
    """A NaN produced where ``xp.checked(f, errors=("nan",))`` checks for them."""


class CheckedDivisionError(CheckError, ZeroDivisionError):
    """A division by zero where ``xp.checked(f, errors=("division",))`` checks for them."""


class SparseEfficiencyWarning(UserWarning):
    """A call on sparse arrays was computed on dense copies of them (its result is dense).

    Make it an error to forbid densifying: ``warnings.simplefilter("error", SparseEfficiencyWarning)``.
    The name is SciPy's, for the same situation.
    """


class NarrowingWarning(UserWarning):
    """A 64-bit dtype request or 64-bit data was narrowed to 32 bits, because JAX's 64-bit mode is
    off and narrowing is on (``xp.narrow_64bit()`` or ``XP_NARROW_64BIT=1``).

    The message names the function and the parameter: ``xp.asarray: obj has dtype float64;
    narrowed to float32 (xp.narrow_64bit is on)``. Make it an error to find every place that
    narrows: ``warnings.simplefilter("error", NarrowingWarning)``.
    """
