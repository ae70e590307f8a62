"""The opt-in to narrowing 64-bit requests to 32 bits while JAX's 64-bit mode is off.

With JAX's 64-bit mode off (JAX's default) the four 64-bit dtypes do not exist, and xp refuses a
request for one rather than truncating silently (``xp._dtypes``). Client code that hard-codes
``float64`` or ``int64``, or hands over float64 NumPy results, then fails. Narrowing is the way
to say "make it 32 bits, I know":

- ``with xp.narrow_64bit(): ...`` turns it on in a block (``xp.narrow_64bit(False)`` turns it
  off in one), for the current thread or asyncio task only: the state is a ``ContextVar``.
- ``XP_NARROW_64BIT=1`` in the environment turns it on everywhere a block does not decide. It is
  read at call time, on the path that would otherwise raise, so setting it after ``import xp``
  works too.

While on, and only while JAX's 64-bit mode is off, the requests that would be errors become
their 32-bit counterparts (``xp._dtypes.NARROWED``) with a :class:`~xp._errors.NarrowingWarning`
that names the function and the parameter: ``dtype=`` arguments (``boundary.dtype``), NumPy
arrays and scalars coming in (``boundary.from_numpy``: ``asarray`` and every function's array
arguments), dtype arguments of ``result_type``, ``finfo`` and ``iinfo`` (their answers describe
the arrays a 64-bit request now gives). Integers out of the 32-bit range, and finite floats
beyond float32's range, raise OverflowError instead of wrapping or becoming infinite. Left
exact: the predicates ``isdtype`` and ``can_cast`` (questions about the 13 dtypes, they create
nothing), the dtypes reported as available, and promotions (see ``xp._dtypes``).

Nothing here runs on the ordinary path: the callers consult :func:`narrowed` only where they
would raise the 64-bit error. Under ``jax.jit`` a function is traced once: what it narrowed is
fixed in its cached trace, like any Python state read while tracing.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np

from xp import _dtypes as dt
from xp._errors import NarrowingWarning, describe, fail

ENVIRONMENT_VARIABLE = "XP_NARROW_64BIT"

_STATE: ContextVar[bool | None] = ContextVar("xp.narrow_64bit", default=None)
"""True or False inside ``narrow_64bit(...)`` blocks; None outside (the environment decides)."""

_TRUE = ("1", "true", "t", "yes", "y", "on")
_FALSE = ("0", "false", "f", "no", "n", "off", "")


@contextlib.contextmanager
def narrow_64bit(enabled: bool = True) -> Iterator[None]:
    """Narrow 64-bit dtype requests and 64-bit NumPy data to 32 bits inside the block, while JAX's
    64-bit mode is off (with it on, nothing changes).

    ``with xp.narrow_64bit(): scipy.stats.describe(x)``: ``dtype=xp.float64`` gives float32,
    ``xp.asarray(numpy_float64_array)`` gives a float32 array, int64 data gives int32 (raising
    OverflowError where a value does not fit), each with an ``xp.NarrowingWarning`` that names
    the function and the parameter. ``enabled=False`` turns narrowing off inside the block (also
    where ``XP_NARROW_64BIT=1`` turns it on). Blocks nest, and each restores the state it found;
    the state belongs to the current thread or asyncio task. Also usable as a decorator.
    """
    if enabled is not True and enabled is not False:
        raise TypeError(f"xp.narrow_64bit: enabled must be a bool, got {describe(enabled)}")
    token = _STATE.set(enabled)
    try:
        yield
    finally:
        _STATE.reset(token)


def source() -> str | None:
    """What turned narrowing on (for messages), or None where it is off."""
    state = _STATE.get()
    if state is not None:
        return "xp.narrow_64bit is on" if state else None
    value = os.environ.get(ENVIRONMENT_VARIABLE)
    if value is None or value.strip().lower() in _FALSE:
        return None
    if value.strip().lower() in _TRUE:
        return f"{ENVIRONMENT_VARIABLE}={value}"
    fail(ValueError, f"the environment variable {ENVIRONMENT_VARIABLE} must be 1 or 0 (or true/false, "
         f"yes/no, on/off), got {value!r}")  # fmt: skip


def narrowed(dtype: np.dtype, subject: str) -> np.dtype | None:
    """The 32-bit counterpart of the unavailable 64-bit ``dtype``, with a warning saying
    ``<function>: <subject>; narrowed to <dtype32> (...)``; None where narrowing is off (the
    caller then raises its 64-bit error). ``subject`` names the parameter: "dtype is float64"."""
    why = source()
    if why is None:
        return None
    narrow = dt.NARROWED[dtype]
    message = f"{subject}; narrowed to {narrow} ({why})"
    _messages(message).append(message)
    return narrow


def host_data(x: np.ndarray | np.generic, param: str) -> np.ndarray | None:
    """NumPy data of an unavailable 64-bit dtype as its 32-bit counterpart (checked, with a
    warning), or None where narrowing is off."""
    why = source()
    if why is None:
        return None
    narrow = dt.NARROWED[x.dtype]
    message = f"{param} has dtype {x.dtype}; narrowed to {narrow} ({why})"
    messages = _messages(message)
    result = checked_cast(x, narrow, param)  # (an integer that does not fit raises, without a warning)
    messages.append(message)
    return result


_NARROWING = " (narrowing would {}; enable JAX's 64-bit mode to keep it)"


def checked_cast(x: np.ndarray | np.generic, dtype: np.dtype, param: str, narrowing: bool = True) -> np.ndarray:
    """``x`` as ``dtype``, raising OverflowError for an integer that does not fit (where NumPy
    would wrap it) or a finite float beyond the range of ``dtype`` (where it would become inf).
    ``narrowing``: the cast narrows 64-bit data because JAX's 64-bit mode is off (the message
    says so), rather than one that ``dtype=`` asked for."""
    host = np.asarray(x)
    if host.dtype.kind in "iu" and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if host.size and (host.min() < info.min or host.max() > info.max):
            bad = host.min() if host.min() < info.min else host.max()
            fail(OverflowError, f"{param} holds the {host.dtype} value {int(bad)}, out of bounds for {dtype} "
                 f"[{info.min}, {info.max}]" + (_NARROWING.format("wrap it") if narrowing else ""))  # fmt: skip
        return host.astype(dtype)
    with np.errstate(over="ignore"):
        result = host.astype(dtype)
    if host.dtype.kind in "fc" and dtype.kind in "fc" and host.size:
        overflowed = np.isinf(result) & np.isfinite(host)
        if host.dtype.kind == "c":
            overflowed = (np.isinf(np.real(result)) & np.isfinite(np.real(host))) | (
                np.isinf(np.imag(result)) & np.isfinite(np.imag(host))
            )
        if overflowed.any():
            bad = host[overflowed].flat[0]
            fail(OverflowError, f"{param} holds the {host.dtype} value {bad}, beyond the range of {dtype}"
                 + (_NARROWING.format("make it infinite") if narrowing else " (it would become infinite)"))  # fmt: skip
    return result


# --- the warning ----------------------------------------------------------------------------
#
# A warning names the public function and is attributed to the line that called it (so that
# Python's default filter shows it once per calling line and message). The code that narrows
# knows neither: it is a helper of the boundary, called from any depth. So narrowing is done in
# two passes, both on the path that narrows only: the first meets a value to narrow and raises
# :class:`Narrowing`, before anything is computed (as a sparse argument raises at the boundary);
# the entry point hands it to ``xp._routing.failed``, which calls the entry point again under
# :func:`rerun`; there the values are narrowed and the messages kept, and :func:`rerun` warns with
# each, under the entry point's name, at the stack level of the entry point's caller.


class Narrowing(Exception):
    """Internal signal: a value is to be narrowed outside :func:`rerun` (see above)."""


_MESSAGES: ContextVar[list[str] | None] = ContextVar("xp.narrowing_messages", default=None)
"""The messages of the call being rerun by :func:`rerun`; None outside one."""


def _messages(message: str) -> list[str]:
    """Where to keep ``message``, while a call is rerun; on the first pass, raises :class:`Narrowing`."""
    messages = _MESSAGES.get()
    if messages is None:
        raise Narrowing(message)
    return messages


def rerun(where: str, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], stacklevel: int) -> Any:
    """``call(*args, **kwargs)`` again, narrowing, then a NarrowingWarning ``"<where>: <message>"``
    for each value narrowed, at ``stacklevel`` counted from the caller of this function."""
    messages: list[str] = []
    token = _MESSAGES.set(messages)
    try:
        return call(*args, **kwargs)
    finally:
        _MESSAGES.reset(token)
        for message in messages:
            warnings.warn(NarrowingWarning(f"{where}: {message}"), stacklevel=stacklevel + 1)
