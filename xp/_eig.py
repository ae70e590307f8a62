"""Eigenvalues and eigenvectors of non-symmetric matrices: JAX's kernel, or NumPy on the host.

JAX has an ``eig`` kernel (LAPACK) on CPU only. Elsewhere ``xp.linalg.eig`` and ``eigvals`` run
NumPy's ``eig`` on the host through ``jax.pure_callback``: the result shapes are known
statically, so this works eagerly and under ``jit`` and ``vmap`` (batched in one host call).
``eigvals`` stays differentiable: its JVP is computed on the device from the eigenvectors.
``xp.linalg`` chooses between the two (``EIG_HOST_FALLBACK``).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from xp import _dtypes as dt


def native(x: Any, vectors: bool) -> tuple[Any, ...]:
    return tuple(lax.linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=vectors))


def _callback(x: Any, vectors: bool) -> tuple[Any, ...]:
    complex_dtype = dt.COMPLEX_OF[x.dtype]
    shapes = [jax.ShapeDtypeStruct(x.shape[:-1], complex_dtype)]
    if vectors:
        shapes.append(jax.ShapeDtypeStruct(x.shape, complex_dtype))
    host = functools.partial(_numpy, vectors=vectors, dtype=complex_dtype)
    return tuple(jax.pure_callback(host, tuple(shapes), x, vmap_method="broadcast_all"))


def _numpy(a: Any, vectors: bool, dtype: np.dtype) -> tuple[np.ndarray, ...]:
    """NumPy's eig of a stack of matrices; a matrix with non-finite entries (or a failed
    decomposition) gives ``nan`` values, as JAX's kernel does, instead of an exception."""
    a = np.asarray(a)
    finite = np.isfinite(a).all(axis=(-2, -1))
    safe = np.where(finite[..., None, None], a, 0)
    try:
        if vectors:
            w, v = np.linalg.eig(safe)
        else:
            w, v = np.linalg.eigvals(safe), np.zeros(())
    except np.linalg.LinAlgError:
        finite = np.zeros_like(finite)
        w, v = np.zeros(a.shape[:-1], dtype), np.zeros(a.shape, dtype)
    w = np.where(finite[..., None], w, np.nan).astype(dtype)
    if not vectors:
        return (w,)
    return w, np.where(finite[..., None, None], v, np.nan).astype(dtype)


@jax.custom_jvp
def host_with_vectors(x: Any) -> tuple[Any, ...]:
    return _callback(x, vectors=True)


@host_with_vectors.defjvp
def _host_with_vectors_jvp(primals: Any, tangents: Any) -> Any:
    raise NotImplementedError(
        "xp.linalg.eig: eigenvectors of non-symmetric matrices are not differentiable; "
        "differentiate xp.linalg.eigvals (or xp.linalg.eigh for symmetric matrices) instead"
    )


@jax.custom_jvp
def host_values(x: Any) -> tuple[Any, ...]:
    return _callback(x, vectors=False)


@host_values.defjvp
def _host_values_jvp(primals: Any, tangents: Any) -> Any:
    # first-order perturbation of simple eigenvalues: dw = diag(V^-1 dx V)
    (x,), (dx,) = primals, tangents
    w, v = _callback(x, vectors=True)
    dw = jnp.einsum("...ij,...ji->...i", jnp.linalg.solve(v, dx.astype(v.dtype)), v)
    return (w,), (dw,)
