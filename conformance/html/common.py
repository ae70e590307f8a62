"""What every part of the page shares: statuses as symbols and words, escaping, element ids, the
columns (one namespace of one report each), tables, and the spec's inline markup."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from conformance.model import DEVIATION, FAILED, PASSED, SKIPPED

STATUSES = (PASSED, FAILED, SKIPPED, DEVIATION)
# told by a symbol and a word, never by colour alone
SYMBOL = {PASSED: "✓", FAILED: "✗", SKIPPED: "○", DEVIATION: "◆"}
WORD = {PASSED: "passed", FAILED: "failed", SKIPPED: "skipped", DEVIATION: "deviation, documented"}
PLURAL = {PASSED: "passed", FAILED: "failed", SKIPPED: "skipped", DEVIATION: "deviations, documented"}


def count(n: int, status: str) -> str:
    """``1 deviation, documented``, ``3 deviations, documented``, ``2 passed``."""
    return f"{n} {WORD[status] if n == 1 else PLURAL[status]}"


def esc(s: object) -> str:
    return escape(str(s), quote=True)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "-", text.lower()).strip("-") or "x"


class Ids:
    """Unique, readable element ids (``jax-numpy--special-cases``), so that links can be shared."""

    def __init__(self, reserved: Sequence[str] = ()) -> None:
        self.taken: set[str] = set(reserved)

    def make(self, *parts: str) -> str:
        base = "--".join(slug(p) for p in parts)
        name, n = base, 1
        while name in self.taken:
            n += 1
            name = f"{base}-{n}"
        self.taken.add(name)
        return name


def tally(results: Sequence[dict[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return counts


@dataclass
class Column:
    """One namespace of one report: a column of the matrix and of the function table."""

    id: str
    label: str
    doc: dict[str, Any]
    ns: dict[str, Any]
    chapter_ids: dict[str, str] = field(default_factory=dict)
    function_ids: dict[str, str] = field(default_factory=dict)  # a function's first failure (or deviation)
    result_ids: dict[int, str] = field(default_factory=dict)  # id(result dict) -> its article

    @property
    def results(self) -> list[dict[str, Any]]:
        return self.ns.get("results", [])

    def chapters(self) -> dict[str, dict[str, int]]:
        by: dict[str, list[dict[str, Any]]] = {}
        for r in self.results:
            by.setdefault(r["chapter"], []).append(r)
        return {chapter: tally(rs) for chapter, rs in by.items()}

    def totals(self) -> dict[str, int]:
        return tally(self.results)


def table(caption: str, head: Sequence[str], rows: Sequence[str], cls: str) -> str:
    """A table in a box of its own that scrolls sideways in a narrow window (``caption`` is HTML)."""
    ths = "".join(f'<th scope="col">{esc(h)}</th>' for h in head)
    return (
        f'<div class="scroll"><table class="{cls}"><caption>{caption}</caption>'
        f"<thead><tr>{ths}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


_CODE = re.compile(r"``(.+?)``")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def spec_text(text: str) -> str:
    """The spec's reStructuredText inline markup (````x````, ``**must**``) as HTML."""
    out = esc(text.strip())
    out = _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", out)
    return _BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", out)
