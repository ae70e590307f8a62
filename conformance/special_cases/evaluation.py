"""The special cases evaluated: a namespace's function run on every input of a fixed pool of
interesting values (zeros of both signs, infinities, NaN, integers, fractions, large and small
magnitudes) that satisfies a case's condition, in the widest floating dtype the namespace offers,
and its results compared with the case's expectation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from conformance.reproduce import ALIAS, call_lines, value
from conformance.special_cases.grammar import holds
from conformance.special_cases.table import Case, cases


@dataclass(frozen=True)
class CaseResult:
    function: str  # "add", "array.__bool__"
    case: str  # the spec sentence
    status: str  # "passed" | "failed" | "skipped" | "error"
    detail: str = ""  # first line of the failure, or why it was skipped
    # a failure's reproducer, without the import of the namespace (conformance.reproduce)
    script: tuple[str, ...] = ()


def run(namespace: Any, functions: Iterable[str] | None = None) -> list[CaseResult]:
    """Check every special case (or those of ``functions``) against ``namespace``."""
    wanted = None if functions is None else set(functions)
    return [_run_case(namespace, c) for c in cases() if wanted is None or c.function in wanted]


# --- the inputs: pools of values, and which of them a case checks ---------------------------

_POOL = (
    math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
    1.5, -1.5, 0.25, -0.75, 5.0, -7.0, 1e-3, -1e-3, 1e3, -1e3, 1e30, -1e30, 2.5, -2.5, 10.0, 0.1,
)  # fmt: skip

_COMPLEX_POOL = (
    math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.0, 3.0,
    1e30, -1e200,  # large |z|: other formulas
)  # fmt: skip

_COMPLEX_BINARY_POOL = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.5)


def _representable(values: Iterable[float], np_dtype: str) -> list[float]:
    """The pool as the dtype holds it (1e30 stays finite in float32, but 1e300 would not)."""
    out = []
    for v in values:
        with np.errstate(over="ignore"):
            stored = float(np.asarray(v, dtype=np_dtype))
        if math.isnan(v) or stored == v:
            out.append(v)
    return out


def _ambiguous(case: Case, env: dict[str, float], envs: list[dict[str, float]]) -> bool:
    """Whether ``env`` belongs to another case of the group with a different expectation.

    The standard's cases overlap in places: a general rule ("if x2_i is less than 0, the
    result is -|x1_i|") and a specific one ("if x1_i is NaN and x2_i is less than 0, the result
    is NaN with a sign bit of 1"). An input covered by both is checked by the more specific case
    (the one fewer pool inputs satisfy), and by neither when they tie (sqrt(NaN + inf j)).
    """
    mine = _coverage(case, envs)
    for other in case.group:
        if other is case or other.condition is None or other.expect is None or other.expect == case.expect:
            continue
        if holds(other.condition, env) and _coverage(other, envs) <= mine:
            return True
    return False


def _coverage(case: Case, envs: list[dict[str, float]]) -> int:
    key = len(envs)
    if case.coverage.get(key) is None:
        assert case.condition is not None
        case.coverage[key] = sum(1 for env in envs if holds(case.condition, env))
    return case.coverage[key]


# --- running a function on them -------------------------------------------------------------


def _run_case(ns: Any, case: Case) -> CaseResult:
    sentence = case.sentence
    if case.skip_reason:
        return CaseResult(case.function, sentence, "skipped", case.skip_reason)
    if case.kind == "conversion":
        return _run_conversion(ns, case)
    if case.kind == "linalg":  # extension functions: looked up in ns.linalg
        return _run_linalg(ns, case)
    fn = _resolve(ns, case.function)
    if fn is None:
        return CaseResult(case.function, sentence, "failed", f"{case.function} is missing")
    if case.kind == "reduction":
        return _run_reduction(ns, fn, case)
    is_complex = case.kind == "complex"
    widest = _widest(ns, "complex floating" if is_complex else "real floating")
    if widest is None:
        return CaseResult(case.function, sentence, "skipped", "no floating dtype")
    dtype, dtype_name = widest
    tolerance = 1e-12 if dtype_name in ("float64", "complex128") else 1e-6
    component = "float64" if dtype_name in ("float64", "complex128") else "float32"
    assert case.condition is not None and case.expect is not None
    envs: list[dict[str, float]]
    if case.kind == "complex-binary":
        pool = _representable(_COMPLEX_BINARY_POOL, component)
        envs = [{"a": a, "b": b, "c": c, "d": d} for a in pool for b in pool for c in pool for d in pool]
        widest = _widest(ns, "complex floating")
        if widest is None:
            return CaseResult(case.function, sentence, "skipped", "no complex dtype")
        dtype, dtype_name = widest
    elif is_complex:
        pool = _representable(_COMPLEX_POOL, component)
        envs = [{"a": a, "b": b} for a in pool for b in pool]
    elif case.kind == "binary":
        pool = _representable(_POOL, component)
        envs = [{"x1": x1, "x2": x2} for x1 in pool for x2 in pool]
    else:
        pool = _representable(_POOL, component)
        envs = [{"x": x} for x in pool]
    selected = [env for env in envs if holds(case.condition, env) and not _ambiguous(case, env, envs)]
    if not selected:
        return CaseResult(case.function, sentence, "skipped", "no input in the value pool satisfies the condition")
    try:
        if case.kind == "complex-binary":
            x1 = ns.asarray([complex(e["a"], e["b"]) for e in selected], dtype=dtype)
            x2 = ns.asarray([complex(e["c"], e["d"]) for e in selected], dtype=dtype)
            out = _to_numpy(fn(x1, x2))
        elif is_complex:
            x = ns.asarray([complex(e["a"], e["b"]) for e in selected], dtype=dtype)
            out = _to_numpy(fn(x))
        elif case.kind == "binary":
            x1 = ns.asarray([e["x1"] for e in selected], dtype=dtype)
            x2 = ns.asarray([e["x2"] for e in selected], dtype=dtype)
            out = _to_numpy(fn(x1, x2))
        else:
            out = _to_numpy(fn(ns.asarray([e["x"] for e in selected], dtype=dtype)))
    except Exception as e:
        script = call_lines(case.function, dtype_name, _arguments(case.kind, selected), "raises")
        return CaseResult(
            case.function,
            sentence,
            "error",
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
            tuple(script),
        )
    for env, got in zip(selected, out.tolist(), strict=True):
        if not case.expect.check(got, env, tolerance):
            inputs = ", ".join(f"{k}={v!r}" for k, v in env.items())
            script = call_lines(case.function, dtype_name, _arguments(case.kind, [env]), f"got [{got!r}]")
            return CaseResult(case.function, sentence, "failed", f"{inputs}: got {got!r}", tuple(script))
    return CaseResult(case.function, sentence, "passed")


def _arguments(kind: str, envs: list[dict[str, float]]) -> dict[str, list[Any]]:
    """The arrays of a call on ``envs``, as :func:`_run_case` makes them."""
    if kind == "complex-binary":
        return {
            "x1": [complex(e["a"], e["b"]) for e in envs],
            "x2": [complex(e["c"], e["d"]) for e in envs],
        }
    if kind == "complex":
        return {"x": [complex(e["a"], e["b"]) for e in envs]}
    return {name: [e[name] for e in envs] for name in envs[0]}


def _run_conversion(ns: Any, case: Case) -> CaseResult:
    convert = {"__bool__": bool, "__int__": int, "__float__": float, "__complex__": complex}.get(
        case.function.split(".")[-1]
    )
    assert convert is not None and case.condition is not None and case.expect is not None
    if "boolean operands" in case.context:
        inputs: list[Any] = [v for v in (True, False) if holds(case.condition, {"x": v})]
        dtype, dtype_name = getattr(ns, "bool", None), "bool"
    else:
        widest = _widest(ns, "real floating")
        if widest is None:
            return CaseResult(case.function, case.sentence, "skipped", "no floating dtype")
        dtype, dtype_name = widest
        pool = _representable(_POOL, "float64" if widest[1] == "float64" else "float32")
        inputs = [v for v in pool if holds(case.condition, {"x": v})]
    if not inputs:
        return CaseResult(case.function, case.sentence, "skipped", "no input in the value pool satisfies the condition")
    for v in inputs:
        x = ns.asarray(v, dtype=dtype)
        script = (
            f"x = {ALIAS}.asarray({value(v, dtype_name)}, dtype={ALIAS}.{dtype_name})",
            f"print({convert.__name__}(x))",
        )
        try:
            got = convert(x)
        except Exception as e:
            if case.expect.raises and type(e).__name__ == case.expect.raises:
                continue
            detail = f"self={v!r}: raised {type(e).__name__}"
            return CaseResult(case.function, case.sentence, "failed", detail, script)
        if case.expect.raises:
            detail = f"self={v!r}: returned {got!r}, expected {case.expect.raises}"
            return CaseResult(case.function, case.sentence, "failed", detail, script)
        if not case.expect.check(got, {"x": float(v)}, 0.0):
            return CaseResult(case.function, case.sentence, "failed", f"self={v!r}: got {got!r}", script)
    return CaseResult(case.function, case.sentence, "passed")


def _run_reduction(ns: Any, fn: Callable[..., Any], case: Case) -> CaseResult:
    assert case.reduction is not None
    mode, expected = case.reduction
    is_complex = len(expected.components) == 2 or mode in ("nan-a", "nan-b")
    widest = _widest(ns, "complex floating" if is_complex else "real floating")
    if widest is None:
        return CaseResult(case.function, case.sentence, "skipped", "no floating dtype")
    inputs: dict[str, list[Any]] = {
        "empty": [],
        "nan": [1.0, math.nan, 2.0],
        "nan-a": [complex(1, 1), complex(math.nan, 2), complex(2, 3)],
        "nan-b": [complex(1, 1), complex(2, math.nan), complex(2, 3)],
        "correction": [1.0, 2.0],
    }
    script = (
        f"x = {ALIAS}.asarray([{', '.join(value(v, widest[1]) for v in inputs[mode])}], dtype={ALIAS}.{widest[1]})",
        f"print({ALIAS}.{case.function}(x{', correction=2' if mode == 'correction' else ''}))",
    )
    try:
        x = ns.asarray(inputs[mode], dtype=widest[0])
        out = fn(x, correction=2) if mode == "correction" else fn(x)
        got = complex(out) if is_complex else float(out)
    except Exception as e:
        if mode == "empty" and case.function in ("max", "min"):
            return CaseResult(case.function, case.sentence, "passed")
        return CaseResult(
            case.function,
            case.sentence,
            "error",
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
            script,
        )
    if not expected.check(got, {}, 1e-12):
        return CaseResult(
            case.function,
            case.sentence,
            "failed",
            f"{'empty input' if mode == 'empty' else '[1, NaN, 2]'}: got {got!r}",
            script,
        )
    return CaseResult(case.function, case.sentence, "passed")


def _run_linalg(ns: Any, case: Case) -> CaseResult:
    assert case.reduction is not None
    mode = case.reduction[0]
    linalg = getattr(ns, "linalg", None)
    if linalg is None:
        return CaseResult(case.function, case.sentence, "skipped", "no linalg extension")
    kind = "complex floating" if mode == "slogdet-complex" else "real floating"
    widest = _widest(ns, kind)
    if widest is None:
        return CaseResult(case.function, case.sentence, "skipped", f"no {kind} dtype")
    got: object
    name, shape = ("trace", (0, 0)) if mode == "trace-empty" else ("slogdet", (2, 2))
    script = (f"print({ALIAS}.linalg.{name}({ALIAS}.zeros({shape}, dtype={ALIAS}.{widest[1]})))",)
    try:
        if mode == "trace-empty":
            trace = complex(linalg.trace(ns.zeros((0, 0), dtype=widest[0])))
            got, ok = trace, trace == 0
        else:
            raw_sign, raw_logabsdet = linalg.slogdet(ns.zeros((2, 2), dtype=widest[0]))
            sign, logabsdet = complex(raw_sign), complex(raw_logabsdet)
            got = (sign, logabsdet)
            ok = sign == 0 and logabsdet.real == -math.inf and logabsdet.imag == 0
    except Exception as e:
        return CaseResult(
            case.function,
            case.sentence,
            "error",
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
            script,
        )
    if not ok:
        return CaseResult(case.function, case.sentence, "failed", f"got {got!r}", script)
    return CaseResult(case.function, case.sentence, "passed")


def _widest(ns: Any, kind: str) -> tuple[Any, str] | None:
    try:
        dtypes = ns.__array_namespace_info__().dtypes(kind=kind)
    except Exception:
        dtypes = {
            n: getattr(ns, n)
            for n in (("float32", "float64") if kind == "real floating" else ("complex64", "complex128"))
            if hasattr(ns, n)
        }
    for name in ("float64", "float32") if kind == "real floating" else ("complex128", "complex64"):
        if name in dtypes:
            return dtypes[name], name
    return None


def _resolve(ns: Any, name: str) -> Callable[..., Any] | None:
    target = ns
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def _to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "todense") and not isinstance(x, np.ndarray):  # a sparse array: densify to read it
        x = x.todense()
    try:
        return np.asarray(x)
    except Exception:
        pass
    try:
        return np.from_dlpack(x)
    except Exception:
        return np.asarray([complex(x[i]) if "complex" in str(x.dtype) else float(x[i]) for i in range(x.shape[0])])
