"""Public functions and how calls with sparse arguments reach their sparse implementations.

Every public xp function is made by :func:`api` (or, for the generated element-wise functions,
registered with :func:`publish`): its argument errors are reported under its public name, and
it is the one place where a call with a sparse argument is routed.

The route, step by step:

1. The dense code converts its arguments with ``xp._boundary``; a converter that meets a sparse
   array raises :class:`SparseArgument` (nothing has been computed yet).
2. :func:`api` catches it and calls the implementation that ``xp.sparse`` registered for the
   function's public name with :func:`implements`, with the call's arguments unchanged.
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
import inspect
import linecache
import warnings
from collections.abc import Callable
from types import CodeType
from typing import Any, NoReturn, TypeVar

import jax.errors

from xp import _resharding as resharding
from xp._array import add_array_types
from xp._errors import ArgumentError, SparseEfficiencyWarning

F = TypeVar("F", bound=Callable[..., Any])


class SparseArgument(Exception):
    """Internal signal: a converter met a sparse array; :func:`api` routes the call."""


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
    """Make ``fn`` the public function of its name: argument errors reported under
    ``xp.<name>``, sparse arguments routed (see the module).

    From its first call on, the public function has ``fn``'s own parameters (see
    :func:`_forwarding`): it passes them on and leaves the rest to :func:`_failed`, which only
    an exception reaches."""
    name = public_name(fn)
    where = f"xp.{name}"

    def failed(error: Exception, public: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return _failed(error, name, where, fn, public, args, kwargs)

    return publish(name, functools.update_wrapper(_forwarding(fn, failed, where), fn))  # type: ignore[return-value]


def _failed(
    error: Exception,
    name: str,
    where: str,
    fn: Callable[..., Any],
    public: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """What the public function ``xp.<name>`` does when ``fn`` raised ``error``."""
    if isinstance(error, ArgumentError):
        raise error.public(where) from None
    if isinstance(error, SparseArgument):
        return route_sparse(name, *_as_called(fn, args, kwargs))
    if isinstance(error, jax.errors.InconclusiveDimensionOperation):  # (JAX's words name none of xp's arguments)
        raise NotImplementedError(
            f"{where} cannot compute with a size jax.export leaves symbolic here ({str(error).splitlines()[0]}); "
            "export with a concrete size for that axis"
        ) from None
    # placement: a refusal over Explicit mesh axes, or mixed devices; any other error unchanged
    return resharding.recover(error, where, public, args, kwargs)


# --- forwarding with the function's own parameters --------------------------------------------
#
# A public function written ``def public(*args, **kwargs): return fn(*args, **kwargs)`` packs its
# arguments into a tuple and a dict and unpacks them again: up to 1 µs a call more than passing
# ``fn``'s own parameters on by name, as much as the rest of what xp adds to a cached kernel's
# dispatch (bench/RESULTS.md, "Eager calls at small shapes"). So that function's code is
# generated, from source text with ``fn``'s parameter names, compiled once for each list of them.
# Compiling the 43 lists of xp's namespace at import would cost more than the rest of xp's own
# import (bench/RESULTS.md, "Import time"): so the public function starts as the packing kind, and
# its first call compiles (or finds) its own code and puts it in place (``__code__`` is writable
# where the closure's variables are the same: ``_xp_fn_``, ``_xp_failed_``, ``public`` and ``where`` in both).

_OWN_CODE: dict[tuple[Any, ...], CodeType] = {}


def _forwarding(fn: Callable[..., Any], failed: Callable[..., Any], where: str) -> Callable[..., Any]:
    """A function that returns ``fn(...)`` called with its arguments, or, where that raised,
    ``failed(error, itself, args, kwargs)``; from its first call on, with ``fn``'s parameters and
    defaults, passing the positional ones by position and the keyword-only ones by name.

    Its frame holds its public name (``"xp.asarray"``) in a variable ``where`` and, whichever
    code it runs, the globals of this module (a function keeps its own when its code is
    replaced): a NarrowingWarning finds the one and, by the other, looks past the frame to the
    caller's line (``xp._narrowing.warn``)."""
    public = _packing(None, failed, where)
    fn_cell = public.__closure__[public.__code__.co_freevars.index("_xp_fn_")]  # type: ignore[index]

    def first_call(*args: Any, **kwargs: Any) -> Any:
        own = _own_code(fn)
        # (the defaults first: the packing code reads none; fn's code then finds them in place)
        public.__defaults__ = fn.__defaults__
        public.__kwdefaults__ = None if fn.__kwdefaults__ is None else dict(fn.__kwdefaults__)
        public.__code__ = own
        fn_cell.cell_contents = fn
        return fn(*args, **kwargs)

    fn_cell.cell_contents = first_call
    return public


