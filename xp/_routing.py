"""Public functions, what their errors become, and how calls with sparse arguments reach their
sparse implementations.

Every public xp function is made by :func:`api`, an ordinary wrapper (the element-wise functions,
written with their own parameters, are registered with :func:`publish`). Whatever an entry point's
implementation raises goes to :func:`failed`, the one place where an argument error is reported
under the public name, a call with a sparse argument is routed, and a narrowing is warned
(``xp._narrowing``). The other entry points (array methods, the sparse types' constructors) use
:func:`reported`, or call :func:`failed` from their own ``except``.

The route, step by step:

1. The dense code converts its arguments with ``xp._boundary``; a converter that meets a sparse
   array raises :class:`SparseArgument` (nothing has been computed yet).
2. :func:`failed` calls the implementation that ``xp.sparse`` registered for the function's
   public name with :func:`implements`, with the call's arguments as the caller wrote them.
3. The implementation returns the (sparse or dense) result, rejects an argument with
   ``fail(...)`` like every xp function, or reports with :func:`dense_result` that the result is
   dense, saying why (``"exp(0) is not 0"``).
4. Where the result is dense, or where no sparse implementation is registered, the call is
   computed by the public function on dense copies of the sparse arguments, with a
   :class:`SparseEfficiencyWarning` that gives the reason. This is the one place xp densifies
   a sparse array; an error under ``warnings.simplefilter("error", SparseEfficiencyWarning)``.

A type registered with :func:`register_own_route` (``xp.sparse.RowPartitioned``, a matrix spread
over a mesh) takes the whole call at step 2 when an argument is of that type: its route computes
the call or raises NotImplementedError; it is never densified here.

The contract of an implementation (docs/DEVELOPING.md): before it reports a dense result it may
only read its arguments (shapes, dtypes, static parameters, stored values): no side effects and
no warnings, because the whole call is then computed again, densely, from the same arguments.

Import order: the dense namespace does not import ``xp.sparse``; ``xp.sparse`` registers its
array types with :func:`register_sparse_types` and its implementations with :func:`implements`
when it is imported.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import jax.errors

from xp import _narrowing as narrowing
from xp import _resharding as resharding
from xp._array import add_array_types
from xp._errors import ArgumentError, SparseEfficiencyWarning, mismatched_devices

F = TypeVar("F", bound=Callable[..., Any])


class SparseArgument(Exception):
    """Internal signal: a converter met a sparse array; :func:`failed` routes the call."""


class DenseResult(Exception):
    """Internal signal from a sparse implementation: the result of this call is dense, because
    ``reason``. The router computes it on dense copies and warns with the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def dense_result(reason: str) -> NoReturn:
    """Report from a sparse implementation that the call's result is dense, and why."""
    raise DenseResult(reason)


# --- registries -----------------------------------------------------------------------------

PUBLIC_FUNCTIONS: dict[str, Callable[..., Any]] = {}
"""Every public function by public name (``"sum"``, ``"linalg.solve"``)."""

SPARSE_IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {}
"""Sparse implementations by the public name of the function they implement."""

SPARSE_TYPES: tuple[type, ...] = ()
"""The sparse array types (empty until ``xp.sparse`` is imported)."""


def register_sparse_types(*types: type) -> None:
    global SPARSE_TYPES
    SPARSE_TYPES = (*SPARSE_TYPES, *(t for t in types if t not in SPARSE_TYPES))
    add_array_types(*types)  # (Array(_value=...) refuses one, put by a pytree function where a dense leaf goes)


def is_sparse(x: object) -> bool:
    return bool(SPARSE_TYPES) and isinstance(x, SPARSE_TYPES)


OWN_ROUTES: dict[type, Callable[[str, tuple[Any, ...], dict[str, Any]], Any]] = {}
"""Sparse types that route every call themselves (``xp.sparse.RowPartitioned``): ``route(name, args,
kwargs)`` computes the call or raises; nothing is densified for them by this module, because such
an array is meant to be larger than a dense copy could be."""


def register_own_route(cls: type, route: Callable[[str, tuple[Any, ...], dict[str, Any]], Any]) -> None:
    register_sparse_types(cls)
    OWN_ROUTES[cls] = route


def implements(*names: str) -> Callable[[F], F]:
    """Register the decorated function as the sparse implementation of ``xp.<name>`` for each
    name; a name that is not a public function's, or that has an implementation already, is an
    error at import time."""

    def register(fn: F) -> F:
        for name in names:
            if name not in PUBLIC_FUNCTIONS:
                raise RuntimeError(f"xp.sparse: {name!r} is not the public name of an xp function")
            if name in SPARSE_IMPLEMENTATIONS:
                raise RuntimeError(f"xp.sparse: two sparse implementations of xp.{name}")
            SPARSE_IMPLEMENTATIONS[name] = fn
        return fn

    return register


