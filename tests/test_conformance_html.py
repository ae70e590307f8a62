"""The HTML report (``conformance/html.py``), checked as a person sees it, in headless Chromium.

The page is built from a small run the tests make: a namespace that is array_api_strict (NumPy
underneath: seconds, no compilation) with three deliberate faults (``negative`` returns its
input, ``exp`` is NaN at -infinity and at zero, ``tile`` is missing), one of them listed as a
documented deviation, compared with an earlier report written here. In the browser: the matrix's
numbers equal the JSON's, the filters hide what they should, a failure's reproducer is on the page
and reproduces the failure when run, nothing is fetched from outside the file, and nothing is
logged to the console as an error.

The browser is Debian's Chromium (``apt-get install chromium``, as .ci/run does), driven by
Playwright (the ``test`` extra); ``playwright install`` downloads a browser, which this project's
machines cannot. Without either, the browser tests are skipped with the reason; a browser that is
there but does not start is a failure. ``CHROMIUM=PATH`` names another Chromium binary.

``CONFORMANCE_SCREENSHOT_REPORT=REPORT.json`` also draws that report and writes its screenshot
for docs/conformance.md (``docs/conformance-report.png``), after the same checks of its matrix.
"""

from __future__ import annotations

import io
import json
import os
import re
import runpy
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

array_api_strict = pytest.importorskip("array_api_strict")
pytest.importorskip("hypothesis")

from conformance import cli, compare  # noqa: E402
from conformance import html as page  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NAME = "conformance_page_namespace"
NAMESPACE_SOURCE = '''"""array_api_strict with three deliberate faults, for tests/test_conformance_html.py."""

import array_api_strict as _strict


def __getattr__(name):
    if name == "tile":  # missing
        raise AttributeError(name)
    return getattr(_strict, name)


def negative(x, /):
    return _strict.positive(x)  # the input, not its negation


def exp(x, /):
    out = _strict.exp(x)
    if _strict.isdtype(out.dtype, "real floating"):  # NaN at -infinity (the standard: +0) and at zeros (1)
        return _strict.where((x == -_strict.inf) | (x == 0), _strict.asarray(_strict.nan, dtype=out.dtype), out)
    return out
'''
AT_MINUS_INF = "If ``x_i`` is ``-infinity``, the result is ``+0``."
AT_PLUS_ZERO = "If ``x_i`` is ``+0``, the result is ``1``."
REASON = "exp(-infinity) is NaN here, as this test namespace's documentation says"
FUNCTIONS = "negative,exp,tile"

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Headless, and nothing that reaches for the network: without these the closed network of the
# project's machines refuses Chromium's background connections at every start
FLAGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT_FOR_DOCS = ROOT / "docs" / "conformance-report.png"


