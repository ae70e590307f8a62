"""Each namespace chapter by chapter: every failure with its check, the first line of the error,
the standard's words for the rule (:mod:`conformance.citation`), its reproducer and its falsifying
example; every documented deviation with its reason; skipped checks with why; what passed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance import citation, spec
from conformance.html.common import STATUSES, SYMBOL, WORD, Column, count, esc, spec_text, table
from conformance.model import DEVIATION, FAILED, PASSED, SKIPPED


def namespace(c: Column, chapters: Sequence[str]) -> str:
    ns, t = c.ns, c.totals()
    env = ns.get("environment") or {}
    head = [f'<section class="namespace" id="{c.id}" aria-labelledby="{c.id}-h">']
    verdict = (
        f"{t[FAILED]} failed in {len(ns.get('failures', {}))} functions" if t[FAILED] else f"all {t[PASSED]} passed"
    )
    extra = [count(t[s], s) for s in (DEVIATION, SKIPPED) if t[s]]
    head.append(f'<h3 id="{c.id}-h">{esc(c.label)}: {esc(", ".join([verdict, *extra]))}</h3>')
    facts = []
    if env.get("version"):
        facts.append(f"version {esc(env['version'])}")
    if env.get("device"):
        facts.append(f"arrays on {esc(env['device'])}")
    facts.append(f"{float(ns.get('duration_s', 0)):.0f} s")
    if ns.get("deviations_file"):
        facts.append(f"deviations file <code>{esc(ns['deviations_file'])}</code>")
    head.append(f"<p>{', '.join(facts)}</p>")
    upstream = ns.get("upstream") or {}
    if upstream:
        head.append(_upstream(upstream))
    for note in ns.get("notes", []):
        head.append(f'<p class="note"><strong>Note:</strong> {esc(note)}</p>')
    by_chapter: dict[str, list[dict[str, Any]]] = {}
    for r in c.results:
        by_chapter.setdefault(r["chapter"], []).append(r)
    for ch in chapters:
        if ch in by_chapter:
            head.append(_chapter(c, ch, by_chapter[ch]))
    head.append("</section>")
    return "\n".join(head)


def _upstream(u: dict[str, Any]) -> str:
    rows = []
    if u.get("revision"):
        pinned = u.get("pinned")
        rev = f"<code>{esc(u['revision'][:12])}</code>"
        if pinned and pinned != u["revision"]:
            rev += f" (the tool is pinned to <code>{esc(pinned[:12])}</code>)"
        rows.append(("array-api-tests", rev))
    if u.get("version"):
        rows.append(("standard", esc(u["version"])))
    if u.get("command"):
        rows.append(("command", f"<code>{esc(u['command'])}</code>"))
    summary = u.get("summary") or {}
    counts = ", ".join(f"{v} {k}" for k, v in summary.items() if k not in ("total", "collected") and isinstance(v, int))
    if counts:
        rows.append(("pytest", esc(counts)))
    return '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _chapter(c: Column, chapter: str, results: list[dict[str, Any]]) -> str:
    counts = dict.fromkeys(STATUSES, 0)
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    tally = ", ".join(count(counts[s], s) for s in STATUSES if counts[s])
    out = [
        f'<section class="chapter" id="{c.chapter_ids[chapter]}" aria-labelledby="{c.chapter_ids[chapter]}-h">',
        f'<h4 id="{c.chapter_ids[chapter]}-h">{esc(c.label)} · {esc(chapter)} <span class="tally">{esc(tally)}</span></h4>',
    ]
    version = str(c.doc.get("spec_version") or spec.DEFAULT_VERSION)
    for status, title in ((FAILED, "Failures"), (DEVIATION, "Deviations, documented")):
        chosen = [r for r in results if r["status"] == status]
        if chosen:
            out.append(f'<h5 class="group">{SYMBOL[status]} {title}</h5>')
            out += [_result(c, r, version) for r in chosen]
    skipped = [r for r in results if r["status"] == SKIPPED]
    if skipped:
        rows = "".join(
            f"<tr><td><code>{esc(r['function'])}</code></td><td>{spec_text(r['check'])}</td><td>{esc(r.get('detail', ''))}</td></tr>"
            for r in skipped
        )
        folded = table("Skipped checks", ["function", "check", "why"], [rows], "skipped")
        out.append(
            f"<details><summary>{SYMBOL[SKIPPED]} {len(skipped)} skipped, with the reasons</summary>{folded}</details>"
        )
    passed: dict[str, int] = {}
    for r in results:
        if r["status"] == PASSED:
            passed[r["function"]] = passed.get(r["function"], 0) + 1
    if passed:
        names = ", ".join(f"<code>{esc(f)}</code>" + (f" ({n})" if n > 1 else "") for f, n in passed.items())
        out.append(
            f"<details><summary>{SYMBOL[PASSED]} {counts[PASSED]} passed, of {len(passed)} "
            f'function{"s" if len(passed) != 1 else ""}</summary><p class="passed">{names}</p></details>'
        )
    out.append("</section>")
    return "\n".join(out)


def _result(c: Column, r: dict[str, Any], version: str) -> str:
    rid = c.result_ids.get(id(r), "")
    status = r["status"]
    parts = [
        f'<article class="result {status}" id="{rid}" aria-labelledby="{rid}-h">',
        f'<h6 id="{rid}-h"><code>{esc(r["function"])}</code> <span class="st {status}">{SYMBOL[status]} {WORD[status]}</span> '
        f'<span class="check">{spec_text(r["check"]) if r["chapter"] == "Special cases" else esc(r["check"])}</span></h6>',
        "<dl>",
    ]
    if r.get("detail"):
        parts.append(f'<dt>Error</dt><dd><pre class="error">{esc(r["detail"])}</pre></dd>')
    if r.get("reason"):
        parts.append(f'<dt>Why (its deviations file)</dt><dd class="reason">{esc(r["reason"])}</dd>')
    words = _citation(citation.cite(r["chapter"], r["function"], r["check"], version))
    if words:
        parts.append(f"<dt>The standard</dt><dd>{words}</dd>")
    if r.get("reproducer"):
        code = esc(r["reproducer"])
        parts.append(
            '<dt>Reproducer</dt><dd><div class="code"><button type="button" class="copy" hidden>Copy</button>'
            f'<pre class="reproducer"><code>{code}</code></pre></div></dd>'
        )
    if r.get("example"):
        what = "The namespace's signature" if r["chapter"] == "Signatures" else "Falsifying example (hypothesis)"
        parts.append(f'<dt>{what}</dt><dd><pre class="example">{esc(r["example"])}</pre></dd>')
    parts.append("</dl></article>")
    return "\n".join(parts)


def _citation(c: citation.Citation) -> str:
    """The standard's words for a rule, and a link to the function's page."""
    if not c:
        return ""
    words = []
    if c.sentence:
        words.append(f"<blockquote>{esc(c.context + ' ') if c.context else ''}{spec_text(c.sentence)}</blockquote>")
    if c.promotion:
        a, b, to = c.promotion
        words.append(f"The promotion table: <code>{a}</code> and <code>{b}</code> promote to <code>{to}</code>.")
    if c.signature:
        words.append(f'<code class="signature">{esc(c.signature)}</code>')
    if c.added:
        words.append(f"In the standard since {esc(c.added)}.")
    if c.url:
        words.append(f'<a class="spec" href="{esc(c.url)}">{esc(c.name)} in the standard</a>')
    return " ".join(words)
