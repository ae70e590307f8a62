"""``python -m conformance``: check namespaces against the array API standard and report.

    python -m conformance [NAMESPACE ...] [--version 2025.12] [--max-examples N]
                          [--upstream [PATH]] [--json FILE] [--markdown FILE]
                          [--html FILE | --no-html] [--compare OLD.json]

Exit status: 0 when no check failed (skips and documented deviations allowed), 1 when any failed
(a stale entry of a deviations file included), 2 on a usage error.

Every run writes the HTML page (:mod:`conformance.html`) unless told not to: ``--html FILE``,
else beside the JSON report (``--json r.json``: ``r.html``), else ``conformance-report.html``
in the current folder; the last line of the output says where.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import importlib.util
import json
import multiprocessing
import os
import shlex
import subprocess
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from conformance import compare, report, reproduce, spec
from conformance import html as page
from conformance import upstream as up
from conformance.deviations import Deviations, DeviationsError, for_namespace
from conformance.model import FAILED, NamespaceReport, Result, first_line
from conformance.namespaces import Namespace, environment, load, module_version
from conformance.progress import MultiProgress, Progress

DEFAULT_MAX_EXAMPLES = 10  # bundled property checks; the upstream suite's own default is 100
UPSTREAM_MAX_EXAMPLES = 100
DEFAULT_HTML = "conformance-report.html"


def default_namespaces() -> list[str]:
    """``xp``, and ``xp.sparse`` once it exists."""
    names = ["xp"]
    try:
        if importlib.util.find_spec("xp.sparse") is not None:
            names.append("xp.sparse")
    except (ImportError, ValueError):
        pass
    return names


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m conformance",
        description="Check array API namespaces against the Python array API standard and report, "
        "chapter by chapter. Bundled checks by default; the upstream suite (data-apis/array-api-tests) "
        "with --upstream.",
    )
    p.add_argument(
        "namespaces", nargs="*", metavar="NAMESPACE", help="module names (default: xp, and xp.sparse if present)"
    )
    p.add_argument(
        "--version",
        default=None,
        choices=spec.VERSIONS,
        help=f"the standard's version (default {spec.DEFAULT_VERSION}; upstream: $ARRAY_API_TESTS_VERSION, "
        "else the suite's default, the namespace's __array_api_version__)",
    )
    p.add_argument(
        "--max-examples",
        type=int,
        default=None,
        metavar="N",
        help=f"hypothesis examples per property (default {DEFAULT_MAX_EXAMPLES}; upstream {UPSTREAM_MAX_EXAMPLES})",
    )
    p.add_argument(
        "--upstream",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="run the upstream suite from a checkout at PATH (default: $ARRAY_API_TESTS_DIR)",
    )
    p.add_argument(
        "--tests",
        nargs="+",
        default=None,
        metavar="FILE",
        help="upstream: only these test files (relative to the checkout)",
    )
    p.add_argument(
        "--xfails",
        default=None,
        metavar="FILE",
        help="upstream: an xfails file (default: conformance/xfails-NAMESPACE.txt if present)",
    )
    p.add_argument(
        "--deviations",
        default=None,
        metavar="FILE",
        help="bundled: the documented deviations of the namespaces checked, failures that do not fail the run "
        "(default: conformance/deviations-NAMESPACE.txt if present)",
    )
    p.add_argument("--json", dest="json_file", default=None, metavar="FILE", help="write a JSON report")
    p.add_argument("--markdown", default=None, metavar="FILE", help="write a Markdown report")
    p.add_argument(
        "--html",
        default=None,
        metavar="FILE",
        help=f"write the HTML page here (default: beside the --json report, else {DEFAULT_HTML})",
    )
    p.add_argument("--no-html", action="store_true", help="write no HTML page")
    p.add_argument(
        "--compare",
        default=None,
        metavar="OLD.json",
        help="an earlier JSON report: what changed since (new failures, fixes), at the top of the page and "
        "after the text",
    )
    p.add_argument(
        "--checks",
        default=None,
        metavar="GROUPS",
        help="bundled: comma-separated groups among names, promotion, inspection, properties, special",
    )
    p.add_argument(
        "--functions", default=None, metavar="NAMES", help="bundled: only checks of these functions (comma-separated)"
    )
    p.add_argument(
        "--strict", action="store_true", help="the standard's 'should' rules for signatures count as failures"
    )
    p.add_argument("--shrink", action="store_true", help="shrink failing examples to minimal ones (slower)")
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=None,
        metavar="N",
        help="bundled: check up to N namespaces at once, each in its own process (default: one per CPU; "
        "one in all where JAX's default backend is an accelerator)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--quiet", "-q", action="store_true", help="list each failing function once, with its first failure")
    return p


def run_bundled(
    name: str,
    module: Any,
    *,
    version: str,
    max_examples: int,
    groups: Sequence[str] | None = None,
    functions: set[str] | None = None,
    strict: bool = False,
    shrink: bool = False,
    show_progress: bool = False,
    progress_factory: Any = Progress,
    deviations: Deviations | None = None,
) -> NamespaceReport:
    """Run the bundled checks on a namespace object (a module, or anything with its names).

    ``progress_factory(total, name, enabled=...)`` makes the progress bar (an object with
    ``update(advance, label, failed)`` and ``close()``). The failures ``deviations`` lists are
    reported as documented deviations, and its entries that no longer fail as failures."""
    # imported here, not at the top: the checks import hypothesis and every check module (a
    # quarter of a second), which --help, usage errors and --upstream runs do not need
    from conformance import checks

    start = time.monotonic()
    ns = Namespace(module, name, version=version, max_examples=max_examples)
    ns.strict, ns.shrink = strict, shrink
    result = NamespaceReport(name, environment={"version": module_version(module)})
    device = _device_of(ns)
    if device:
        result.environment["device"] = device
    if ns.info_error:
        result.notes.append(f"__array_namespace_info__() failed ({ns.info_error}); dtypes found by attribute")
    tasks = checks.plan(ns, tuple(groups or checks.GROUPS), functions)
    progress = progress_factory(sum(t.weight for t in tasks), name, enabled=show_progress)
    for task in tasks:
        cpu = time.process_time()
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # the namespace's warnings are not the report
                results = list(task.run())
        except KeyboardInterrupt:
            raise
        except Exception as e:  # a bug in a check: report it, keep going
            results = [Result("(tool)", task.label, "check", FAILED, f"check crashed: {first_line(e)}")]
        results = [reproduce.with_script(str(ns.name), r) for r in results]
        if deviations is not None:  # now, so that the progress bar counts only undocumented failures
            results = deviations.mark(results)
        result.results.extend(results)
        result.timings[task.label] = result.timings.get(task.label, 0.0) + time.process_time() - cpu
        progress.update(task.weight, task.label, sum(r.status == FAILED for r in results))
    progress.close()
    if deviations is not None:
        deviations.settle(result)
    for r in result.results:
        if r.function == "(all)" and r.chapter == "Special cases" and r.status == "skipped":
            result.notes.append(r.detail)
    result.duration_s = time.monotonic() - start
    result.process_environment = environment()
    return result


def _device_of(ns: Namespace) -> str:
    """Where the namespace's arrays live: the ``device`` of a new array, with JAX's platform and kind."""
    try:
        device = ns.module.asarray(0).device
    except Exception:  # reported by the checks of asarray and of the array object
        return ""
    text = str(device)
    platform, kind = getattr(device, "platform", None), getattr(device, "device_kind", None)
    if isinstance(platform, str):
        text += f" ({platform}" + (f", {kind}" if isinstance(kind, str) and kind != platform else "") + ")"
    return text


def _html_path(args: argparse.Namespace) -> Path | None:
    if args.no_html:
        return None
    if args.html:
        return Path(args.html)
    if args.json_file:
        return Path(args.json_file).with_suffix(".html")
    return Path(DEFAULT_HTML)


def _usage_problem(args: argparse.Namespace) -> str:
    """What is wrong with the output options, found before minutes of checks (a folder to write
    into that does not exist); ``--compare``'s file is read up front too, in :func:`main`."""
    if args.html and args.no_html:
        return "--html and --no-html contradict each other"
    for option, value in (("--json", args.json_file), ("--markdown", args.markdown), ("--html", args.html)):
        if value and not Path(value).resolve().parent.is_dir():
            return f"{option} {value}: the folder {Path(value).resolve().parent} does not exist"
    return ""


