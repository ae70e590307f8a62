"""``python -m conformance.html PAGE.html REPORT.json [...] [--compare OLD.json]``: the page of
saved JSON reports, several side by side (a bundled run and an upstream run of a namespace)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from conformance import compare as cmp
from conformance.html.page import write


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m conformance.html",
        description="Write the HTML page of JSON reports of python -m conformance (bundled and upstream "
        "runs side by side).",
    )
    p.add_argument("page", metavar="PAGE.html", help="the page to write")
    p.add_argument("reports", nargs="+", metavar="REPORT.json", help="JSON reports (--json) to show")
    p.add_argument("--compare", metavar="OLD.json", help="an earlier JSON report: what changed since, at the top")
    args = p.parse_args(argv)
    try:
        docs = [cmp.load(path, "REPORT.json") for path in args.reports]
        old = (args.compare, cmp.load(args.compare, "--compare")) if args.compare else None
    except cmp.ReportError as e:
        print(f"conformance.html: {e}", file=sys.stderr)
        return 2
    folder = Path(args.page).resolve().parent
    if not folder.is_dir():
        print(f"conformance.html: PAGE.html {args.page}: the folder {folder} does not exist", file=sys.stderr)
        return 2
    size = write(args.page, docs, compare=old)
    print(f"wrote {args.page} ({size / 1024:.0f} KiB)")
    return 0


sys.exit(main())
