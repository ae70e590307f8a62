"""Names, kinds and signatures: every name of the standard is present with the right kind
(function, constant, dtype, module), and every function's signature matches the standard's.

Signatures are compared with :func:`inspect.signature` against the inventory. A failure is a
difference that breaks portable code: a parameter missing, a usable name different, a parameter
that cannot be passed the way the standard says, a different default, an extra required
parameter. The standard's *should* rules (positional parameters positional-only, optional ones
keyword-only) are notes on a pass, and failures with ``--strict``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterator
from typing import Any

from conformance import spec
from conformance.model import FAILED, PASSED, SKIPPED, Result, first_line
from conformance.namespaces import MISSING, Namespace

_CONSTANTS = {"e": math.e, "pi": math.pi, "inf": math.inf}


def _kind_problem(ns: Namespace, name: str, obj: Any) -> str:
    """What is wrong with the kind of a namespace-level object ("" if nothing)."""
    if name in _CONSTANTS:
        if not isinstance(obj, float):
            return f"{name} must be a Python float, got {type(obj).__name__}"
        return "" if obj == _CONSTANTS[name] else f"{name} is {obj!r}, expected {_CONSTANTS[name]!r}"
    if name == "nan":
        return "" if isinstance(obj, float) and math.isnan(obj) else f"nan must be a float NaN, got {obj!r}"
    if name == "newaxis":
        return "" if obj is None else f"newaxis must be None, got {obj!r}"
    if name == "__array_api_version__":
        if not isinstance(obj, str):
            return f"must be a str, got {type(obj).__name__}"
        if obj not in spec.VERSIONS and obj != "draft":
            return f"{obj!r} is not a version of the standard"
        return f"reports {obj!r}, checked against {ns.version!r}" if obj < ns.version else ""
    if name in spec.inventory()["dtypes"]:
        try:
            if not obj == obj:  # noqa: SIM201 - a dtype must equal itself under ==
                return "a dtype must compare equal to itself"
            others = [n for n in spec.inventory()["dtypes"] if n != name and getattr(ns.module, n, None) is not None]
            same = [n for n in others if obj == getattr(ns.module, n)]
        except Exception as e:
            return f"comparing dtypes raised {first_line(e)}"
        return f"compares equal to {', '.join(same)}" if same else ""
    return "" if callable(obj) else f"must be callable, got {type(obj).__name__}"


def check_names(ns: Namespace) -> Iterator[Result]:
    """Every name of the namespace, ``linalg`` and ``fft``, present with the right kind."""
    req = spec.required(ns.version)
    for name in req["namespace"]:
        chapter = spec.chapter_of(name)
        obj = ns.get(name)
        if obj is MISSING:
            yield Result("API names", name, "present", FAILED, f"{name} is missing from {ns.name}")
            continue
        problem = _kind_problem(ns, name, obj)
        yield Result("API names", name, "present", FAILED if problem else PASSED, problem)
        if chapter == "Constants":
            yield Result(chapter, name, "value", FAILED if problem else PASSED, problem)
    for ext in ("linalg", "fft"):
        module = ns.get(ext)
        for name in req[ext]:
            q = f"{ext}.{name}"
            if module is MISSING:
                yield Result("API names", q, "present", SKIPPED, f"{ns.name} has no {ext} extension (optional)")
            elif ns.get(q) is MISSING:
                yield Result("API names", q, "present", FAILED, f"{q} is missing from {ns.name}")
            else:
                problem = "" if callable(ns.get(q)) else f"must be callable, got {type(ns.get(q)).__name__}"
                yield Result("API names", q, "present", FAILED if problem else PASSED, problem)


def sample_array(ns: Namespace) -> Any:
    """A small 2-D floating-point array of the namespace."""
    return ns.module.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def check_array_object(ns: Namespace) -> Iterator[Result]:
    """The array object's attributes (with the right types) and methods, on a 2x3 array."""
    try:
        x = sample_array(ns)
    except Exception as e:
        yield Result("Array object", "asarray", "make a 2x3 array", FAILED, first_line(e))
        return
    expect = {
        "shape": lambda v: isinstance(v, tuple) and tuple(v) == (2, 3),
        "ndim": lambda v: v == 2 and isinstance(v, int),
        "size": lambda v: v == 6 and isinstance(v, int),
        "dtype": lambda v: ns.dtype_name(v) in ("float32", "float64"),
        "device": lambda v: v is not None,
        "T": lambda v: tuple(v.shape) == (3, 2),
        "mT": lambda v: tuple(v.shape) == (3, 2),
    }
    inv = spec.inventory()
    for name in spec.required(ns.version)["array"]:
        q = f"array.{name}"
        try:
            value = getattr(x, name)
        except Exception as e:
            yield Result("Array object", q, "present", FAILED, f"x.{name} raised {first_line(e)}")
            continue
        if name in expect:
            try:
                good = bool(expect[name](value))
            except Exception as e:
                good, value = False, f"<{first_line(e)}>"
            detail = "" if good else f"x.{name} of a 2x3 float array is {value!r}"
            yield Result("Array object", q, "attribute", PASSED if good else FAILED, detail)
        else:
            detail = "" if callable(value) else f"x.{name} must be a method, got {type(value).__name__}"
            yield Result("Array object", q, "method", FAILED if detail else PASSED, detail)
    for name in inv["array_reflected"]:
        present = callable(getattr(type(x), name, None))
        yield Result(
            "Array object", f"array.{name}", "method", PASSED if present else FAILED, "" if present else "missing"
        )
    for name in inv["array_inplace"]:
        forward = "__" + name[3:]
        if callable(getattr(type(x), name, None)):
            yield Result("Array object", f"array.{name}", "method", PASSED)
        elif callable(getattr(type(x), forward, None)):  # `x op= y` falls back to `x = x op y`
            yield Result("Array object", f"array.{name}", "method", PASSED, f"absent; Python falls back to {forward}")
        else:
            yield Result("Array object", f"array.{name}", "method", FAILED, "missing")