# --- the report the page is drawn from ------------------------------------------------------------
def _earlier_report() -> dict[str, Any]:
    """An earlier report: ``negative`` passed then (a new failure now), ``abs`` was missing (fixed now)."""
    results = [
        {"chapter": "Elementwise functions", "function": "negative", "check": "properties", "status": "passed"},
        {"chapter": "API names", "function": "abs", "check": "present", "status": "failed", "detail": "abs is missing"},
    ]
    return {"tool": "conformance", "spec_version": "2025.12", "source": "bundled", "namespaces": [
        {"namespace": NAME, "source": "bundled", "ok": False, "results": results}
    ]}  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of the command line on the faulty namespace: its exit status, output, JSON and page."""
    tmp = tmp_path_factory.mktemp("page")
    (tmp / f"{NAME}.py").write_text(NAMESPACE_SOURCE)
    deviations = tmp / "deviations.txt"
    deviations.write_text(f"# {REASON}\nSpecial cases :: exp :: {AT_MINUS_INF}\n")
    earlier = tmp / "earlier.json"
    earlier.write_text(json.dumps(_earlier_report()))
    argv = [NAME, "--functions", FUNCTIONS, "--max-examples", "10", "--deviations", str(deviations)]
    argv += ["--json", str(tmp / "report.json"), "--compare", str(earlier), "--no-progress"]
    sys.path.insert(0, str(tmp))
    try:
        out = io.StringIO()
        with redirect_stdout(out):
            status = cli.main(argv)
    finally:
        sys.path.remove(str(tmp))
        sys.modules.pop(NAME, None)
    return {
        "tmp": tmp,
        "status": status,
        "stdout": out.getvalue(),
        "doc": json.loads((tmp / "report.json").read_text()),
        "page": tmp / "report.html",
    }


def test_the_run_writes_the_page_beside_its_json_report_and_says_where(run):
    assert run["status"] == 1
    assert run["page"].is_file()
    assert f"HTML report: {run['page']}" in run["stdout"]
    doc = run["doc"]
    # every failure is new: the earlier report had negative passing and no other check that fails now
    failed = doc["namespaces"][0]["totals"]["failed"]
    assert f"since {run['tmp'] / 'earlier.json'}: {NAME}: {failed} new failures, 1 fixed" in run["stdout"]
    assert doc["exit_status"] == 1 and doc["duration_s"] > 0 and doc["finished"]
    (ns,) = doc["namespaces"]
    assert set(ns["failures"]) >= {"negative", "exp", "tile"}
    assert ns["totals"]["deviation"] == 1


def test_the_page_is_self_contained(run):
    text = run["page"].read_text("utf-8")
    assert "<script src" not in text and "<link" not in text and "@import" not in text and "url(" not in text
    outside = set(re.findall(r'(?:href|src)="(https?:[^"]*)"', text))
    # the only references outside the page are plain links to the standard's pages
    assert outside and all(u.startswith("https://data-apis.org/array-api/2025.12/") for u in outside), outside


def test_the_page_is_drawn_from_the_json_report_alone(run, tmp_path):
    """``python -m conformance.html`` draws the same page from the saved JSON (the run adds nothing
    the JSON does not have)."""
    again = tmp_path / "again.html"
    cmd = [sys.executable, "-m", "conformance.html", str(again), str(run["tmp"] / "report.json")]
    cmd += ["--compare", str(run["tmp"] / "earlier.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert again.read_text("utf-8") == run["page"].read_text("utf-8")


def test_upstream_results_go_in_the_same_page(run, tmp_path):
    upstream = {
        "tool": "conformance", "spec_version": "2025.12", "source": "upstream", "max_examples": 100,
        "namespaces": [{
            "namespace": NAME, "source": "upstream", "ok": False,
            "upstream": {"revision": "55fcc60abcdef", "pinned": "55fcc60abcdef", "command": "pytest array_api_tests/"},
            "results": [
                {"chapter": "Sorting functions", "function": "sort", "check": "test_sort", "status": "passed"},
                {"chapter": "Elementwise functions", "function": "negative", "check": "test_negative",
                 "status": "failed", "detail": "AssertionError: out[0]=1, should be -1"},
            ],
        }],
    }  # fmt: skip
    text = page.render([run["doc"], upstream])
    assert f"{NAME} (upstream)" in text and "AssertionError: out[0]=1, should be -1" in text
    assert "55fcc60abcde" in text and "the upstream suite, data-apis/array-api-tests" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "--compare {path}: no such file"),
        ("{not json", "--compare {path}: not JSON"),
        ('{"namespaces": 3}', "--compare {path}: not a JSON report of python -m conformance"),
        ('{"namespaces": [{"namespace": "xp", "results": [{"chapter": 1}]}]}', "the results of xp are missing"),
    ],
)
def test_a_bad_compare_file_is_a_usage_error_before_any_check_runs(tmp_path, monkeypatch, capsys, content, message):
    path = tmp_path / "old.json"
    if content is not None:
        path.write_text(content)
    monkeypatch.setattr(cli, "load", lambda name: pytest.fail("the checks started"))  # refused up front
    assert cli.main(["array_api_strict", "--compare", str(path), "--no-progress", "--no-html"]) == 2
    assert message.format(path=path) in capsys.readouterr().err


def test_an_html_file_in_a_missing_folder_is_a_usage_error(tmp_path, capsys):
    target = tmp_path / "nowhere" / "page.html"
    assert cli.main(["array_api_strict", "--html", str(target), "--no-progress"]) == 2
    assert f"--html {target}: the folder" in capsys.readouterr().err


def test_the_page_goes_to_the_current_folder_by_default_and_not_at_all_with_no_html(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["array_api_strict", "--checks", "names", "--no-progress"]) == 0
    assert (tmp_path / cli.DEFAULT_HTML).is_file()
    assert f"HTML report: {cli.DEFAULT_HTML}" in capsys.readouterr().out
    (tmp_path / cli.DEFAULT_HTML).unlink()
    assert cli.main(["array_api_strict", "--checks", "names", "--no-progress", "--no-html"]) == 0
    assert not (tmp_path / cli.DEFAULT_HTML).exists()


def test_changes_since_an_earlier_report(run):
    (change,) = compare.changes(_earlier_report(), run["doc"])
    # a check that passed before comes first; then the checks the earlier report did not have
    assert [(before, r["function"], r["check"]) for before, r in change.new_failures][:1] == [
        ("passed", "negative", "properties")
    ]
    assert {before for before, _ in change.new_failures[1:]} == {compare.ABSENT}
    assert [(r["function"], now) for r, now in change.fixed] == [("abs", "passed")]
    assert change.added == len(run["doc"]["namespaces"][0]["results"]) - 2


# --- in the browser ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed: python -m pip install -e '.[test]'")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium (Debian's package), as .ci/run does")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)  # a fresh profile in a new folder
        yield b
        b.close()


class Seen:
    """A page open in the browser, with what it logged and what it asked for."""

    def __init__(self, browser: Any, path: Path, width: int = 1280, height: int = 900) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        start = time.monotonic()
        self.page.goto(path.as_uri(), wait_until="load")
        self.load_s = time.monotonic() - start
        self.url = path.as_uri()

    def close(self) -> None:
        self.page.close()

    def visible_rows(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "#function-table tbody tr", "rows => rows.filter(r => r.offsetParent !== null).map(r => r.dataset.name)"
        )


def matrix_as_seen(seen: Seen) -> dict[str, dict[str, dict[str, int]]]:
    """The matrix's numbers as a person reads them: chapter -> namespace -> status -> count
    (a status the cell does not show counts 0)."""
    table: dict[str, dict[str, dict[str, int]]] = {}
    for row in seen.page.locator("table.matrix tr[data-chapter]").all():
        chapter = row.get_attribute("data-chapter")
        for cell in row.locator("td").all():
            counts = dict.fromkeys(page.STATUSES, 0)
            for n in cell.locator("span.n").all():
                assert n.is_visible()
                symbol, number = n.inner_text().split()
                status = n.get_attribute("data-status")
                assert symbol == page.SYMBOL[status]  # told by a symbol, not colour alone
                counts[status] = int(number)
            table.setdefault(chapter, {})[cell.get_attribute("data-ns")] = counts
    return table


def matrix_in_json(doc: dict[str, Any]) -> dict[str, dict[str, dict[str, int]]]:
    table: dict[str, dict[str, dict[str, int]]] = {}
    for ns in doc["namespaces"]:
        for chapter, counts in [*ns["chapters"].items(), ("total", ns["totals"])]:
            table.setdefault(chapter, {})[ns["namespace"]] = {s: counts.get(s, 0) for s in page.STATUSES}
    return table


def test_the_matrix_shows_the_json_numbers(browser, run):
    seen = Seen(browser, run["page"])
    try:
        assert matrix_as_seen(seen) == matrix_in_json(run["doc"])
        assert seen.errors == []
        assert all(u.startswith("file:") or u.startswith("data:") for u in seen.requests), seen.requests
        # a cell with failures links to that chapter of that namespace
        seen.page.locator('tr[data-chapter="Elementwise functions"] a.cell').first.click()
        target = seen.page.locator(":target")
        assert "Elementwise functions" in target.locator("h4").inner_text()
        # negative, and exp (NaN at zero, which the property's inputs have too)
        assert {a.locator("h6 code").inner_text() for a in target.locator("article.result.failed").all()} == {
            "negative",
            "exp",
        }
        assert target.is_visible() and target.bounding_box()["y"] < 900
        seen.page.screenshot(path=str(run["tmp"] / "page.png"))
        assert (run["tmp"] / "page.png").stat().st_size > 20_000
    finally:
        seen.close()


def test_changes_are_at_the_top(browser, run):
    seen = Seen(browser, run["page"])
    try:
        sections = seen.page.eval_on_selector_all("main > section", "s => s.map(e => e.id)")
        assert sections[:3] == ["summary", "changes", "chapters"]
        new = seen.page.locator("#changes table.new-failures tbody tr").first
        assert "negative" in new.inner_text() and "passed" in new.inner_text()
        new.locator("a").click()  # to the failure itself
        assert seen.page.locator(":target code").first.inner_text() == "negative"
        assert "abs" in seen.page.locator("#changes table.fixed").inner_text()
    finally:
        seen.close()


def test_filtering_the_functions(browser, run):
    seen = Seen(browser, run["page"])
    try:
        names = {r["function"].lower() for r in run["doc"]["namespaces"][0]["results"]}
        assert set(seen.visible_rows()) == names
        seen.page.keyboard.press("/")  # from the keyboard
        assert seen.page.evaluate("document.activeElement.id") == "filter-name"
        seen.page.keyboard.type("neg")
        assert set(seen.visible_rows()) == {n for n in names if "neg" in n} == {"negative", "array.__neg__"}
        assert seen.page.locator("#filter-count").inner_text() == f"2 of {len(names)} functions shown"
        seen.page.fill("#filter-name", "")
        seen.page.select_option("#filter-status", "failed")
        failing = {f.lower() for f in run["doc"]["namespaces"][0]["failures"]}
        assert set(seen.visible_rows()) == failing and {"negative", "exp", "tile"} <= failing
        seen.page.select_option("#filter-status", "deviation")
        assert set(seen.visible_rows()) == {"exp"}
        seen.page.click("button[type=reset]")
        # the page applies the reset filters after the form's own reset, from a zero-delay timer
        seen.page.wait_for_function(
            "n => [...document.querySelectorAll('#function-table tbody tr')].filter(r => r.offsetParent !== null).length === n",
            arg=len(names),
            timeout=5000,
        )
        assert set(seen.visible_rows()) == names
        assert seen.errors == []
    finally:
        seen.close()


def test_a_failures_reproducer_is_on_the_page_and_reproduces_it(browser, run, tmp_path):
    seen = Seen(browser, run["page"])
    try:
        seen.page.fill("#filter-name", "negative")
        seen.page.locator('#function-table tr[data-name="negative"] td.failed a').click()
        failure = seen.page.locator(":target")
        assert "negative" in failure.locator("h6").inner_text()
        assert "The standard" in failure.inner_text() and "negative(x: array, /) -> array" in failure.inner_text()
        script = failure.locator("pre.reproducer").inner_text()
    finally:
        seen.close()
    assert script.startswith(f"# {NAME}: negative [Elementwise functions]")
    assert f"import {NAME} as xp" in script and "out = xp.negative(x)" in script
    path = tmp_path / "reproduce.py"
    path.write_text(script)
    env = dict(os.environ, PYTHONPATH=str(run["tmp"]))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    # and it shows the failure: the result is not the negation of the input
    sys.path.insert(0, str(run["tmp"]))
    try:
        found = runpy.run_path(str(path))
    finally:
        sys.path.remove(str(run["tmp"]))
        sys.modules.pop(NAME, None)
    x, out = found["x"], found["out"]
    assert bool(array_api_strict.any(out != array_api_strict.negative(x)))


def test_a_special_cases_reproducer_and_the_standards_words(browser, run, tmp_path):
    seen = Seen(browser, run["page"])
    try:
        articles = seen.page.locator("article.result.failed", has_text="the result is")
        case = articles.filter(has_text="+0").filter(has_text="exp").first
        text = case.inner_text()
        assert "For real-valued floating-point operands," in text  # the spec's words, with their context
        assert AT_PLUS_ZERO.replace("``", "") in text.replace("\n", " ")
        script = case.locator("pre.reproducer").inner_text()
        deviation = seen.page.locator("article.result.deviation")
        assert deviation.count() == 1 and REASON in deviation.inner_text()
    finally:
        seen.close()
    path = tmp_path / "case.py"
    path.write_text(script)
    env = dict(os.environ, PYTHONPATH=str(run["tmp"]))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "nan" in done.stdout  # exp(+0) printed as NaN: the failure, reproduced


def test_a_narrow_window_and_print(browser, run):
    seen = Seen(browser, run["page"], width=380, height=800)
    try:
        # nothing wider than the window but the tables, which scroll inside their own boxes
        assert seen.page.evaluate("document.documentElement.scrollWidth") <= 380
        assert seen.page.locator("#function-filters").is_visible()
        seen.page.emulate_media(media="print")
        assert not seen.page.locator("nav").is_visible() and not seen.page.locator("#function-filters").is_visible()
        assert seen.page.locator("table.matrix").is_visible()
        closed = "document.querySelectorAll('details:not([open])').length"
        folded = seen.page.evaluate(closed)
        assert folded > 0
        seen.page.evaluate("window.dispatchEvent(new Event('beforeprint'))")  # what printing does first
        assert seen.page.evaluate(closed) == 0
        seen.page.evaluate("window.dispatchEvent(new Event('afterprint'))")
        assert seen.page.evaluate(closed) == folded
        assert seen.errors == []
    finally:
        seen.close()


def test_screenshot_for_the_docs(browser, tmp_path):
    source = os.environ.get("CONFORMANCE_SCREENSHOT_REPORT")
    if not source:
        pytest.skip("set CONFORMANCE_SCREENSHOT_REPORT=REPORT.json to redraw docs/conformance-report.png from it")
    doc = compare.load(source, "CONFORMANCE_SCREENSHOT_REPORT")
    target = tmp_path / "report.html"
    start = time.monotonic()
    size = page.write(target, [doc])
    drawn_s = time.monotonic() - start
    seen = Seen(browser, target, width=1200, height=1000)
    try:
        assert matrix_as_seen(seen) == matrix_in_json(doc)
        assert seen.errors == []
        rendered = seen.page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        # from the top of the page to the end of the matrix: the summary and the chapters
        bottom = seen.page.locator("#chapters").bounding_box()
        height = bottom["y"] + bottom["height"] + 16
        seen.page.screenshot(
            path=str(SCREENSHOT_FOR_DOCS), full_page=True, clip={"x": 0, "y": 0, "width": 1200, "height": height}
        )
    finally:
        seen.close()
    print(f"\npage {size / 1024:.0f} KiB, written in {drawn_s:.2f} s, loaded in Chromium in {rendered:.0f} ms")
    assert SCREENSHOT_FOR_DOCS.stat().st_size > 20_000