class _QueuedProgress:
    """A worker's progress bar: its updates go to the parent process, which draws them."""

    def __init__(self, queue: Any, total: float, name: str, enabled: bool = True) -> None:
        self.queue, self.name = queue, name
        queue.put(("total", name, total, "", 0))

    def update(self, advance: float, label: str = "", failed: int = 0) -> None:
        self.queue.put(("update", self.name, advance, label, failed))

    def close(self) -> None:
        pass


def _bundled_in_worker(
    name: str, queue: Any, options: dict[str, Any], deviations: Deviations | None
) -> NamespaceReport:
    """Check one namespace in a worker process (see :func:`_run_parallel`)."""
    try:
        module = load(name)
    except Exception as e:
        return _import_failure(name, e, "bundled")

    def factory(total: float, title: str, enabled: bool = True) -> _QueuedProgress:
        return _QueuedProgress(queue, total, title, enabled)

    return run_bundled(name, module, progress_factory=factory, deviations=deviations, **options)


def _run_parallel(
    names: list[str],
    jobs: int,
    options: dict[str, Any],
    show_progress: bool,
    deviations: dict[str, Deviations | None],
) -> list[NamespaceReport]:
    """The bundled checks of several namespaces at once, one process each (JAX compiles on one
    core at a time, so two namespaces on two cores take the time of the slower one)."""
    context = multiprocessing.get_context("spawn")  # a fork of a process running JAX can deadlock
    with context.Manager() as manager, concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
        queue = manager.Queue()
        futures = {name: pool.submit(_bundled_in_worker, name, queue, options, deviations[name]) for name in names}
        progress = MultiProgress(names, enabled=show_progress)
        pending = set(futures.values())
        while pending:
            _, pending = concurrent.futures.wait(pending, timeout=0.2)
            while not queue.empty():
                kind, name, amount, label, failed = queue.get()
                if kind == "total":
                    progress.set_total(name, amount)
                else:
                    progress.update(name, amount, label, failed)
        progress.close()
        reports = []
        for name, future in futures.items():
            try:
                reports.append(future.result())
            except Exception as e:  # the worker died (a crash inside the namespace)
                reports.append(_import_failure(name, e, "bundled"))
        return reports