# --- signatures ------------------------------------------------------------------------------
_KIND = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional-or-keyword",
    inspect.Parameter.VAR_POSITIONAL: "var-positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only",
    inspect.Parameter.VAR_KEYWORD: "var-keyword",
}


def _same_default(expected: Any, actual: Any) -> bool:
    if actual is inspect.Parameter.empty:
        return False
    if expected is None or actual is None or isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual or (math.isnan(expected) and math.isnan(actual))
    if isinstance(expected, str) and not isinstance(actual, str):  # e.g. `inf` written as a name
        return str(actual) == expected
    try:
        return bool(expected == actual)
    except Exception:
        return False


def compare_signature(expected: tuple[spec.Param, ...], sig: inspect.Signature) -> tuple[list[str], list[str]]:
    """``(failures, notes)``: differences that break portable calls, and *should*-level ones."""
    failures: list[str] = []
    notes: list[str] = []
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_pos = any(p.kind == p.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind == p.VAR_KEYWORD for p in params)
    by_name = {p.name: p for p in params}
    matched: set[str] = set()
    i = 0
    for e in expected:
        if e.kind == "var-positional":
            if not var_pos:
                failures.append(f"*{e.name} missing")
            continue
        if e.kind in ("positional-only", "positional-or-keyword"):
            if i < len(positional):
                p = positional[i]
                matched.add(p.name)
                i += 1
                if e.kind == "positional-or-keyword":
                    if p.kind != p.POSITIONAL_OR_KEYWORD:
                        failures.append(f"{e.name} must be positional-or-keyword, is {_KIND[p.kind]}")
                    if p.name != e.name:
                        failures.append(f"parameter {i} is named {p.name}, expected {e.name}")
                elif p.kind != p.POSITIONAL_ONLY:
                    notes.append(f"{e.name} should be positional-only")
            elif not var_pos:
                failures.append(f"positional parameter {e.name} missing")
                continue
            else:
                continue
        else:  # keyword-only
            p_or_none = by_name.get(e.name)
            if p_or_none is None or p_or_none.kind == p_or_none.POSITIONAL_ONLY:
                if not var_kw:
                    failures.append(f"keyword {e.name} missing")
                continue
            p = p_or_none
            matched.add(p.name)
            if p.kind != p.KEYWORD_ONLY:
                notes.append(f"{e.name} should be keyword-only")
        if e.has_default and not _same_default(e.default, p.default):
            shown = "no default" if p.default is inspect.Parameter.empty else f"default {p.default!r}"
            message = f"{e.name} has {shown}, the standard's is {e.default!r}"
            # A sentinel (None, a marker object) means "not given": the behaviour may still match.
            plain = isinstance(p.default, bool | int | float | str) and isinstance(e.default, bool | int | float | str)
            (failures if plain or p.default is inspect.Parameter.empty else notes).append(message)
    for p in params:
        required = p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        if required and p.name not in matched:
            failures.append(f"extra required parameter {p.name}")
    return failures, notes


def _signature_result(ns: Namespace, q: str, obj: Any, method: bool = False) -> Result:
    text = spec.signature_text(q, ns.version)
    if text is None:
        return Result("Signatures", q, "signature", SKIPPED, "the standard gives no signature")
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError) as e:
        return Result("Signatures", q, "signature", SKIPPED, f"not introspectable: {first_line(e)}")
    if method:
        params = list(sig.parameters.values())
        if params and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
            sig = sig.replace(parameters=params[1:])
    failures, notes = compare_signature(spec.parse_signature(text), sig)
    if ns.strict:
        failures, notes = failures + notes, []
    status = FAILED if failures else PASSED
    shown = f"{q.rpartition('.')[2]}{sig}" if failures or notes else ""
    return Result("Signatures", q, "signature", status, "; ".join(failures or notes), example=shown)


def check_signatures(ns: Namespace) -> Iterator[Result]:
    """The signature of every function, extension function and array method that is present."""
    req = spec.required(ns.version)
    for name in req["namespace"]:
        obj = ns.get(name)
        if obj is not MISSING and callable(obj) and spec.signature_text(name, ns.version):
            yield _signature_result(ns, name, obj)
    for ext in ("linalg", "fft"):
        for name in req[ext]:
            obj = ns.get(f"{ext}.{name}")
            if obj is not MISSING and callable(obj):
                yield _signature_result(ns, f"{ext}.{name}", obj)
    try:
        array_type = type(sample_array(ns))
    except Exception:
        return  # reported by the array object checks
    for name in req["array"]:
        obj = getattr(array_type, name, None)
        if callable(obj) and spec.signature_text(f"array.{name}", ns.version):
            yield _signature_result(ns, f"array.{name}", obj, method=True)
