"""The upstream suite, data-apis/array-api-tests, run from a checkout and reported like the
bundled checks.

The suite runs in a subprocess of pytest with pytest-json-report, with the options of the
project's reference runner (``-p no:cacheprovider -q -rN --max-examples N --derandomize
--disable-deadline``), ``ARRAY_API_TESTS_MODULE`` and ``ARRAY_API_TESTS_VERSION`` set, so the
passed/failed counts are those of running pytest on the suite directly. Each test item becomes
one result: its chapter is its test file, its function the standard's function it tests.
The tested revision is pinned in ``conformance/array-api-tests-rev.txt``; a checkout at another
revision still runs, with a note.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from conformance import spec
from conformance.model import FAILED, PASSED, SKIPPED, NamespaceReport, Result, first_line
from conformance.progress import Progress

ENV_VAR = "ARRAY_API_TESTS_DIR"
HERE = Path(__file__).parent
PINNED_FILE = HERE / "array-api-tests-rev.txt"

_CHAPTER_OF_FILE = {
    "test_has_names": "API names",
    "test_signatures": "Signatures",
    "test_array_object": "Array object",
    "test_constants": "Constants",
    "test_inspection_functions": "Inspection",
    "test_creation_functions": "Creation functions",
    "test_data_type_functions": "Data type functions",
    "test_operators_and_elementwise_functions": "Elementwise functions",
    "test_indexing_functions": "Indexing functions",
    "test_manipulation_functions": "Manipulation functions",
    "test_searching_functions": "Searching functions",
    "test_set_functions": "Set functions",
    "test_sorting_functions": "Sorting functions",
    "test_statistical_functions": "Statistical functions",
    "test_utility_functions": "Utility functions",
    "test_linalg": "linalg extension",
    "test_fft": "fft extension",
    "test_special_cases": "Special cases",
    "test_dlpack": "DLPack",
}
_OUTCOME = {
    "passed": PASSED,
    "failed": FAILED,
    "error": FAILED,
    "skipped": SKIPPED,
    "xfailed": SKIPPED,
    "xpassed": PASSED,
}


class UpstreamError(Exception):
    """The suite cannot be run as asked (no checkout, no spec submodule, a bad xfails file)."""


def pinned_revision() -> str:
    """The suite revision the tool is tested against (first non-comment line of the pin file)."""
    for line in PINNED_FILE.read_text("utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line
    return ""


def default_xfails(namespace: str) -> Path | None:
    """The project's xfail file for a namespace (``conformance/xfails-<namespace>.txt``), if any."""
    path = HERE / f"xfails-{namespace}.txt"
    return path if path.exists() else None


def xfail_entries(path: Path) -> list[str]:
    """The test ids of an xfails file, each of which must come right after a comment saying why."""
    entries, commented = [], False
    for number, raw in enumerate(path.read_text("utf-8").splitlines(), 1):
        line = raw.strip()
        if not line:
            commented = False
        elif line.startswith("#"):
            commented = True
        else:
            if not commented:
                raise ValueError(f"{path}:{number}: {line} has no comment above it saying why it fails")
            entries.append(line)
            commented = False
    return entries


def find_checkout(path: str | None) -> Path:
    """The checkout to run: ``path``, else ``$ARRAY_API_TESTS_DIR``; checked for the suite and its spec."""
    chosen = path or os.environ.get(ENV_VAR)
    if not chosen:
        raise UpstreamError(f"--upstream needs a path to an array-api-tests checkout, or {ENV_VAR} set")
    root = Path(chosen).expanduser().resolve()
    if not (root / "array_api_tests").is_dir():
        raise UpstreamError(f"{root} is not an array-api-tests checkout (no array_api_tests/ folder)")
    if not (root / "array-api" / "src").is_dir() and not (root / "array-api" / "spec").is_dir():
        raise UpstreamError(
            f"{root}/array-api is empty: the suite needs its spec submodule "
            "(git submodule update --init, or clone data-apis/array-api there at the pinned commit)"
        )
    return root


