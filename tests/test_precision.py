"""Products, xp.linalg and xp.fft at float32's precision by default (xp/_precision.py): every
matrix product in their traces has precision HIGHEST, eagerly, under the user's jax.jit, vmap and
grad, and in the compiled computation; where the user has set JAX's
``jax_default_matmul_precision`` (the context manager, ``jax.config.update``, the environment
variable), the products carry what JAX itself gives that setting. Checked on the traces (jaxprs)
and on the StableHLO, so it holds on every backend, the CPU included (where both precisions
compute the same)."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax
from jax.extend import core as jax_core
from subprocess_env import failure, run_script, subprocess_env

import xp
import xp._linear_algebra
import xp.fft
import xp.linalg

HIGHEST = (lax.Precision.HIGHEST, lax.Precision.HIGHEST)
# the user's opt-ins to faster products; what JAX puts in the products for each is read from JAX
OPT_INS = ["bfloat16", "tensorfloat32"]
# every value JAX's setting takes for float32 products: the legacy names and some algorithm presets
SETTINGS = [
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "TF32_TF32_F32", "F32_F32_F32",
]  # fmt: skip


def dot_precisions(jaxpr):
    """The ``precision`` of every ``dot_general`` in ``jaxpr`` and its sub-jaxprs (jit, custom_jvp,
    custom_linear_solve, cond, while, scan, ...), in order."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            found.append(eqn.params["precision"])
        for param in eqn.params.values():
            for value in param if isinstance(param, (tuple, list)) else (param,):
                if isinstance(value, jax_core.ClosedJaxpr):
                    found += dot_precisions(value.jaxpr)
                elif isinstance(value, jax_core.Jaxpr):
                    found += dot_precisions(value)
    return found


def traced(function, *args, setting=None):
    """The precisions of the products in ``function``'s trace under the matmul precision
    ``setting`` (None: none set, whatever the environment says)."""
    with jax.default_matmul_precision(setting):
        return dot_precisions(jax.make_jaxpr(function)(*args).jaxpr)


rng = np.random.default_rng(0)
MATRIX = (4 * np.eye(3) + rng.uniform(-1, 1, (3, 3))).astype(np.float32)
OTHER = rng.uniform(-1, 1, (3, 3)).astype(np.float32)
SPD = (MATRIX @ MATRIX.T).astype(np.float32)
VECTOR = rng.uniform(-1, 1, 3).astype(np.float32)
SIGNAL = (VECTOR + 1j * VECTOR[::-1]).astype(np.complex64)
STACK = np.stack([MATRIX, OTHER]).astype(np.float32)

# name: (xp's call, the same computation in jax.numpy, arguments). The computations whose traces
# hold matrix products today.
PRODUCTS = {
    "matmul": (xp.matmul, jnp.matmul, (MATRIX, OTHER)),
    "matmul of a stack and a vector": (xp.matmul, jnp.matmul, (STACK, VECTOR)),
    "tensordot": (
        lambda a, b: xp.tensordot(a, b, axes=1),
        lambda a, b: jnp.tensordot(a, b, axes=1),
        (MATRIX, OTHER),
    ),
    "tensordot over pairs of axes": (
        lambda a, b: xp.tensordot(a, b, axes=((0, 1), (1, 0))),
        lambda a, b: jnp.tensordot(a, b, axes=((0, 1), (1, 0))),
        (MATRIX, OTHER),
    ),
    "the @ operator": (lambda a, b: xp.asarray(a) @ xp.asarray(b), jnp.matmul, (MATRIX, OTHER)),
    "linalg.matmul": (xp.linalg.matmul, jnp.matmul, (MATRIX, OTHER)),
    "linalg.tensordot": (xp.linalg.tensordot, jnp.tensordot, (STACK, MATRIX)),
    "matrix_power 3": (
        lambda a: xp.linalg.matrix_power(a, 3),
        lambda a: jnp.linalg.matrix_power(a, 3),
        (MATRIX,),
    ),
    "matrix_power -2": (
        lambda a: xp.linalg.matrix_power(a, -2),
        lambda a: jnp.linalg.matrix_power(a, -2),
        (MATRIX,),
    ),
    "inv": (xp.linalg.inv, jnp.linalg.inv, (MATRIX,)),
    "solve": (xp.linalg.solve, jnp.linalg.solve, (MATRIX, OTHER)),
    "solve with a vector": (xp.linalg.solve, jnp.linalg.solve, (MATRIX, VECTOR)),
    "pinv": (xp.linalg.pinv, jnp.linalg.pinv, (MATRIX,)),
}

