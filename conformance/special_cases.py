"""The standard's special cases, as executable checks.

The 2025.12 specification states 521 special cases of 58 functions as English sentences
("If ``x1_i`` is ``+0`` and ``x2_i`` is less than ``0``, the result is ``-0``."), shipped as data
in ``data/special_cases_2025_12.json``. This module parses each sentence into

- a *condition*: a predicate over the operands (``x_i``; ``x1_i`` and ``x2_i``; ``a = real(x)``
  and ``b = imag(x)`` for complex operands), and
- an *expectation*: what the result must be (a value, a value up to rounding, an expression of
  the operands, a sign, a complex value with components whose sign may be unspecified, an
  exception),

then evaluates the namespace's function on every input of a fixed pool of interesting values
(zeros of both signs, infinities, NaN, integers, fractions, large and small magnitudes) that
satisfies the condition, in the widest floating dtype the namespace offers, and compares.

A sentence this grammar does not cover is reported as ``skipped`` with the reason, never as
passed. ``run(namespace)`` returns one :class:`CaseResult` per sentence.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

Predicate = Callable[[dict[str, float]], bool]


@dataclass(frozen=True)
class CaseResult:
    function: str  # "add", "array.__bool__"
    case: str  # the spec sentence
    status: str  # "passed" | "failed" | "skipped" | "error"
    detail: str = ""  # first line of the failure, or why it was skipped


@dataclass
class Case:
    """One parsed sentence."""

    function: str
    context: str
    sentence: str
    kind: str  # "unary", "binary", "complex", "conversion", "reduction"
    condition: Predicate | None = None
    expect: Expectation | None = None
    reduction: tuple[str, Any] | None = None  # ("empty" | "nan", expected value) for reductions
    skip_reason: str = ""
    group: list[Case] = field(default_factory=list, repr=False, compare=False)
    coverage: dict[int, int] = field(default_factory=dict, repr=False, compare=False)


# --- the data -------------------------------------------------------------------------------


@cache
def _data() -> dict[str, Any]:
    text = resources.files("conformance").joinpath("data/special_cases_2025_12.json").read_text()
    return json.loads(text)["functions"]  # type: ignore[no-any-return]


def _clean(text: str) -> str:
    text = text.replace("``", "").replace("**", "").replace("`", "").strip()
    text = re.sub(r"\s*\(i\.e\., [^)]*\)", "", text)
    text = re.sub(r"\.\s*\(note: .*\)$", "", text)  # "(note: libraries may return NaN ...)"
    text = re.sub(r", unless the result is NaN\..*$", "", text)
    text = re.sub(r"^Similarly, if ", "If ", text)
    text = re.sub(r"(\d*)πj(/\d+)?", r"\1π\2 j", text)  # "πj/2" -> "π/2 j"
    text = re.sub(r"\s+", " ", text)
    return text.rstrip(".")


# --- values ---------------------------------------------------------------------------------

_CONSTANTS = {
    "NaN": math.nan,
    "+infinity": math.inf,
    "-infinity": -math.inf,
    "infinity": math.inf,
    "+0": 0.0,
    "-0": -0.0,
    "0": 0.0,
    "1": 1.0,
    "-1": -1.0,
    "2": 2.0,
    "0.5": 0.5,
    "True": True,
    "False": False,
}


def _pi_value(text: str) -> float | None:
    """``π/2``, ``+3π/4``, ``-π``, ``πj/2`` (j ignored) as floats."""
    m = re.fullmatch(r"([+-]?)(\d*)πj?(?:/(\d+))?", text.replace(" ", ""))
    if not m:
        return None
    sign = -1.0 if m.group(1) == "-" else 1.0
    numerator = float(m.group(2) or 1)
    denominator = float(m.group(3) or 1)
    return sign * numerator * math.pi / denominator


def _number(text: str) -> float | None:
    text = text.strip()
    if text in _CONSTANTS and not isinstance(_CONSTANTS[text], bool):
        return float(_CONSTANTS[text])
    try:
        return float(text)
    except ValueError:
        return _pi_value(text)


# --- conditions -----------------------------------------------------------------------------

_SUBJECTS = (
    r"(?:x1_i|x2_i|x_i|self|a|b|c|d|abs\(x1_i\)|abs\(x2_i\)|abs\(x_i\)|the sign bit of \w+|either_\w+|both_\w+"
    r"|all_abcd_\w+|two integers)"
)
_SPLIT = re.compile(rf"(, and |, or | and | or |, )(?={_SUBJECTS}\b)")


def _is_zero(v: float, negative: bool | None) -> bool:
    return v == 0 and (negative is None or math.copysign(1.0, v) < 0) == bool(negative)


def _integer(v: float) -> bool:
    return math.isfinite(v) and v == math.floor(v)


def _odd(v: float) -> bool:
    return _integer(v) and abs(v) % 2 == 1


def _phrase(text: str) -> Callable[[float], bool] | None:
    """A predicate for what follows "is" (``NaN``, ``a positive finite number``, ...)."""
    t = text.strip()
    if t.startswith("either "):
        t = t[len("either ") :]
    simple: dict[str, Callable[[float], bool]] = {
        "NaN": math.isnan,
        "not NaN": lambda v: not math.isnan(v),
        "+infinity": lambda v: v == math.inf,
        "-infinity": lambda v: v == -math.inf,
        "+infinity or -infinity": math.isinf,
        "-infinity or +infinity": math.isinf,
        "infinity": math.isinf,
        "+0": lambda v: _is_zero(v, False),
        "-0": lambda v: _is_zero(v, True),
        "+0 or -0": lambda v: v == 0,
        "-0 or +0": lambda v: v == 0,
        "0": lambda v: v == 0,
        "a finite number": math.isfinite,
        "a positive finite number": lambda v: math.isfinite(v) and v > 0,
        "a negative finite number": lambda v: math.isfinite(v) and v < 0,
        "a nonzero finite number": lambda v: math.isfinite(v) and v != 0,
        "a finite number or NaN": lambda v: not math.isinf(v),
        "a finite number greater than 0": lambda v: math.isfinite(v) and v > 0,
        "an integer value": _integer,
        "not an integer value": lambda v: not _integer(v),
        "an odd integer value": _odd,
        "not an odd integer value": lambda v: not _odd(v),
        "an even integer value": lambda v: _integer(v) and v % 2 == 0,
        "any value": lambda v: True,
        "any value (including NaN)": lambda v: True,
        "any value, including NaN": lambda v: True,
        "a nonzero number": lambda v: v != 0 and not math.isnan(v),
        "not equal to 0": lambda v: v != 0,
        "already integer-valued": _integer,
        "True": lambda v: v is True,
        "False": lambda v: v is False,
    }
    if t in simple:
        return simple[t]
    m = re.fullmatch(
        r"(not )?(greater than or equal to|less than or equal to|greater than|less than|equal to) (\S+)", t
    )
    if m:
        k = _number(m.group(3))
        if k is None:
            return None
        compare = {
            "greater than": lambda v: v > k,
            "less than": lambda v: v < k,
            "greater than or equal to": lambda v: v >= k,
            "less than or equal to": lambda v: v <= k,
            "equal to": lambda v: v == k,
        }[m.group(2)]
        return (lambda v: not compare(v)) if m.group(1) else compare
    m = re.fullmatch(r"(?:not )?(\S+)", t)
    if m and _number(m.group(1)) is not None and t.count(" ") <= 1:
        k = _number(m.group(1))
        negate = t.startswith("not ")
        return lambda v: (v == k) != negate
    return None


def _clause(text: str, previous_subject: str | None) -> tuple[Predicate, str] | None:
    """One clause of a condition, e.g. ``x1_i is +0``; returns its predicate and subject."""
    t = text.strip()
    m = re.fullmatch(r"either_(x1_i|a)_(x2_i|b) is (.+)", t)
    if m:
        p = _phrase(m.group(3))
        if p is None:
            return None
        first, second = _name(m.group(1)), _name(m.group(2))
        return (lambda env: p(env[first]) or p(env[second])), first
    m = re.fullmatch(r"all_abcd_(or|and) is (.+)", t)
    if m:
        p = _phrase(m.group(2))
        if p is None:
            return None
        combine = any if m.group(1) == "or" else all
        return (lambda env: combine(p(env[k]) for k in "abcd")), "a"
    m = re.fullmatch(
        r"both_(x1_i|a)_(x2_i|c) have (the same|different) mathematical signs?(?: and are both nonzero finite numbers)?",
        t,
    )
    if m:
        first, second = _name(m.group(1)), _name(m.group(2))
        same = m.group(3) == "the same"
        nonzero = "nonzero finite" in t

        def signs(env: dict[str, float]) -> bool:
            x, y = env[first], env[second]
            if math.isnan(x) or math.isnan(y):
                return False
            if nonzero and not (math.isfinite(x) and math.isfinite(y) and x != 0 and y != 0):
                return False
            return (math.copysign(1, x) == math.copysign(1, y)) == same

        return signs, first
    m = re.fullmatch(r"x1_i (equals|does not equal) x2_i", t)
    if m:
        equal = m.group(1) == "equals"
        return (lambda env: (env["x1"] == env["x2"]) == equal), "x1"
    if t == "x2_i is -x1_i":
        return (lambda env: env["x2"] == -env["x1"] and not math.isnan(env["x1"])), "x2"
    if t == "two integers are equally close to x_i":
        return (lambda env: math.isfinite(env["x"]) and env["x"] - math.floor(env["x"]) == 0.5), "x"
    m = re.fullmatch(r"the sign bit of (\w+) is ([01])", t)
    if m:
        who, bit = _name(m.group(1)), m.group(2) == "1"
        return (lambda env: (math.copysign(1.0, env[who]) < 0) == bit), who
    m = re.fullmatch(r"abs\((x1_i|x2_i|x_i)\) is (.+)", t)
    if m:
        p = _phrase(m.group(2))
        if p is None:
            return None
        who = _name(m.group(1))
        return (lambda env: p(abs(env[who]))), who
    m = re.fullmatch(r"(x1_i|x2_i|x_i|self|a|b|c|d) (?:is )?(.+)", t)
    if m:
        p = _phrase(m.group(2))
        if p is None:
            return None
        who = _name(m.group(1))
        return (lambda env: p(env[who])), who
    if previous_subject is not None:  # "... and is a finite number" continues the subject
        p = _phrase(t[3:] if t.startswith("is ") else t)
        if p is not None:
            return (lambda env: p(env[previous_subject])), previous_subject
    return None


def _name(subject: str) -> str:
    return {"x_i": "x", "x1_i": "x1", "x2_i": "x2", "self": "x"}.get(subject, subject)


def _condition(text: str) -> Predicate | None:
    text = re.sub(r"\beither (x1_i|a) or (x2_i|b) is\b", r"either_\1_\2 is", text)
    text = re.sub(r"^(a) or (b) is\b", r"either_\1_\2 is", text)
    text = re.sub(r"\b(x1_i|a) and (x2_i|c) have\b", r"both_\1_\2 have", text)
    text = re.sub(r"^a, b, c,? (or|and) d (?:is|are all|are)\b", r"all_abcd_\1 is", text)
    pieces = _SPLIT.split(text)
    clauses = pieces[0::2]
    connectors = {c.strip(", ").strip() or "and" for c in pieces[1::2]}
    if len(connectors) > 1 and connectors != {"and"}:
        connectors.discard("and")  # "A, B, and C": commas are "and"
    parsed = []
    subject = None
    for clause in clauses:
        result = _clause(clause, subject)
        if result is None:
            return None
        predicate, subject = result
        parsed.append(predicate)
    if connectors == {"or"}:
        return lambda env: any(p(env) for p in parsed)
    return lambda env: all(p(env) for p in parsed)


# --- expectations ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Component:
    """What one real number must be."""

    kind: str  # "value", "approx", "nan", "any-sign-zero", "any-sign-inf", "sign", "expr"
    value: float = 0.0
    sign_unspecified: bool = False
    expr: Callable[[dict[str, float]], float] | None = None
    nan_sign: int | None = None

    def check(self, got: float, env: dict[str, float], tolerance: float) -> bool:
        if self.kind == "any":
            return True
        if self.kind == "nan":
            if not math.isnan(got):
                return False
            return self.nan_sign is None or (math.copysign(1.0, got) < 0) == (self.nan_sign == 1)
        target = self.value if self.expr is None else self.expr(env)
        if self.kind == "sign":  # "... has a positive sign, unless the result is NaN"
            return math.isnan(got) or (math.copysign(1.0, got) > 0) == (target > 0)
        if math.isnan(target):
            return math.isnan(got)
        if self.kind == "approx":
            return math.isfinite(got) and abs(got - target) <= tolerance * max(1.0, abs(target))
        if self.sign_unspecified:
            return abs(got) == abs(target) if not math.isnan(got) else False
        if got != target:
            return False
        if got == 0:
            return math.copysign(1.0, got) == math.copysign(1.0, target)
        return True


@dataclass(frozen=True)
class Expectation:
    components: tuple[Component, ...]  # one for real results, two (re, im) for complex
    boolean: bool | None = None
    raises: str | None = None

    def check(self, got: Any, env: dict[str, float], tolerance: float) -> bool:
        if self.boolean is not None:
            return bool(got) is self.boolean
        if len(self.components) == 2:
            z = complex(got)
            return self.components[0].check(z.real, env, tolerance) and self.components[1].check(z.imag, env, tolerance)
        return self.components[0].check(float(got), env, tolerance)


def _component(text: str, sign_unspecified: bool = False) -> Component | None:
    t = text.strip()
    m = re.fullmatch(r"an implementation-dependent approximation to (.+)", t)
    if m:
        value = _number(m.group(1))
        return None if value is None else Component("approx", value)
    m = re.fullmatch(r"NaN with a sign bit of ([01])", t)
    if m:
        return Component("nan", nan_sign=int(m.group(1)))
    if t == "NaN":
        return Component("nan")
    if t in ("infinity", "±infinity"):
        return Component("value", math.inf, sign_unspecified=True)
    if t == "0":
        return Component("value", 0.0, sign_unspecified=True)
    if t == "±0":
        return Component("value", 0.0, sign_unspecified=True)
    pi = _pi_value(t)
    if pi is not None:
        return Component("approx", pi)
    number = _number(t)
    if number is not None:
        return Component("value", number, sign_unspecified=sign_unspecified)
    expressions: dict[str, Callable[[dict[str, float]], float]] = {
        "x_i": lambda env: env["x"],
        "-x_i": lambda env: -env["x"],
        "x1_i": lambda env: env["x1"],
        "x2_i": lambda env: env["x2"],
        "abs(x1_i)": lambda env: abs(env["x1"]),
        "abs(x2_i)": lambda env: abs(env["x2"]),
        "abs(a)": lambda env: abs(env["a"]),
        "abs(b)": lambda env: abs(env["b"]),
        "|x1_i|": lambda env: abs(env["x1"]),
        "-|x1_i|": lambda env: -abs(env["x1"]),
        "the even integer closest to x_i": lambda env: math.copysign(float(round(env["x"])), env["x"]),
        "self": lambda env: env["x"],
        "the integer part of self": lambda env: float(math.trunc(env["x"])),
    }
    for prefix in ("equal to ", "equivalent to "):
        if t.startswith(prefix):
            t = t[len(prefix) :]
    if t in expressions:
        return Component("value", expr=expressions[t])
    return None


def _unspecified(note: str) -> tuple[bool, bool]:
    """Which components a note like "(sign of the real component is unspecified)" frees."""
    real = "real" in note or "signs of real and imaginary" in note
    imag = "imaginary" in note
    return real, imag


def _expectation(text: str, complex_result: bool) -> Expectation | None:
    note = ""
    text = re.sub(r"^([^ ]+)\+0j$", r"\1 + 0j", text)  # "1+0j"
    m = re.fullmatch(r"(.+?) \((.*unspecified.*)\)", text)
    if m:
        text, note = m.group(1), m.group(2)
    free_re, free_im = _unspecified(note)
    if text in ("True", "False"):
        return Expectation((), boolean=text == "True")
    m = re.fullmatch(r"(real|imaginary) component of the result is (.+)", text)
    if m:
        part = _component(m.group(2))
        if part is None:
            return None
        anything = Component("any")
        return Expectation((part, anything) if m.group(1) == "real" else (anything, part))
    if text.startswith("a signed infinity"):
        return Expectation((Component("sign", expr=_product_sign),), boolean=None)
    if text in ("a positive mathematical sign", "a negative mathematical sign"):
        target = 1.0 if "positive" in text else -1.0
        return Expectation((Component("sign", target),))
    cis = re.fullmatch(r"(\+infinity|\+0) \* cis\(b\)( - 1\.0)?", text)
    if cis:
        magnitude = math.inf if cis.group(1) == "+infinity" else 0.0
        minus_one = bool(cis.group(2))
        return Expectation(
            (
                Component("value", expr=lambda env: magnitude * math.cos(env["b"]) - (1.0 if minus_one else 0.0)),
                Component("value", expr=lambda env: _times(magnitude, math.sin(env["b"]))),
            )
        )
    if re.search(r"(^|\s)j$|\dj$|\sj\b|NaN j", text) or (complex_result and text.endswith("j")):
        m = re.fullmatch(r"(.+?) ([+\-±]) (.+?) ?j", text)
        if not m:
            return None
        re_part = _component(m.group(1), free_re)
        im_text = m.group(3).replace("πj", "π").replace("j", "")
        if m.group(2) == "-" and not im_text.startswith(("+", "-")):
            im_text = "-" + im_text if im_text not in ("NaN",) else im_text
        im_part = _component(im_text, free_im or m.group(2) == "±")
        if im_text in ("0", "-0") and not (free_im or m.group(2) == "±"):
            im_part = Component("value", -0.0 if m.group(2) == "-" else 0.0)
        if re_part is None or im_part is None:
            return None
        if free_re and re_part.kind == "value":
            re_part = Component("value", re_part.value, sign_unspecified=True, expr=re_part.expr)
        return Expectation((re_part, im_part))
    part = _component(text)
    return None if part is None else Expectation((part,))


def _times(magnitude: float, factor: float) -> float:
    """``magnitude * factor`` with 0 * x keeping x's sign and inf * 0 never arising."""
    if magnitude == 0:
        return math.copysign(0.0, factor)
    return magnitude * factor