def revision(root: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def command(json_file: Path, max_examples: int, paths: list[str], xfails: Path | None, extra: list[str]) -> list[str]:
    """The pytest command line (the reference runner's options)."""
    cmd = [sys.executable, "-m", "pytest", *(paths or ["array_api_tests/"]), "-p", "no:cacheprovider", "-q", "-rN"]
    cmd += ["--max-examples", str(max_examples), "--derandomize", "--disable-deadline"]
    cmd += ["--json-report", f"--json-report-file={json_file}", "--json-report-omit", "log", "collectors", "keywords"]
    if xfails is not None:
        cmd += ["--xfails-file", str(xfails)]
    return cmd + extra


def run(
    namespace: str,
    checkout: str | None,
    *,
    version: str | None,
    max_examples: int,
    paths: list[str] | None = None,
    xfails: Path | None = None,
    extra: list[str] | None = None,
    show_progress: bool = True,
) -> NamespaceReport:
    """Run the suite on ``namespace`` and turn its JSON report into a :class:`NamespaceReport`."""
    root = find_checkout(checkout)
    report = NamespaceReport(namespace, source="upstream")
    if xfails is not None:
        try:
            report.upstream["xfails"] = xfail_entries(xfails)
        except ValueError as e:
            raise UpstreamError(f"{e}") from None
    rev, pinned = revision(root), pinned_revision()
    report.upstream = {"path": str(root), "revision": rev, "pinned": pinned}
    if rev and pinned and rev != pinned:
        report.notes.append(f"array-api-tests is at {rev[:12]}, the tool is pinned to {pinned[:12]}")
    env = dict(os.environ, ARRAY_API_TESTS_MODULE=namespace)
    if version is not None:
        env["ARRAY_API_TESTS_VERSION"] = version
    report.upstream["version"] = env.get("ARRAY_API_TESTS_VERSION") or _reported_version(namespace)
    unreported = _unreported_dtypes(namespace)
    if unreported and "ARRAY_API_TESTS_SKIP_DTYPES" not in env:
        report.notes.append(
            f"{namespace} does not report {', '.join(unreported)} in __array_namespace_info__().dtypes() but the suite "
            f"draws them anyway: set ARRAY_API_TESTS_SKIP_DTYPES={','.join(unreported)} (or JAX_ENABLE_X64=1 for JAX)"
        )
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), env.get("PYTHONPATH", "")) if p)
    with tempfile.TemporaryDirectory(prefix="conformance-") as tmp:
        json_file = Path(tmp) / "report.json"
        cmd = command(json_file, max_examples, paths or [], xfails, extra or [])
        report.upstream["command"] = " ".join(cmd[1:]).replace(str(json_file), "report.json")
        progress = Progress(100, f"{namespace} (array-api-tests)", enabled=show_progress)
        tail = _stream(cmd, root, env, progress)
        progress.close()
        if not json_file.exists():
            report.results.append(
                Result("(suite)", "(suite)", "run", FAILED, "pytest wrote no report: " + tail[-1:][0] if tail else "")
            )
            report.notes += tail[-20:]
            return report
        data = json.loads(json_file.read_text("utf-8"))
    report.upstream["summary"] = data.get("summary", {})
    report.upstream["exitcode"] = data.get("exitcode")
    report.duration_s = float(data.get("duration", 0.0))
    report.results = [_result(t) for t in data.get("tests", [])]
    if data.get("exitcode") not in (0, 1):
        report.results.append(
            Result(
                "(suite)",
                "(suite)",
                "run",
                FAILED,
                f"pytest exited with {data.get('exitcode')}: {tail[-1] if tail else ''}",
            )
        )
    errors = data.get("summary", {}).get("error", 0)
    if errors:
        report.notes.append(f"{errors} tests errored (counted as failed)")
    return report


def _reported_version(namespace: str) -> str:
    """The version the suite checks when not told: the namespace's ``__array_api_version__``."""
    try:
        version = getattr(importlib.import_module(namespace), "__array_api_version__", "?")
    except Exception:
        version = "?"
    return f"{version} (the namespace's __array_api_version__)"


