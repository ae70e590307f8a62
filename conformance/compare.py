"""What changed between two JSON reports (``--compare OLD.json``): new failures and fixes first.

A result is the same check in both reports when its namespace, source (bundled or upstream),
chapter, function and check text are the same; the bundled checks' texts do not vary from run to
run (docs/conformance.md), so a check is found again in a later report. A check whose text occurs
twice in one namespace (a special case stated in two groups of the standard) is paired by order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.model import DEVIATION, FAILED, PASSED, SKIPPED


class ReportError(Exception):
    """A file that is not a readable JSON report of this tool."""


def load(path: str | Path, option: str) -> dict[str, Any]:
    """The JSON report at ``path``, checked enough to be compared or drawn; errors name ``option``."""
    where = f"{option} {path}"
    try:
        text = Path(path).read_text("utf-8")
    except FileNotFoundError:
        raise ReportError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise ReportError(f"{where}: is a folder, not a JSON report") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError(f"{where}: cannot be read ({e})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportError(f"{where}: not JSON ({e})") from None
    namespaces = doc.get("namespaces") if isinstance(doc, dict) else None
    if not isinstance(namespaces, list):
        raise ReportError(f"{where}: not a JSON report of python -m conformance (no list of namespaces)")
    for i, ns in enumerate(namespaces):
        if not isinstance(ns, dict) or not isinstance(ns.get("namespace"), str):
            raise ReportError(f"{where}: namespace {i} has no name")
        results = ns.get("results")
        if not isinstance(results, list) or not all(_is_result(r) for r in results):
            raise ReportError(f"{where}: the results of {ns['namespace']} are missing or malformed")
    return doc


def _is_result(r: Any) -> bool:
    return isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("chapter", "function", "check", "status"))


def key(ns: dict[str, Any]) -> tuple[str, str]:
    """A namespace of a report: its name and where its checks came from."""
    return ns["namespace"], ns.get("source", "bundled")


@dataclass
class Change:
    """One namespace's changes between two reports."""

    namespace: str
    source: str
    before: dict[str, int]  # tallies by status
    now: dict[str, int]
    new_failures: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (status before, result now)
    fixed: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # (result before, status now)
    # other changes of status (skips, deviations), and failures no longer checked (now "absent")
    other: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (before, now, result)
    added: int = 0  # checks only in the new report (failures among them are new failures)
    removed: int = 0  # checks only in the old report (failures among them count as fixed)
    missing: bool = False  # a namespace the new report does not have
    new: bool = False  # a namespace the old report did not have

    @property
    def unchanged(self) -> bool:
        return not (self.new_failures or self.fixed or self.other or self.added or self.removed or self.missing)


ABSENT = "absent"


def _indexed(results: Iterable[dict[str, Any]]) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    seen: dict[tuple[str, str, str], int] = {}
    out = {}
    for r in results:
        k = (r["chapter"], r["function"], r["check"])
        seen[k] = seen.get(k, 0) + 1
        out[(*k, seen[k])] = r
    return out


def _tally(results: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys((PASSED, FAILED, SKIPPED, DEVIATION), 0)
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return counts


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every namespace of either report, in the new report's order (then those it no longer has)."""
    before = {key(ns): ns for ns in old["namespaces"]}
    now = {key(ns): ns for ns in new["namespaces"]}
    out = [_change(before.get(k), ns) for k, ns in now.items()]
    out += [_change(ns, None) for k, ns in before.items() if k not in now]
    return out


def _change(old: dict[str, Any] | None, new: dict[str, Any] | None) -> Change:
    ns = new or old
    assert ns is not None
    a, b = _indexed(old["results"] if old else ()), _indexed(new["results"] if new else ())
    change = Change(ns["namespace"], ns.get("source", "bundled"), _tally(a.values()), _tally(b.values()))
    change.missing, change.new = new is None, old is None
    if change.missing or change.new:
        return change
    for k in [*b, *(k for k in a if k not in b)]:  # the new report's order, then checks that went
        ra, rb = a.get(k), b.get(k)
        sa, sb = (ra or {}).get("status", ABSENT), (rb or {}).get("status", ABSENT)
        change.added += ra is None
        change.removed += rb is None
        if sa == sb:
            continue
        if rb is not None and sb == FAILED:  # a new check that fails is a new failure too
            change.new_failures.append((sa, rb))
        elif ra is not None and rb is not None and sa == FAILED:
            change.fixed.append((ra, sb))
        elif ra is not None and (rb is not None or sa == FAILED):  # a failure no longer checked is not fixed
            change.other.append((sa, sb, rb or ra))
    # checks that did not fail before first (regressions), then new checks that fail; stable
    change.new_failures.sort(key=lambda pair: pair[0] == ABSENT)
    return change


def summary(found: Iterable[Change]) -> Iterator[str]:
    """One line per namespace that changed: ``xp: 2 new failures, 3 fixed, 1 other change``."""
    for c in found:
        name = c.namespace + (" (upstream)" if c.source == "upstream" else "")
        if c.missing:
            yield f"{name}: not in this report"
        elif c.new:
            yield f"{name}: not in the earlier report"
        elif not c.unchanged:
            bits = [_count(len(c.new_failures), "new failure"), f"{len(c.fixed)} fixed"]
            if c.other:
                bits.append(_count(len(c.other), "other change"))
            if c.added or c.removed:
                bits.append(f"{c.added} checks added, {c.removed} gone")
            yield f"{name}: {', '.join(bits)}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"
