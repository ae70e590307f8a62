"""Logistic regression written once against the array API, fitted on dense and on sparse data.

JAX's sparse documentation fits a logistic regression with BFGS (``jax.scipy.optimize.minimize``)
on a dense matrix and then on a BCOO matrix, through ``sparsify``. Here the model, its loss and
gradient and the BFGS optimizer are written with array API functions only, in the namespace of
the data (``X.__array_namespace__()``). The same code then fits:

- an xp dense array and an xp sparse array (``X @ w`` and ``r @ X`` are sparse products with a
  dense result), eagerly or with each BFGS step under ``jax.jit``;
- a NumPy array (nothing here is specific to JAX).

The line search is vectorized so that the code has no data-dependent Python control flow (so it
traces): every step tries the step lengths 1, 1/2, 1/4, ... at once (``X @ W`` with one column per
step length) and takes the longest that satisfies the Armijo condition; a converged state stops
moving.

    python examples/logistic_regression.py            # float32
    JAX_ENABLE_X64=1 python examples/logistic_regression.py
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

STEP_LENGTHS = 24  # 1, 1/2, ..., 2**-23
ARMIJO = 1e-4


class State(NamedTuple):
    """A BFGS iterate: the parameters (weights, then the intercept), the loss, its gradient and the
    approximate inverse Hessian."""

    params: Any
    loss: Any
    grad: Any
    inverse_hessian: Any


def loss_and_grad(params: Any, X: Any, y: Any, l2: float) -> tuple[Any, Any]:  # noqa: N803
    """The mean logistic loss plus ``l2 / 2 * |w|**2``, and its gradient with respect to ``params``."""
    xp = params.__array_namespace__()
    w, intercept = params[:-1], params[-1]
    z = X @ w + intercept
    loss = xp.mean(xp.logaddexp(xp.zeros_like(z), z) - y * z) + 0.5 * l2 * xp.vecdot(w, w)
    residual = (1 / (1 + xp.exp(-z)) - y) / z.shape[0]
    grad_w = residual @ X + l2 * w  # X.T @ residual, without forming X.T
    return loss, xp.concat([grad_w, xp.reshape(xp.sum(residual), (1,))])


def start(X: Any, y: Any, l2: float) -> State:  # noqa: N803
    """The first iterate: zero parameters and the identity as inverse Hessian."""
    xp = y.__array_namespace__()
    params = xp.zeros(X.shape[1] + 1, dtype=y.dtype)
    loss, grad = loss_and_grad(params, X, y, l2)
    return State(params, loss, grad, xp.eye(X.shape[1] + 1, dtype=y.dtype))


def step(state: State, X: Any, y: Any, l2: float, tol: float) -> State:  # noqa: N803
    """One BFGS iteration with a vectorized backtracking line search."""
    xp = y.__array_namespace__()
    params, loss, grad, inverse = state
    direction = -(inverse @ grad)
    alphas = 0.5 ** xp.arange(STEP_LENGTHS, dtype=y.dtype)
    candidates = params[:, None] + direction[:, None] * alphas  # one column per step length
    z = X @ candidates[:-1, :] + candidates[-1, :]
    losses = xp.mean(xp.logaddexp(xp.zeros_like(z), z) - y[:, None] * z, axis=0)
    losses = losses + 0.5 * l2 * xp.sum(candidates[:-1, :] ** 2, axis=0)
    slope = xp.vecdot(grad, direction)
    accepted = losses <= loss + ARMIJO * alphas * slope
    moving = xp.vecdot(grad, grad) > tol**2
    alpha = xp.where(moving, xp.max(xp.where(accepted, alphas, 0.0)), 0.0)

    s = alpha * direction
    new_params = params + s
    new_loss, new_grad = loss_and_grad(new_params, X, y, l2)
    change = new_grad - grad
    curvature = xp.vecdot(s, change)
    update = curvature > 1e-10 * xp.sqrt(xp.vecdot(s, s) * xp.vecdot(change, change))
    rho = 1 / xp.where(update, curvature, 1.0)
    v = xp.eye(params.shape[0], dtype=y.dtype) - rho * s[:, None] * change[None, :]
    new_inverse = v @ inverse @ xp.matrix_transpose(v) + rho * s[:, None] * s[None, :]
    return State(new_params, new_loss, new_grad, xp.where(update, new_inverse, inverse))


def fit(X: Any, y: Any, *, l2: float = 1e-2, max_iter: int = 100, tol: float = 1e-6, jit: bool = False) -> Any:  # noqa: N803
    """The parameters ``(w_0, ..., w_{d-1}, intercept)`` of an L2-regularized logistic regression of
    ``y`` (0 or 1) on the rows of ``X`` (dense or sparse), after ``max_iter`` BFGS iterations (fewer
    in effect: a converged state stays put). With ``jit``, each iteration runs under ``jax.jit``
    (for xp and JAX inputs)."""
    advance = step
    if jit:
        import jax

        advance = jax.jit(step, static_argnames=("l2", "tol"))
    state = start(X, y, l2)
    for _ in range(max_iter):
        state = advance(state, X, y, l2=l2, tol=tol)
    return state.params


def make_data(n_samples: int = 400, n_features: int = 20, density: float = 0.2, seed: int = 0) -> tuple[Any, Any]:
    """A random sparse design matrix (as a NumPy array) and labels drawn from a logistic model."""
    rng = np.random.default_rng(seed)
    X = np.where(rng.random((n_samples, n_features)) < density, rng.standard_normal((n_samples, n_features)), 0.0)  # noqa: N806
    w = rng.standard_normal(n_features)
    p = 1 / (1 + np.exp(-(X @ w + 0.5)))
    y = (rng.random(n_samples) < p).astype(np.float64)
    return X, y


def main() -> None:
    import xp
    import xp.sparse

    X, y = make_data()  # noqa: N806
    dtype = xp.float64 if xp.__array_namespace_info__().default_dtypes()["real floating"] == xp.float64 else xp.float32
    X_dense = xp.asarray(X, dtype=dtype)  # noqa: N806
    y_xp = xp.asarray(y, dtype=dtype)
    X_sparse = xp.sparse.fromdense(X_dense)  # noqa: N806
    print(f"X: {X.shape}, {int((X != 0).sum())} nonzeros; sparse: {X_sparse!r}")
    results = {}
    for name, data in (("dense", X_dense), ("sparse", X_sparse)):
        for jit in (False, True):
            begin = time.perf_counter()
            params = fit(data, y_xp, jit=jit)
            params.block_until_ready()
            label = f"{name}, {'jitted' if jit else 'eager'}"
            results[label] = np.asarray(params)
            print(f"{label:16} {time.perf_counter() - begin:6.2f} s   params[:4] = {np.asarray(params)[:4]}")
    reference = fit(np.asarray(X, dtype=np.dtype(str(dtype))), np.asarray(y, dtype=np.dtype(str(dtype))))
    print(f"{'numpy':16}          params[:4] = {reference[:4]}")
    spread = max(float(np.max(np.abs(p - reference))) for p in results.values())
    print(f"largest difference from the NumPy fit: {spread:.2e}")


if __name__ == "__main__":
    main()
