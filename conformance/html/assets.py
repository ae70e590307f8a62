"""The stylesheet and the script of the HTML report (:mod:`conformance.html`), inlined in the page.

They are Python strings rather than files beside the module so that the page needs nothing but
the package's modules (no package data to install, nothing to find at run time).

The script is progressive: without it the page is complete (every table, failure and reproducer
is in the HTML). With it: the filters of the function table appear and work, a link into a closed
``<details>`` opens it, printing opens every ``<details>``, and reproducers get a Copy button.
"""

STYLE = """
:root {
  --fg: #1f2328; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0; --code-bg: #f6f8fa; --link: #0349b4;
  --pass: #116329; --pass-bg: #dafbe1; --fail: #a40e26; --fail-bg: #ffebe9; --skip: #59636e;
  --skip-bg: #eff2f5; --dev: #7d4e00; --dev-bg: #fff8c5; --focus: #0969da; --mark: #fff8c5;
}
@media (prefers-color-scheme: dark) {
  :root {
    --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --code-bg: #151b23; --link: #71b7ff;
    --pass: #56d364; --pass-bg: #12261e; --fail: #ff9492; --fail-bg: #2d1315; --skip: #9198a1;
    --skip-bg: #212830; --dev: #e3b341; --dev-bg: #2e2410; --focus: #4493f8; --mark: #3d2f00;
  }
}
* { box-sizing: border-box; }
html { scroll-padding-top: 3.5rem; }
body {
  margin: 0 auto; max-width: 84rem; padding: 0 1rem 3rem; color: var(--fg); background: var(--bg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Liberation Sans", Arial, sans-serif;
}
code, pre, kbd { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.88em; }
pre { background: var(--code-bg); border: 1px solid var(--line); border-radius: 6px; padding: 0.6rem 0.8rem; margin: 0.2rem 0; overflow-x: auto; }
pre.error, pre.example { white-space: pre-wrap; overflow-wrap: anywhere; }
kbd { border: 1px solid var(--line); border-radius: 4px; padding: 0 0.3em; }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible, main:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px;
}
h1 { font-size: 1.7rem; margin: 1rem 0 0.3rem; }
h1 .sub { font-weight: 400; color: var(--muted); font-size: 1.1rem; }
h2 { font-size: 1.35rem; margin: 2rem 0 0.6rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
h3 { font-size: 1.2rem; margin: 1.6rem 0 0.4rem; }
h4 { font-size: 1.05rem; margin: 1.2rem 0 0.3rem; }
h5.group { font-size: 0.95rem; margin: 0.8rem 0 0.2rem; }
h6 { font-size: 0.95rem; margin: 0.1rem 0 0.3rem; font-weight: 600; }
.lede { margin: 0.2rem 0 0.6rem; }
.skip { position: absolute; left: -10000px; }
.skip:focus { left: 1rem; top: 0.5rem; z-index: 20; background: var(--bg); padding: 0.4rem 0.8rem; border: 2px solid var(--focus); }
.vh { position: absolute !important; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
nav { position: sticky; top: 0; z-index: 10; background: var(--bg); border-bottom: 1px solid var(--line); }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.1rem 1.1rem; margin: 0; padding: 0.45rem 0; }
.verdict { margin: 0.3rem 0; padding: 0.45rem 0.8rem; border: 1px solid; border-left-width: 5px; border-radius: 6px; }
.verdict.passed { background: var(--pass-bg); border-color: var(--pass); }
.verdict.failed { background: var(--fail-bg); border-color: var(--fail); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1.2rem; margin: 0.4rem 0 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
dl.facts ul { margin: 0; padding-left: 1.1rem; }
.legend { color: var(--muted); }
.st { display: inline-block; white-space: nowrap; border: 1px solid; border-radius: 1em; padding: 0 0.55em; font-size: 0.85em; font-weight: 600; }
.st.passed { color: var(--pass); } .st.failed { color: var(--fail); } .st.skipped { color: var(--skip); } .st.deviation { color: var(--dev); }
.scroll { overflow-x: auto; max-width: 100%; position: relative; }  /* holds its hidden labels, which are positioned */
table { border-collapse: collapse; margin: 0.3rem 0; }
caption { text-align: left; font-weight: 600; padding: 0.3rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.28rem 0.6rem; border-bottom: 1px solid var(--line); }
thead th { border-bottom: 2px solid var(--line); white-space: nowrap; }
table.matrix th[scope="row"], table.functions th[scope="row"] { position: sticky; left: 0; background: var(--bg); z-index: 1; }
table.matrix td { white-space: nowrap; padding: 0; }
table.matrix tfoot th, table.matrix tfoot td { border-top: 2px solid var(--line); font-weight: 600; }
a.cell { display: block; padding: 0.28rem 0.6rem; color: inherit; text-decoration: none; }
a.cell:hover .counts, a.cell:focus .counts { text-decoration: underline; }
.n { display: inline-block; min-width: 3.2em; margin-right: 0.5em; font-variant-numeric: tabular-nums; }
.n.passed { color: var(--pass); } .n.failed { color: var(--fail); font-weight: 700; }
.n.skipped { color: var(--skip); } .n.deviation { color: var(--dev); font-weight: 600; }
td.has-failed { background: var(--fail-bg); } td.has-deviation { background: var(--dev-bg); }
td.absent, .none { color: var(--muted); }
table.functions td.fs { white-space: nowrap; font-variant-numeric: tabular-nums; }
table.functions td.fs.failed { background: var(--fail-bg); color: var(--fail); font-weight: 700; }
table.functions td.fs.deviation { background: var(--dev-bg); color: var(--dev); }
table.functions td.fs.skipped { color: var(--skip); }
table.functions td.fs.passed { color: var(--pass); }
table.functions td.fs a { color: inherit; }
table.functions td.chapter { color: var(--muted); font-size: 0.9em; }
.filters { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end; margin: 0.4rem 0 0.6rem; }
.filters label { display: flex; flex-direction: column; font-size: 0.9em; font-weight: 600; }
.filters input, .filters select, .filters button, button.copy { font: inherit; font-weight: 400; padding: 0.25rem 0.5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.filters input { min-width: 14rem; }
.filters output { color: var(--muted); align-self: center; }
section.namespace { border-top: 3px solid var(--line); margin-top: 1.5rem; }
section.chapter { margin-left: 0.2rem; }
.tally { font-weight: 400; color: var(--muted); font-size: 0.9em; }
article.result { border: 1px solid var(--line); border-left: 5px solid var(--fail); border-radius: 6px; padding: 0.4rem 0.8rem; margin: 0.6rem 0; }
article.result.deviation { border-left-color: var(--dev); }
article.result dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.2rem 1rem; margin: 0.2rem 0; }
article.result dt { font-weight: 600; color: var(--muted); }
article.result dd { margin: 0; min-width: 0; }
blockquote { margin: 0; padding: 0.1rem 0.8rem; border-left: 3px solid var(--line); }
code.signature { white-space: pre-wrap; overflow-wrap: anywhere; }
.check { font-weight: 400; }
.reason { white-space: pre-wrap; }
.code { position: relative; }
button.copy { position: absolute; top: 0.35rem; right: 0.35rem; cursor: pointer; font-size: 0.85em; }
p.passed { line-height: 1.9; }
details > summary { cursor: pointer; margin: 0.3rem 0; }
.note { border-left: 3px solid var(--dev); padding-left: 0.6rem; }
:target { animation: mark 2s ease-out 1; }
@keyframes mark { from { background: var(--mark); } to { background: transparent; } }
footer { margin-top: 3rem; border-top: 1px solid var(--line); color: var(--muted); font-size: 0.9em; }
@media (max-width: 42rem) {
  body { padding: 0 0.6rem 2rem; font-size: 14px; }
  nav { position: static; }
  html { scroll-padding-top: 0.5rem; }
  dl.facts, article.result dl { grid-template-columns: minmax(0, 1fr); }
  dl.facts dt, article.result dt { margin-top: 0.3rem; }
  .filters input { min-width: 0; width: 100%; }
  .filters label { flex: 1 1 100%; }
  .n { min-width: 0; margin-right: 0.4em; }
}
@media print {
  nav, .filters, .skip, button.copy { display: none !important; }
  body { max-width: none; padding: 0; font-size: 10pt; color: #000; background: #fff; }
  a { color: inherit; text-decoration: none; }
  .scroll { overflow: visible; }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; }
  table.matrix th[scope="row"], table.functions th[scope="row"] { position: static; }
  article.result, tr, pre { break-inside: avoid; }
  h2, h3, h4, h5, h6 { break-after: avoid; }
  section.namespace { break-before: page; }
  :target { animation: none; }
}
"""