def _unreported_dtypes(namespace: str) -> list[str]:
    """The standard's dtypes the namespace has attributes for but does not report as available."""
    try:
        module = importlib.import_module(namespace)
        reported = set(module.__array_namespace_info__().dtypes())
    except Exception:
        return []
    return [d for d in spec.inventory()["dtypes"] if d not in reported and hasattr(module, d)]


_PERCENT = re.compile(r"\[\s*(\d+)%\]")


def _stream(cmd: list[str], cwd: Path, env: dict[str, str], progress: Progress) -> list[str]:
    """Run pytest, moving the progress bar with its ``[ 42%]`` markers; return the last lines."""
    tail: list[str] = []
    seen = 0
    with subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            match = _PERCENT.search(line)
            if match:
                pct = int(match.group(1))
                progress.update(pct - seen, f"{line.count('F')} failed in the last line" if "F" in line else "")
                seen = pct
            tail = [*tail, line.rstrip()][-40:]
    return tail


def _function(nodeid: str, metadata: dict[str, Any]) -> str:
    """The standard's function an upstream test is about."""
    names = _known_names()
    test, _, params = nodeid.partition("::")[2].partition("[")
    params = params.rstrip("]")
    if params:
        if "-" in params and "(" not in params:  # test_has_names[linalg-matrix_norm]
            group, _, name = params.partition("-")
            if f"{group}.{name}" in names:
                return names[f"{group}.{name}"]
            if name in names:
                return names[name]
        head = re.match(r"[\w.]*", params)
        if head and head.group() in names:
            return names[head.group()]
    meta = metadata.get("array_api_function_name")
    if isinstance(meta, str) and meta in names:
        return names[meta]
    bare = test.removeprefix("test_")
    return names.get(bare, bare)


_NAMES: dict[str, str] = {}


def _known_names() -> dict[str, str]:
    """Names the suite uses for the standard's functions -> the tool's qualified names."""
    if not _NAMES:
        inv = spec.inventory()
        for n in inv["namespace"]:
            _NAMES[n] = n
        for group in ("linalg", "fft"):
            for n in inv[group]:
                _NAMES[f"{group}.{n}"] = f"{group}.{n}"
        for n in inv["array"] + inv["array_reflected"] + inv["array_inplace"]:
            _NAMES[n] = f"array.{n}"
    return _NAMES


def _result(test: dict[str, Any]) -> Result:
    nodeid = test.get("nodeid", "")
    file = Path(nodeid.split("::")[0]).stem
    chapter = _CHAPTER_OF_FILE.get(file, file.removeprefix("test_").replace("_", " ").capitalize())
    status = _OUTCOME.get(test.get("outcome", ""), FAILED)
    check = nodeid.split("::", 1)[-1]
    detail = ""
    if test.get("outcome") in ("failed", "error"):
        for stage in ("call", "setup", "teardown"):
            crash = (test.get(stage) or {}).get("crash")
            if crash and crash.get("message"):
                detail = first_line(crash["message"])
                break
            if (test.get(stage) or {}).get("outcome") in ("failed", "error"):
                detail = first_line(str(test[stage].get("longrepr", "")) or "failed")
                break
        if test.get("outcome") == "error":
            detail = f"error: {detail}"
    elif status == SKIPPED:
        detail = _skip_reason(test)
    return Result(chapter, _function(nodeid, test.get("metadata") or {}), check, status, detail)


def _skip_reason(test: dict[str, Any]) -> str:
    for stage in ("setup", "call"):
        longrepr = (test.get(stage) or {}).get("longrepr")
        if longrepr:
            try:
                parts = (
                    ast.literal_eval(longrepr) if isinstance(longrepr, str) and longrepr.startswith("(") else longrepr
                )
            except (ValueError, SyntaxError):
                parts = longrepr
            text = parts[-1] if isinstance(parts, list | tuple) else str(parts)
            return first_line(str(text).removeprefix("Skipped: "))
    return "xfail" if test.get("outcome") == "xfailed" else ""
