"""Python operators on ``xp.Array``, each the xp function of the same meaning.

``x + y`` is ``xp.add(x, y)``, ``y + x`` with ``x`` an xp array is ``xp.add(y, x)``, and
``x += y`` computes ``xp.add(x, y)`` and rebinds ``x`` in place (the result must keep ``x``'s
dtype and shape, as the standard requires). An operand of a type xp does not take gives
``NotImplemented``, so Python can ask the other operand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.core
import numpy as np

from xp import _elementwise, _linear_algebra
from xp import _routing as routing
from xp._array import Array

BINARY: dict[str, Callable[[Any, Any], Array]] = {
    "add": _elementwise.add,
    "sub": _elementwise.subtract,
    "mul": _elementwise.multiply,
    "truediv": _elementwise.divide,
    "floordiv": _elementwise.floor_divide,
    "mod": _elementwise.remainder,
    "pow": _elementwise.pow,
    "matmul": _linear_algebra.matmul,
    "and": _elementwise.bitwise_and,
    "or": _elementwise.bitwise_or,
    "xor": _elementwise.bitwise_xor,
    "lshift": _elementwise.bitwise_left_shift,
    "rshift": _elementwise.bitwise_right_shift,
}
COMPARISON: dict[str, Callable[[Any, Any], Array]] = {
    "lt": _elementwise.less,
    "le": _elementwise.less_equal,
    "gt": _elementwise.greater,
    "ge": _elementwise.greater_equal,
    "eq": _elementwise.equal,
    "ne": _elementwise.not_equal,
}
UNARY: dict[str, Callable[[Any], Array]] = {
    "abs": _elementwise.abs,
    "neg": _elementwise.negative,
    "pos": _elementwise.positive,
    "invert": _elementwise.bitwise_invert,
}

_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**"}
_SYMBOLS |= {"matmul": "@", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}

_OPERAND_TYPES = (Array, jax.Array, jax.core.Tracer, np.ndarray, np.generic, bool, int, float, complex)


# The usual operands, known by their exact type: a 0.05 µs set lookup where isinstance against
# _OPERAND_TYPES costs 0.25 µs for a Python float (jax.Array's and Tracer's checks come first)
_COMMON_OPERAND_TYPES = frozenset({Array, float, int, bool, complex})


def _takes(other: Any) -> bool:
    return type(other) in _COMMON_OPERAND_TYPES or isinstance(other, _OPERAND_TYPES) or routing.is_sparse(other)


# Each operator is an entry point of its own, as its function is (the same error handling, by
# ``routing.failed``, under the function's name): it calls the function's implementation, not the
# function, so that a warning of the call is attributed to the operator's caller.


def _forward(name: str, fn: Callable[[Any, Any], Array]) -> Callable[[Array, Any], Any]:
    compute, where = _implementation(fn)

    def operator(self: Array, other: Any, /) -> Any:
        if type(other) in _COMMON_OPERAND_TYPES or _takes(other):
            try:
                return compute(self, other)
            except Exception as error:
                return routing.failed(error, where, fn, (self, other), {})
        return NotImplemented

    operator.__name__ = operator.__qualname__ = f"__{name}__"
    operator.__doc__ = f"``self {name} other``: xp.{fn.__name__}(self, other)."
    return operator


def _reflected(name: str, fn: Callable[[Any, Any], Array]) -> Callable[[Array, Any], Any]:
    compute, where = _implementation(fn)

    def operator(self: Array, other: Any, /) -> Any:
        if _takes(other):
            try:
                return compute(other, self)
            except Exception as error:
                return routing.failed(error, where, fn, (other, self), {})
        return NotImplemented

    operator.__name__ = operator.__qualname__ = f"__r{name}__"
    operator.__doc__ = f"``other {name} self``: xp.{fn.__name__}(other, self)."
    return operator


def _in_place(name: str, fn: Callable[[Any, Any], Array]) -> Callable[[Array, Any], Any]:
    compute, where = _implementation(fn)

    def operator(self: Array, other: Any, /) -> Any:
        if not _takes(other):
            return NotImplemented
        try:
            result = compute(self, other)
        except Exception as error:
            result = routing.failed(error, where, fn, (self, other), {})
        if type(result) is not Array:  # a sparse operand gave a sparse result (x *= A)
            raise TypeError(
                f"xp.Array.__i{name}__: the result is a sparse {type(result).__name__}, which is not written "
                f"into a dense array implicitly; rebind (x = x {_SYMBOLS[name]} A) or densify the operand first"
            )
        if result.dtype != self.dtype:
            raise TypeError(
                f"xp.Array.__i{name}__: the result has dtype {result.dtype}, but an in-place operation "
                f"cannot change the array's dtype {self.dtype}"
            )
        if result.shape != self.shape:
            raise ValueError(
                f"xp.Array.__i{name}__: the result has shape {result.shape}, but an in-place operation "
                f"cannot change the array's shape {self.shape}"
            )
        self._assign(result._value)
        return self

    operator.__name__ = operator.__qualname__ = f"__i{name}__"
    operator.__doc__ = f"``self {name}= other``: self rebound to xp.{fn.__name__}(self, other)."
    return operator


def _unary(name: str, fn: Callable[[Any], Array]) -> Callable[[Array], Array]:
    compute, where = _implementation(fn)

    def operator(self: Array, /) -> Array:
        try:
            return compute(self)
        except Exception as error:
            return routing.failed(error, where, fn, (self,), {})

    operator.__name__ = operator.__qualname__ = f"__{name}__"
    operator.__doc__ = f"xp.{fn.__name__}(self)."
    return operator


def _implementation(fn: Callable[..., Array]) -> tuple[Callable[..., Any], str]:
    """The implementation of the public function ``fn``, and its public name (``"xp.add"``)."""
    return fn.__wrapped__, f"xp.{routing.public_name(fn)}"  # type: ignore[attr-defined]


def install(cls: type, *, in_place: bool = True) -> None:
    """Install the operators on ``cls`` (``xp.Array``; the sparse types, which are immutable,
    without the in-place ones: ``A *= 2`` then rebinds the name to ``A * 2``)."""
    for name, fn in BINARY.items():
        setattr(cls, f"__{name}__", _forward(name, fn))
        setattr(cls, f"__r{name}__", _reflected(name, fn))
        if in_place:
            setattr(cls, f"__i{name}__", _in_place(name, fn))
    for name, fn in COMPARISON.items():
        setattr(cls, f"__{name}__", _forward(name, fn))
    for name, unary in UNARY.items():
        setattr(cls, f"__{name}__", _unary(name, unary))
