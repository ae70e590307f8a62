"""Conformance checks of array API namespaces against the Python array API standard.

``python -m conformance [NAMESPACE ...]`` runs them and reports; see ``docs/conformance.md``.
Two sources of checks: the bundled checks (:mod:`conformance.checks`, always available) and the
upstream suite, data-apis/array-api-tests (:mod:`conformance.upstream`, given a checkout).
"""

from __future__ import annotations
