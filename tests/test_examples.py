"""The examples: the generic logistic regression fits the same parameters on dense and sparse
input, eagerly and with jitted steps (and on NumPy arrays, since nothing in it is JAX's)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from subprocess_env import subprocess_env

import xp
import xp.sparse

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# The scripts run on the CPU where this process's backend is not the CPU (subprocess_env): what
# they print is the same on every backend, and a second process cannot open a TPU chip.


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


logreg = load("logistic_regression")


def floats(a):
    """``a`` as an xp array of the default floating dtype (float32 with JAX's 64-bit mode off)."""
    return xp.asarray(a, dtype=xp.float64 if jax.config.read("jax_enable_x64") else xp.float32)


@pytest.fixture(scope="module")
def data():
    X, y = logreg.make_data(n_samples=200, n_features=8, density=0.3, seed=1)
    return X, y


@pytest.fixture(scope="module")
def reference(data):
    X, y = data
    return logreg.fit(X, y, max_iter=60)


def test_numpy_fit_is_the_optimum(data, reference):
    X, y = data
    _, grad = logreg.loss_and_grad(reference, X, y, 1e-2)
    assert np.max(np.abs(grad)) < 1e-6
    # the same optimum as JAX's BFGS on the same objective (JAX's sparse docs fit it this way)
    from jax.scipy.optimize import minimize

    def objective(params):
        z = jnp.asarray(X) @ params[:-1] + params[-1]
        return jnp.mean(jnp.logaddexp(0, z) - jnp.asarray(y) * z) + 0.5e-2 * params[:-1] @ params[:-1]

    result = minimize(objective, jnp.zeros(X.shape[1] + 1), method="BFGS", tol=1e-10)
    if not jax.config.read("jax_enable_x64"):
        np.testing.assert_allclose(np.asarray(result.x), reference, atol=5e-3)  # a float32 fit
        return
    np.testing.assert_allclose(np.asarray(result.x), reference, atol=5e-4)  # JAX's BFGS stops earlier
    assert float(objective(jnp.asarray(reference))) <= float(result.fun) + 1e-12


@pytest.mark.parametrize("format", ["dense", "bcoo", "bcsr"])
@pytest.mark.parametrize("jit", [False, True])
def test_same_parameters_on_dense_and_sparse_input(data, reference, format, jit):
    X, y = data
    dense = floats(X)
    design = dense if format == "dense" else xp.sparse.fromdense(dense, format=format)
    params = logreg.fit(design, floats(y), max_iter=60, jit=jit)
    assert isinstance(params, xp.Array)
    tol = 1e-9 if params.dtype == xp.float64 else 2e-3  # float32 against the float64 NumPy fit
    np.testing.assert_allclose(np.asarray(params), reference, rtol=tol, atol=tol)


def test_whole_fit_under_jit(data):
    X, y = data
    sparse = xp.sparse.fromdense(floats(X))
    fit = jax.jit(lambda X, y: logreg.fit(X, y, max_iter=20))
    params = fit(sparse, floats(y))
    expected = logreg.fit(X, y, max_iter=20)  # NumPy, eagerly, the same 20 iterations
    tol = 1e-9 if params.dtype == xp.float64 else 2e-3
    np.testing.assert_allclose(np.asarray(params), expected, rtol=tol, atol=tol)


def test_script_runs():
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "logistic_regression.py")],
        capture_output=True, text=True, timeout=600, check=True, env=subprocess_env(),
    )  # fmt: skip
    assert "largest difference from the NumPy fit" in done.stdout


# --- examples/jax_transforms.py: a generic model trained with grad + jit + lax.scan ------------

transforms_example = load("jax_transforms")


@pytest.fixture(scope="module")
def classification():
    X, labels = transforms_example.make_data(n_samples=64, n_features=12, seed=2)
    return X, labels


def test_training_on_dense_and_sparse_features_gives_the_same_parameters(classification):
    X, labels = classification
    y = xp.asarray(labels, dtype=xp.int32)
    dense_params, dense_history = transforms_example.train(floats(X), y, epochs=4, batch_size=16)
    sparse_params, sparse_history = transforms_example.train(xp.sparse.fromdense(floats(X)), y, epochs=4, batch_size=16)
    assert dense_history[-1] < dense_history[0]  # it learns
    tol = 1e-9 if dense_params["W1"].dtype == xp.float64 else 1e-4
    for name in dense_params:
        assert isinstance(sparse_params[name], xp.Array)
        np.testing.assert_allclose(np.asarray(sparse_params[name]), np.asarray(dense_params[name]), rtol=tol, atol=tol)
    np.testing.assert_allclose(sparse_history, dense_history, rtol=tol)


def test_an_epoch_on_xp_arrays_matches_the_same_epoch_on_jax_numpy_arrays(classification):
    X, labels = classification
    params = transforms_example.init(xp, X.shape[1], 8, int(labels.max()) + 1)
    velocity = jax.tree.map(xp.zeros_like, params)
    membership = floats(np.kron(np.eye(4), np.ones(16)))
    epoch = jax.jit(transforms_example.make_epoch(xp.transforms))
    (xp_params, _), xp_losses = epoch((params, velocity), membership, floats(X), xp.asarray(labels, dtype=xp.int32))
    as_jnp = lambda tree: jax.tree.map(jnp.asarray, tree, is_leaf=lambda n: isinstance(n, xp.Array))  # noqa: E731
    (jnp_params, _), jnp_losses = epoch(
        (as_jnp(params), as_jnp(velocity)), membership.jax, floats(X).jax, jnp.asarray(labels, dtype=jnp.int32)
    )
    assert isinstance(xp_losses, xp.Array) and isinstance(jnp_losses, jax.Array)
    tol = 1e-9 if membership.dtype == xp.float64 else 1e-5
    np.testing.assert_allclose(np.asarray(xp_losses), np.asarray(jnp_losses), rtol=tol)
    for name in xp_params:
        np.testing.assert_allclose(np.asarray(xp_params[name]), np.asarray(jnp_params[name]), rtol=tol, atol=tol)


def test_transforms_script_runs():
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "jax_transforms.py")],
        capture_output=True, text=True, timeout=600, check=True, env=subprocess_env(),
    )  # fmt: skip
    assert "largest parameter difference, dense vs sparse" in done.stdout


# --- examples/distributed.py: a generic ridge regression on a 2-process jax.distributed cluster --


@pytest.mark.cpu_only(
    reason="the example's cluster is 2 processes of 4 simulated CPU devices each "
    "(XLA_FLAGS=--xla_force_host_platform_device_count), as tests/test_distributed.py's"
)
def test_distributed_script_runs_a_two_process_cluster():
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "distributed.py")], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert "2 processes, 8 devices, 8192 rows" in done.stdout, done.stdout
    difference = float(re.search(r"largest difference from NumPy on all the data: (\S+)", done.stdout)[1])
    assert difference < 1e-3, done.stdout  # float32 on the cluster against float64 NumPy