def _product_sign(env: dict[str, float]) -> float:
    return math.copysign(1.0, env["x1"]) * math.copysign(1.0, env["x2"])


# --- parsing the whole table ----------------------------------------------------------------

# Sentences whose literal reading is wrong, with the reason they are not checked.
_SPEC_GAPS = {
    ("not_equal", "In the remaining cases, the result is False"): (
        "the standard's list for not_equal omits pairs such as (+infinity, 0), which are unequal, "
        "so 'the remaining cases' are not all False"
    ),
}

_REDUCTIONS = {"sum", "prod", "mean", "std", "var", "max", "min"}
_LINALG = {
    # The sentences of linalg functions, checked on one matrix each: (function, matrix, check)
    "If the determinant is zero, the sign should be 0 and logabsdet should be -infinity": "slogdet-real",
    "If the determinant is 0 + 0j, the sign should be 0 + 0j and logabsdet should be -infinity + 0j": "slogdet-complex",
    "If N is 0, the sum is 0": "trace-empty",
}


def _parse(function: str, context: str, sentence: str) -> Case:
    text = _clean(sentence)
    context = _clean(context)
    if function.startswith("array."):
        kind = "conversion"
    elif function in _REDUCTIONS:
        kind = "reduction"
    elif "let a = real(x1_i)" in context or "c = real(x2_i)" in context or re.search(r"\bc\b", text):
        kind = "complex-binary"
    elif "complex" in context.lower() and (
        "let a = real" in context or "conj" in context or re.search(r"\b[ab]\b", text)
    ):
        kind = "complex"
    elif "x1_i" in text or "x2_i" in text:
        kind = "binary"
    else:
        kind = "unary"
    case = Case(function, context, sentence, kind)
    if (function, text) in _SPEC_GAPS:
        case.skip_reason = _SPEC_GAPS[function, text]
        return case
    if text in _LINALG:
        case.kind = "linalg"
        case.reduction = (_LINALG[text], None)
        return case
    if kind == "reduction":
        return _parse_reduction(case, text)
    m = re.fullmatch(r"If (.+), raise (\w+)", text)
    if m:
        case.condition = _condition(m.group(1))
        case.expect = Expectation((), raises=m.group(2))
    else:
        m = re.fullmatch(r"If (.+), the result (?:is|has|must be) (.+?)(?:, even if .+)?", text)
        component = re.fullmatch(r"If (.+), the ((?:real|imaginary) component of the result is .+)", text)
        remaining = re.fullmatch(r"In the remaining cases, the result is (True|False)", text)
        if component:
            case.condition = _condition(component.group(1))
            case.expect = _expectation(component.group(2), True)
        elif remaining:
            case.condition = _REMAINING  # resolved against the group's other cases when run
            case.expect = Expectation((), boolean=remaining.group(1) == "True")
        elif m:
            case.condition = _condition(m.group(1))
            case.expect = _expectation(m.group(2), kind in ("complex", "complex-binary"))
        else:
            case.skip_reason = "not a condition/result sentence"
            return case
    if case.condition is None:
        case.skip_reason = "condition not in the bundled grammar"
    elif case.expect is None:
        case.skip_reason = "result not in the bundled grammar"
    return case


