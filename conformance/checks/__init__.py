"""The bundled checks, written for this tool (not copied from the upstream suite).

=========================  ================================================================
module                     checks
=========================  ================================================================
:mod:`.names`              every name present with the right kind; signatures; array object
:mod:`.promotion`          the promotion table, scalars, ``can_cast``, ``isdtype``, ``finfo``
:mod:`.inspection`         ``__array_namespace_info__()``
:mod:`.elementwise`        properties of the elementwise functions and operators vs NumPy
:mod:`.creation`, ...      properties of creation, manipulation, statistical, searching,
                           sorting, set, indexing and linear algebra functions vs NumPy
:mod:`.special`            the special cases of the standard (:mod:`conformance.special_cases`)
=========================  ================================================================
"""

from __future__ import annotations

from conformance.checks import creation as creation  # registers its properties
from conformance.checks import elementwise, inspection, names, promotion, properties, registry, special
from conformance.checks import manipulation as manipulation
from conformance.checks import searching as searching
from conformance.checks import statistical as statistical
from conformance.model import Task, guarded
from conformance.namespaces import Namespace

# Groups of checks, for ``--checks``.
GROUPS = ("names", "promotion", "inspection", "properties", "special")


def plan(ns: Namespace, groups: tuple[str, ...] | list[str] = GROUPS, functions: set[str] | None = None) -> list[Task]:
    """The tasks that check ``ns``: the chosen groups, optionally only some functions."""
    tasks: list[Task] = []
    if "names" in groups:
        tasks.append(Task("names", lambda: list(guarded("API names", "(all)", "names", lambda: names.check_names(ns)))))
        tasks.append(
            Task(
                "array object",
                lambda: list(guarded("Array object", "asarray", "array", lambda: names.check_array_object(ns))),
            )
        )
        tasks.append(
            Task(
                "signatures",
                lambda: list(guarded("Signatures", "(all)", "signatures", lambda: names.check_signatures(ns))),
                weight=2,
            )
        )
    if "inspection" in groups:
        tasks.append(Task("inspection", lambda: inspection.tasks_results(ns)))
    arrays: properties.Arrays | None = None
    if "promotion" in groups or "properties" in groups:
        arrays = _LazyArrays(ns)  # type: ignore[assignment]
    if "promotion" in groups:
        assert arrays is not None
        tasks.extend(promotion.tasks(ns, arrays))
    if "properties" in groups:
        assert arrays is not None
        tasks.extend(elementwise.tasks(ns, arrays))
        tasks.extend(registry.tasks(ns, arrays))
    if "special" in groups:
        tasks.extend(special.tasks(ns))
    if functions:  # checks of the whole namespace (names, promotion tables, ...) always run
        tasks = [t for t in tasks if t.function is None or t.function in functions]
    return tasks


class _LazyArrays:
    """Builds the array strategies (probing the namespace) on first use, inside a task."""

    def __init__(self, ns: Namespace) -> None:
        self._ns = ns
        self._arrays: properties.Arrays | None = None

    def __getattr__(self, name: str) -> object:
        if self._arrays is None:
            self._arrays = properties.Arrays(self._ns)
        return getattr(self._arrays, name)
