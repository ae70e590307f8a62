"""The inspection API, ``__array_namespace_info__()``: its methods, what they return, and that
it agrees with the namespace (the default dtypes are the dtypes arrays get; ``dtypes(kind=...)``
selects by kind; the capabilities hold).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from conformance import spec
from conformance.model import FAILED, PASSED, SKIPPED, Result, first_line
from conformance.namespaces import Namespace

CHAPTER = "Inspection"
_DEFAULT_KINDS = {
    "real floating": "real floating",
    "complex floating": "complex floating",
    "integral": "integral",
    "indexing": "integral",
}


def _result(function: str, check: str, fn: Callable[[], str | None]) -> Result:
    """Run ``fn``: it returns a problem (failed), None or "" (passed); an exception fails."""
    try:
        problem = fn()
    except Exception as e:
        return Result(CHAPTER, function, check, FAILED, first_line(e))
    return Result(CHAPTER, function, check, FAILED if problem else PASSED, problem or "")


def check_inspection(ns: Namespace) -> Iterator[Result]:
    required = spec.required(ns.version)
    if not required["info"]:
        yield Result(CHAPTER, "__array_namespace_info__", "present", SKIPPED, f"not in the {ns.version} standard")
        return
    if ns.info is None:
        detail = ns.info_error or f"__array_namespace_info__ is missing from {ns.name}"
        yield Result(CHAPTER, "__array_namespace_info__", "returns an info object", FAILED, detail)
        return
    info = ns.info
    yield Result(CHAPTER, "__array_namespace_info__", "returns an info object", PASSED)
    for method in required["info"]:
        if not callable(getattr(info, method, None)):
            yield Result(CHAPTER, f"info.{method}", "present", FAILED, f"info.{method} is missing")
    yield from _capabilities(ns, info, required["capabilities"])
    yield from _devices(info)
    yield from _dtypes(ns, info)
    yield from _defaults(ns, info)


def _capabilities(ns: Namespace, info: Any, keys: list[str]) -> Iterator[Result]:
    caps: dict[str, Any] = {}

    def shape() -> str | None:
        nonlocal caps
        caps = info.capabilities()
        if not isinstance(caps, dict):
            return f"capabilities() must return a dict, got {type(caps).__name__}"
        missing = [k for k in keys if k not in caps]
        if missing:
            return f"capabilities() lacks {', '.join(map(repr, missing))}"
        for k in ("boolean indexing", "data-dependent shapes"):
            if k in caps and not isinstance(caps[k], bool):
                return f"capabilities()[{k!r}] must be a bool, got {caps[k]!r}"
        dims = caps.get("max dimensions")
        if "max dimensions" in keys and not (
            dims is None or (isinstance(dims, int) and not isinstance(dims, bool) and dims > 0)
        ):
            return f"capabilities()['max dimensions'] must be a positive int or None, got {dims!r}"
        return None

    yield _result("info.capabilities", "keys and types", shape)

    if caps.get("boolean indexing"):

        def boolean_indexing() -> str | None:
            x = ns.module.asarray([1, 2, 3, 4])
            got = ns.to_numpy(x[ns.module.asarray([True, False, True, False])])
            return None if got.tolist() == [1, 3] else f"x[mask] gave {got.tolist()}, expected [1, 3]"

        yield _result("info.capabilities", "'boolean indexing' holds", boolean_indexing)
    if caps.get("data-dependent shapes") and ns.has("nonzero"):

        def data_dependent() -> str | None:
            got = ns.to_numpy(ns.module.nonzero(ns.module.asarray([0, 3, 0, 5]))[0])
            return None if got.tolist() == [1, 3] else f"nonzero gave {got.tolist()}, expected [1, 3]"

        yield _result("info.capabilities", "'data-dependent shapes' holds", data_dependent)
    dims = caps.get("max dimensions")
    if isinstance(dims, int) and 0 < dims <= 64:

        def max_dimensions() -> str | None:
            x = ns.module.reshape(ns.module.asarray([1.0]), (1,) * dims)
            return None if x.ndim == dims else f"a {dims}-dimensional array has ndim {x.ndim}"

        yield _result("info.capabilities", "'max dimensions' holds", max_dimensions)


def _devices(info: Any) -> Iterator[Result]:
    def devices() -> str | None:
        devs = info.devices()
        if not isinstance(devs, list | tuple) or not devs:
            return f"devices() must return a non-empty list, got {devs!r}"
        default = info.default_device()
        if default not in devs:
            return f"default_device() {default!r} is not among devices()"
        return None

    yield _result("info.devices", "devices() contains default_device()", devices)


def _dtypes(ns: Namespace, info: Any) -> Iterator[Result]:
    def all_dtypes() -> str | None:
        reported = info.dtypes()
        if not isinstance(reported, dict) or not reported:
            return f"dtypes() must return a non-empty dict, got {reported!r}"
        unknown = [k for k in reported if k not in spec.inventory()["dtypes"]]
        if unknown:
            return f"dtypes() has names outside the standard: {unknown}"
        wrong = [
            k for k, v in reported.items() if getattr(ns.module, k, None) is None or not _same(v, getattr(ns.module, k))
        ]
        if wrong:
            return f"dtypes() values differ from the namespace's dtype objects: {wrong}"
        for k in reported:
            x = ns.module.zeros((1,), dtype=reported[k])
            if ns.dtype_name(x.dtype) != k:
                return f"zeros(1, dtype={k}) has dtype {x.dtype!r}"
        return None

    yield _result("info.dtypes", "names and dtype objects", all_dtypes)

    def by_kind() -> str | None:
        reported = info.dtypes()
        for kind in spec.KIND_NAMES:
            want = {k for k in reported if k in spec.kind_members(kind)}
            got = set(info.dtypes(kind=kind))
            if got != want:
                return f"dtypes(kind={kind!r}) gave {sorted(got)}, expected {sorted(want)}"
        got = set(info.dtypes(kind=("bool", "real floating")))
        want = {k for k in reported if k == "bool" or k in spec.kind_members("real floating")}
        if got != want:
            return f"dtypes(kind=('bool', 'real floating')) gave {sorted(got)}, expected {sorted(want)}"
        if set(info.dtypes(device=info.default_device())) != set(reported):
            return "dtypes(device=default_device()) differs from dtypes()"
        return None

    yield _result("info.dtypes", "kind= and device=", by_kind)


def _same(a: Any, b: Any) -> bool:
    return bool(a == b)


def _defaults(ns: Namespace, info: Any) -> Iterator[Result]:
    defaults: dict[str, Any] = {}

    def shape() -> str | None:
        nonlocal defaults
        defaults = info.default_dtypes()
        if set(defaults) != set(_DEFAULT_KINDS):
            return f"default_dtypes() keys are {sorted(defaults)}, expected {sorted(_DEFAULT_KINDS)}"
        for key, kind in _DEFAULT_KINDS.items():
            name = ns.dtype_name(defaults[key])
            if name is None or name not in spec.kind_members(kind) or name not in ns.dtypes:
                return f"default_dtypes()[{key!r}] is {defaults[key]!r}, not an available {kind} dtype"
        if info.default_dtypes(device=info.default_device()) != defaults:
            return "default_dtypes(device=default_device()) differs from default_dtypes()"
        return None

    yield _result("info.default_dtypes", "keys and kinds", shape)
    if not defaults:
        return

    def used() -> str | None:
        cases = {
            "asarray(1.0)": (lambda: ns.module.asarray(1.0), "real floating"),
            "asarray(1)": (lambda: ns.module.asarray(1), "integral"),
            "ones(2)": (lambda: ns.module.ones(2), "real floating"),
            "arange(3)": (lambda: ns.module.arange(3), "integral"),
            "argmax(x)": (lambda: ns.module.argmax(ns.module.asarray([1, 3, 2])), "indexing"),
        }
        if "complex64" in ns.dtypes:
            cases["asarray(1j)"] = (lambda: ns.module.asarray(1j), "complex floating")
        problems = []
        for label, (make, key) in cases.items():
            try:
                got = ns.dtype_name(make().dtype)
            except Exception as e:
                problems.append(f"{label} raised {first_line(e)}")
                continue
            want = ns.dtype_name(defaults[key])
            if got != want:
                problems.append(f"{label} has dtype {got}, the default {key} dtype is {want}")
        return "; ".join(problems) or None

    yield _result("info.default_dtypes", "arrays get the default dtypes", used)


def tasks_results(ns: Namespace) -> list[Result]:
    with np.errstate(all="ignore"):
        return list(check_inspection(ns))