def _REMAINING(env: dict[str, float]) -> bool:
    """Placeholder condition of "In the remaining cases": replaced per group in :func:`cases`."""
    raise AssertionError("unresolved 'remaining cases' condition")


def _parse_reduction(case: Case, text: str) -> Case:
    m = re.fullmatch(r"If M is 0, the .+? must be (.+?)(?: \(i\.e\..*)?", text)
    if m:
        expected = _expectation(m.group(1).split(" (")[0], "j" in m.group(1))
        if expected is not None:
            case.reduction = ("empty", expected)
            return case
    if re.fullmatch(r"If x_i is NaN, the .+ must be NaN.*", text):
        case.reduction = ("nan", Expectation((Component("nan"),)))
        return case
    m = re.fullmatch(r"If (a|b) is NaN, the (real|imaginary) component of the result must be NaN", text)
    if m:
        anything = Component("any")
        parts = (Component("nan"), anything) if m.group(2) == "real" else (anything, Component("nan"))
        case.reduction = ("nan-" + m.group(1), Expectation(parts))
        return case
    if re.fullmatch(r"If M - correction is less than or equal to 0, the .+ must be NaN", text):
        case.reduction = ("correction", Expectation((Component("nan"),)))
        return case
    case.skip_reason = "reduction case not in the bundled grammar"
    return case