# The other functions that compute: their traces hold no dot product today (element-wise products
# and sums, FFTs, or decompositions that are primitives of their own, lowered by JAX and XLA with
# the precision those choose; docs/jax.md). They are held to the same rule, so that one whose
# computation gains a product is covered.
OTHERS = {
    "vecdot": (xp.vecdot, (MATRIX, OTHER)),
    "linalg.vecdot": (xp.linalg.vecdot, (MATRIX, OTHER)),
    "cholesky": (xp.linalg.cholesky, (SPD,)),
    "eigh": (xp.linalg.eigh, (SPD,)),
    "eigvalsh": (xp.linalg.eigvalsh, (SPD,)),
    "eig": (xp.linalg.eig, (MATRIX,)),
    "eigvals": (xp.linalg.eigvals, (MATRIX,)),
    "qr": (xp.linalg.qr, (MATRIX,)),
    "svd": (xp.linalg.svd, (MATRIX,)),
    "svdvals": (xp.linalg.svdvals, (MATRIX,)),
    "det": (xp.linalg.det, (MATRIX,)),
    "slogdet": (xp.linalg.slogdet, (MATRIX,)),
    "matrix_rank": (xp.linalg.matrix_rank, (MATRIX,)),
    "matrix_norm fro": (xp.linalg.matrix_norm, (MATRIX,)),
    "matrix_norm 2": (lambda a: xp.linalg.matrix_norm(a, ord=2), (MATRIX,)),
    "matrix_norm nuc": (lambda a: xp.linalg.matrix_norm(a, ord="nuc"), (MATRIX,)),
    "matrix_norm 1": (lambda a: xp.linalg.matrix_norm(a, ord=1), (MATRIX,)),
    "vector_norm": (xp.linalg.vector_norm, (VECTOR,)),
    "vector_norm 3": (lambda a: xp.linalg.vector_norm(a, ord=3), (VECTOR,)),
    "cross": (xp.linalg.cross, (VECTOR, VECTOR[::-1].copy())),
    "outer": (xp.linalg.outer, (VECTOR, VECTOR)),
    "trace": (xp.linalg.trace, (MATRIX,)),
    **{name: (getattr(xp.fft, name), (SIGNAL,)) for name in ("fft", "ifft", "irfft", "hfft")},
    **{name: (getattr(xp.fft, name), (VECTOR,)) for name in ("rfft", "ihfft")},
    **{name: (getattr(xp.fft, name), (MATRIX.astype(np.complex64),)) for name in ("fftn", "ifftn", "irfftn")},
    "rfftn": (xp.fft.rfftn, (MATRIX,)),
}

EVERY = {name: (function, args) for name, (function, _, args) in PRODUCTS.items()} | OTHERS


def user_jit(function):
    """``function`` under the user's own ``jax.jit`` (xp's kernels are traced inside it)."""
    return jax.jit(lambda *args: function(*args))


def stacked(args):
    return tuple(np.stack([a, a + np.ones_like(a)]) for a in args)


# --- by default: the highest precision ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EVERY))
def test_every_product_is_computed_at_the_highest_precision_by_default(name):
    function, args = EVERY[name]
    for way, precisions in {
        "eagerly": traced(function, *args),
        "under the user's jax.jit": traced(user_jit(function), *args),
        "under vmap": traced(jax.vmap(function), *stacked(args)),
    }.items():
        assert all(p == HIGHEST for p in precisions), (way, precisions)
        if name in PRODUCTS:
            assert precisions, f"{name} {way}: no matrix product in the trace"


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_the_gradient_keeps_the_highest_precision(name):
    function, _, args = PRODUCTS[name]

    def loss(first, *rest):
        return jnp.sum(function(first, *rest).jax)

    precisions = traced(jax.grad(loss), *args)
    assert precisions and all(p == HIGHEST for p in precisions), precisions


def test_a_products_precision_reaches_the_compiled_computation():
    a, b = xp.asarray(MATRIX), xp.asarray(OTHER)
    assert stablehlo_precisions(jax.jit(xp.matmul), a, b) == [["HIGHEST", "HIGHEST"]]
    # jax.numpy's own product has the backend's default
    assert stablehlo_precisions(jax.jit(jnp.matmul), MATRIX, OTHER) != [["HIGHEST", "HIGHEST"]]


def stablehlo_precisions(jitted, *args, setting=None):
    """The precisions of each ``stablehlo.dot_general`` in the lowered computation (pretty printed
    ``precision = [HIGHEST, HIGHEST]`` or generic ``#stablehlo<precision HIGHEST>``)."""
    with jax.default_matmul_precision(setting):
        text = jitted.lower(*args).as_text()
    dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
    assert dots, text
    return [re.findall(r"\b(DEFAULT|HIGHEST|HIGH)\b", line) for line in dots]


# --- the user's setting is followed ------------------------------------------------------------


@pytest.mark.parametrize("setting", OPT_INS)
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_the_users_setting_is_followed(name, setting):
    function, reference, args = PRODUCTS[name]
    # the distinct precisions: where xp chooses a computation per platform at lowering (pinv),
    # its trace holds every platform's branch, each with its products
    expected = set(traced(reference, *args, setting=setting))
    assert expected
    assert set(traced(function, *args, setting=setting)) == expected
    assert set(traced(user_jit(function), *args, setting=setting)) == expected


@pytest.mark.parametrize("setting", OPT_INS)
def test_the_users_setting_reaches_the_compiled_computation(setting):
    a, b = xp.asarray(MATRIX), xp.asarray(OTHER)
    ours = stablehlo_precisions(jax.jit(xp.matmul), a, b, setting=setting)
    assert ours == stablehlo_precisions(jax.jit(jnp.matmul), MATRIX, OTHER, setting=setting)
    assert ours != [["HIGHEST", "HIGHEST"]]


