"""Reports: the text a person reads at the end of a run, a Markdown report, a JSON report.

With several namespaces, the chapter tables are side by side: one column group
(passed / failed / skipped / deviations, documented) per namespace. Each namespace's failures
follow, then its documented deviations with their reasons.
"""

from __future__ import annotations

import importlib.metadata
import json
import textwrap
from collections.abc import Sequence
from typing import Any

from conformance import spec
from conformance.model import DEVIATION, FAILED, PASSED, SKIPPED, NamespaceReport, Result


def _distribution_version() -> str:
    """The tool ships in the xp-jax distribution: its version is the distribution's."""
    try:
        return importlib.metadata.version("xp-jax")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that is not installed
        return "unknown"


TOOL_VERSION: str = _distribution_version()


def _chapters(reports: Sequence[NamespaceReport]) -> list[str]:
    seen: dict[str, None] = {}
    for r in reports:
        for c in r.chapters():
            seen[c] = None
    known = [c for c in spec.CHAPTERS if c in seen]
    return known + [c for c in seen if c not in known]


COLUMNS = (PASSED, FAILED, SKIPPED, DEVIATION)  # the column group of a namespace, in this order
_TEXT_COLUMNS = ("pass", "fail", "skip", "dev")
_MARKDOWN_COLUMNS = ("✓", "✗", "skip", "dev")
LEGEND = "dev: deviations, documented: failures the namespace's deviations file lists, with reasons; they do not fail the run"


def _cell(counts: dict[str, int] | None) -> tuple[str, ...]:
    if counts is None:
        return ("",) * len(COLUMNS)
    return tuple(str(counts[status]) for status in COLUMNS)


def _rows(reports: Sequence[NamespaceReport]) -> list[tuple[str, list[tuple[str, ...]]]]:
    rows = []
    for chapter in _chapters(reports):
        rows.append((chapter, [_cell(r.chapters().get(chapter)) for r in reports]))
    rows.append(("total", [_cell(r.totals()) for r in reports]))
    return rows


def header(meta: dict[str, Any]) -> str:
    parts = [f"standard {meta['spec_version']}", f"{meta['source']} checks"]
    if meta["source"] == "bundled":
        parts.append(f"{meta['max_examples']} examples per property")
    else:
        parts.append(f"--max-examples {meta['max_examples']}")
    return "Array API conformance: " + ", ".join(parts)


def versions(meta: dict[str, Any]) -> str:
    """``python 3.11.7, numpy 2.4.6, jax 0.10.2 (64-bit mode off), hypothesis 6.151.0, on 1 x cpu (cpu)``."""
    env = meta.get("environment") or {}
    bits = [f"{k} {env[k]}" for k in ("python", "numpy", "jax", "hypothesis") if k in env]
    if "jax_enable_x64" in env:
        bits = [
            b + (f" (64-bit mode {'on' if env['jax_enable_x64'] else 'off'})" if b.startswith("jax") else "")
            for b in bits
        ]
    if "device" in env:
        bits.append(f"on {env['device']}")
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
    col_w = [max(len(r.name), 6 * len(COLUMNS)) for r in reports]
    top = " " * name_w + "  " + "  ".join(r.name.center(w) for r, w in zip(reports, col_w, strict=True))
    sub = "chapter".ljust(name_w) + "  " + "  ".join("".join(f"{c:>6}" for c in _TEXT_COLUMNS).rjust(w) for w in col_w)
    lines += [top.rstrip(), sub, "-" * len(sub)]
    for chapter, cells in rows:
        if chapter == "total":
            lines.append("-" * len(sub))
        body = "  ".join("".join(f"{v:>6}" for v in cell).rjust(w) for cell, w in zip(cells, col_w, strict=True))
        lines.append(f"{chapter.ljust(name_w)}  {body}")
    if any(r.deviations_file or r.deviations() for r in reports):
        lines.append(LEGEND)
    for r in reports:
        lines.append("")
        env = _environment(r)
        lines.append(f"{r.name}: {_verdict(r)} in {r.duration_s:.0f}s" + (f" ({env})" if env else ""))
        for note in r.notes:
            lines.append(f"  note: {note}")
        failures = r.failures()
        if failures:
            fn_w = min(max(len(f) for f in failures), 28)
            for function, results in failures.items():
                first = results[0]
                more = f" (+{len(results) - 1} more)" if len(results) > 1 else ""
                lines.append(f"  {function.ljust(fn_w)}  [{first.chapter}] {_describe(first)}{more}")
                for extra in results[1:max_per_function]:
                    lines.append(f"  {'':{fn_w}}  [{extra.chapter}] {_describe(extra)}")
        lines += _text_deviations(r)
    return "\n".join(lines) + "\n"


