"""Sparse linear algebra, ``xp.sparse.linalg``: the standard's linalg extension and JAX's sparse
solvers with xp arguments.

- The standard's functions are ``xp.linalg``'s (``matmul``, ``det``, ``solve``, ...): they route
  sparse arguments like every xp function, so that ``xp.sparse`` is a whole namespace with its
  extension. Products, ``matrix_transpose``, ``tensordot`` and ``vecdot`` have sparse kernels;
  the factorizations and solvers of dense matrices compute on a dense copy, with a
  SparseEfficiencyWarning (see docs/sparse.md).

- :func:`spsolve`: a direct solve ``A x = b`` (``jax.experimental.sparse.linalg.spsolve``). On GPU
  it is cuSOLVER's sparse QR; on CPU JAX calls ``scipy.sparse.linalg.spsolve`` through a host
  callback (SciPy must be installed). It works under ``jax.jit`` and ``jax.grad`` (with respect
  to ``A``'s stored values and ``b``) but not under ``jax.vmap`` (JAX has no batching rule).
  JAX has no kernel for other platforms (a TPU): there xp calls SciPy's solver on the host itself
  (``jax.pure_callback``, which needs JAX's CPU backend beside the accelerator), inside
  ``lax.custom_linear_solve`` with ``A``'s product on the device, which gives it the same
  derivatives (and a batching rule).
- :func:`lobpcg_standard`: the ``k`` largest eigenvalues of a symmetric (Hermitian) matrix and
  their eigenvectors by LOBPCG (``jax.experimental.sparse.linalg.lobpcg_standard``), in pure JAX
  on every backend; ``A`` is a sparse matrix (its products use xp's sparse kernels), a dense one,
  or a function computing ``A @ X``. JAX gives no gradient for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse
from jax.experimental.sparse import linalg as jlinalg

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array, wrap
from xp._errors import describe, fail
from xp._host import require_cpu_backend
from xp._routing import api, reported
from xp._typing import ArrayLike
from xp.linalg import cholesky as cholesky
from xp.linalg import cross as cross
from xp.linalg import det as det
from xp.linalg import diagonal as diagonal
from xp.linalg import eig as eig
from xp.linalg import eigh as eigh
from xp.linalg import eigvals as eigvals
from xp.linalg import eigvalsh as eigvalsh
from xp.linalg import inv as inv
from xp.linalg import matmul as matmul
from xp.linalg import matrix_norm as matrix_norm
from xp.linalg import matrix_power as matrix_power
from xp.linalg import matrix_rank as matrix_rank
from xp.linalg import matrix_transpose as matrix_transpose
from xp.linalg import outer as outer
from xp.linalg import pinv as pinv
from xp.linalg import qr as qr
from xp.linalg import slogdet as slogdet
from xp.linalg import solve as solve
from xp.linalg import svd as svd
from xp.linalg import svdvals as svdvals
from xp.linalg import tensordot as tensordot
from xp.linalg import trace as trace
from xp.linalg import vecdot as vecdot
from xp.linalg import vector_norm as vector_norm
from xp.sparse._array import SparseArray
from xp.sparse._linear_algebra import matrix_product, plain

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
    "lobpcg_standard", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
    "outer", "pinv", "qr", "slogdet", "solve", "spsolve", "svd", "svdvals", "tensordot", "trace",
    "vecdot", "vector_norm",
]  # fmt: skip

_SOLVE_DTYPES = frozenset(dt.FLOATING)


@api
def spsolve(A: SparseArray, b_: ArrayLike, /, *, tol: float = 1e-6, reorder: int = 1) -> Array:  # noqa: N803
    """The solution ``x`` of ``A @ x = b`` for a square sparse ``A`` (BCOO or BCSR, 2-d, no batch or
    dense dimensions) and a 1-d ``b``.

    The dtypes are promoted to a common floating dtype (an integer ``A`` or ``b`` becomes the
    default floating dtype). ``tol`` is the singularity tolerance and ``reorder`` the fill-in
    reducing ordering of cuSOLVER (0: none, 1: symrcm, 2: symamd, 3: csrmetisnd); on CPU SciPy
    chooses its own.
    """
    if not isinstance(A, SparseArray):
        fail(TypeError, f"A must be a sparse array (xp.sparse.BCSR or BCOO), got {describe(A)}; "
               f"for a dense A use xp.linalg.solve")  # fmt: skip
    if isinstance(b_, SparseArray):
        fail(TypeError, f"b_ must be a dense array, got a sparse {type(b_).__name__}")
    matrix = A._value
    rhs = boundary.array(b_, "b_")
    if matrix.ndim != 2 or matrix.n_batch or matrix.n_dense or matrix.shape[0] != matrix.shape[1]:
        fail(ValueError, f"A must be a square 2-d sparse matrix without batch or dense dimensions, got shape "
               f"{tuple(matrix.shape)} (n_batch={matrix.n_batch}, n_dense={matrix.n_dense})")  # fmt: skip
    if rhs.ndim != 1 or rhs.shape[0] != matrix.shape[0]:
        fail(ValueError, f"b_ must be 1-d of size {matrix.shape[0]} (A has shape {tuple(matrix.shape)}), got shape "
               f"{tuple(rhs.shape)}")  # fmt: skip
    for value, name in ((matrix, "A"), (rhs, "b_")):
        if value.dtype not in dt.NUMERIC:
            fail(TypeError, f"{name} must have a numeric dtype, got {value.dtype}")
    dtype = dt.promote(matrix.dtype, rhs.dtype)
    if dtype not in _SOLVE_DTYPES:
        dtype = dt.default_float() if dtype.kind != "c" else dt.default_complex()
    tolerance = boundary.finite_float(tol, "tol")
    order = boundary.choice(boundary.integer(reorder, "reorder"), (0, 1, 2, 3), "reorder")
    on_host = not _jax_has_spsolve()
    if on_host:
        require_cpu_backend("sparse direct solves are")
    return wrap(_spsolve(matrix, rhs, dtype=dtype, tol=tolerance, reorder=order, on_host=on_host))


def _jax_has_spsolve() -> bool:
    # JAX lowers its spsolve for the CPU (SciPy through a host callback) and CUDA (cuSOLVER) only;
    # as for eig (xp.linalg), the choice is the default backend's, made before tracing
    return jax.default_backend() in ("cpu", "gpu")


@functools.partial(jax.jit, static_argnames=("dtype", "tol", "reorder", "on_host"))
def _spsolve(matrix: Any, rhs: Any, dtype: Any, tol: float, reorder: int, on_host: bool) -> Any:
    csr = matrix if isinstance(matrix, jsparse.BCSR) else jsparse.BCSR.from_bcoo(matrix)
    data = csr.data.astype(dtype)
    indices = csr.indices
    indptr = csr.indptr.astype(indices.dtype)
    # JAX's padding entries (past indptr[-1]) are not read by the solver; out-of-range columns are.
    n = csr.shape[1]
    valid = (indices >= 0) & (indices < n)
    data = jnp.where(valid, data, 0)
    indices = jnp.where(valid, indices, 0)
    if on_host:
        return _host_spsolve(data, indices, indptr, rhs.astype(dtype))
    return jlinalg.spsolve(data, indices, indptr, rhs.astype(dtype), tol=tol, reorder=reorder)


def _host_spsolve(data: Any, indices: Any, indptr: Any, rhs: Any) -> Any:
    """SciPy's solve of the CSR system on the host, as JAX's CPU kernel does, for the platforms JAX
    has no kernel for. ``lax.custom_linear_solve`` differentiates it as JAX's rules do (with
    respect to ``rhs``, and to ``data`` through the product, on the device) and batches it."""
    shape = (rhs.shape[0], rhs.shape[0])

    def matvec(v: Any) -> Any:
        return jsparse.BCSR((data, indices, indptr), shape=shape) @ v

    def solver(transposed: bool) -> Callable[[Any, Any], Any]:
        def solve(_: Any, b: Any) -> Any:
            host = functools.partial(_scipy_spsolve, shape=shape, transposed=transposed)
            result = jax.ShapeDtypeStruct(b.shape, b.dtype)
            return jax.pure_callback(host, result, data, indices, indptr, b, vmap_method="sequential")

        return solve

    return jax.lax.custom_linear_solve(matvec, rhs, solver(False), solver(True))


def _scipy_spsolve(data: Any, indices: Any, indptr: Any, b: Any, shape: tuple[int, int], transposed: bool) -> Any:
    import scipy.sparse  # (only here: SciPy is needed where this runs, as for JAX's CPU kernel)
    import scipy.sparse.linalg

    a = scipy.sparse.csr_matrix((np.asarray(data), np.asarray(indices), np.asarray(indptr)), shape=shape)
    b = np.asarray(b)
    return np.asarray(scipy.sparse.linalg.spsolve(a.T if transposed else a, b), dtype=b.dtype)


@reported("xp.sparse.linalg.lobpcg_standard")
def lobpcg_standard(
    A: SparseArray | Array | Callable[[Array], Array],  # noqa: N803
    X: ArrayLike,  # noqa: N803
    m: int = 100,
    tol: float | None = None,
) -> tuple[Array, Array, Array]:
    """The ``k`` largest eigenvalues ``theta`` and eigenvectors ``U`` (columns) of a symmetric
    (Hermitian) ``n x n`` matrix, from ``k`` initial directions ``X`` (shape ``(n, k)``, with
    ``5 * k < n``), by at most ``m`` LOBPCG iterations; returns ``(theta, U, iterations)``.

    ``A`` is a sparse matrix, a dense one, or a function of an xp array ``X`` returning ``A @ X``.
    ``tol`` (default: the dtype's epsilon) is JAX's convergence tolerance.
    """
    if isinstance(X, SparseArray):
        fail(TypeError, f"X must be a dense array, got a sparse {type(X).__name__}")
    start = boundary.array(X, "X")
    if start.ndim != 2:
        fail(ValueError, f"X must be 2-d (n, k), got shape {tuple(start.shape)}")
    n, k = start.shape
    if not 0 < 5 * k < n:
        fail(ValueError, f"X of shape {(n, k)}: LOBPCG needs 0 < 5 * k < n")
    if start.dtype not in dt.FLOATING:
        fail(TypeError, f"X must have a floating dtype, got {start.dtype}")
    iterations = boundary.non_negative(m, "m")
    boundary.check_int_range(iterations, dt.default_int(), "m")  # JAX's loop counter is a default int
    tolerance = None if tol is None else boundary.finite_float(tol, "tol")
    operator: Any
    if isinstance(A, SparseArray):
        matrix = A._value
        if not plain(matrix) or matrix.shape != (n, n):
            fail(ValueError, f"A must be a 2-d sparse matrix of shape {(n, n)} without batch or dense dimensions, "
                   f"got shape {tuple(matrix.shape)}")  # fmt: skip
        if matrix.dtype != start.dtype:
            fail(TypeError, f"A ({matrix.dtype}) and X ({start.dtype}) must have the same dtype")

        def sparse_product(v: Any) -> Any:
            return matrix_product(matrix, v)

        operator = sparse_product

    elif isinstance(A, (Array, jax.Array)):
        operator = boundary.array(A, "A")
        if operator.shape != (n, n):
            fail(ValueError, f"A must have shape {(n, n)}, got {tuple(operator.shape)}")
        if operator.dtype != start.dtype:
            fail(TypeError, f"A ({operator.dtype}) and X ({start.dtype}) must have the same dtype")
    elif callable(A):
        function = A

        def function_product(v: Any) -> Any:
            out = function(wrap(v))
            return _kernels_result(out)

        operator = function_product

    else:
        fail(TypeError, f"A must be a sparse array, a dense array or a function, got {describe(A)}")
    theta, vectors, count = jlinalg.lobpcg_standard(operator, start, m=iterations, tol=tolerance)
    return wrap(theta), wrap(vectors), wrap(jnp.asarray(count))


def _kernels_result(out: Any) -> Any:
    if isinstance(out, SparseArray):
        fail(TypeError, "A(X) must return a dense array, got a sparse one")
    return boundary.array(out, "A(X)")
