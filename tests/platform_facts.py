"""Facts about the platform the tests run on, and the ``cpu_only`` marker.

The suite runs on JAX's default backend: the CPU in CI, an accelerator (a TPU) where one is the
default. Some tests need the CPU itself (xp.sparse's native C++ kernel, simulated devices,
multi-process clusters of CPU devices, XLA's CPU code): they are marked
``@pytest.mark.cpu_only(reason="...")`` (or a module's ``pytestmark``), and skipped, with their
reason, where the default backend is not the CPU (tests/conftest.py applies :func:`cpu_only_skip`).

A child process that imports JAX would open the accelerator too, and a TPU chip admits one
process (a second fails on libtpu's lock file): tests/subprocess_env.py runs children on the CPU
(``JAX_PLATFORMS=cpu``) where this process's backend is not the CPU.
"""

import jax
import pytest

BACKEND = jax.default_backend()  # "cpu", "tpu", "gpu"
ON_CPU = BACKEND == "cpu"


def cpu_only_skip(item: pytest.Item, backend: str = BACKEND) -> pytest.MarkDecorator | None:
    """The skip mark for ``item`` when it is marked ``cpu_only`` and ``backend`` is not the CPU,
    else None. The marker must give its reason (why the test needs the CPU)."""
    mark = item.get_closest_marker("cpu_only")
    if mark is None:
        return None
    reason = mark.kwargs.get("reason") or (mark.args[0] if mark.args else None)
    if not reason:  # (checked on every backend, so that CI finds a marker without one)
        raise pytest.UsageError(f"{item.nodeid}: cpu_only needs reason=... (why the test needs the CPU)")
    if backend == "cpu":
        return None
    # skipif(True), not skip: skipif marks are evaluated first, and this reason must be the one shown
    return pytest.mark.skipif(True, reason=f"needs JAX's CPU backend (this run's is {backend}): {reason}")


# Hardware differences the tests expect, by name (not tolerances loosened everywhere):

COMPLEX_TRANSCENDENTAL_RTOL = 1e-5 if ON_CPU else 5e-5
"""How far complex64 derivatives that are jax.numpy's rules may be from their references,
relatively: those run on the float32 logarithms and exponentials XLA:TPU approximates (``tanh``'s
derivative at ``-1.5`` is 3.9e-5 off there); xp's complex64 functions themselves are formed from
the accurate ones (xp/_float32_accuracy.py)."""

FLOAT32_DIVISION_RTOL = 0.0 if ON_CPU else 2 * 2.0**-23
"""How far float32 division may be from the correctly rounded quotient, relatively: XLA's CPU
divides as IEEE 754 says; XLA:TPU through the divisor's reciprocal, up to 1.5e-7 off for normal
operands (xp scales the divisors that would take it further: xp/_float32_accuracy.py)."""

DERIVATIVE_SIDE_ON_BRANCH_CUTS = ON_CPU
"""Whether a complex function's derivative at a point of its branch cut takes the side its zero's
sign picks, as jax.numpy's does, on this backend. On a cut the derivative is one-sided and only the
sign of a zero part decides which side; XLA:TPU's compiled arithmetic does not keep the signs of
intermediate zeros (``asin``'s derivative at ``2 + 0j`` came out ``+0.577j`` in one program and
``-0.577j`` in jax.numpy's), so there the tests compare derivatives off the cuts only."""
