"""Checked mode: ``xp.checked(f)`` runs ``f`` with JAX's ``checkify`` (docs/checked.md).

Under ``jax.jit`` and ``vmap`` xp cannot check indices on their values, and JAX clamps reads and
drops writes out of bounds. ``xp.checked(f)`` turns xp's checks (``xp._checked.emitted``) and, on
request, JAX's NaN and division checks into run-time checks: a call that fails one raises an
:class:`~xp._errors.CheckError` (an IndexError, FloatingPointError or ZeroDivisionError) whose
message names the xp function and the offending index, as the eager call would.

How the error gets out. Called outside any trace, the wrapper checkifies ``f``, runs it and
raises. Called inside one (``jax.jit(xp.checked(f))``, ``jax.vmap(xp.checked(f))``) it cannot
raise: the error is a traced value. It then returns ``f``'s result with the error attached to
its first array: a :class:`_Carrier` (an ``xp.Array``) whose pytree children are the array and
the error's leaves. When ``jax.jit`` or ``vmap`` hand back their concrete results they rebuild
the pytree, and rebuilding a carrier from concrete leaves raises the error, or gives the plain
array. So the error surfaces where the transformation returns, with its class and message.
(A rebuild that changes the structure must not happen on JAX's C++ fast path of a jitted call;
``run`` keeps such calls off it.)

What is checked: xp's index checks, emitted only in checked mode (``xp._checked.emitted``), and JAX's
per-primitive NaN and division checks on request. JAX's own out-of-bounds checks of gathers and
scatters (``checkify.index_checks``) are not used: they see xp's indices after the negative ones
were counted from the end, and they fire on the out-of-range indices that JAX's sparse arrays
use on purpose for their padding.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import jax
import jax.core
import numpy as np
from jax.experimental import checkify

from xp._array import Array, wrap
from xp._checked import emitted as checks
from xp._errors import CheckedDivisionError, CheckedNaNError, describe
from xp._jit import Tracer

F = TypeVar("F", bound=Callable[..., Any])

# checkify's error sets for xp's categories. user_checks is always on: xp's own checks are
# checkify.debug_check calls, functionalized with the user's own checkify.check calls (which
# would otherwise fail to compile under jax.jit).
_JAX_ERRORS = {"index": checkify.user_checks, "nan": checkify.nan_checks, "division": checkify.div_checks}


def checked(f: F, /, *, errors: Iterable[str] = ("index",)) -> F:
    """``f``, checked at run time under ``jax.jit`` and ``vmap`` too (docs/checked.md).

    ``errors`` are the categories checked: ``"index"`` (out-of-bounds indices of ``x[i]``,
    ``x[i] = v``, ``x[mask] = values``, ``take``, ``take_along_axis`` and sparse indexing),
    ``"nan"`` (a JAX primitive produced a NaN) and ``"division"`` (a division by zero). A
    failed check raises an ``xp.CheckError`` subclass (also an ``IndexError``,
    ``FloatingPointError`` or ``ZeroDivisionError``) naming the function and the index.

    The result takes and returns what ``f`` does, and composes with ``jax.jit`` and
    ``jax.vmap`` both ways; ``jax.jit(xp.checked(f))`` is the fast one (checked and compiled
    once). Arrays that ``f`` writes into are its own copies, as under ``jax.jit``.
    """
    if not callable(f):
        raise TypeError(f"xp.checked: f must be callable, got {describe(f)}")
    categories = _categories(errors)
    jax_errors = checkify.user_checks.union(*(_JAX_ERRORS[c] for c in categories))

    checkified = checkify.checkify(f, errors=jax_errors)
    # f compiled already (xp.checked(jax.jit(f))): f and its checks compiled together, as
    # jax.jit(checkify(f)), rather than checkify interpreting f's jaxpr on every call (which
    # dispatches a freshly checked copy of the computation each time: about 150x slower)
    compiled = _Compiled(checkified) if _is_jitted(f) else None

    @functools.wraps(f)
    def run(*args: Any, **kwargs: Any) -> Any:
        # fresh wrappers: f's writes into its arguments stay inside (checkify closes over them)
        args, kwargs = jax.tree.map(lambda leaf: leaf, (args, kwargs))
        with checks.MODE(categories):  # a JAX user context: part of jax.jit's cache key
            if compiled is not None and not _traced((args, kwargs)):
                error, out = compiled(*args, **kwargs)
            else:
                error, out = checkified(*args, **kwargs)
        leaves, treedef = jax.tree.flatten(error)
        if not leaves:  # no check was emitted
            return out
        if not any(isinstance(leaf, Tracer) for leaf in leaves):
            raise_failure(error)
            return out
        # JAX's C++ fast path of a jitted call assumes that rebuilding its results keeps their
        # pytree structure (it flattens them again once, and then reads that many buffers per
        # call); a carrier rebuilt from concrete leaves is a plain array, with fewer leaves, and
        # the process aborts (std::bad_alloc). A jaxpr with an effect never takes that path:
        # this check, always true, gives the enclosing trace one. The cost, in checked mode
        # only: JAX's Python dispatch path, about 50-100 µs per call on CPU.
        checkify.debug_check(True, "xp.checked: results carry the checks out of the transformation")
        return _attach(out, leaves, treedef)

    return run  # type: ignore[return-value]


class _Compiled:
    """``jax.jit(checkified)``, with the arguments that hold no array static (f's own static
    arguments must stay static; any other such argument f's jit would trace anyway)."""

    def __init__(self, checkified: Callable[..., Any]) -> None:
        self.checkified = checkified
        self.jitted: dict[tuple[tuple[int, ...], tuple[str, ...]], Callable[..., Any]] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        numbers = tuple(i for i, a in enumerate(args) if _static(a))
        names = tuple(sorted(k for k, a in kwargs.items() if _static(a)))
        jitted = self.jitted.get((numbers, names))
        if jitted is None:
            jitted = jax.jit(self.checkified, static_argnums=numbers, static_argnames=names)
            self.jitted[numbers, names] = jitted
        return jitted(*args, **kwargs)


def _static(argument: Any) -> bool:
    """Holds no array, and is hashable (jit's condition for a static argument)."""
    if any(isinstance(leaf, (jax.Array, np.ndarray, np.generic)) for leaf in jax.tree.leaves(argument)):
        return False
    try:
        hash(argument)
    except TypeError:
        return False
    return True


def _traced(tree: Any) -> bool:
    return any(isinstance(leaf, Tracer) for leaf in jax.tree.leaves(tree))


def _is_jitted(f: Any) -> bool:
    """Whether ``f`` is a ``jax.jit``-wrapped function (whose arguments are all jit's anyway)."""
    return callable(getattr(f, "lower", None)) and callable(getattr(f, "trace", None))


def _categories(errors: Iterable[str]) -> frozenset[str]:
    if isinstance(errors, str) or not isinstance(errors, Iterable):
        raise TypeError(f"xp.checked: errors must be a tuple of {', '.join(map(repr, checks.CATEGORIES))}, "
                        f"got {describe(errors)}")  # fmt: skip
    chosen = tuple(errors)
    for c in chosen:
        if c not in checks.CATEGORIES:
            raise ValueError(
                f"xp.checked: errors must name categories among {', '.join(map(repr, checks.CATEGORIES))}, got {c!r}"
            )
    return frozenset(chosen)


def raise_failure(error: checkify.Error) -> None:
    """Raise the xp exception of a concrete checkify ``error``, if a check failed."""
    exception: Any = error.get_exception()  # a checkify JaxException (FailedCheckError, NaNError, ...)
    if exception is None:
        return
    where = ""
    mapping = getattr(exception, "error_mapping", None)
    if mapping is not None:  # under vmap: the first example that failed
        first = min(mapping)
        exception = mapping[first]
        where = f" (at mapped index {', '.join(map(str, first))})"
    if hasattr(exception, "fmt_string"):  # a checkify.check or debug_check (FailedCheckError)
        kind = checks.KINDS.get(exception.fmt_string)
        if kind is None:  # the user's own checkify.check: raised as checkify raises it
            raise checkify.JaxRuntimeError(str(exception) + where) from exception
        raise kind(exception.fmt_string.format(*exception.args, **exception.kwargs) + where) from None
    name = type(exception).__name__
    if name == "NaNError":
        raise CheckedNaNError(
            f"xp.checked: a NaN was produced by the JAX primitive {exception.prim}{where}{_origin(exception)}"
        ) from None
    if name == "DivisionByZeroError":
        raise CheckedDivisionError(f"xp.checked: division by zero{where}{_origin(exception)}") from None
    raise checkify.JaxRuntimeError(str(exception) + where) from exception


def _origin(exception: Any) -> str:
    """``, in <file>:<line> (<function>)``: the innermost frame outside JAX and xp."""
    frames = getattr(getattr(exception, "traceback_info", None), "frames", None) or ()
    for frame in frames:
        if os.path.abspath(frame.file_name).startswith(_LIBRARIES):
            continue
        return f", in {os.path.basename(frame.file_name)}:{frame.line_num} ({frame.function_name})"
    return ""


_XP_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # xp/, above xp/_checked/
_LIBRARIES = (
    *(os.path.dirname(os.path.abspath(path)) + os.sep for path in (jax.__file__, checkify.__file__, np.__file__)),
    _XP_PACKAGE + os.sep,
)


# --- the error's way out of jax.jit and vmap ------------------------------------------------


class _Carrier(Array):
    """``f``'s first result array, carrying a traced checkify error out of a transformation.

    A pytree whose children are the array's value and the error's leaves. Rebuilt from concrete
    leaves (what ``jax.jit`` and ``vmap`` return) it raises the error, or is the plain array
    (a jax array again where ``f`` returned one); from traced or placeholder leaves it stays a
    carrier. It is an ``xp.Array``, so code that uses it inside the trace works, but the error
    then stays behind: return checked results from the transformation (docs/checked.md).
    """

    __slots__ = ("_error_leaves", "_error_tree", "_raw")
    _error_leaves: list[Any]  # the traced checkify error's leaves
    _error_tree: Any  # and its treedef
    _raw: bool  # f returned a jax array here, not an xp array


def _carrier(value: Any, leaves: list[Any], treedef: Any, raw: bool) -> _Carrier:
    result = object.__new__(_Carrier)
    result._value = value
    result._error_leaves = leaves
    result._error_tree = treedef
    result._raw = raw
    return result


def _concrete(leaf: Any) -> bool:
    return isinstance(leaf, (jax.Array, np.ndarray, np.generic)) and not isinstance(leaf, Tracer)


def _flatten(c: _Carrier) -> tuple[tuple[Any, ...], tuple[Any, bool]]:
    return (c._value, *c._error_leaves), (c._error_tree, c._raw)


def _unflatten(aux: tuple[Any, bool], children: Any) -> Any:
    treedef, raw = aux
    value, *leaves = children
    if all(_concrete(leaf) for leaf in leaves) and _concrete(value):
        raise_failure(jax.tree.unflatten(treedef, leaves))
        return value if raw else wrap(value)
    return _carrier(value, leaves, treedef, raw)


jax.tree_util.register_pytree_node(_Carrier, _flatten, _unflatten)


def _attach(out: Any, leaves: list[Any], treedef: Any) -> Any:
    """``out`` with the traced error attached to its first array (see the module)."""
    flat, structure = jax.tree.flatten(out, is_leaf=lambda x: isinstance(x, Array))
    for i, leaf in enumerate(flat):
        if isinstance(leaf, Array):
            flat[i] = _carrier(leaf._value, leaves, treedef, raw=False)
            return jax.tree.unflatten(structure, flat)
        if isinstance(leaf, (jax.Array, Tracer)):
            flat[i] = _carrier(leaf, leaves, treedef, raw=True)
            return jax.tree.unflatten(structure, flat)
    raise TypeError(
        "xp.checked: under jax.jit or vmap, f must return at least one array: the result of the "
        "checks travels with it out of the transformation"
    )
