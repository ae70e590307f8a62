"""A registry for the property checks of whole functions (creation, manipulation, statistics,
searching, ...): each is a builder ``(ns, arrays) -> body``, ``body(data)`` drawing its inputs
and checking one call against NumPy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance import spec
from conformance.checks import properties
from conformance.model import Task
from conformance.namespaces import Namespace

Body = Callable[[st.DataObject], None]
Builder = Callable[[Namespace, properties.Arrays], Body]


@dataclass(frozen=True)
class Prop:
    chapter: str
    function: str
    build: Builder


REGISTRY: list[Prop] = []


def prop(chapter: str, function: str) -> Callable[[Builder], Builder]:
    """Register a property check of ``function``."""

    def register(build: Builder) -> Builder:
        REGISTRY.append(Prop(chapter, function, build))
        return build

    return register


def tasks(ns: Namespace, arrays: properties.Arrays, chapters: set[str] | None = None) -> Iterator[Task]:
    required = set(spec.required(ns.version)["namespace"])
    for p in REGISTRY:
        if p.function not in required or (chapters is not None and p.chapter not in chapters):
            continue

        def run(p: Prop = p) -> list[Any]:
            if not ns.has(p.function):
                return [properties.run_property(ns, p.chapter, p.function, lambda data: None)]
            return [properties.run_property(ns, p.chapter, p.function, p.build(ns, arrays))]

        yield Task(p.function, run, function=p.function)


def pick(data: st.DataObject, options: list[Any] | tuple[Any, ...], label: str) -> Any:
    return data.draw(st.sampled_from(options), label=label)


def sum_dtype(ns: Namespace, dtype: str) -> str:
    """The dtype of ``sum``/``prod``/``cumulative_*`` with ``dtype=None`` (the standard's rule)."""
    default = ns.default("integral")
    bits = int("".join(c for c in default if c.isdigit()))
    if dtype.startswith("int") and int(dtype[3:]) < bits:
        return default
    if dtype.startswith("uint") and int(dtype[4:]) < bits:
        return f"uint{bits}"
    return dtype
