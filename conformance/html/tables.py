"""The two tables a reader looks across: chapters x namespaces (the matrix, each cell a link to that
chapter of that namespace) and functions x namespaces (filtered by the page's script: by name, by
status, in any namespace or one)."""

from __future__ import annotations

from collections.abc import Sequence

from conformance import spec
from conformance.html.common import STATUSES, SYMBOL, WORD, Column, count, esc
from conformance.model import DEVIATION, FAILED, PASSED, SKIPPED


def _counts(counts: dict[str, int] | None, what: str) -> str:
    if counts is None:
        return '<span class="none">not checked</span>'
    spans = []
    for s in STATUSES:
        n = counts.get(s, 0)
        if n or s == PASSED:
            spans.append(
                f'<span class="n {s}" data-status="{s}"><span aria-hidden="true">{SYMBOL[s]}</span> {n}</span>'
            )
    label = f"{what}: " + ", ".join(count(counts.get(s, 0), s) for s in STATUSES)
    # the numbers are for the eye; a screen reader reads the sentence
    return f'<span class="counts" aria-hidden="true">{"".join(spans)}</span><span class="vh">{esc(label)}</span>'


def matrix(columns: Sequence[Column], chapters: Sequence[str]) -> str:
    heads = "".join(f'<th scope="col"><a href="#{c.id}">{esc(c.label)}</a></th>' for c in columns)
    rows = []
    per = [c.chapters() for c in columns]
    for ch in chapters:
        cells = []
        for c, counts in zip(columns, per, strict=True):
            got = counts.get(ch)
            cls = _cell_class(got)
            inner = _counts(got, f"{c.label}, {ch}")
            link = f'<a class="cell" href="#{c.chapter_ids[ch]}">{inner}</a>' if got else inner
            cells.append(f'<td class="{cls}" data-ns="{esc(c.label)}">{link}</td>')
        rows.append(f'<tr data-chapter="{esc(ch)}"><th scope="row">{esc(ch)}</th>{"".join(cells)}</tr>')
    totals = "".join(
        f'<td class="{_cell_class(c.totals())}" data-ns="{esc(c.label)}"><a class="cell" href="#{c.id}">'
        f"{_counts(c.totals(), f'{c.label}, all chapters')}</a></td>"
        for c in columns
    )
    legend = " ".join(f'<span class="st {s}">{SYMBOL[s]} {WORD[s]}</span>' for s in STATUSES)
    return (
        '<section id="chapters" aria-labelledby="chapters-h"><h2 id="chapters-h">Chapters</h2>'
        f'<p class="legend">{legend}. Each cell links to that chapter of that namespace.</p>'
        '<div class="scroll"><table class="matrix"><caption class="vh">Checks by chapter of the standard and namespace</caption>'
        f'<thead><tr><th scope="col">chapter</th>{heads}</tr></thead><tbody>{"".join(rows)}</tbody>'
        f'<tfoot><tr data-chapter="total"><th scope="row">total</th>{totals}</tr></tfoot></table></div></section>'
    )


def _cell_class(counts: dict[str, int] | None) -> str:
    if counts is None:
        return "absent"
    if counts.get(FAILED):
        return "has-failed"
    if counts.get(DEVIATION):
        return "has-deviation"
    if counts.get(PASSED):
        return "all-passed"
    return "only-skipped"


def _worst(counts: dict[str, int]) -> str:
    for s in (FAILED, DEVIATION, SKIPPED, PASSED):
        if counts.get(s):
            return s
    return PASSED


def functions(columns: Sequence[Column]) -> str:
    per: list[dict[str, dict[str, int]]] = []
    order: dict[str, None] = {}
    for c in columns:
        counts: dict[str, dict[str, int]] = {}
        for r in c.results:
            tally = counts.setdefault(r["function"], dict.fromkeys(STATUSES, 0))
            tally[r["status"]] = tally.get(r["status"], 0) + 1
            order[r["function"]] = None
        per.append(counts)
    rank = {ch: i for i, ch in enumerate(spec.CHAPTERS)}
    names = sorted(order, key=lambda f: (rank.get(spec.chapter_of(f), len(rank)), f.startswith("("), f))
    rows = []
    for f in names:
        cells, statuses = [], []
        for c, by_function in zip(columns, per, strict=True):
            t = by_function.get(f)
            if t is None:
                cells.append(
                    '<td class="absent" data-status="absent"><span class="none">—</span><span class="vh">not checked</span></td>'
                )
                statuses.append("absent")
                continue
            worst = _worst(t)
            statuses.append("+".join(st for st in STATUSES if t[st]))  # every status, for the filters
            total = sum(t.values())
            text = f"{SYMBOL[worst]} {t[worst]}" + (f" of {total}" if t[worst] != total else "")
            label = f"{f} in {c.label}: " + ", ".join(count(t[s], s) for s in STATUSES if t[s])
            inner = f'<span aria-hidden="true">{esc(text)}</span><span class="vh">{esc(label)}</span>'
            target = c.function_ids.get(f)
            if target:
                inner = f'<a href="#{target}" title="{esc(label)}">{inner}</a>'
            cells.append(f'<td class="fs {worst}" data-status="{worst}" title="{esc(label)}">{inner}</td>')
        chapter = spec.chapter_of(f)
        rows.append(
            f'<tr data-name="{esc(f.lower())}" data-statuses="{" ".join(statuses)}">'
            f'<th scope="row"><code>{esc(f)}</code></th><td class="chapter">{esc(chapter)}</td>{"".join(cells)}</tr>'
        )
    heads = "".join(f'<th scope="col">{esc(c.label)}</th>' for c in columns)
    options = "".join(f'<option value="{i}">{esc(c.label)}</option>' for i, c in enumerate(columns))
    filters = (
        '<form class="filters" id="function-filters" hidden role="search" aria-label="Filter the functions">'
        '<label>Name <input type="search" id="filter-name" placeholder="e.g. linalg. or sum" autocomplete="off"></label>'
        '<label>Status <select id="filter-status">'
        '<option value="">any</option><option value="failed">failed</option>'
        '<option value="deviation">deviation, documented</option><option value="skipped">skipped</option>'
        '<option value="passed">all passed</option><option value="differs">differs between namespaces</option>'
        "</select></label>"
        f'<label>in <select id="filter-ns"><option value="">any namespace</option>{options}</select></label>'
        '<button type="reset">Show all</button>'
        '<output id="filter-count" aria-live="polite"></output></form>'
    )
    return (
        '<section id="functions" aria-labelledby="functions-h"><h2 id="functions-h">Functions</h2>'
        "<p>Each cell is the function's worst status in that namespace, with how many of its checks have it "
        "(<code>✗ 2 of 5</code>: two of its five checks failed); a failure or deviation links to its details. "
        "Press <kbd>/</kbd> to filter by name.</p>"
        + filters
        + '<div class="scroll"><table class="functions" id="function-table"><caption class="vh">Status of every '
        f'function checked, by namespace</caption><thead><tr><th scope="col">function</th><th scope="col">chapter</th>{heads}'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )
