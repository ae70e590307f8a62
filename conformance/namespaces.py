"""The namespace under test, and what the checks need to know about it.

A namespace is a module (``xp``, ``jax.numpy``, ``numpy``, ``array_api_strict``) or any object
with the standard's names as attributes. :class:`Namespace` holds it with the dtypes it reports
through ``__array_namespace_info__().dtypes()`` (so with JAX's 64-bit mode off, 64-bit dtypes
are neither generated nor expected), and converts its arrays to NumPy for the oracle.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Any

import numpy as np

from conformance import spec

MISSING = object()


class Namespace:
    """A namespace being checked, with its available dtypes and NumPy conversions."""

    def __init__(
        self, module: Any, name: str | None = None, *, version: str = spec.DEFAULT_VERSION, max_examples: int = 20
    ) -> None:
        self.module = module
        self.name = name or getattr(module, "__name__", type(module).__name__)
        self.version = version
        self.max_examples = max_examples
        self.strict = False  # the standard's *should* rules for signatures count as failures
        self.shrink = False  # let hypothesis shrink failing examples (slower)
        self.info: Any = None
        self.info_error = ""
        self.dtypes: dict[str, Any] = {}
        self._discover_dtypes()

    def _discover_dtypes(self) -> None:
        names = spec.inventory()["dtypes"]
        info_fn = getattr(self.module, "__array_namespace_info__", None)
        if callable(info_fn):
            try:
                self.info = info_fn()
                reported = dict(self.info.dtypes())
                self.dtypes = {n: reported[n] for n in names if n in reported}
                return
            except Exception as e:  # reported by the inspection checks
                self.info_error = f"{type(e).__name__}: {e}"
        # No usable inspection API: the dtypes it has attributes for, that make arrays.
        for n in names:
            d = getattr(self.module, n, None)
            if d is None:
                continue
            try:
                self.module.zeros((1,), dtype=d)
            except Exception:
                continue
            self.dtypes[n] = d

    # --- names ------------------------------------------------------------------------------
    def get(self, qualified: str) -> Any:
        """``add``, ``linalg.det``, ``fft.fft``: the object, or :data:`MISSING`."""
        obj = self.module
        for part in qualified.split("."):
            obj = getattr(obj, part, MISSING)
            if obj is MISSING:
                return MISSING
        return obj

    def has(self, qualified: str) -> bool:
        return self.get(qualified) is not MISSING

    # --- dtypes -----------------------------------------------------------------------------
    def available(self, names: tuple[str, ...] | list[str]) -> list[str]:
        """The names among ``names`` this namespace reports as dtypes, in the standard's order."""
        return [n for n in spec.inventory()["dtypes"] if n in names and n in self.dtypes]

    def dtype_name(self, dtype: Any) -> str | None:
        """The standard's name of a dtype object of this namespace (None if it is none of them)."""
        for n, d in self.dtypes.items():
            try:
                if dtype == d:
                    return n
            except Exception:
                continue
        for n in spec.inventory()["dtypes"]:  # one the namespace has but does not report
            d = getattr(self.module, n, None)
            try:
                if d is not None and dtype == d:
                    return n
            except Exception:
                continue
        return None

    def default(self, kind: str) -> str:
        """The name of the default dtype of ``kind`` ("real floating", "integral", ...)."""
        if self.info is not None:
            try:
                name = self.dtype_name(self.info.default_dtypes()[kind])
                if name:
                    return name
            except Exception:
                pass
        wide = {"real floating": "float64", "complex floating": "complex128", "integral": "int64", "indexing": "int64"}
        narrow = {"real floating": "float32", "complex floating": "complex64", "integral": "int32", "indexing": "int32"}
        return wide[kind] if wide[kind] in self.dtypes else narrow[kind]

    # --- arrays -----------------------------------------------------------------------------
    def asarray(self, value: Any, dtype: str | None = None) -> Any:
        """A namespace array from a NumPy array or Python value, with a dtype given by name."""
        if dtype is None:
            return self.module.asarray(value)
        return self.module.asarray(value, dtype=self.dtypes.get(dtype) or getattr(self.module, dtype))

    def to_numpy(self, x: Any) -> np.ndarray:
        """A NumPy copy of a namespace array (``__array__``, else a sparse array's ``todense()``,
        else DLPack), for the oracle to compare with."""
        if isinstance(x, np.ndarray):
            return x
        try:
            return np.asarray(x)
        except Exception as error:
            if callable(getattr(x, "todense", None)):
                return self.to_numpy(x.todense())
            try:
                return np.from_dlpack(x)
            except Exception:
                raise error from None

    def describe(self, x: Any) -> str:
        """``int8 (2, 3)``: a short description of an array for messages."""
        return f"{self.dtype_name(getattr(x, 'dtype', None)) or getattr(x, 'dtype', '?')} {tuple(x.shape)}"


def load(name: str) -> Any:
    """Import a namespace by module name (``xp``, ``xp.sparse``, ``jax.numpy``)."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m pytest`: local modules are importable
    return importlib.import_module(name)


def module_version(module: Any) -> str:
    """The version of the package a namespace comes from ("" if unknown)."""
    version = getattr(module, "__version__", None)
    if isinstance(version, str):
        return version
    root = sys.modules.get(str(getattr(module, "__name__", "")).partition(".")[0])
    version = getattr(root, "__version__", None)
    return version if isinstance(version, str) else ""


def environment() -> dict[str, Any]:
    """What the run depended on: versions, and JAX's 64-bit mode and devices when JAX is loaded."""
    env: dict[str, Any] = {"python": sys.version.split()[0], "numpy": np.__version__}
    try:
        import hypothesis

        env["hypothesis"] = hypothesis.__version__
    except ImportError:  # pragma: no cover - a dependency of the tool
        pass
    jax = sys.modules.get("jax")
    if jax is not None:
        env["jax"] = getattr(jax, "__version__", "?")
        with contextlib.suppress(AttributeError):
            env["jax_enable_x64"] = bool(jax.config.jax_enable_x64)
        with contextlib.suppress(RuntimeError, AttributeError):  # no backend could start
            devices = jax.devices()
            env["device"] = f"{len(devices)} x {devices[0].device_kind} ({devices[0].platform})"
    return env
