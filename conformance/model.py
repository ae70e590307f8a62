"""Results of checks and their tallies: the data every report is written from."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from conformance import spec

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
# a failure the namespace's deviations file lists with its reason (conformance.deviations): it does not fail the run
DEVIATION = "deviation"
STATUSES = (PASSED, FAILED, SKIPPED, DEVIATION)


@dataclass(frozen=True)
class Result:
    """One check of one function (or name, or dtype pair) of a namespace."""

    chapter: str  # a chapter of the standard (``spec.CHAPTERS``), or a test file upstream
    function: str  # ``add``, ``linalg.det``, ``array.__add__``, ``result_type``
    check: str  # what was checked: ``present``, ``signature``, ``int8 + uint8``, ``values``, a special case
    status: str  # passed | failed | skipped | deviation
    detail: str = ""  # the first line of the error, or why it was skipped; notes on a pass
    example: str = ""  # the falsifying example, when hypothesis found one
    reason: str = ""  # a deviation's reason, from the deviations file
    reproducer: str = ""  # a Python script that shows the failure (conformance.reproduce)

    def to_json(self) -> dict[str, str]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v != "" or k in ("status", "check")}


def first_line(error: BaseException | str) -> str:
    """``TypeError: message`` on one line (the first of the message)."""
    if isinstance(error, str):
        text = error
    else:
        msg = str(error).strip().splitlines()
        text = f"{type(error).__name__}: {msg[0]}" if msg else type(error).__name__
    return text.strip().splitlines()[0][:300] if text.strip() else text


@dataclass
class Task:
    """A unit of work for the progress bar: runs some checks of one namespace."""

    label: str
    run: Callable[[], Iterable[Result]]
    weight: float = 1.0
    function: str | None = None  # the function it checks; None for checks of the whole namespace


@dataclass
class NamespaceReport:
    """Everything found about one namespace."""

    name: str
    results: list[Result] = field(default_factory=list)
    source: str = "bundled"
    duration_s: float = 0.0
    environment: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    upstream: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # seconds of CPU time per task
    deviations_file: str = ""  # the deviations file applied, as the report names it
    # the versions, JAX's mode and devices of the process that ran the checks (a worker's, in a
    # parallel run): the run's environment takes what its own process lacks (it imports no JAX)
    process_environment: dict[str, Any] = field(default_factory=dict)

    def totals(self) -> dict[str, int]:
        return tally(self.results)

    def chapters(self) -> dict[str, dict[str, int]]:
        """Tallies by chapter, in the standard's order (unknown chapters after, sorted)."""
        by: dict[str, list[Result]] = {}
        for r in self.results:
            by.setdefault(r.chapter, []).append(r)
        order = [c for c in spec.CHAPTERS if c in by] + sorted(c for c in by if c not in spec.CHAPTERS)
        return {c: tally(by[c]) for c in order}

    def failures(self) -> dict[str, list[Result]]:
        """Failed results grouped by function, functions in order of first failure within chapters."""
        return self._by_function(FAILED)

    def deviations(self) -> dict[str, list[Result]]:
        """Documented deviations grouped by function, as :meth:`failures` groups failures."""
        return self._by_function(DEVIATION)

    def _by_function(self, status: str) -> dict[str, list[Result]]:
        grouped: dict[str, list[Result]] = {}
        for chapter in self.chapters():
            for r in self.results:
                if r.chapter == chapter and r.status == status:
                    grouped.setdefault(r.function, []).append(r)
        return grouped

    @property
    def ok(self) -> bool:
        return not any(r.status == FAILED for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "namespace": self.name,
            "source": self.source,
            "ok": self.ok,
            "duration_s": round(self.duration_s, 2),
            "environment": self.environment,
            "notes": self.notes,
            **({"upstream": self.upstream} if self.upstream else {}),
            "totals": self.totals(),
            "chapters": self.chapters(),
            "failures": {f: [r.to_json() for r in rs] for f, rs in self.failures().items()},
            **({"deviations_file": self.deviations_file} if self.deviations_file else {}),
            "deviations": {f: [r.to_json() for r in rs] for f, rs in self.deviations().items()},
            "results": [r.to_json() for r in self.results],
            **({"cpu_seconds_by_task": {k: round(v, 2) for k, v in self.timings.items()}} if self.timings else {}),
        }


def tally(results: Iterable[Result]) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return counts


def guarded(chapter: str, function: str, check: str, fn: Callable[[], Iterable[Result]]) -> Iterator[Result]:
    """Run ``fn``, turning an unexpected exception (a bug of the namespace or of a check) into a failure."""
    try:
        yield from fn()
    except KeyboardInterrupt:
        raise
    except Exception as e:
        yield Result(chapter, function, check, FAILED, f"check aborted: {first_line(e)}")
