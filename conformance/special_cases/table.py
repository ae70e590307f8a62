"""Every special case of the standard, parsed: the sentences of ``data/special_cases_2025_12.json``,
each classified (unary, binary, complex, conversion, reduction, linalg) and parsed with the grammar
into a :class:`Case`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from conformance.special_cases.grammar import Component, Expectation, Predicate, clean, condition, expectation, holds


@dataclass
class Case:
    """One parsed sentence (``skip_reason`` says why when the grammar does not cover it)."""

    function: str
    context: str
    sentence: str
    kind: str  # "unary", "binary", "complex", "complex-binary", "conversion", "reduction", "linalg"
    condition: Predicate | None = None
    expect: Expectation | None = None
    reduction: tuple[str, Any] | None = None  # ("empty" | "nan", expected value) for reductions
    skip_reason: str = ""
    group: list[Case] = field(default_factory=list, repr=False, compare=False)  # the cases of its group
    # how many inputs of a pool (by its size) satisfy the condition: evaluation's cache
    coverage: dict[int, int] = field(default_factory=dict, repr=False, compare=False)


@cache
def _data() -> dict[str, Any]:
    text = resources.files("conformance").joinpath("data/special_cases_2025_12.json").read_text()
    functions: dict[str, Any] = json.loads(text)["functions"]
    return functions


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
    text = clean(sentence)
    context = clean(context)
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
        case.condition = condition(m.group(1))
        case.expect = Expectation((), raises=m.group(2))
    else:
        m = re.fullmatch(r"If (.+), the result (?:is|has|must be) (.+?)(?:, even if .+)?", text)
        component = re.fullmatch(r"If (.+), the ((?:real|imaginary) component of the result is .+)", text)
        remaining = re.fullmatch(r"In the remaining cases, the result is (True|False)", text)
        if component:
            case.condition = condition(component.group(1))
            case.expect = expectation(component.group(2), True)
        elif remaining:
            case.condition = _REMAINING  # resolved against the group's other cases when run
            case.expect = Expectation((), boolean=remaining.group(1) == "True")
        elif m:
            case.condition = condition(m.group(1))
            case.expect = expectation(m.group(2), kind in ("complex", "complex-binary"))
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
        expected = expectation(m.group(1).split(" (")[0], "j" in m.group(1))
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
                    case.condition = _none_of([c.condition for c in others if c.condition is not None])
                    case.kind = others[0].kind if others else case.kind
            out.extend(parsed)
    return tuple(out)


def _none_of(conditions: list[Predicate]) -> Predicate:
    return lambda env: not any(holds(c, env) for c in conditions)
