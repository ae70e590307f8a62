"""What the standard says about the rule a check checks, from the spec data in the package.

For a special case: its sentence and the words that open its group ("For real-valued
floating-point operands,"); for a function: its signature in the version checked; for a type
promotion: the table's result for the pair; for a name: the version that added it; and the
address of the function's page in the standard. The HTML report shows them beside each failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conformance import spec

PAGES = "https://data-apis.org/array-api/{version}/API_specification/generated/array_api.{name}.html"
_DTYPE = re.compile(r"\b(bool|u?int(?:8|16|32|64)|float(?:32|64)|complex(?:64|128))\b")


@dataclass(frozen=True)
class Citation:
    sentence: str = ""  # a special case's sentence (the spec's reStructuredText markup kept)
    context: str = ""  # the words that open its group of cases
    signature: str = ""
    promotion: tuple[str, str, str] | None = None  # (dtype, dtype, what they promote to)
    added: str = ""  # the version of the standard that added the name
    name: str = ""  # the name the standard's page is about (``pow``, ``linalg.det``, ``array.__add__``)
    url: str = ""  # that page

    def __bool__(self) -> bool:
        return bool(self.sentence or self.signature or self.promotion or self.added or self.url)


def cite(chapter: str, function: str, check: str, version: str = spec.DEFAULT_VERSION) -> Citation:
    """The standard's words for one result (its chapter, function and check text)."""
    name = page_name(function)
    url = PAGES.format(version=version if version in spec.VERSIONS else "latest", name=name) if name else ""
    if chapter == "Special cases":
        return Citation(sentence=check.strip(), context=_context(function, check), name=name, url=url)
    promotion = None
    if chapter == "Type promotion":
        pair = _DTYPE.findall(check)
        table = spec.promotion_table()
        if len(pair) == 2 and (pair[0], pair[1]) in table:
            promotion = (pair[0], pair[1], table[pair[0], pair[1]])
    signature = spec.signature_text(function, version) if function in spec.inventory()["signatures"] else None
    added = _added_in(function) if chapter == "API names" else ""
    return Citation(signature=signature or "", promotion=promotion, added=added, name=name, url=url)


def _context(function: str, sentence: str) -> str:
    for group in spec.special_cases().get("functions", {}).get(function, {}).get("groups", []):
        if any(case.strip() == sentence.strip() for case in group.get("cases", [])):
            return str(group.get("context", ""))
    return ""


def _added_in(function: str) -> str:
    for version, names in spec.inventory().get("new_in_all", {}).items():
        if function in names:
            return str(version)
    return ""


def page_name(function: str) -> str:
    """The name of the function's page in the standard, or "" where it has none."""
    inv = spec.inventory()
    if function in inv["namespace"] and function != "__array_api_version__":
        return function
    head, _, tail = function.partition(".")
    if head in ("linalg", "fft", "info") and tail in inv.get(head, []):
        return function
    if head == "array" and tail in (*inv["array"], *inv["array_reflected"], *inv["array_inplace"]):
        return function
    return ""