# --- public functions -----------------------------------------------------------------------


def public_name(fn: Callable[..., Any]) -> str:
    """``"sum"`` for ``xp.sum``, ``"linalg.solve"`` for ``xp.linalg.solve``."""
    parts = [p for p in fn.__module__.split(".")[1:] if not p.startswith("_")]
    return ".".join([*parts, fn.__name__])


def publish(name: str, public: F) -> F:
    """Register ``public`` as the public function ``xp.<name>`` (its module and registry entry)."""
    public.__module__ = "xp" if "." not in name else "xp." + name.rsplit(".", 1)[0]
    PUBLIC_FUNCTIONS[name] = public
    return public


def api(fn: F) -> F:
    """Make ``fn`` the public function of its name (an :func:`entry_point` named ``xp.<name>``:
    argument errors reported under that name, sparse arguments routed, narrowing warned)."""
    name = public_name(fn)
    return publish(name, entry_point(fn, f"xp.{name}"))


def reported(where: str) -> Callable[[F], F]:
    """Decorate an entry point that is not an xp function (a method, a sparse type's constructor):
    :func:`entry_point` named ``where`` (``"xp.sparse.BCOO"``)."""
    return functools.partial(entry_point, where=where)


def entry_point(fn: F, where: str) -> F:
    """An ordinary wrapper of ``fn`` that hands whatever it raised to :func:`failed`."""

    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            return failed(error, where, entry, args, kwargs)

    return entry  # type: ignore[return-value]


def failed(
    error: Exception, where: str, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """What the entry point ``where`` (``"xp.sum"``), called as ``call(*args, **kwargs)``, does when
    its implementation raised ``error``: the one place an internal error becomes a public one.

    Every entry point calls it from its own frame (``except Exception as error: return failed(...)``),
    so that a narrowing warning, issued here, is attributed to the entry point's caller."""
    if isinstance(error, ArgumentError):
        raise error.public(where) from None
    if isinstance(error, narrowing.Narrowing):
        return narrowing.rerun(where, call, args, kwargs, stacklevel=3)  # (failed, the entry point, its caller)
    name = where[3:]
    if name not in PUBLIC_FUNCTIONS:  # a method or the sparse API: only the words of JAX's placement errors
        mismatch = (
            mismatched_devices(error, where, (*args, *kwargs.values())) if isinstance(error, ValueError) else None
        )
        if mismatch is not None:
            raise mismatch from None
        raise error
    if isinstance(error, SparseArgument):
        try:
            return route_sparse(name, args, kwargs)
        except narrowing.Narrowing:  # (from the sparse implementation)
            return narrowing.rerun(where, call, args, kwargs, stacklevel=3)
    if isinstance(error, jax.errors.InconclusiveDimensionOperation):  # (JAX's words name none of xp's arguments)
        raise NotImplementedError(
            f"{where} cannot compute with a size jax.export leaves symbolic here ({str(error).splitlines()[0]}); "
            "export with a concrete size for that axis"
        ) from None
    # placement: a refusal over Explicit mesh axes, or mixed devices; any other error unchanged
    return resharding.recover(error, where, call, args, kwargs)


def route_sparse(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call the sparse implementation of ``xp.<name>``, or compute the call on dense copies of
    the sparse arguments, with a warning, where it has none or its result is dense."""
    where = f"xp.{name}"
    for arg in (*args, *kwargs.values()):
        own = OWN_ROUTES.get(type(arg))
        if own is not None:
            try:
                return own(name, args, kwargs)
            except ArgumentError as e:
                raise e.public(where) from None
    implementation = SPARSE_IMPLEMENTATIONS.get(name)
    if implementation is None:
        return _densely(name, f"{where} has no sparse implementation", args, kwargs)
    try:
        return implementation(*args, **kwargs)
    except ArgumentError as e:
        raise e.public(where) from None
    except DenseResult as e:
        return _densely(name, f"{where}: {e.reason}", args, kwargs)


def _dense_copy(x: Any) -> Any:
    if is_sparse(x):
        return x.todense()
    if type(x) in (list, tuple):
        return type(x)(_dense_copy(v) for v in x)
    return x


def _densely(name: str, why: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    warnings.warn(
        SparseEfficiencyWarning(
            f"{why}: computed on dense copies of the sparse arguments (call .todense() first to say so, "
            "or make SparseEfficiencyWarning an error to forbid it)"
        ),
        stacklevel=5,  # the caller of the entry point (_densely, route_sparse, failed, the entry point)
    )
    dense_args = tuple(_dense_copy(a) for a in args)
    dense_kwargs = {k: _dense_copy(v) for k, v in kwargs.items()}
    return PUBLIC_FUNCTIONS[name](*dense_args, **dense_kwargs)
