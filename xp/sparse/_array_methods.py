"""The methods of the sparse array types that need the rest of xp, installed from above.

``xp.sparse._array`` defines ``BCOO`` and ``BCSR`` on xp's leaf modules and the sparse build and
conversion modules; the transposes, indexing and the operators need the routed xp functions and
the sparse indexing, which themselves build on the array types. ``xp/sparse/__init__.py`` calls
:func:`install` once every sparse module is imported (as ``xp._array_methods`` does for
``xp.Array``).
"""

from __future__ import annotations

from typing import Any

from xp import _operators
from xp import _routing as routing
from xp._manipulation import permute_dims
from xp.sparse import _indexing
from xp.sparse._array import SparseArray, wrap_sparse
from xp.sparse._transposed import is_plain


def _transpose(self: SparseArray) -> Any:
    """The transpose of a 2-d array: a view (O(1), see ``xp.sparse._transposed``)."""
    if self.ndim != 2:
        raise ValueError(
            f"xp.sparse.{type(self).__name__}.T: the array must be 2-dimensional, got {self.ndim} dimensions (use .mT)"
        )
    return swapped_last(self)


def _matrix_transpose(self: SparseArray) -> Any:
    """The transpose of the last two axes (a stack of matrices; a view for a 2-d array)."""
    if self.ndim < 2:
        raise ValueError(
            f"xp.sparse.{type(self).__name__}.mT: the array must have at least 2 dimensions, got {self.ndim}"
        )
    return swapped_last(self)


def swapped_last(x: SparseArray) -> Any:
    """``x`` (of 2 or more dimensions) with its last two axes swapped: the base of a view, a view
    of a plain 2-d array (both O(1)), else a new array (``permute_dims``)."""
    base = x._base
    if base is not None:
        return wrap_sparse(base)
    value = x._value
    if is_plain(value):
        return x._view(value)
    n = x.ndim
    return permute_dims(x, (*range(n - 2), n - 1, n - 2))  # type: ignore[arg-type]


def _getitem(self: SparseArray, key: Any, /) -> Any:
    """``self[key]`` (see ``xp.sparse._indexing``)."""
    try:
        return _indexing.getitem(self, key)
    except Exception as error:
        return routing.failed(error, f"xp.sparse.{type(self).__name__}.__getitem__", _getitem, (self, key), {})


def install() -> None:
    """Complete the sparse array types. They are immutable: ``A *= 2`` rebinds ``A`` to ``A * 2``."""
    SparseArray.T = property(_transpose)  # type: ignore[assignment]
    SparseArray.mT = property(_matrix_transpose)  # type: ignore[assignment]
    _getitem.__name__ = "__getitem__"
    setattr(SparseArray, "__getitem__", _getitem)  # noqa: B010  # (declared as a method for type checkers)
    _operators.install(SparseArray, in_place=False)