def _packing(_xp_fn_: Any, _xp_failed_: Any, where: str) -> Callable[..., Any]:
    def public(*args: Any, **kwargs: Any) -> Any:
        where  # noqa: B018  # pyright: ignore[reportUnusedExpression]  (a variable of the frame: see _forwarding)
        try:
            return _xp_fn_(*args, **kwargs)
        except Exception as error:
            return _xp_failed_(error, public, args, kwargs)

    return public


def _own_code(fn: Callable[..., Any]) -> CodeType:
    """The code of a ``public`` of :func:`_packing`'s closure with ``fn``'s parameters."""
    code = fn.__code__
    n_positional, n_keyword = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    positional, keyword = names[:n_positional], names[n_positional : n_positional + n_keyword]
    rest = iter(names[n_positional + n_keyword :])
    star = next(rest) if code.co_flags & inspect.CO_VARARGS else None
    star_star = next(rest) if code.co_flags & inspect.CO_VARKEYWORDS else None
    first_default = n_positional - len(fn.__defaults__ or ())
    keyword_defaults = fn.__kwdefaults__ or {}
    parameters = [p + ("=_" if i >= first_default else "") for i, p in enumerate(positional)]
    if code.co_posonlyargcount:
        parameters.insert(code.co_posonlyargcount, "/")
    if star is not None or keyword:
        parameters.append("*" + (star or ""))
    parameters += [k + ("=_" if k in keyword_defaults else "") for k in keyword]
    parameters += [] if star_star is None else ["**" + star_star]
    layout = tuple(parameters)
    own = _OWN_CODE.get(layout)
    if own is None:
        passed = [*positional, *([] if star is None else ["*" + star])]
        passed_by_name = [f"{k}={k}" for k in keyword] + ([] if star_star is None else ["**" + star_star])
        kwargs = [f"{k!r}: {k}" for k in keyword] + ([] if star_star is None else ["**" + star_star])
        source = (
            "def make(_xp_fn_, _xp_failed_, where, _):\n"
            f"    def public({', '.join(parameters)}):\n"
            "        where\n"
            "        try:\n"
            f"            return _xp_fn_({', '.join(passed + passed_by_name)})\n"
            "        except Exception as _xp_error_:\n"
            f"            return _xp_failed_(_xp_error_, public, ({''.join(a + ', ' for a in passed)}), {{{', '.join(kwargs)}}})\n"
            "    return public\n"
        )
        filename = f"<xp public function ({', '.join(parameters)})>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # (for tracebacks)
        namespace: dict[str, Any] = {}
        exec(compile(source, filename, "exec"), namespace)
        own = _OWN_CODE[layout] = namespace["make"](None, None, None, None).__code__
    return own.replace(co_name=code.co_name, co_qualname=code.co_qualname)


def _as_called(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of a call of the generated public function less those it filled in with
    ``fn``'s defaults, as the caller wrote them (a default passed explicitly is left out too):
    for a sparse implementation, whose own defaults apply."""
    keyword_defaults = fn.__kwdefaults__ or {}
    kwargs = {k: v for k, v in kwargs.items() if k not in keyword_defaults or v is not keyword_defaults[k]}
    defaults = fn.__defaults__ or ()
    code = fn.__code__
    if defaults and not code.co_flags & inspect.CO_VARARGS:
        first_default = code.co_argcount - len(defaults)
        n = len(args)
        while n > first_default and args[n - 1] is defaults[n - 1 - first_default]:
            n -= 1
        args = args[:n]
    return args, kwargs


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
        stacklevel=4,  # the caller of the public function
    )
    dense_args = tuple(_dense_copy(a) for a in args)
    dense_kwargs = {k: _dense_copy(v) for k, v in kwargs.items()}
    return PUBLIC_FUNCTIONS[name](*dense_args, **dense_kwargs)
