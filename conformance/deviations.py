"""Documented deviations: failures of the bundled checks that a namespace documents as its rule.

``conformance/deviations-<namespace>.txt`` lists them, each with its reason. The run reports a
listed failure as a *deviation, documented* (its own column and section, with the reason) instead
of a failure, so it does not fail the run; a failure not listed still does. An entry that no
longer fails (its check passed, or no longer exists) fails the run as *stale*, naming the entry to
remove, so the list cannot outlive the deviations it excuses.

The file: comment lines (``#``) and blank lines; each entry is one line

    CHAPTER :: FUNCTION :: CHECK

the chapter, function and check of one result as the report gives them, the check's text exactly
but for runs of spaces (for a special case, the spec's sentence). The bundled checks' texts do not
vary from run to run and their inputs are fixed or derandomized, so the failures are the same on
every run: no patterns are needed. The comment lines right above an entry (no blank line between)
are its reason; an entry without one is refused, and so is a special case the standard does not state.

An entry applies to a run that checked its function in its chapter (``--functions`` and
``--checks`` leave some out): a listed check that then failed is a deviation, one that passed or
did not run is stale; one that was skipped gets a note.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from conformance import spec
from conformance.model import DEVIATION, FAILED, PASSED, SKIPPED, NamespaceReport, Result

HERE = Path(__file__).parent
SEPARATOR = " :: "


class DeviationsError(ValueError):
    """A deviations file that cannot be used (an entry without a reason, a malformed line, ...)."""


@dataclass(frozen=True)
class Entry:
    chapter: str
    function: str
    check: str
    reason: str
    line: int  # in the file, for the messages that name the entry

    @property
    def key(self) -> tuple[str, str, str]:
        return _key(self.chapter, self.function, self.check)


def _key(chapter: str, function: str, check: str) -> tuple[str, str, str]:
    """What identifies a check; runs of spaces are not part of it (some of the spec's sentences
    start with two)."""
    return (chapter, function, " ".join(check.split()))


@dataclass(frozen=True)
class Deviations:
    """The entries of one deviations file."""

    label: str  # the file as reports name it: conformance/deviations-xp.sparse.txt, or the path given
    entries: tuple[Entry, ...]

    def mark(self, results: Iterable[Result]) -> list[Result]:
        """``results`` with each failure this file lists turned into a deviation with its reason."""
        listed = {e.key: e for e in self.entries}
        out = []
        for r in results:
            entry = listed.get(_key(r.chapter, r.function, r.check))
            out.append(replace(r, status=DEVIATION, reason=entry.reason) if entry and r.status == FAILED else r)
        return out

    def settle(self, report: NamespaceReport) -> None:
        """Apply the file to a finished report: mark its failures, fail its stale entries."""
        report.deviations_file = self.label
        report.results = self.mark(report.results)
        checked = {(r.chapter, r.function) for r in report.results}
        statuses: dict[tuple[str, str, str], set[str]] = {}
        for r in report.results:
            statuses.setdefault(_key(r.chapter, r.function, r.check), set()).add(r.status)
        for entry in self.entries:
            if (entry.chapter, entry.function) not in checked:
                continue  # not checked in this run
            found = statuses.get(entry.key, set())
            if DEVIATION in found:
                continue
            if PASSED in found:
                stale = Result(
                    entry.chapter, entry.function, entry.check, FAILED, self._stale(entry, "the check passed")
                )
                report.results = [
                    stale if _key(r.chapter, r.function, r.check) == entry.key else r for r in report.results
                ]
            elif SKIPPED in found:
                report.notes.append(f"{self._name(entry)}: the check was skipped, so the deviation was not checked")
            else:
                why = f"no such check of {entry.function} ran in {entry.chapter}"
                report.results.append(
                    Result(entry.chapter, entry.function, entry.check, FAILED, self._stale(entry, why))
                )

    def _name(self, entry: Entry) -> str:
        return f"{self.label}:{entry.line}"

    def _stale(self, entry: Entry, why: str) -> str:
        return f"stale deviation: {self._name(entry)} lists it, but {why}: remove that entry"


def default_file(namespace: str) -> Path | None:
    """The project's deviations file of a namespace (``conformance/deviations-<namespace>.txt``), if any."""
    path = HERE / f"deviations-{namespace}.txt"
    return path if path.exists() else None


def for_namespace(namespace: str, path: str | Path | None = None) -> Deviations | None:
    """The deviations that apply to a namespace: those of ``path`` if given, else of its own file, if any."""
    chosen = Path(path) if path else default_file(namespace)
    return None if chosen is None else load(chosen)


def load(path: Path) -> Deviations:
    """The entries of a deviations file, checked (see the module's docstring for the format)."""
    label = f"conformance/{path.name}" if path.resolve().parent == HERE.resolve() else str(path)
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as e:
        raise DeviationsError(f"cannot read the deviations file {path}: {e.strerror or e}") from e
    entries: list[Entry] = []
    reason: list[str] = []
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            reason = []
        elif line.startswith("#"):
            reason.append(line.lstrip("#").strip())
        else:
            where = f"{label}:{number}"
            entry = _entry(line, " ".join(r for r in reason if r), number, where)
            if any(e.key == entry.key for e in entries):
                raise DeviationsError(f"{where}: listed twice: {line}")
            entries.append(entry)
            reason = []
    return Deviations(label, tuple(entries))


def _entry(line: str, reason: str, number: int, where: str) -> Entry:
    parts = line.split(SEPARATOR, 2)
    if len(parts) != 3 or not all(p.strip() for p in parts):
        raise DeviationsError(f"{where}: not CHAPTER{SEPARATOR}FUNCTION{SEPARATOR}CHECK: {line}")
    chapter, function, check = (p.strip() for p in parts)
    if not reason:
        raise DeviationsError(f"{where}: {line} has no comment above it saying why it deviates")
    if chapter not in spec.CHAPTERS:
        raise DeviationsError(f"{where}: unknown chapter {chapter!r} (known: {', '.join(spec.CHAPTERS)})")
    if chapter == "Special cases":
        groups = spec.special_cases()["functions"].get(function, {}).get("groups", [])
        if _key(chapter, function, check) not in {_key(chapter, function, s) for g in groups for s in g["cases"]}:
            raise DeviationsError(f"{where}: {check!r} is not a special case of {function!r} in the standard")
    return Entry(chapter, function, check, reason, number)
