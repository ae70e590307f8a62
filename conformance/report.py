"""Reports: the text a person reads at the end of a run, a Markdown report, a JSON report.

With several namespaces, the chapter tables are side by side: one column group
(passed / failed / skipped) per namespace.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import conformance
from conformance import spec
from conformance.model import NamespaceReport, Result

TOOL_VERSION: str = getattr(conformance, "__version__", "unknown")


def _chapters(reports: Sequence[NamespaceReport]) -> list[str]:
    seen: dict[str, None] = {}
    for r in reports:
        for c in r.chapters():
            seen[c] = None
    known = [c for c in spec.CHAPTERS if c in seen]
    return known + [c for c in seen if c not in known]


def _cell(counts: dict[str, int] | None) -> tuple[str, str, str]:
    if counts is None:
        return ("", "", "")
    return (str(counts["passed"]), str(counts["failed"]), str(counts["skipped"]))


def _rows(reports: Sequence[NamespaceReport]) -> list[tuple[str, list[tuple[str, str, str]]]]:
    rows = []
    for chapter in _chapters(reports):
        rows.append((chapter, [_cell(r.chapters().get(chapter)) for r in reports]))
    rows.append(("total", [_cell(r.totals()) for r in reports]))
    return rows


def _group_failures(results: list[Result]) -> dict[str, list[Result]]:
    grouped: dict[str, list[Result]] = {}
    for r in results:
        grouped.setdefault(r.function, []).append(r)
    return grouped


def header(meta: dict[str, Any]) -> str:
    parts = [f"standard {meta['spec_version']}", f"{meta['source']} checks"]
    if meta["source"] == "bundled":
        parts.append(f"{meta['max_examples']} examples per property")
    else:
        parts.append(f"--max-examples {meta['max_examples']}")
    return "Array API conformance: " + ", ".join(parts)


def versions(meta: dict[str, Any]) -> str:
    """``python 3.11.7, numpy 2.4.6, jax 0.10.2 (64-bit mode off), hypothesis 6.151.0``."""
    env = meta.get("environment") or {}
    bits = [f"{k} {env[k]}" for k in ("python", "numpy", "jax", "hypothesis") if k in env]
    if "jax_enable_x64" in env:
        bits = [
            b + (f" (64-bit mode {'on' if env['jax_enable_x64'] else 'off'})" if b.startswith("jax") else "")
            for b in bits
        ]
    return ", ".join(bits)


def _environment(r: NamespaceReport) -> str:
    bits = []
    if r.environment.get("version"):
        bits.append(f"version {r.environment['version']}")
    if r.upstream.get("revision"):
        bits.append(f"array-api-tests {r.upstream['revision'][:12]}")
    if r.upstream.get("version"):
        bits.append(f"standard {r.upstream['version']}")
    return ", ".join(bits)


# --- text ---------------------------------------------------------------------------------------
def text(reports: Sequence[NamespaceReport], meta: dict[str, Any], max_per_function: int = 4) -> str:
    lines = [header(meta)] + ([versions(meta)] if versions(meta) else []) + [""]
    rows = _rows(reports)
    name_w = max(len(c) for c, _ in rows)
    col_w = [max(len(r.name), 18) for r in reports]
    top = " " * name_w + "  " + "  ".join(r.name.center(w) for r, w in zip(reports, col_w, strict=True))
    sub = "chapter".ljust(name_w) + "  " + "  ".join(f"{'pass':>6}{'fail':>6}{'skip':>6}".rjust(w) for w in col_w)
    lines += [top.rstrip(), sub, "-" * len(sub)]
    for chapter, cells in rows:
        if chapter == "total":
            lines.append("-" * len(sub))
        body = "  ".join("".join(f"{v:>6}" for v in cell).rjust(w) for cell, w in zip(cells, col_w, strict=True))
        lines.append(f"{chapter.ljust(name_w)}  {body}")
    for r in reports:
        lines.append("")
        env = _environment(r)
        lines.append(f"{r.name}: {_verdict(r)} in {r.duration_s:.0f}s" + (f" ({env})" if env else ""))
        for note in r.notes:
            lines.append(f"  note: {note}")
        failures = r.failures()
        if not failures:
            continue
        fn_w = min(max(len(f) for f in failures), 28)
        for function, results in failures.items():
            first = results[0]
            more = f" (+{len(results) - 1} more)" if len(results) > 1 else ""
            lines.append(f"  {function.ljust(fn_w)}  [{first.chapter}] {_describe(first)}{more}")
            for extra in results[1:max_per_function]:
                lines.append(f"  {'':{fn_w}}  [{extra.chapter}] {_describe(extra)}")
    return "\n".join(lines) + "\n"


def _verdict(r: NamespaceReport) -> str:
    t = r.totals()
    if not r.ok:
        n = len(r.failures())
        return (
            f"{t['failed']} failed in {n} function{'s' if n != 1 else ''}, {t['passed']} passed, {t['skipped']} skipped"
        )
    return f"all {t['passed']} passed, {t['skipped']} skipped"


def _describe(r: Result, width: int = 90) -> str:
    detail = r.detail or "failed"
    if r.check in ("properties", "present", "signature", "method", "attribute") or r.check in detail:
        return detail
    check = r.check if len(r.check) <= width else r.check[: width - 1] + "…"
    return f"{check}: {detail}"


# --- markdown -----------------------------------------------------------------------------------
def markdown(reports: Sequence[NamespaceReport], meta: dict[str, Any]) -> str:
    out = [f"# {header(meta)}", ""]
    if meta.get("command"):
        out += [f"`{meta['command']}`", ""]
    if versions(meta):
        out += [versions(meta), ""]
    for r in reports:
        env = _environment(r)
        out.append(f"- **{r.name}**: {_verdict(r)}" + (f" ({env})" if env else ""))
    out.append("")
    names = [r.name for r in reports]
    out.append("| chapter | " + " | ".join(f"{n} ✓ | {n} ✗ | {n} skip" for n in names) + " |")
    out.append("|---|" + "---:|" * (3 * len(names)))
    for chapter, cells in _rows(reports):
        label = f"**{chapter}**" if chapter == "total" else chapter
        out.append(f"| {label} | " + " | ".join(" | ".join(cell) for cell in cells) + " |")
    for r in reports:
        failures = r.failures()
        out += ["", f"## {r.name}: failures by function", ""]
        for note in r.notes:
            out.append(f"> {note}")
        if r.notes:
            out.append("")
        if not failures:
            out.append("None.")
            continue
        out += ["| function | chapter | check | first line of the error |", "|---|---|---|---|"]
        for function, results in failures.items():
            for i, res in enumerate(results):
                fn = f"`{function}`" if i == 0 else ""
                out.append(f"| {fn} | {res.chapter} | {_md(res.check)} | {_md(res.detail)} |")
    return "\n".join(out) + "\n"


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")[:300]


# --- json -----------------------------------------------------------------------------------------
def to_json(reports: Sequence[NamespaceReport], meta: dict[str, Any]) -> str:
    doc = {"tool": "conformance", "tool_version": TOOL_VERSION, **meta, "namespaces": [r.to_json() for r in reports]}
    return json.dumps(doc, indent=1, default=str) + "\n"
