"""The conformance tool (``python -m conformance``): it finds what is wrong with a namespace,
reports it (text, JSON, Markdown), exits non-zero on failures, and reads the upstream suite.

The broken namespace wraps array_api_strict (NumPy underneath: no compilation, so it is quick)
with three deliberate defects: a wrong promotion, a missing function, a wrong special case.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from subprocess_env import subprocess_env

array_api_strict = pytest.importorskip("array_api_strict")
pytest.importorskip("hypothesis")

from conformance import cli, report, spec, upstream  # noqa: E402
from conformance.checks import names  # noqa: E402
from conformance.model import FAILED, PASSED, NamespaceReport, Result  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BROKEN = "conformance_test_broken_namespace"


def make_broken() -> types.ModuleType:
    """array_api_strict with: ``result_type(int8, uint8)`` giving int8 (the standard: int16);
    no ``tile``; ``exp(-inf)`` giving 1 (the standard: +0)."""
    s = array_api_strict
    module = types.ModuleType(BROKEN)
    for name in dir(s):
        if not name.startswith("__") or name in ("__array_api_version__", "__array_namespace_info__"):
            setattr(module, name, getattr(s, name))
    del module.tile

    @functools.wraps(s.result_type)
    def result_type(*arrays_and_dtypes):
        if set(arrays_and_dtypes) == {s.int8, s.uint8}:
            return s.int8
        return s.result_type(*arrays_and_dtypes)

    @functools.wraps(s.exp)
    def exp(x, /):
        out = s.exp(x)
        if s.isdtype(out.dtype, "real floating"):
            out = s.where(x == -s.inf, s.asarray(1.0, dtype=out.dtype), out)
        return out

    module.result_type = result_type
    module.exp = exp
    return module


@pytest.fixture(scope="module")
def broken_report() -> NamespaceReport:
    return cli.run_bundled(BROKEN, make_broken(), version="2025.12", max_examples=4, functions={"exp", "tile", "add"})


def _failed(rep: NamespaceReport, chapter: str, function: str) -> list[Result]:
    return [r for r in rep.results if r.chapter == chapter and r.function == function and r.status == FAILED]


def test_reports_a_missing_function(broken_report):
    found = _failed(broken_report, "API names", "tile")
    assert found, "the tool did not report that `tile` is missing"
    assert "missing" in found[0].detail
    assert "tile" in broken_report.failures()


def test_reports_a_wrong_promotion(broken_report):
    found = [r for r in _failed(broken_report, "Type promotion", "result_type") if "int8, uint8" in r.check]
    assert found, "the tool did not report result_type(int8, uint8) == int8"
    assert "int8" in found[0].detail and "int16" in found[0].detail
    # the other entries of the table still pass
    assert any(r.function == "result_type" and r.status == PASSED for r in broken_report.results)


def test_reports_a_wrong_special_case(broken_report):
    pytest.importorskip("conformance.special_cases", reason="the special-case engine is not there yet")
    found = _failed(broken_report, "Special cases", "exp")
    assert found, "the tool did not report that exp(-infinity) is 1 instead of +0"
    assert any("-infinity" in r.check for r in found), [r.check for r in found]
    assert not _failed(broken_report, "Special cases", "add"), "add is not broken"


def test_a_correct_namespace_has_no_false_failures(broken_report):
    """Everything not deliberately broken passes on array_api_strict."""
    unexpected = [
        r
        for r in broken_report.results
        if r.status == FAILED
        and r.function not in ("tile", "result_type", "exp")
        and r.chapter != "Special cases"  # array_api_strict (NumPy) misses some of them
    ]
    assert not unexpected, [(r.chapter, r.function, r.check, r.detail) for r in unexpected]


def test_reports_and_exit_code(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, BROKEN, make_broken())
    jfile, mfile = tmp_path / "r.json", tmp_path / "r.md"
    argv = [BROKEN, "--functions", "tile,exp", "--max-examples", "3", "--json", str(jfile), "--markdown", str(mfile)]
    rc = cli.main([*argv, "--no-progress"])
    assert rc == 1
    text = capsys.readouterr().out
    assert "API names" in text and "total" in text
    assert "tile" in text and "is missing" in text
    doc = json.loads(jfile.read_text())
    assert doc["spec_version"] == "2025.12" and doc["source"] == "bundled"
    (ns,) = doc["namespaces"]
    assert ns["namespace"] == BROKEN and ns["ok"] is False
    assert ns["totals"]["failed"] == sum(len(v) for v in ns["failures"].values()) > 0
    assert "tile" in ns["failures"] and "result_type" in ns["failures"]
    assert ns["chapters"]["Type promotion"]["failed"] >= 1
    md = mfile.read_text()
    assert md.startswith("# Array API conformance")
    assert "| chapter |" in md and "`tile`" in md and "result_type(int8, uint8)" in md


def test_exit_code_zero_when_everything_passes(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where the default page goes (conformance-report.html)
    assert cli.main(["array_api_strict", "--checks", "names,inspection", "--no-progress"]) == 0
    assert "all " in capsys.readouterr().out
    assert (tmp_path / "conformance-report.html").stat().st_size > 0


def test_side_by_side_tables():
    a = NamespaceReport("aa", [Result("API names", "add", "present", PASSED)])
    b = NamespaceReport(
        "bb",
        [Result("API names", "add", "present", FAILED, "add is missing"), Result("Constants", "e", "value", PASSED)],
    )
    meta = {"spec_version": "2025.12", "source": "bundled", "max_examples": 3}
    text = report.text([a, b], meta)
    header = next(line for line in text.splitlines() if "aa" in line and "bb" in line)
    assert header.index("aa") < header.index("bb")
    row = next(line for line in text.splitlines() if line.startswith("API names"))
    assert row.split()[2:] == ["1", "0", "0", "0", "0", "1", "0", "0"]  # passed, failed, skipped, deviations
    assert "aa ✓ | aa ✗ | aa skip | aa dev | bb ✓" in report.markdown([a, b], meta)


def test_cli_smoke_on_xp():
    """``python -m conformance`` on xp, a few functions, few examples, in a fresh process."""
    cmd = [
        sys.executable,
        "-m",
        "conformance",
        "xp",
        "--functions",
        "add,sum",
        "--checks",
        "names,properties",
        "--max-examples",
        "2",
    ]
    # (xp's report in the child is the same on every backend: on the CPU where this process's is not)
    env = dict(subprocess_env(), JAX_ENABLE_X64=os.environ.get("JAX_ENABLE_X64", "0"))
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode in (0, 1), out.stderr[-2000:]
    assert "Array API conformance: standard 2025.12, bundled checks, 2 examples per property" in out.stdout
    assert "Elementwise functions" in out.stdout and "Statistical functions" in out.stdout


def test_namespaces_in_parallel_processes_report_like_one_process(tmp_path):
    """Two namespaces checked at once (one worker process each) give the reports they give one
    after the other."""
    argv = ["array_api_strict", "numpy", "--checks", "names,inspection", "--no-progress", "--json"]
    cmd = [sys.executable, "-m", "conformance"]
    env = dict(os.environ, JAX_ENABLE_X64=os.environ.get("JAX_ENABLE_X64", "0"))
    docs = []
    for jobs, name in (("2", "parallel.json"), ("1", "serial.json")):
        out = subprocess.run(
            [*cmd, *argv, str(tmp_path / name), "--jobs", jobs], cwd=ROOT, capture_output=True, text=True, env=env
        )
        assert out.returncode in (0, 1), out.stderr[-2000:]
        docs.append(json.loads((tmp_path / name).read_text()))
    parallel, serial = ({ns["namespace"]: (ns["totals"], ns["failures"]) for ns in d["namespaces"]} for d in docs)
    assert list(parallel) == ["array_api_strict", "numpy"]
    assert parallel == serial


# --- the inventory and its parts ------------------------------------------------------------------
def test_inventory_is_complete():
    inv = spec.inventory()
    assert inv["spec_version"] == "2025.12" and len(inv["namespace"]) == 155
    assert all(spec.chapter_of(n) != "API names" for n in inv["namespace"] if n != "__array_api_version__")
    for text in inv["signatures"].values():
        spec.parse_signature(text)
    assert spec.special_cases()["spec_version"] == "2025.12"
    assert "broadcast_shapes" not in spec.required("2024.12")["namespace"]
    assert "broadcast_shapes" in spec.required("2025.12")["namespace"]


def test_promotion_table_is_the_standards():
    t = spec.promotion_table()
    assert t["int8", "uint8"] == "int16" and t["uint32", "int32"] == "int64" and t["uint8", "uint8"] == "uint8"
    assert t["float32", "complex128"] == "complex128" and t["bool", "bool"] == "bool"
    assert ("int64", "uint64") not in t and ("int8", "float32") not in t and ("bool", "int8") not in t


def test_signature_comparison():
    import inspect

    expected = spec.parse_signature("squeeze(x: array, /, axis: Union[int, Tuple[int, ...]]) -> array")

    def good(x, /, axis): ...
    def kw_only_axis(x, /, *, axis): ...
    def renamed(x, /, axes): ...
    def lenient(x, axis): ...

    assert names.compare_signature(expected, inspect.signature(good)) == ([], [])
    assert names.compare_signature(expected, inspect.signature(kw_only_axis))[0]
    assert names.compare_signature(expected, inspect.signature(renamed))[0]
    failures, notes = names.compare_signature(expected, inspect.signature(lenient))
    assert not failures and notes == ["x should be positional-only"]
    expected = spec.parse_signature("sum(x: array, /, *, keepdims: bool = False) -> array")

    def wrong_default(x, /, *, keepdims=True): ...
    def sentinel_default(x, /, *, keepdims=None): ...

    assert names.compare_signature(expected, inspect.signature(wrong_default))[0]
    assert not names.compare_signature(expected, inspect.signature(sentinel_default))[0]


# --- upstream -------------------------------------------------------------------------------------
def test_pinned_revision_and_xp_xfails():
    assert len(upstream.pinned_revision()) == 40
    assert upstream.xfail_entries(upstream.HERE / "xfails-xp.txt") == []


def test_xfail_entries_need_comments(tmp_path):
    f = tmp_path / "xfails.txt"
    f.write_text("# why\narray_api_tests/test_a.py::test_x\n\narray_api_tests/test_b.py::test_y\n")
    with pytest.raises(ValueError, match="test_b.py::test_y"):
        upstream.xfail_entries(f)


def test_upstream_json_is_read_by_chapter_and_function():
    tests = [
        {
            "nodeid": "array_api_tests/test_operators_and_elementwise_functions.py::test_add[__iadd__(x1, x2)]",
            "outcome": "passed",
        },
        {"nodeid": "array_api_tests/test_has_names.py::test_has_names[linalg-matrix_norm]", "outcome": "passed"},
        {
            "nodeid": "array_api_tests/test_special_cases.py::test_unary[exp(x_i is -infinity) -> +0]",
            "outcome": "failed",
            "call": {"outcome": "failed", "crash": {"message": "AssertionError: out=1.0, should be +0\nmore"}},
        },
        {
            "nodeid": "array_api_tests/test_statistical_functions.py::test_std",
            "outcome": "skipped",
            "setup": {"longrepr": "('x.py', 3, 'Skipped: no float64')"},
        },
    ]
    got = [upstream._result(t) for t in tests]
    assert [(r.chapter, r.function, r.status) for r in got] == [
        ("Elementwise functions", "array.__iadd__", "passed"),
        ("API names", "linalg.matrix_norm", "passed"),
        ("Special cases", "exp", "failed"),
        ("Statistical functions", "std", "skipped"),
    ]
    assert got[2].detail == "AssertionError: out=1.0, should be +0"
    assert got[3].detail == "no float64"


@pytest.mark.skipif(
    not os.environ.get(upstream.ENV_VAR), reason=f"set {upstream.ENV_VAR} to an array-api-tests checkout"
)
def test_upstream_counts_match_direct_pytest(tmp_path):
    files = ["array_api_tests/test_sorting_functions.py", "array_api_tests/test_constants.py"]
    rep = upstream.run("array_api_strict", None, version="2025.12", max_examples=5, paths=files, show_progress=False)
    direct = tmp_path / "direct.json"
    cmd = upstream.command(direct, 5, files, None, [])
    env = dict(os.environ, ARRAY_API_TESTS_MODULE="array_api_strict", ARRAY_API_TESTS_VERSION="2025.12")
    subprocess.run(cmd, cwd=os.environ[upstream.ENV_VAR], env=env, capture_output=True, timeout=900)
    summary = json.loads(direct.read_text())["summary"]
    assert rep.totals()["passed"] == summary.get("passed", 0)
    assert rep.totals()["failed"] == summary.get("failed", 0) + summary.get("error", 0)


def test_special_cases_chapter_is_skipped_without_its_engine(monkeypatch):
    monkeypatch.setitem(sys.modules, "conformance.special_cases", None)  # import raises ImportError
    rep = cli.run_bundled("array_api_strict", array_api_strict, version="2025.12", max_examples=2, groups=["special"])
    (result,) = rep.results
    assert result.chapter == "Special cases" and result.status == "skipped"
    assert rep.ok and any("special-case checks unavailable" in n for n in rep.notes)


def test_upstream_without_a_checkout_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["array_api_strict", "--upstream", str(tmp_path), "--no-progress"]) == 2
    assert "not an array-api-tests checkout" in capsys.readouterr().err


def test_namespaces_share_one_process_where_jax_runs_on_an_accelerator(tmp_path, monkeypatch, capsys):
    """A TPU admits one process: without --jobs, the main job does not start a worker per
    namespace there (it would fail to claim the device), and it still does on a CPU."""
    started = []

    def parallel(names, jobs, *rest):
        started.append(jobs)
        return [NamespaceReport(name) for name in names]

    monkeypatch.setattr(cli, "_run_parallel", parallel)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    argv = ["array_api_strict", "numpy", "--checks", "names", "--functions", "abs", "--no-progress", "--no-html"]
    for on_accelerator in (True, False):
        monkeypatch.setattr(cli, "_jax_on_an_accelerator", lambda answer=on_accelerator: answer)
        cli.main(argv)
    assert started == [2]  # the accelerator's run checked both in this process
    assert "array_api_strict" in capsys.readouterr().out


def test_the_accelerator_probe_asks_no_child_where_jax_is_told_the_cpu(monkeypatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("a child process was started"))
    assert cli._jax_on_an_accelerator() is False


@pytest.mark.cpu_only(reason="the probe's child would find the device held by this test process")
def test_the_accelerator_probe_answers_for_the_cpu(monkeypatch):
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    asked = []
    real_run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: asked.append(a) or real_run(*a, **k))
    assert cli._jax_on_an_accelerator() is False
    assert len(asked) == 1
