"""The report as one self-contained HTML page, drawn from JSON reports (the one source of truth).

    python -m conformance --html FILE ...                       # a run writes its page
    python -m conformance.html PAGE.html REPORT.json [...]      # a page from saved reports,
        [--compare OLD.json]                                    # bundled and upstream side by side

The page holds no reference to anything outside it (no network, scripts, fonts or styles to fetch;
links to the standard's pages are plain links), so it opens from disk and from a CI artifact. It
is plain HTML and CSS: everything is readable and printable without its script, which only
filters the table of functions, opens the part a link points into, and copies reproducers.
Statuses are told by symbols and words, not colour alone: ✓ passed, ✗ failed, ○ skipped,
◆ deviation (documented).

Built with the standard library only (``html.escape`` and f-strings): the page is one pass over
the reports, and the tool needs nothing to install beyond its checks' dependencies.

| module | what |
|---|---|
| ``page`` | the frame: header, navigation, summary (environment, exit status and why), footer |
| ``tables`` | chapters x namespaces, functions x namespaces |
| ``details`` | each namespace chapter by chapter: failures, deviations, skips, passes |
| ``changes`` | what changed since an earlier report |
| ``common`` | statuses, escaping, ids, columns |
| ``assets`` | the stylesheet and the script |
"""

from conformance.html.common import STATUSES as STATUSES
from conformance.html.common import SYMBOL as SYMBOL
from conformance.html.common import WORD as WORD
from conformance.html.page import render as render
from conformance.html.page import write as write
