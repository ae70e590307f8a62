"""The inspection API: ``xp.__array_namespace_info__()``."""

from __future__ import annotations

from typing import Any

import jax

from xp import _devices
from xp import _dtypes as dt
from xp._devices import JaxDevice
from xp._errors import describe


def _tracing() -> bool:
    """Whether a JAX transformation is tracing now (JAX has no public query for this)."""
    try:
        from jax._src import core

        return not core.trace_state_clean()
    except (ImportError, AttributeError):  # pragma: no cover - a JAX without it
        return False


class Info:
    """What this namespace supports, on which devices, with which dtypes."""

    __slots__ = ()

    def capabilities(self) -> dict[str, Any]:
        """Optional features. Data-dependent shapes (``nonzero``, ``unique_*``, reading through
        a boolean mask) work eagerly; under a JAX transformation they cannot, and the answer
        given inside a trace says so."""
        eager = not _tracing()
        return {"boolean indexing": eager, "data-dependent shapes": eager, "max dimensions": 64}

    def default_device(self) -> JaxDevice:
        return _devices.default_device()

    def devices(self) -> tuple[JaxDevice, ...]:
        return tuple(jax.devices())

    def default_dtypes(self, *, device: Any = None) -> dict[str, dt.DType]:
        _check_device(device, "default_dtypes")
        return {
            "real floating": dt.PUBLIC[dt.default_float()],
            "complex floating": dt.PUBLIC[dt.default_complex()],
            "integral": dt.PUBLIC[dt.default_int()],
            "indexing": dt.PUBLIC[dt.default_int()],
        }

    def dtypes(self, *, device: Any = None, kind: str | tuple[str, ...] | None = None) -> dict[str, dt.DType]:
        """The dtypes usable now, by name: all 13 with JAX's 64-bit mode on, else the 32-bit ones;
        where JAX's default backend is a TPU, which only emulates float64, never float64 or
        complex128 (the same for every ``device``: xp's policy follows the default backend)."""
        _check_device(device, "dtypes")
        kinds = kind if isinstance(kind, tuple) else (kind,)  # anything else is one kind, checked below
        selected: set[Any] = set()
        for k in kinds:
            if k is None:
                selected |= dt.ANY
            elif isinstance(k, str) and k in dt.KINDS:
                selected |= dt.KINDS[k]
            else:
                raise ValueError(
                    f"xp.__array_namespace_info__().dtypes: kind must be None, one of "
                    f"{', '.join(map(repr, dt.KINDS))} or a tuple of them, got {k!r}"
                )
        return {d.name: dt.PUBLIC[d] for d in dt.available() if d in selected}


def _check_device(device: Any, method: str) -> None:
    if device is not None and not isinstance(device, _devices.DEVICE_TYPES):
        raise TypeError(
            f"xp.__array_namespace_info__().{method}: device must be None or {_devices.DEVICE_EXPECTED}, "
            f"got {describe(device)}"
        )


def __array_namespace_info__() -> Info:  # noqa: N807 - the standard's name
    """The inspection namespace of the array API standard."""
    return Info()