@cache
def cases() -> tuple[Case, ...]:
    """Every special case of the standard, parsed."""
    out = []
    for function, entry in _data().items():
        for group in entry["groups"]:
            parsed = [_parse(function, group["context"], sentence) for sentence in group["cases"]]
            others = [c for c in parsed if c.condition is not None and c.condition is not _REMAINING]
            for case in parsed:
                case.group = parsed
                if case.condition is _REMAINING:
                    case.condition = _none_of([c.condition for c in others])  # type: ignore[misc]
                    case.kind = others[0].kind if others else case.kind
            out.extend(parsed)
    return tuple(out)


def _none_of(conditions: list[Predicate]) -> Predicate:
    return lambda env: not any(_safe(c, env) for c in conditions)


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
        if _safe(other.condition, env) and _coverage(other, envs) <= mine:
            return True
    return False


def _coverage(case: Case, envs: list[dict[str, float]]) -> int:
    key = len(envs)
    if case.coverage.get(key) is None:
        assert case.condition is not None
        case.coverage[key] = sum(1 for env in envs if _safe(case.condition, env))
    return case.coverage[key]


# --- evaluation -----------------------------------------------------------------------------

_POOL = (
    math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
    1.5, -1.5, 0.25, -0.75, 5.0, -7.0, 1e-3, -1e-3, 1e3, -1e3, 1e30, -1e30, 2.5, -2.5, 10.0, 0.1,
)  # fmt: skip
_COMPLEX_POOL = (
    math.nan,
    math.inf,
    -math.inf,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    2.0,
    3.0,
    1e30,
    -1e200,
)  # large |z|: other formulas
_COMPLEX_BINARY_POOL = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.5)


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


