"""The page's account of what changed since an earlier report (``--compare``): per namespace the
new failures (regressions first), each linking to its failure on the page, the fixes, and the other
changes of status, folded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance import compare as cmp
from conformance.html.common import STATUSES, SYMBOL, WORD, Column, esc, table


def section(name: str, old: dict[str, Any], found: list[cmp.Change], columns: Sequence[Column]) -> str:
    by_key = {cmp.key(c.ns): c for c in columns}
    when = f", finished {esc(old['finished'])}" if old.get("finished") else ""
    out = [
        '<section id="changes" aria-labelledby="changes-h">',
        f'<h2 id="changes-h">Changes since <code>{esc(name)}</code>{when}</h2>',
    ]
    if all(c.unchanged for c in found):
        out.append("<p>No check changed its status.</p>")
    for ch in found:
        col = by_key.get((ch.namespace, ch.source))
        label = esc(col.label if col else ch.namespace)
        if ch.missing:
            out.append(f"<h3>{label}</h3><p>Not in this report (the earlier one had it).</p>")
            continue
        if ch.new:
            out.append(f"<h3>{label}</h3><p>Not in the earlier report.</p>")
            continue
        if ch.unchanged:
            out.append(f"<h3>{label}</h3><p>No change.</p>")
            continue
        totals = " · ".join(
            f"{SYMBOL[s]} {ch.before.get(s, 0)} → {ch.now.get(s, 0)}"
            for s in STATUSES
            if ch.before.get(s, 0) or ch.now.get(s, 0)
        )
        out.append(
            f"<h3>{label}: {len(ch.new_failures)} new failure{'s' if len(ch.new_failures) != 1 else ''}, "
            f'{len(ch.fixed)} fixed</h3><p class="tallies">{esc(totals)}'
            + (f"; {ch.added} checks added, {ch.removed} gone" if ch.added or ch.removed else "")
            + "</p>"
        )
        if ch.new_failures:
            rows = []
            for before, r in ch.new_failures:
                rid = col.result_ids.get(id(r)) if col else None
                check = f'<a href="#{rid}">{esc(r["check"])}</a>' if rid else esc(r["check"])
                was = "not checked" if before == cmp.ABSENT else WORD.get(before, before)
                rows.append(_row(r, check, r.get("detail", ""), was))
            head = ["function", "chapter", "check", "first line of the error", "before"]
            out.append(table(f"New failures of {label}", head, rows, "new-failures"))
        if ch.fixed:
            rows = [_row(r, esc(r["check"]), r.get("detail", ""), WORD.get(now, now)) for r, now in ch.fixed]
            head = ["function", "chapter", "check", "the error it had", "now"]
            out.append(table(f"Fixed in {label}", head, rows, "fixed"))
        if ch.other:
            rows = [
                _row(r, esc(r["check"]), f"{WORD.get(a, 'not checked')} → {WORD.get(b, 'not checked')}")
                for a, b, r in ch.other
            ]
            folded = table(f"Other changes of {label}", ["function", "chapter", "check", "status"], rows, "other")
            out.append(
                f"<details><summary>{len(ch.other)} other changes (skips, deviations, checks gone)</summary>{folded}</details>"
            )
    out.append("</section>")
    return "\n".join(out)


def _row(r: dict[str, Any], check: str, *cells: object) -> str:
    """A table row of one check's result: its function, chapter and ``check`` (HTML: a link to the
    failure on the page, or the escaped name), then ``cells`` (text, escaped here)."""
    rest = "".join(f"<td>{esc(cell)}</td>" for cell in cells)
    return f"<tr><td><code>{esc(r['function'])}</code></td><td>{esc(r['chapter'])}</td><td>{check}</td>{rest}</tr>"