def _jax_on_an_accelerator() -> bool:
    """Whether JAX's default backend is not the CPU, asked of a child process that exits at once:
    a TPU admits one process at a time, so worker processes of their own would fail to claim it
    (and on a GPU each would reserve most of its memory). False where JAX is not installed."""
    if os.environ.get("JAX_PLATFORMS", "").strip().lower() == "cpu" or importlib.util.find_spec("jax") is None:
        return False
    probe = "import jax; print(jax.default_backend())"
    try:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return False
    words = done.stdout.split()
    return done.returncode == 0 and bool(words) and words[-1] != "cpu"


def _import_failure(name: str, error: BaseException, source: str) -> NamespaceReport:
    r = NamespaceReport(name, source=source)
    r.results.append(Result("API names", "(import)", f"import {name}", FAILED, first_line(error)))
    return r


def _upstream_version(reports: list[NamespaceReport]) -> str:
    versions = {r.upstream.get("version", "?").split()[0] for r in reports}
    return versions.pop() if len(versions) == 1 else "as each namespace reports"


def main(argv: Sequence[str] | None = None) -> int:
    started = time.monotonic()
    args = parser().parse_args(argv)
    problem = _usage_problem(args)
    if problem:
        print(f"conformance: {problem}", file=sys.stderr)
        return 2
    try:
        earlier = (args.compare, compare.load(args.compare, "--compare")) if args.compare else None
    except compare.ReportError as e:
        print(f"conformance: {e}", file=sys.stderr)
        return 2
    names = args.namespaces or default_namespaces()
    upstream = args.upstream is not None
    max_examples = args.max_examples or (UPSTREAM_MAX_EXAMPLES if upstream else DEFAULT_MAX_EXAMPLES)
    groups = [g.strip() for g in args.checks.split(",")] if args.checks else None
    if groups:
        from conformance.checks import GROUPS  # here, not at the top: see run_bundled

        unknown = [g for g in groups if g not in GROUPS]
        if unknown:
            parser().error(f"unknown check groups: {', '.join(unknown)} (known: {', '.join(GROUPS)})")
    functions = {f.strip() for f in args.functions.split(",")} if args.functions else None
    if upstream and args.deviations:
        parser().error("--deviations is for the bundled checks (the upstream suite takes --xfails)")
    try:
        deviations = {} if upstream else {name: for_namespace(name, args.deviations) for name in names}
    except DeviationsError as e:
        print(f"conformance: {e}", file=sys.stderr)
        return 2
    show_progress = not args.no_progress
    reports: list[NamespaceReport] = []
    options = {
        "version": args.version or spec.DEFAULT_VERSION,
        "max_examples": max_examples,
        "groups": groups,
        "functions": functions,
        "strict": args.strict,
        "shrink": args.shrink,
        "show_progress": show_progress,
    }
    jobs = min(len(names), args.jobs or os.cpu_count() or 1)
    if not upstream and jobs > 1 and not args.jobs and _jax_on_an_accelerator():
        jobs = 1  # one process holds the device: the namespaces are checked one after the other
    if not upstream and jobs > 1:
        reports = _run_parallel(names, jobs, options, show_progress, deviations)
        names = []
    for name in names:
        if upstream:
            xfails = Path(args.xfails) if args.xfails else up.default_xfails(name)
            try:
                reports.append(
                    up.run(
                        name,
                        args.upstream or None,
                        version=args.version,
                        max_examples=max_examples,
                        paths=args.tests,
                        xfails=xfails,
                        show_progress=show_progress,
                    )
                )
            except up.UpstreamError as e:
                print(f"conformance: {e}", file=sys.stderr)
                return 2
            continue
        try:
            module = load(name)
        except Exception as e:
            reports.append(_import_failure(name, e, "bundled"))
            continue
        reports.append(run_bundled(name, module, deviations=deviations[name], **options))
    env = environment()
    for r in reports:
        for key, value in r.process_environment.items():
            env.setdefault(key, value)
    status = 0 if all(r.ok for r in reports) else 1
    meta = {
        "spec_version": args.version or (spec.DEFAULT_VERSION if not upstream else _upstream_version(reports)),
        "source": "upstream" if upstream else "bundled",
        "max_examples": max_examples,
        "environment": env,
        "command": "python -m conformance "
        + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])),
        "exit_status": status,
        "duration_s": round(time.monotonic() - started, 1),
        "finished": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    sys.stdout.write(report.text(reports, meta, max_per_function=0 if args.quiet else 4))
    as_json = report.to_json(reports, meta)
    if args.json_file:
        Path(args.json_file).write_text(as_json, "utf-8")
    if args.markdown:
        Path(args.markdown).write_text(report.markdown(reports, meta), "utf-8")
    doc = json.loads(as_json)  # the page is drawn from the JSON report, as from a saved one
    if earlier is not None:
        lines = list(compare.summary(compare.changes(earlier[1], doc)))
        sys.stdout.write(f"\nsince {earlier[0]}: " + ("; ".join(lines) if lines else "no change") + "\n")
    html_path = _html_path(args)
    if html_path is not None:
        size = page.write(html_path, [doc], compare=earlier)
        sys.stdout.write(f"\nHTML report: {html_path} ({size / 1024:.0f} KiB; open it in a browser)\n")
    return status
