"""The page: its frame (header, navigation, summary, footer) around the tables, the changes and the
details, drawn from one or more JSON reports (already parsed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from conformance import compare as cmp
from conformance import spec
from conformance.html import changes, details, tables
from conformance.html.assets import SCRIPT, STYLE
from conformance.html.common import STATUSES, SYMBOL, WORD, Column, Ids, count, esc
from conformance.model import DEVIATION, FAILED, PASSED, SKIPPED


def render(docs: Sequence[dict[str, Any]], *, compare: tuple[str, dict[str, Any]] | None = None) -> str:
    """The page of one or more JSON reports (already parsed); ``compare``: (its name, an earlier report)."""
    if not docs:
        raise ValueError("render needs at least one report")
    ids = Ids(reserved=("summary", "changes", "chapters", "functions", "namespaces", "main"))
    columns = _columns(docs, ids)
    chapters = _chapter_order(columns)
    for c in columns:
        c.chapter_ids = {ch: ids.make(c.label, ch) for ch in chapters}
        _assign_result_ids(c, ids)
    shown = {"namespaces": [ns for d in docs for ns in d.get("namespaces", [])]}
    found = cmp.changes(compare[1], shown) if compare else None
    title = "Array API conformance: " + ", ".join(dict.fromkeys(c.label for c in columns))
    body = [
        '<a class="skip" href="#main">Skip to the report</a>',
        _header(docs, columns),
        _nav(columns, found is not None),
        '<main id="main" tabindex="-1">',
        _summary(docs, columns),
        changes.section(compare[0], compare[1], found, columns) if compare and found is not None else "",
        tables.matrix(columns, chapters),
        tables.functions(columns),
        '<section id="namespaces" aria-labelledby="namespaces-h"><h2 id="namespaces-h">By namespace and chapter</h2>',
        *(details.namespace(c, chapters) for c in columns),
        "</section>",
        "</main>",
        _footer(),
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(b for b in body if b)
        + f"\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )


def write(
    path: str | Path, docs: Sequence[dict[str, Any]], *, compare: tuple[str, dict[str, Any]] | None = None
) -> int:
    """Write the page; return its size in bytes."""
    text = render(docs, compare=compare)
    data = text.encode("utf-8")
    Path(path).write_bytes(data)
    return len(data)


# --- columns, chapters ----------------------------------------------------------------------------
def _columns(docs: Sequence[dict[str, Any]], ids: Ids) -> list[Column]:
    pairs = [(doc, ns) for doc in docs for ns in doc.get("namespaces", [])]
    names = [ns["namespace"] for _, ns in pairs]
    sources = {ns.get("source", "bundled") for _, ns in pairs}
    columns: list[Column] = []
    for doc, ns in pairs:
        label = ns["namespace"]
        if ns.get("source") == "upstream" and (len(sources) > 1 or names.count(label) > 1):
            label += " (upstream)"
        taken = {c.label for c in columns}
        if label in taken:  # the same namespace in two reports: number them
            label = next(f"{label} ({n})" for n in range(2, len(columns) + 2) if f"{label} ({n})" not in taken)
        columns.append(Column(ids.make(label), label, doc, ns))
    return columns


def _chapter_order(columns: Sequence[Column]) -> list[str]:
    seen: dict[str, None] = {}
    for c in columns:
        for r in c.results:
            seen[r["chapter"]] = None
    known = [ch for ch in spec.CHAPTERS if ch in seen]
    return known + [ch for ch in seen if ch not in known]


def _assign_result_ids(c: Column, ids: Ids) -> None:
    for r in c.results:
        if r["status"] in (FAILED, DEVIATION):
            rid = ids.make(c.label, r["function"], r["status"])
            c.result_ids[id(r)] = rid
            c.function_ids.setdefault(r["function"], rid)


# --- header, navigation, summary --------------------------------------------------------------------
def _exit_status(doc: dict[str, Any]) -> tuple[int, str]:
    """The run's exit status (as the report recorded it, else as the tool decides it) and why."""
    namespaces = doc.get("namespaces", [])
    failing = [ns for ns in namespaces if not ns.get("ok", not ns.get("failures"))]
    status = doc.get("exit_status")
    if not isinstance(status, int):
        status = 1 if failing else 0
    if status == 2:
        return status, "a usage error"
    if not failing:
        totals = _sum(ns.get("totals", {}) for ns in namespaces)
        extra = [count(totals[s], s) for s in (DEVIATION, SKIPPED) if totals.get(s)]
        return status, "no check failed" + (f" ({', '.join(extra)})" if extra else "")
    parts = []
    for ns in failing:
        failures = ns.get("failures", {})
        n = sum(len(v) for v in failures.values())
        stale = sum(1 for v in failures.values() for r in v if str(r.get("detail", "")).startswith("stale deviation"))
        bit = f"{ns['namespace']}: {n} failed in {len(failures)} function{'s' if len(failures) != 1 else ''}"
        parts.append(bit + (f", {stale} of them stale entries of its deviations file" if stale else ""))
    return status, "checks failed (" + "; ".join(parts) + ")"


