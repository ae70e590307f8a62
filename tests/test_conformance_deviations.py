"""Documented deviations (``conformance/deviations-<namespace>.txt``): a listed failure is reported
with its reason and does not fail the run; an unlisted failure does; so does a listed check that
passes or no longer exists (a stale entry), naming it.

The namespace under test wraps array_api_strict (NumPy underneath: quick) with ``exp`` broken at
-infinity (1 instead of +0) and, in one variant, at +infinity (NaN instead of +infinity); only
the special cases of ``exp`` are checked.
"""

from __future__ import annotations

import functools
import json
import sys
import types
from pathlib import Path

import pytest

array_api_strict = pytest.importorskip("array_api_strict")
pytest.importorskip("hypothesis")

from conformance import cli, deviations, report  # noqa: E402
from conformance.model import DEVIATION, FAILED, PASSED  # noqa: E402

NAME = "conformance_test_deviating_namespace"
AT_MINUS_INF = "If ``x_i`` is ``-infinity``, the result is ``+0``."
AT_PLUS_INF = "If ``x_i`` is ``+infinity``, the result is ``+infinity``."
REASON = "exp(-infinity) is 1 here, as the namespace's documentation says"
ONLY_EXP = ["--checks", "special", "--functions", "exp", "--no-progress"]


def make_namespace(broken_at: tuple[float, ...]) -> types.ModuleType:
    """array_api_strict with ``exp`` wrong at the given points: 1 at -inf, NaN at +inf."""
    s = array_api_strict
    module = types.ModuleType(NAME)
    for name in dir(s):
        if not name.startswith("__") or name in ("__array_api_version__", "__array_namespace_info__"):
            setattr(module, name, getattr(s, name))

    @functools.wraps(s.exp)
    def exp(x, /):
        out = s.exp(x)
        if s.isdtype(out.dtype, "real floating"):
            for point in broken_at:
                wrong = 1.0 if point < 0 else float("nan")
                out = s.where(x == point, s.asarray(wrong, dtype=out.dtype), out)
        return out

    module.exp = exp
    return module


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "deviations.txt"
    path.write_text(text)
    return path


LISTED = f"# {REASON}\nSpecial cases :: exp :: {AT_MINUS_INF}\n"


def run(monkeypatch, tmp_path, broken_at, deviations_text, *extra):
    """``python -m conformance`` on the namespace: its exit status, stdout, stderr and JSON report."""
    monkeypatch.setitem(sys.modules, NAME, make_namespace(broken_at))
    path = write(tmp_path, deviations_text)
    jfile, mfile = tmp_path / "r.json", tmp_path / "r.md"
    argv = [NAME, *ONLY_EXP, "--deviations", str(path), "--json", str(jfile), "--markdown", str(mfile), *extra]
    rc = cli.main(argv)
    doc = json.loads(jfile.read_text()) if jfile.exists() else None
    return rc, path, doc, mfile.read_text() if mfile.exists() else ""


def test_a_documented_deviation_does_not_fail_the_run(monkeypatch, tmp_path, capsys):
    rc, _, doc, md = run(monkeypatch, tmp_path, (-float("inf"),), LISTED)
    out = capsys.readouterr().out
    assert rc == 0, out
    # the text table: a dev column, the deviation counted there and not as a failure
    assert "pass  fail  skip   dev" in out
    row = next(line for line in out.splitlines() if line.startswith("Special cases"))
    passed, failed, _skipped, documented = (int(v) for v in row.split()[2:])
    assert (failed, documented) == (0, 1) and passed > 0
    assert "1 documented deviation" in out and REASON in out and AT_MINUS_INF in out
    (ns,) = doc["namespaces"]
    assert ns["ok"] is True and ns["totals"][DEVIATION] == 1 and ns["totals"][FAILED] == 0
    assert ns["chapters"]["Special cases"][DEVIATION] == 1
    (listed,) = ns["deviations"]["exp"]
    assert listed["check"] == AT_MINUS_INF and listed["reason"] == REASON and "got 1.0" in listed["detail"]
    assert ns["deviations_file"].endswith("deviations.txt")
    assert f"## {NAME}: deviations, documented" in md and REASON in md
    assert f"| {NAME} ✓ | {NAME} ✗ | {NAME} skip | {NAME} dev |" in md


def test_an_undocumented_failure_fails_the_run(monkeypatch, tmp_path, capsys):
    rc, _, doc, _ = run(monkeypatch, tmp_path, (-float("inf"), float("inf")), LISTED)
    assert rc == 1
    (ns,) = doc["namespaces"]
    statuses = {r["check"]: r["status"] for r in ns["results"]}
    assert statuses[AT_MINUS_INF] == DEVIATION and statuses[AT_PLUS_INF] == FAILED
    assert [r["check"] for r in ns["failures"]["exp"]] == [AT_PLUS_INF]
    assert "1 failed in 1 function" in capsys.readouterr().out


