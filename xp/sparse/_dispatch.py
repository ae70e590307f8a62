"""Registers the sparse array types with the router (``xp._routing``, which documents the route)."""

from __future__ import annotations

from typing import Any

from xp import _routing as routing
from xp._routing import implements as implements
from xp.sparse._array import SparseArray

routing.register_sparse_types(SparseArray)


def is_sparse(x: Any) -> bool:
    return isinstance(x, SparseArray)
