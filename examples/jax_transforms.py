"""A generic model trained with JAX's transforms on xp arrays: ``grad``, ``jit`` and ``lax.scan``.

The model (softmax regression with one hidden layer) and its loss use array API functions only,
in the namespace of the data (``X.__array_namespace__()``): nothing in them knows about JAX.
The training loop is JAX's: the gradient comes from ``xp.transforms.grad`` (``jax.grad`` for
functions whose output is a 0-d xp array), an epoch is a ``lax.scan`` over minibatches whose
carry is a tree of xp arrays (parameters and momentum, updated with ``jax.tree.map`` the way
optax does), and the epoch is compiled once with ``jax.jit``. The same code trains on dense
features and on sparse ones (an ``xp.sparse.BCOO`` design matrix: ``X @ W`` is a sparse product),
and gives the same parameters.

    python examples/jax_transforms.py
"""

from __future__ import annotations

import time
from typing import Any

import jax
import numpy as np
from jax import lax


def init(xp: Any, n_features: int, n_hidden: int, n_classes: int, seed: int = 0) -> dict[str, Any]:
    """Parameters drawn with NumPy (reproducible on every backend), as arrays of ``xp``."""
    rng = np.random.default_rng(seed)
    dtype = xp.__array_namespace_info__().default_dtypes()["real floating"]
    return {
        "W1": xp.asarray(rng.standard_normal((n_features, n_hidden)) / np.sqrt(n_features), dtype=dtype),
        "b1": xp.zeros(n_hidden, dtype=dtype),
        "W2": xp.asarray(rng.standard_normal((n_hidden, n_classes)) / np.sqrt(n_hidden), dtype=dtype),
        "b2": xp.zeros(n_classes, dtype=dtype),
    }


def logits(params: dict[str, Any], X: Any) -> Any:  # noqa: N803
    """A one-hidden-layer classifier's scores; ``X`` dense or sparse (``X @ W1`` is then sparse)."""
    xp = params["W1"].__array_namespace__()
    return xp.tanh(X @ params["W1"] + params["b1"]) @ params["W2"] + params["b2"]


def losses(params: dict[str, Any], X: Any, labels: Any) -> Any:  # noqa: N803
    """The cross-entropy of each sample (a stable log-softmax)."""
    xp = labels.__array_namespace__()
    scores = logits(params, X)
    top = xp.max(scores, axis=-1, keepdims=True)
    log_norm = xp.log(xp.sum(xp.exp(scores - top), axis=-1)) + top[:, 0]
    return log_norm - xp.take_along_axis(scores, labels[:, None], axis=-1)[:, 0]


def loss(params: dict[str, Any], X: Any, labels: Any) -> Any:  # noqa: N803
    """The mean cross-entropy."""
    xp = labels.__array_namespace__()
    return xp.mean(losses(params, X, labels))


def make_epoch(transforms: Any, learning_rate: float = 0.5, momentum: float = 0.9) -> Any:
    """One epoch of SGD with momentum: a ``lax.scan`` over the minibatches. A minibatch is a row of
    0/1 weights over the samples (the scanned value), so shapes are static and a sparse ``X`` is
    used whole, never sliced inside the scan."""
    gradient_of = transforms.grad(weighted_loss)

    def epoch(state: tuple[Any, Any], batches: Any, X: Any, labels: Any) -> tuple[Any, Any]:  # noqa: N803
        def one_step(carry: tuple[Any, Any], batch: Any) -> tuple[tuple[Any, Any], Any]:
            params, velocity = carry
            grads = gradient_of(params, X, labels, batch)
            velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
            params = jax.tree.map(lambda p, v: p - learning_rate * v, params, velocity)
            return (params, velocity), weighted_loss(params, X, labels, batch)

        return lax.scan(one_step, state, batches)

    return epoch


def weighted_loss(params: dict[str, Any], X: Any, labels: Any, weights: Any) -> Any:  # noqa: N803
    """The mean cross-entropy over the samples of weight 1 in ``weights``."""
    xp = labels.__array_namespace__()
    return xp.sum(weights * losses(params, X, labels)) / xp.sum(weights)


def make_data(n_samples: int = 256, n_features: int = 32, n_classes: int = 3, density: float = 0.25, seed: int = 0):
    """Sparse-ish features (a NumPy array) and labels from a random linear teacher."""
    rng = np.random.default_rng(seed)
    X = np.where(rng.random((n_samples, n_features)) < density, rng.standard_normal((n_samples, n_features)), 0.0)  # noqa: N806
    teacher = rng.standard_normal((n_features, n_classes))
    labels = np.argmax(X @ teacher + 0.3 * rng.standard_normal((n_samples, n_classes)), axis=1)
    return X, labels


def train(X: Any, labels: Any, *, epochs: int = 20, batch_size: int = 32, n_hidden: int = 16) -> tuple[Any, list]:  # noqa: N803
    """Parameters after ``epochs`` jitted epochs, and the loss after each epoch."""
    import xp

    n_samples, n_features = X.shape
    n_classes = int(xp.max(labels)) + 1
    dtype = xp.__array_namespace_info__().default_dtypes()["real floating"]
    params = init(xp, n_features, n_hidden, n_classes)
    velocity = jax.tree.map(xp.zeros_like, params)
    membership = np.zeros((n_samples // batch_size, n_samples))
    for b in range(n_samples // batch_size):
        membership[b, b * batch_size : (b + 1) * batch_size] = 1.0
    batches = xp.asarray(membership, dtype=dtype)
    run_epoch = jax.jit(make_epoch(xp.transforms))
    history = []
    state = (params, velocity)
    for _ in range(epochs):
        state, _batch_losses = run_epoch(state, batches, X, labels)
        history.append(float(loss(state[0], X, labels)))
    return state[0], history


def main() -> None:
    import xp
    import xp.sparse

    X, labels = make_data()  # noqa: N806
    dtype = xp.__array_namespace_info__().default_dtypes()["real floating"]
    X_dense = xp.asarray(X, dtype=dtype)  # noqa: N806
    X_sparse = xp.sparse.fromdense(X_dense)  # noqa: N806
    y = xp.asarray(labels, dtype=xp.int32)
    results = {}
    for name, features in (("dense", X_dense), ("sparse", X_sparse)):
        begin = time.perf_counter()
        params, history = train(features, y)
        results[name] = params
        accuracy = float(xp.mean(xp.astype(xp.argmax(logits(params, X_dense), axis=-1) == y, dtype)))
        print(
            f"{name:7} {time.perf_counter() - begin:5.2f} s  loss {history[0]:.4f} -> {history[-1]:.4f}  accuracy {accuracy:.3f}"
        )
    spread = max(float(xp.max(xp.abs(results["dense"][k] - results["sparse"][k]))) for k in results["dense"])
    print(f"largest parameter difference, dense vs sparse: {spread:.2e}")


if __name__ == "__main__":
    main()
