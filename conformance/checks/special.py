"""The special cases of the standard (NaN, infinities, signed zeros, ...), checked by
:mod:`conformance.special_cases` from the spec's own sentences (``special_cases_2025_12.json``).

One task per function, so the progress bar moves; each case is one result.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator
from typing import Any

from conformance import reproduce, spec
from conformance.model import FAILED, PASSED, SKIPPED, Result, Task, first_line
from conformance.namespaces import Namespace

CHAPTER = "Special cases"
_STATUS = {"passed": PASSED, "failed": FAILED, "skipped": SKIPPED, "error": FAILED}


def _engine() -> tuple[Any, str]:
    """The special-case engine module, or None and why not.

    Imported here rather than at the top (no import loop to avoid): an engine that cannot be
    imported skips this chapter, with the reason, instead of stopping the whole tool."""
    try:
        return importlib.import_module("conformance.special_cases"), ""
    except ImportError as e:
        return None, f"special-case checks unavailable ({first_line(e)})"


def _convert(r: Any, namespace: str) -> Result:
    status = _STATUS.get(getattr(r, "status", ""), FAILED)
    detail = getattr(r, "detail", "") or ""
    if r.status == "error" and not detail.startswith("error"):
        detail = f"error: {detail}" if detail else "error"
    script = reproduce.special_case_script(namespace, r.function, r.case, getattr(r, "script", ()))
    return Result(CHAPTER, r.function, r.case, status, first_line(detail) if detail else "", reproducer=script)


def tasks(ns: Namespace) -> Iterator[Task]:
    engine, why = _engine()
    if engine is None:
        yield Task("special cases", lambda: [Result(CHAPTER, "(all)", "special cases", SKIPPED, why)])
        return
    required = set(spec.required(ns.version)["namespace"]) | {f"array.{n}" for n in spec.required(ns.version)["array"]}
    functions = [f for f in spec.special_cases()["functions"] if f in required]

    def run(functions: list[str]) -> list[Result]:
        try:
            return [_convert(r, str(ns.name)) for r in engine.run(ns.module, functions=functions)]
        except KeyboardInterrupt:
            raise
        except Exception as e:
            return [Result(CHAPTER, f, "special cases", FAILED, f"check aborted: {first_line(e)}") for f in functions]

    for f in functions:
        yield Task(f"special cases of {f}", functools.partial(run, [f]), weight=0.5, function=f)