def _representable(values: Iterable[float], np_dtype: str) -> list[float]:
    """The pool as the dtype holds it (1e30 stays finite in float32, but 1e300 would not)."""
    out = []
    for v in values:
        with np.errstate(over="ignore"):
            stored = float(np.asarray(v, dtype=np_dtype))
        if math.isnan(v) or stored == v:
            out.append(v)
    return out


def _resolve(ns: Any, name: str) -> Callable[..., Any] | None:
    target = ns
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return target  # type: ignore[no-any-return]


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
        dtype = widest[0]
    elif is_complex:
        pool = _representable(_COMPLEX_POOL, component)
        envs = [{"a": a, "b": b} for a in pool for b in pool]
    elif case.kind == "binary":
        pool = _representable(_POOL, component)
        envs = [{"x1": x1, "x2": x2} for x1 in pool for x2 in pool]
    else:
        pool = _representable(_POOL, component)
        envs = [{"x": x} for x in pool]
    selected = [env for env in envs if _safe(case.condition, env) and not _ambiguous(case, env, envs)]
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
        return CaseResult(
            case.function, sentence, "error", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        )
    for env, got in zip(selected, out.tolist(), strict=True):
        if not case.expect.check(got, env, tolerance):
            inputs = ", ".join(f"{k}={v!r}" for k, v in env.items())
            return CaseResult(case.function, sentence, "failed", f"{inputs}: got {got!r}")
    return CaseResult(case.function, sentence, "passed")


