"""What xp's computations on the host share: they run where a platform has no kernel of its own
(``xp.linalg.eig`` and ``eigvals`` off the CPU, ``xp.sparse.linalg.spsolve`` on a TPU), on NumPy or
SciPy through ``jax.pure_callback``.

``jax.pure_callback`` places its operands on one of JAX's CPU devices, so these computations need
JAX's CPU backend beside the accelerator. It is there by default; ``JAX_PLATFORMS=tpu`` leaves it
out, and the callback then fails inside the compiled program with JAX's message about
``pure_callback``: :func:`require_cpu_backend` says it first, in xp's terms.
"""

from __future__ import annotations

import jax

from xp._errors import fail


def require_cpu_backend(computation: str) -> None:
    """Raise xp's NotImplementedError where JAX has no CPU backend; ``computation`` says what is
    computed on the host (a phrase: "the eigenvalues of non-symmetric matrices are")."""
    try:
        jax.devices("cpu")
    except RuntimeError:  # JAX_PLATFORMS leaves the CPU out
        backend = jax.default_backend()
        fail(NotImplementedError, f"{computation} computed on the host (through jax.pure_callback) on {backend}, "
               f"which needs JAX's CPU backend, and this process has none (JAX_PLATFORMS leaves it out): "
               f"include it, as in JAX_PLATFORMS={backend},cpu")  # fmt: skip