def test_a_listed_check_that_passes_is_a_stale_entry(monkeypatch, tmp_path, capsys):
    rc, path, doc, _ = run(monkeypatch, tmp_path, (), LISTED)
    assert rc == 1
    out = capsys.readouterr().out
    assert f"stale deviation: {path}:2 lists it, but the check passed: remove that entry" in out
    (ns,) = doc["namespaces"]
    (stale,) = ns["failures"]["exp"]
    assert stale["check"] == AT_MINUS_INF and stale["status"] == FAILED
    # the stale entry replaces the check's pass: each check is counted once
    assert not any(r["check"] == AT_MINUS_INF and r["status"] == PASSED for r in ns["results"])


def test_a_listed_check_that_no_longer_exists_is_a_stale_entry(monkeypatch, tmp_path, capsys):
    text = LISTED + "\n# a check that was renamed\nAPI names :: exp :: present under another name\n"
    rc, path, doc, _ = run(monkeypatch, tmp_path, (-float("inf"),), text, "--checks", "special,names")
    assert rc == 1
    assert f"{path}:5 lists it, but no such check of exp ran in API names: remove that entry" in capsys.readouterr().out
    (ns,) = doc["namespaces"]
    assert ns["totals"][DEVIATION] == 1 and [r["chapter"] for r in ns["failures"]["exp"]] == ["API names"]


def test_entries_of_checks_the_run_left_out_are_not_stale(monkeypatch, tmp_path, capsys):
    """``--functions exp`` checks no special case of multiply: its entry is neither applied nor stale."""
    other = "If either ``x1_i`` or ``x2_i`` is ``NaN``, the result is ``NaN``."
    text = LISTED + f"\n# not checked in this run\nSpecial cases :: multiply :: {other}\n"
    rc, _, doc, _ = run(monkeypatch, tmp_path, (-float("inf"),), text)
    assert rc == 0, capsys.readouterr().out
    assert doc["namespaces"][0]["totals"][FAILED] == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"Special cases :: exp :: {AT_MINUS_INF}\n", "has no comment above it"),
        (f"# why\n\nSpecial cases :: exp :: {AT_MINUS_INF}\n", "has no comment above it"),  # a blank line between
        (f"# why\nSpecial cases :: exp {AT_MINUS_INF}\n", "not CHAPTER :: FUNCTION :: CHECK"),
        ("# why\nSpecial cases :: exp :: If x_i is -infinity, the result is 1.\n", "not a special case of 'exp'"),
        ("# why\nSpecial case :: exp :: present\n", "unknown chapter 'Special case'"),
        (LISTED + LISTED, "listed twice"),
    ],
)
def test_a_malformed_deviations_file_is_refused(tmp_path, capsys, text, message):
    path = write(tmp_path, text)
    with pytest.raises(deviations.DeviationsError, match=message):
        deviations.load(path)
    assert cli.main(["array_api_strict", *ONLY_EXP, "--deviations", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_deviations_are_for_the_bundled_checks(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["array_api_strict", "--upstream", str(tmp_path), "--deviations", str(write(tmp_path, LISTED))])
    assert exit_.value.code == 2 and "--xfails" in capsys.readouterr().err


def test_text_report_lists_reasons_once_per_run_of_deviations():
    rep = cli.run_bundled(
        NAME,
        make_namespace((-float("inf"),)),
        version="2025.12",
        max_examples=2,
        groups=["special"],
        functions={"exp"},
        deviations=deviations.Deviations(
            "deviations-x.txt", (deviations.Entry("Special cases", "exp", AT_MINUS_INF, REASON, 2),)
        ),
    )
    text = report.text([rep], {"spec_version": "2025.12", "source": "bundled", "max_examples": 2})
    assert "1 deviation, documented in deviations-x.txt, with the reasons:" in text
    assert text.count("why: " + REASON) == 1


def test_the_default_file_is_the_namespaces():
    assert deviations.default_file("xp") is None  # xp has nothing to excuse
    sparse = deviations.for_namespace("xp.sparse")
    assert sparse is not None and sparse.label == "conformance/deviations-xp.sparse.txt"
    assert sparse.entries and all(e.reason for e in sparse.entries)


def test_xp_sparse_deviations_are_exactly_its_special_case_failures():
    """The listed special cases of xp.sparse fail as documented, and nothing else of those functions
    fails: the file is neither stale nor short (the main job exits 0 only then)."""
    xp_sparse = pytest.importorskip("xp.sparse")
    listed = deviations.for_namespace("xp.sparse")
    assert listed is not None
    functions = {e.function for e in listed.entries if e.chapter == "Special cases"}
    rep = cli.run_bundled(
        "xp.sparse",
        xp_sparse,
        version="2025.12",
        max_examples=2,
        groups=["special"],
        functions=functions,
        deviations=listed,
    )
    assert rep.ok, rep.failures()
    assert rep.totals()[DEVIATION] == len([e for e in listed.entries if e.chapter == "Special cases"])