def _text_deviations(r: NamespaceReport) -> list[str]:
    """Every documented deviation (they are few, and each must be seen), with its reason once per
    run of deviations of a function that share it."""
    deviations = r.deviations()
    if not deviations:
        return []
    total = sum(len(v) for v in deviations.values())
    lines = [f"  {total} deviation{'s' if total != 1 else ''}, documented in {r.deviations_file}, with the reasons:"]
    fn_w = min(max(len(f) for f in deviations), 28)
    for function, results in deviations.items():
        for i, res in enumerate(results):
            name = function if i == 0 else ""
            lines.append(f"    {name.ljust(fn_w)}  [{res.chapter}] {_describe(res)}")
            if i + 1 == len(results) or results[i + 1].reason != res.reason:
                why = textwrap.wrap(res.reason, 100 - fn_w, initial_indent="why: ", subsequent_indent="     ")
                lines += [f"    {'':{fn_w}}  {w}" for w in why]
    return lines


def _verdict(r: NamespaceReport) -> str:
    t = r.totals()
    documented = f", {t[DEVIATION]} documented deviation{'s' if t[DEVIATION] != 1 else ''}" if t[DEVIATION] else ""
    if not r.ok:
        n = len(r.failures())
        return (
            f"{t[FAILED]} failed in {n} function{'s' if n != 1 else ''}, {t[PASSED]} passed{documented}, "
            f"{t[SKIPPED]} skipped"
        )
    return f"all {t[PASSED]} passed{documented}, {t[SKIPPED]} skipped"


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
    out.append("| chapter | " + " | ".join(" | ".join(f"{n} {c}" for c in _MARKDOWN_COLUMNS) for n in names) + " |")
    out.append("|---|" + "---:|" * (len(COLUMNS) * len(names)))
    for chapter, cells in _rows(reports):
        label = f"**{chapter}**" if chapter == "total" else chapter
        out.append(f"| {label} | " + " | ".join(" | ".join(cell) for cell in cells) + " |")
    if any(r.deviations_file or r.deviations() for r in reports):
        out += ["", LEGEND]
    for r in reports:
        failures = r.failures()
        out += ["", f"## {r.name}: failures by function", ""]
        for note in r.notes:
            out.append(f"> {note}")
        if r.notes:
            out.append("")
        if not failures:
            out.append("None.")
        else:
            out += ["| function | chapter | check | first line of the error |", "|---|---|---|---|"]
            for function, results in failures.items():
                for i, res in enumerate(results):
                    fn = f"`{function}`" if i == 0 else ""
                    out.append(f"| {fn} | {res.chapter} | {_md(res.check)} | {_md(res.detail)} |")
        deviations = r.deviations()
        if deviations:
            out += ["", f"## {r.name}: deviations, documented", "", f"Listed in `{r.deviations_file}`.", ""]
            out += ["| function | chapter | check | first line of the error | reason |", "|---|---|---|---|---|"]
            for function, results in deviations.items():
                for i, res in enumerate(results):
                    fn = f"`{function}`" if i == 0 else ""
                    out.append(
                        f"| {fn} | {res.chapter} | {_md(res.check)} | {_md(res.detail)} | {_md(res.reason, 1000)} |"
                    )
    return "\n".join(out) + "\n"


def _md(s: str, limit: int = 300) -> str:
    return s.replace("|", "\\|").replace("\n", " ")[:limit]


# --- json -----------------------------------------------------------------------------------------
def to_json(reports: Sequence[NamespaceReport], meta: dict[str, Any]) -> str:
    doc = {"tool": "conformance", "tool_version": TOOL_VERSION, **meta, "namespaces": [r.to_json() for r in reports]}
    return json.dumps(doc, indent=1, default=str) + "\n"