def _sum(tallies: Iterable[dict[str, int]]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for t in tallies:
        for k, v in t.items():
            out[k] = out.get(k, 0) + v
    return out


def _header(docs: Sequence[dict[str, Any]], columns: Sequence[Column]) -> str:
    lines = []
    for doc in docs:
        status, why = _exit_status(doc)
        source = "upstream suite" if doc.get("source") == "upstream" else "bundled checks"
        verdict = PASSED if status == 0 else FAILED
        lines.append(
            f'<p class="verdict {verdict}"><strong>{SYMBOL[verdict]} Exit status {status}</strong> '
            f"({esc(source)}): {esc(why)}</p>"
        )
    versions = ", ".join(dict.fromkeys(str(d.get("spec_version", "?")) for d in docs))
    return (
        '<header class="top">'
        f'<h1>Array API conformance <span class="sub">standard {esc(versions)}</span></h1>'
        f'<p class="lede">{len(columns)} namespace{"s" if len(columns) != 1 else ""}: '
        + ", ".join(f'<a href="#{c.id}">{esc(c.label)}</a>' for c in columns)
        + "</p>"
        + "".join(lines)
        + "</header>"
    )


def _nav(columns: Sequence[Column], with_changes: bool) -> str:
    links = [("summary", "Summary")]
    if with_changes:
        links.append(("changes", "Changes"))
    links += [("chapters", "Chapters"), ("functions", "Functions")]
    links += [(c.id, c.label) for c in columns]
    items = "".join(f'<li><a href="#{i}">{esc(t)}</a></li>' for i, t in links)
    return f'<nav aria-label="On this page"><ul>{items}</ul></nav>'


def _summary(docs: Sequence[dict[str, Any]], columns: Sequence[Column]) -> str:
    out = ['<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>']
    for doc in docs:
        env = dict(doc.get("environment") or {})
        status, why = _exit_status(doc)
        rows: list[tuple[str, str]] = []
        rows.append(("Standard", esc(doc.get("spec_version", "?"))))
        if doc.get("source") == "upstream":
            rows.append(("Checks", "the upstream suite, data-apis/array-api-tests" + _max_examples(doc)))
        else:
            rows.append(("Checks", "bundled with the tool" + _max_examples(doc)))
        names = [c for c in columns if c.doc is doc]
        rows.append(("Namespaces", "<ul>" + "".join(_namespace_line(c) for c in names) + "</ul>"))
        rows.append(("Environment", _environment(env, names)))
        rows.append(("Duration", _duration(doc, names)))
        rows.append(("Exit status", f"<strong>{status}</strong>: {esc(why)}"))
        if doc.get("command"):
            rows.append(("Command", f"<code>{esc(doc['command'])}</code>"))
        tool = " ".join(str(doc.get(k, "")) for k in ("tool", "tool_version")).strip()
        if tool:
            rows.append(("Tool", esc(tool)))
        if doc.get("finished"):
            rows.append(("Finished", esc(doc["finished"])))
        out.append('<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>")
    out.append("</section>")
    return "\n".join(out)


def _max_examples(doc: dict[str, Any]) -> str:
    n = doc.get("max_examples")
    if n is None:
        return ""
    if doc.get("source") == "upstream":
        return f", <code>--max-examples {esc(n)}</code>"
    return f", {esc(n)} examples per property"


def _namespace_line(c: Column) -> str:
    t = c.totals()
    env = c.ns.get("environment") or {}
    version = f" {esc(env['version'])}" if env.get("version") else ""
    bits = [count(t[s], s) for s in STATUSES if t.get(s) or s in (PASSED, FAILED)]
    mark = SYMBOL[PASSED] if c.ns.get("ok", not t[FAILED]) else SYMBOL[FAILED]
    return f'<li><span aria-hidden="true">{mark}</span> <a href="#{c.id}">{esc(c.label)}</a>{version}: {esc(", ".join(bits))}</li>'


def _environment(env: dict[str, Any], columns: Sequence[Column]) -> str:
    bits = []
    for key, label in (("python", "Python"), ("numpy", "NumPy"), ("jax", "JAX"), ("hypothesis", "Hypothesis")):
        if key in env:
            text = f"{label} {esc(env[key])}"
            if key == "jax" and "jax_enable_x64" in env:
                text += f" (64-bit mode {'on' if env['jax_enable_x64'] else 'off'})"
            bits.append(text)
    devices = {c.label: (c.ns.get("environment") or {}).get("device") for c in columns}
    if env.get("device"):
        bits.append(f"JAX devices: {esc(env['device'])}")
    per = [f"{esc(n)}: {esc(d)}" for n, d in devices.items() if d]
    if per:
        bits.append("arrays on " + "; ".join(per))
    elif not env.get("device"):
        bits.append("device not recorded")
    return ", ".join(bits) or "not recorded"


def _duration(doc: dict[str, Any], columns: Sequence[Column]) -> str:
    per = ", ".join(f"{esc(c.label)} {float(c.ns.get('duration_s', 0)):.0f} s" for c in columns)
    total = doc.get("duration_s")
    if isinstance(total, int | float):
        return f"{total:.0f} s of wall time ({per})"
    return per


def _footer() -> str:
    return (
        '<footer><p class="legend">'
        + " ".join(f'<span class="st {s}">{SYMBOL[s]} {WORD[s]}</span>' for s in STATUSES)
        + "</p><p>A documented deviation is a failure the namespace's deviations file lists with its reason; "
        "it does not fail the run. This page was written from the JSON report by "
        "<code>python -m conformance</code>; nothing in it is fetched from elsewhere.</p></footer>"
    )