@given(
    shapes=st.sampled_from(
        [((3, 4), (4, 2)), ((4,), (4, 3)), ((2, 1, 3, 4), (5, 4, 2)), ((3,), (3,)), ((2, 3, 4), (4,))]
    ),
    dtype=st.sampled_from([np.float32, np.complex64]),
    setting=st.sampled_from([None, *SETTINGS]),
)
def test_matmul_follows_every_setting_of_the_user(shapes, dtype, setting):
    a, b = (np.ones(shape, dtype) for shape in shapes)
    ours = traced(xp.matmul, a, b, setting=setting)
    if setting is None:
        assert ours and all(p == HIGHEST for p in ours), ours
    else:
        assert ours == traced(jnp.matmul, a, b, setting=setting)


def test_a_setting_made_with_config_update_is_followed():
    before = jax.config.jax_default_matmul_precision
    try:
        jax.config.update("jax_default_matmul_precision", "bfloat16")
        expected = dot_precisions(jax.make_jaxpr(jnp.matmul)(MATRIX, OTHER).jaxpr)
        ours = dot_precisions(jax.make_jaxpr(xp.matmul)(MATRIX, OTHER).jaxpr)
        in_users_jit = dot_precisions(jax.make_jaxpr(user_jit(xp.matmul))(MATRIX, OTHER).jaxpr)
    finally:
        jax.config.update("jax_default_matmul_precision", before)
    assert expected and expected != [HIGHEST]
    assert ours == expected and in_users_jit == expected


@pytest.mark.integration
def test_a_setting_made_in_the_environment_is_followed():
    env = subprocess_env() | {"JAX_DEFAULT_MATMUL_PRECISION": "bfloat16"}
    done = run_script("matmul_precision_from_environment", env=env, timeout=300)
    assert done.returncode == 0, failure(done)
    ours, jax_numpys = done.stdout.splitlines()[-2:]
    assert ours == jax_numpys and "HIGHEST" not in ours, done.stdout


def test_the_setting_in_force_when_the_users_function_is_traced_is_the_one_that_counts():
    a, b = xp.asarray(MATRIX), xp.asarray(OTHER)
    xp.matmul(a, b)  # an eager call first: the kernel's trace at the default is cached

    @jax.jit
    def users(x, y):
        return xp.matmul(x, y)

    fast = stablehlo_precisions(users, a, b, setting="bfloat16")
    assert fast == stablehlo_precisions(jax.jit(jnp.matmul), MATRIX, OTHER, setting="bfloat16")
    assert stablehlo_precisions(users, a, b) == [["HIGHEST", "HIGHEST"]]

    @jax.jit
    def opts_in_inside(x, y):
        with jax.default_matmul_precision("bfloat16"):
            return xp.matmul(x, y)

    assert stablehlo_precisions(opts_in_inside, a, b) == fast


def test_an_eager_call_after_the_setting_changes_is_traced_again(monkeypatch):
    # the setting in force while matmul's kernel is traced, read from a function its body calls
    seen = []
    checks = xp._linear_algebra.numeric_pair

    def numeric_pair(x1, x2):
        seen.append(jax.config.jax_default_matmul_precision)
        return checks(x1, x2)

    monkeypatch.setattr(xp._linear_algebra, "numeric_pair", numeric_pair)
    a, b = xp.ones((7, 5), dtype=xp.float32), xp.ones((5, 6), dtype=xp.float32)  # shapes no other test here traces
    with jax.default_matmul_precision(None):
        xp.matmul(a, b), xp.matmul(a, b)
        with jax.default_matmul_precision("bfloat16"):
            xp.matmul(a, b), xp.matmul(a, b)
        xp.matmul(a, b)
    assert seen == ["highest", "bfloat16"]  # one trace per setting, each cached under its own


# --- the mechanism -----------------------------------------------------------------------------


def test_the_setting_is_restored_after_a_kernel_is_traced_or_fails():
    with jax.default_matmul_precision(None):
        jax.make_jaxpr(xp.matmul)(MATRIX, OTHER)
        assert jax.config.jax_default_matmul_precision is None
        with pytest.raises(ValueError, match="last axis of x1"):
            jax.make_jaxpr(xp.matmul)(MATRIX, np.ones(4, np.float32))
        assert jax.config.jax_default_matmul_precision is None


def test_a_kernel_at_full_precision_is_a_kernel_of_the_one_factory():
    # full_precision_kernel is kernel (xp/_jit.py) of the body traced at full precision: it keeps
    # its compiled computation, and its module's name stays bound to it
    a = xp.asarray(MATRIX)
    places = ((xp._linear_algebra, "_matmul"), (xp.linalg, "_inv"), (xp.fft, "_transform_n"))
    kernels = [getattr(module, name) for module, name in places]
    for _ in range(2):
        xp.matmul(a, a), xp.linalg.inv(a), xp.fft.fftn(a)
    for (module, name), made in zip(places, kernels, strict=True):
        assert getattr(module, name) is made and made._cache_size() >= 1, name