def _safe(predicate: Predicate, env: dict[str, float]) -> bool:
    try:
        return bool(predicate(env))
    except (KeyError, ValueError, OverflowError):
        return False


def _run_conversion(ns: Any, case: Case) -> CaseResult:
    convert = {"__bool__": bool, "__int__": int, "__float__": float, "__complex__": complex}.get(
        case.function.split(".")[-1]
    )
    assert convert is not None and case.condition is not None and case.expect is not None
    if "boolean operands" in case.context:
        inputs: list[Any] = [v for v in (True, False) if _safe(case.condition, {"x": v})]
        dtype = getattr(ns, "bool", None)
    else:
        widest = _widest(ns, "real floating")
        if widest is None:
            return CaseResult(case.function, case.sentence, "skipped", "no floating dtype")
        dtype = widest[0]
        pool = _representable(_POOL, "float64" if widest[1] == "float64" else "float32")
        inputs = [v for v in pool if _safe(case.condition, {"x": v})]
    if not inputs:
        return CaseResult(case.function, case.sentence, "skipped", "no input in the value pool satisfies the condition")
    for value in inputs:
        x = ns.asarray(value, dtype=dtype)
        try:
            got = convert(x)
        except Exception as e:
            if case.expect.raises and type(e).__name__ == case.expect.raises:
                continue
            return CaseResult(case.function, case.sentence, "failed", f"self={value!r}: raised {type(e).__name__}")
        if case.expect.raises:
            return CaseResult(
                case.function,
                case.sentence,
                "failed",
                f"self={value!r}: returned {got!r}, expected {case.expect.raises}",
            )
        if not case.expect.check(got, {"x": float(value)}, 0.0):
            return CaseResult(case.function, case.sentence, "failed", f"self={value!r}: got {got!r}")
    return CaseResult(case.function, case.sentence, "passed")


