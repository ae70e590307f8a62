"""The standard's special cases, as executable checks.

The 2025.12 specification states 521 special cases of 58 functions as English sentences
("If ``x1_i`` is ``+0`` and ``x2_i`` is less than ``0``, the result is ``-0``."), shipped as data
in ``data/special_cases_2025_12.json``.

=========================  ================================================================
module                     what
=========================  ================================================================
:mod:`.grammar`            the sentences' grammar: values, conditions (predicates over the
                           operands), expectations (what the result must be)
:mod:`.table`              every sentence of the data file parsed into a :class:`Case`
:mod:`.evaluation`         a namespace's functions run on the inputs of a pool of values
                           that satisfy each condition, and compared with the expectation
=========================  ================================================================

A sentence the grammar does not cover is reported as ``skipped`` with the reason, never as
passed. ``run(namespace)`` returns one :class:`CaseResult` per sentence; ``cases()`` the parsed
sentences.
"""

from __future__ import annotations

from conformance.special_cases.evaluation import CaseResult, run
from conformance.special_cases.table import Case, cases

__all__ = ["Case", "CaseResult", "cases", "run"]