SCRIPT = """
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };

  // The function table's filters: by name (a substring), and by status, in any namespace or one.
  var form = $("function-filters"), table = $("function-table");
  if (form && table) {
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var name = $("filter-name"), status = $("filter-status"), ns = $("filter-ns"), count = $("filter-count");
    var matches = function (row) {
      var q = name.value.trim().toLowerCase();
      if (q && row.getAttribute("data-name").indexOf(q) < 0) return false;
      var want = status.value;
      if (!want) return true;
      // one entry per namespace: the statuses of its checks of this function ("failed+passed"), or "absent"
      var all = row.getAttribute("data-statuses").split(" ").map(function (s) { return s.split("+"); });
      var checked = all.filter(function (s) { return s[0] !== "absent"; });
      var has = function (s, status) { return s.indexOf(status) >= 0; };
      if (want === "differs") {
        var failing = checked.filter(function (s) { return has(s, "failed"); }).length;
        return failing > 0 && failing < checked.length;
      }
      var chosen = ns.value === "" ? checked : [all[Number(ns.value)]];
      if (want === "passed") {
        return chosen.length > 0 && chosen.every(function (s) { return s.length === 1 && s[0] === "passed"; });
      }
      return chosen.some(function (s) { return has(s, want); });
    };
    var apply = function () {
      var shown = 0;
      rows.forEach(function (row) { var ok = matches(row); row.hidden = !ok; if (ok) shown += 1; });
      count.textContent = shown + " of " + rows.length + " functions shown";
    };
    form.hidden = false;
    form.addEventListener("input", apply);
    form.addEventListener("change", apply);
    form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    document.addEventListener("keydown", function (e) {
      var t = document.activeElement && document.activeElement.tagName;
      if (e.key === "/" && !e.ctrlKey && !e.metaKey && t !== "INPUT" && t !== "SELECT" && t !== "TEXTAREA") {
        e.preventDefault();
        name.focus();
      }
    });
    apply();
  }

  // A link into a closed <details> (a skipped check, a passed list) opens it.
  var reveal = function () {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var el = id && document.getElementById(id);
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
  };
  window.addEventListener("hashchange", reveal);
  reveal();

  // Printing shows everything; what was closed closes again afterwards.
  var opened = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (d) { d.open = true; opened.push(d); });
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (d) { d.open = false; });
    opened = [];
  });

  // Copy a reproducer; where the clipboard is refused (some browsers from file://), select it instead.
  document.querySelectorAll("button.copy").forEach(function (button) {
    var code = button.parentElement.querySelector("code");
    var say = function (text) {
      button.textContent = text;
      window.setTimeout(function () { button.textContent = "Copy"; }, 2000);
    };
    var select = function () {
      var range = document.createRange();
      range.selectNodeContents(code);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      say("Selected: press Ctrl+C");
    };
    button.hidden = false;
    button.addEventListener("click", function () {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(code.textContent).then(function () { say("Copied"); }, select);
      } else {
        select();
      }
    });
  });
})();
"""