def _run_reduction(ns: Any, fn: Callable[..., Any], case: Case) -> CaseResult:
    assert case.reduction is not None
    mode, expected = case.reduction
    is_complex = len(expected.components) == 2 or mode in ("nan-a", "nan-b")
    widest = _widest(ns, "complex floating" if is_complex else "real floating")
    if widest is None:
        return CaseResult(case.function, case.sentence, "skipped", "no floating dtype")
    values: list[Any] = {
        "empty": [],
        "nan": [1.0, math.nan, 2.0],
        "nan-a": [complex(1, 1), complex(math.nan, 2), complex(2, 3)],
        "nan-b": [complex(1, 1), complex(2, math.nan), complex(2, 3)],
        "correction": [1.0, 2.0],
    }[mode]
    try:
        x = ns.asarray(values, dtype=widest[0])
        out = fn(x, correction=2) if mode == "correction" else fn(x)
        got = complex(out) if is_complex else float(out)
    except Exception as e:
        if mode == "empty" and case.function in ("max", "min"):
            return CaseResult(case.function, case.sentence, "passed")
        return CaseResult(
            case.function, case.sentence, "error", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        )
    if not expected.check(got, {}, 1e-12):
        return CaseResult(
            case.function,
            case.sentence,
            "failed",
            f"{'empty input' if mode == 'empty' else '[1, NaN, 2]'}: got {got!r}",
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
    try:
        if mode == "trace-empty":
            got = complex(linalg.trace(ns.zeros((0, 0), dtype=widest[0])))
            ok = got == 0
        else:
            sign, logabsdet = linalg.slogdet(ns.zeros((2, 2), dtype=widest[0]))
            got = (complex(sign), complex(logabsdet))
            ok = got[0] == 0 and got[1].real == -math.inf and got[1].imag == 0
    except Exception as e:
        return CaseResult(
            case.function, case.sentence, "error", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        )
    if not ok:
        return CaseResult(case.function, case.sentence, "failed", f"got {got!r}")
    return CaseResult(case.function, case.sentence, "passed")


def run(namespace: Any, functions: Iterable[str] | None = None) -> list[CaseResult]:
    """Check every special case (or those of ``functions``) against ``namespace``."""
    wanted = None if functions is None else set(functions)
    return [_run_case(namespace, c) for c in cases() if wanted is None or c.function in wanted]
