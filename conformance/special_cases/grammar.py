"""The grammar of the standard's special-case sentences: values, conditions, expectations.

A sentence such as "If ``x1_i`` is ``+0`` and ``x2_i`` is less than ``0``, the result is ``-0``."
has a *condition*, a predicate over the operands (``x_i``; ``x1_i`` and ``x2_i``; ``a = real(x)``
and ``b = imag(x)`` for complex operands), and an *expectation*, what the result must be (a value,
a value up to rounding, an expression of the operands, a sign, a complex value with components
whose sign may be unspecified, an exception). :func:`condition` and :func:`expectation` parse the
two halves; they return None for a phrase outside the grammar.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Predicate = Callable[[dict[str, float]], bool]


def holds(predicate: Predicate, env: dict[str, float]) -> bool:
    """``predicate(env)``, False where it cannot be evaluated (an operand it does not name)."""
    try:
        return bool(predicate(env))
    except (KeyError, ValueError, OverflowError):
        return False


def clean(text: str) -> str:
    """A sentence as the grammar reads it: no markup, no asides ("i.e.", notes), one line, no final period."""
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


def condition(text: str) -> Predicate | None:
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


def expectation(text: str, complex_result: bool) -> Expectation | None:
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
