"""How xp functions reach sparse implementations.

Every public xp function converts its array arguments with ``xp._boundary``; a sparse argument
raises ``SparseArgument`` there, and the function re-dispatches the whole call, unchanged, to
the implementation registered here under its public name (``"add"``, ``"linalg.matmul"``). An
xp function with no sparse implementation is computed on dense copies of its sparse arguments,
with a SparseEfficiencyWarning. Implementations raise ``b.fail(...)`` for bad arguments like
every xp function (the routing prefixes the function's name), and
``b.fail(NotImplementedError, why)`` where the result is dense (the routing computes it densely,
saying why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from xp import _boundary as b
from xp.sparse._array import SparseArray

F = TypeVar("F", bound=Callable[..., Any])

b.SPARSE_TYPES = (SparseArray,)


def implements(*names: str) -> Callable[[F], F]:
    """Register the decorated function as the sparse implementation of ``xp.<name>``."""

    def register(fn: F) -> F:
        for name in names:
            if name in b.SPARSE_IMPLEMENTATIONS:
                raise RuntimeError(f"two sparse implementations of xp.{name}")
            b.SPARSE_IMPLEMENTATIONS[name] = fn
        return fn

    return register


def is_sparse(x: Any) -> bool:
    return isinstance(x, SparseArray)
