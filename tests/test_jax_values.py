"""xp arrays as JAX values: transforms, control flow, JAX's own functions, export.

Each test states what a user writes and checks the result against the same computation on
plain ``jax.numpy`` (the reference), and that xp arrays come back where xp arrays went in.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import export, lax

import xp
import xp.sparse

VALUES = np.array([0.5, -1.25, 2.0, 3.5], dtype=np.float32)


@pytest.fixture
def x() -> xp.Array:
    return xp.asarray(VALUES)


def same(result: object, reference: object, rtol: float = 1e-6) -> None:
    """``result`` is an xp array holding ``reference``'s values, dtype and shape."""
    assert isinstance(result, xp.Array), type(result)
    ref = np.asarray(reference)
    assert result.dtype == ref.dtype and result.shape == ref.shape
    np.testing.assert_allclose(np.asarray(result), ref, rtol=rtol)


def loss(a):  # generic: only the standard's functions
    return xp.sum(a * a * a) / 3


def jnp_loss(a):
    return jnp.sum(a * a * a) / 3


# --- 1. transforms ----------------------------------------------------------------------------


def test_grad_of_a_function_returning_a_0d_xp_array(x):
    same(xp.transforms.grad(loss)(x), jax.grad(jnp_loss)(VALUES))
    same(jax.jit(xp.transforms.grad(loss))(x), jax.grad(jnp_loss)(VALUES))


def test_value_and_grad_with_aux_keeps_xp_arrays(x):
    (value, aux), gradient = xp.transforms.value_and_grad(lambda a: (loss(a), a * 2), has_aux=True)(x)
    same(value, jnp_loss(VALUES))
    same(aux, VALUES * 2)
    same(gradient, jax.grad(jnp_loss)(VALUES))


def test_value_and_grad_of_a_jax_function_returns_jax_values():
    value, gradient = xp.transforms.value_and_grad(jnp_loss)(jnp.asarray(VALUES))
    assert isinstance(value, jax.Array) and isinstance(gradient, jax.Array)


def test_grad_with_argnums_over_a_parameter_tree(x):
    params = {"w": xp.asarray(np.float32([1.0, 2.0, 3.0, 4.0])), "b": xp.asarray(np.float32(0.5))}

    def model_loss(p, a):
        return xp.sum((a * p["w"] + p["b"]) ** 2)

    grads = xp.transforms.grad(model_loss)(params, x)
    ref = jax.grad(lambda p, a: jnp.sum((a * p["w"] + p["b"]) ** 2))(
        {"w": jnp.float32([1.0, 2.0, 3.0, 4.0]), "b": jnp.float32(0.5)}, VALUES
    )
    same(grads["w"], ref["w"])
    same(grads["b"], ref["b"])


def test_tree_map_with_xp_functions_gives_xp_arrays_not_nested_wrappers(x):
    zeros = jax.tree.map(xp.zeros_like, {"w": x})
    assert type(zeros["w"]) is xp.Array and isinstance(zeros["w"].jax, jax.Array)
    same(zeros["w"], np.zeros_like(VALUES))


def test_an_array_is_a_pytree_node_of_its_value_and_is_not_constructed_directly(x):
    """The node JAX flattens without calling Python (a dataclass node: ``Array(_value=...)``
    rebuilds it); the constructor refuses anything else."""
    leaves, treedef = jax.tree.flatten(x)
    assert len(leaves) == 1 and leaves[0] is x.jax
    [(path, leaf)] = jax.tree_util.tree_flatten_with_path(x)[0]
    assert jax.tree_util.keystr(path) == "._value" and leaf is x.jax
    rebuilt = jax.tree.unflatten(treedef, [jnp.ones(4, jnp.float32)])
    assert type(rebuilt) is xp.Array and rebuilt is not x
    same(rebuilt, np.ones(4, np.float32))
    again = jax.tree.unflatten(treedef, [x])  # an xp leaf: an array of its value, not a nested wrapper
    assert type(again) is xp.Array and again.jax is x.jax
    for call in (lambda: xp.Array(), lambda: xp.Array(x.jax)):
        with pytest.raises(TypeError, match="cannot be constructed directly"):
            call()
    with pytest.raises(TypeError, match="other"):
        xp.Array(_value=x.jax, other=1)  # type: ignore[call-arg]


def test_tree_map_to_sparse_arrays_says_how_to_map_over_the_arrays(x):
    """A function mapped over the leaves of xp arrays that returns sparse arrays cannot put them in
    a dense array: a clear error (it gave a dense array around each, which failed at first use),
    and the mapping it names gives them."""
    tree = {"m": xp.asarray(np.diag(VALUES))}
    with pytest.raises(TypeError, match=r"BCOO where an xp.Array's value goes.*is_leaf"):
        jax.tree.map(lambda leaf: xp.sparse.fromdense(xp.asarray(leaf)), tree)
    mapped = jax.tree.map(xp.sparse.fromdense, tree, is_leaf=lambda leaf: isinstance(leaf, xp.Array))
    assert isinstance(mapped["m"], xp.sparse.BCOO)
    same(mapped["m"].todense(), np.diag(VALUES))


def test_grad_rejects_a_non_scalar_output(x):
    with pytest.raises(TypeError, match="scalar"):
        xp.transforms.grad(lambda a: a * 2)(x)


def test_grad_with_has_aux_needs_a_pair(x):
    with pytest.raises(TypeError, match="pair"):
        xp.transforms.grad(loss, has_aux=True)(x)


@pytest.mark.slow
def test_jacobians_hessian_jvp_vjp_linearize(x):
    f, g = (lambda a: xp.sin(a) * a), (lambda a: jnp.sin(a) * a)
    same(jax.jacfwd(f)(x), jax.jacfwd(g)(VALUES))
    same(jax.jacrev(f)(x), jax.jacrev(g)(VALUES))
    same(jax.hessian(loss)(x), jax.hessian(jnp_loss)(VALUES), rtol=1e-5)
    primal, tangent = jax.jvp(f, (x,), (xp.ones_like(x),))
    ref_primal, ref_tangent = jax.jvp(g, (VALUES,), (np.ones_like(VALUES),))
    same(primal, ref_primal)
    same(tangent, ref_tangent)
    out, pullback = jax.vjp(f, x)
    (cotangent,) = pullback(xp.ones_like(out))
    same(cotangent, jax.vjp(g, VALUES)[1](np.ones_like(VALUES))[0])
    out, linear = jax.linearize(f, x)
    same(linear(xp.ones_like(x)), jax.linearize(g, VALUES)[1](np.ones_like(VALUES)))


def test_checkpoint_custom_jvp_and_custom_vjp(x):
    same(xp.transforms.grad(jax.checkpoint(loss))(x), jax.grad(jnp_loss)(VALUES))

    @jax.custom_jvp
    def softplus(a):
        return xp.log1p(xp.exp(a))

    @softplus.defjvp
    def _softplus_jvp(primals, tangents):
        (a,), (t,) = primals, tangents
        return softplus(a), t / (1 + xp.exp(-a))

    @jax.custom_vjp
    def clip_gradient(a):
        return a

    clip_gradient.defvjp(lambda a: (a, None), lambda _, g: (xp.clip(g, -1.0, 1.0),))

    same(xp.transforms.grad(lambda a: xp.sum(softplus(a)))(x), jax.nn.sigmoid(VALUES))
    same(xp.transforms.grad(lambda a: xp.sum(clip_gradient(a) * 3))(x), np.ones(4, np.float32))


def test_vmap_with_in_axes_trees(x):
    matrix = xp.reshape(xp.arange(8, dtype=xp.float32), (2, 4))
    same(jax.vmap(lambda row, v: xp.vecdot(row, v), in_axes=(0, None))(matrix, x), np.asarray(matrix) @ VALUES)
    out = jax.vmap(lambda p: p["a"] * p["s"], in_axes=({"a": 0, "s": None},))(
        {"a": matrix, "s": xp.asarray(np.float32(2))}
    )
    same(out, np.asarray(matrix) * 2)


def test_gradient_with_respect_to_sparse_data():
    dense = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], np.float32)
    A = xp.sparse.asarray(dense)
    v = xp.asarray(np.float32([1.0, 2.0, 3.0]))
    gradient = xp.transforms.grad(lambda M: xp.sum((M @ v) ** 2))(A)
    assert isinstance(gradient, xp.sparse.BCOO)
    np.testing.assert_array_equal(np.asarray(gradient.indices), np.asarray(A.indices))
    ref = jax.grad(lambda M: jnp.sum((M @ v.jax) ** 2))(jnp.asarray(dense))
    # the gradient lives on the stored entries; elsewhere it is structurally zero
    np.testing.assert_allclose(np.asarray(gradient.todense()), np.where(dense != 0, ref, 0), rtol=1e-6)


def test_vmap_over_a_batched_sparse_array():
    dense = np.array([[[1.0, 0.0], [0.0, 2.0]], [[0.0, 3.0], [4.0, 0.0]]], np.float32)
    A = xp.sparse.fromdense(dense, n_batch=1)
    out = jax.vmap(lambda M: xp.sum(M, axis=0))(A)
    assert isinstance(out, xp.Array | xp.sparse.BCOO)
    dense_out = out if isinstance(out, xp.Array) else out.todense()
    np.testing.assert_allclose(np.asarray(dense_out), dense.sum(axis=1))


# --- 2. control flow --------------------------------------------------------------------------


def test_cond_and_switch_take_xp_predicates_and_indices(x):
    same(lax.cond(xp.sum(x) > 1, lambda a: a * 2, lambda a: -a, x), VALUES * 2)
    same(lax.cond(xp.sum(x) > 100, lambda a: a * 2, lambda a: -a, x), -VALUES)
    branches = [lambda a: a, lambda a: a * 10, lambda a: a - 1]
    same(lax.switch(xp.asarray(1), branches, x), VALUES * 10)
    same(jax.jit(lambda i, a: lax.switch(i, branches, a))(xp.asarray(2), x), VALUES - 1)


def test_while_loop_with_an_xp_condition(x):
    out = xp.transforms.while_loop(lambda c: xp.sum(c) < 100, lambda c: c * 2, x)
    ref = lax.while_loop(lambda c: jnp.sum(c) < 100, lambda c: c * 2, VALUES)
    same(out, ref)
    same(jax.jit(lambda a: xp.transforms.while_loop(lambda c: xp.sum(c) < 100, lambda c: c * 2, a))(x), ref)


def test_fori_loop_scan_and_map_carry_xp_arrays(x):
    same(lax.fori_loop(0, 3, lambda i, c: c * 2 + i, x), lax.fori_loop(0, 3, lambda i, c: c * 2 + i, VALUES))
    carry, ys = lax.scan(lambda c, a: (c + a, c * a), xp.asarray(np.float32(0)), x)
    ref_carry, ref_ys = lax.scan(lambda c, a: (c + a, c * a), np.float32(0), VALUES)
    same(carry, ref_carry)
    same(ys, ref_ys)
    same(lax.map(lambda a: xp.exp(a), x), np.exp(VALUES), rtol=1e-6)  # accurate on every backend


# --- 3. JAX's functions take xp arrays --------------------------------------------------------


def test_jax_numpy_scipy_nn_and_random_take_xp_arrays(x):
    for result, reference in [
        (jnp.sin(x), np.sin(VALUES)),
        (jnp.add(x, x), VALUES * 2),
        (jnp.linalg.norm(x), np.linalg.norm(VALUES)),
        (jax.scipy.special.erf(x), jax.scipy.special.erf(VALUES)),
        (jax.nn.relu(x), np.maximum(VALUES, 0)),
        (jax.nn.softmax(x), jax.nn.softmax(VALUES)),
    ]:
        assert isinstance(result, jax.Array)  # JAX's functions return what they return today
        np.testing.assert_allclose(np.asarray(result), np.asarray(reference), rtol=1e-6)
    key = jax.random.key(0)
    assert np.asarray(jax.random.choice(key, x)) in VALUES
    assert jax.random.bernoulli(key, x / 4).shape == x.shape


def test_jax_lax_functions_need_the_wrapped_array(x):
    """What docs/jax.md says: ``jax.lax`` primitives (and the few ``jax`` functions that hand an
    argument straight to one, e.g. ``jax.random.permutation``) do not convert ``__jax_array__``
    objects since JAX 0.7; ``x.jax`` is the array they take."""
    with pytest.raises(ValueError, match="__jax_array__"):
        lax.sin(x)
    np.testing.assert_allclose(np.asarray(lax.sin(x.jax)), np.sin(VALUES), rtol=1e-6)
    with pytest.raises(ValueError, match="__jax_array__"):
        jax.random.permutation(jax.random.key(0), x)


def test_jax_numpy_inside_jit_on_xp_arrays(x):
    same(jax.jit(lambda a: xp.asarray(jnp.cumsum(a)))(x), np.cumsum(VALUES))


def test_shapes_and_dtypes_of_abstract_results_and_tracers():
    """An xp array's shape and dtype come from its value's abstract value; one around a
    jax.ShapeDtypeStruct (jax.eval_shape's results, an export's argument spec) or a tracer of any
    transformation reads the same as NumPy's."""
    out = jax.eval_shape(lambda a: xp.sum(a, axis=0), xp.ones((3, 4), dtype=xp.float32))
    assert isinstance(out, xp.Array) and isinstance(out.jax, jax.ShapeDtypeStruct)
    assert (out.shape, out.dtype, out.ndim, out.size) == ((4,), xp.float32, 1, 4)
    for call in (lambda: out[xp.asarray([0])], lambda: xp.take(out, xp.asarray([0])), lambda: out.__setitem__(0, 1)):
        with pytest.raises(TypeError):  # (JAX's: a shape and dtype without values cannot be computed with)
            call()
    spec = jax.tree.map(lambda leaf: jax.ShapeDtypeStruct((2, 5), leaf.dtype), xp.zeros(1, dtype=xp.int32))
    assert (spec.shape, spec.dtype, spec.ndim, spec.size) == ((2, 5), xp.int32, 2, 10)
    seen = []

    def record(a):
        seen.append((a.shape, a.dtype, a.ndim, a.size))
        return a

    values = xp.ones((3, 4), dtype=xp.int16)
    jax.jit(record)(values)
    jax.vmap(record)(values)
    xp.transforms.grad(lambda a: xp.sum(record(a)))(xp.ones((3, 4), dtype=xp.float32))
    assert seen == [((3, 4), xp.int16, 2, 12), ((4,), xp.int16, 1, 4), ((3, 4), xp.float32, 2, 12)]


def test_jax_functions_do_not_silently_densify_sparse_arrays():
    A = xp.sparse.asarray(np.eye(3, dtype=np.float32))
    with pytest.raises(TypeError):
        jnp.sin(A)


def test_device_put_block_until_ready_and_tree_functions(x):
    moved = jax.device_put(x, jax.devices()[0])
    same(moved, VALUES)
    assert jax.block_until_ready(x) is x
    params = {"w": x, "b": xp.asarray(np.float32(1))}
    doubled = jax.tree.map(lambda leaf: leaf * 2, params)
    same(doubled["w"], VALUES * 2)
    assert len(jax.tree.leaves(params)) == 2
    assert all(isinstance(leaf, jax.Array) for leaf in jax.tree.leaves(params))


def test_an_optax_style_update_over_a_parameter_tree(x):
    """``jax.tree.map`` with several trees: SGD with momentum, written as optax writes it."""
    params = {"w": xp.asarray(VALUES), "b": xp.asarray(np.float32(0))}
    momentum = jax.tree.map(xp.zeros_like, params)
    grads = xp.transforms.grad(lambda p: xp.sum((x * p["w"] + p["b"] - 1) ** 2))(params)
    momentum = jax.tree.map(lambda m, g: 0.9 * m + g, momentum, grads)
    params = jax.tree.map(lambda p, m: p - 0.1 * m, params, momentum)
    assert all(
        isinstance(leaf, xp.Array) for leaf in jax.tree.leaves(params, is_leaf=lambda n: isinstance(n, xp.Array))
    )
    ref_grad = 2 * (VALUES * VALUES - 1) * VALUES
    same(params["w"], VALUES - 0.1 * ref_grad, rtol=1e-5)


# --- 4. jax.export ----------------------------------------------------------------------------


def test_export_serialize_and_call_dense():
    def f(a, b):
        return xp.sum(a * 2, axis=0) + b

    a, b = xp.reshape(xp.arange(12, dtype=xp.float32), (3, 4)), xp.ones(4, dtype=xp.float32)
    restored = export.deserialize(export.export(jax.jit(f))(a, b).serialize())
    same(restored.call(a, b), np.asarray(f(a, b)))


@pytest.mark.slow
def test_export_with_a_symbolic_shape():
    def f(v):
        return xp.sum(v * v, axis=0) + xp.mean(xp.sin(v) @ xp.ones((3, 2), dtype=xp.float32)) + xp.std(v)

    (n,) = export.symbolic_shape("n")
    spec = jax.tree.map(lambda leaf: jax.ShapeDtypeStruct((n, 3), leaf.dtype), xp.ones((1, 3), dtype=xp.float32))
    restored = export.deserialize(export.export(jax.jit(f))(spec).serialize())
    for rows in (2, 5):
        v = xp.reshape(xp.arange(rows * 3, dtype=xp.float32), (rows, 3))
        same(restored.call(v), np.asarray(f(v)), rtol=1e-5)


# keys along an axis of symbolic size: slices of every kind, the integers every allowed size has
_SYMBOLIC_BOUNDS = st.one_of(st.none(), st.integers(-6, 6))
_SYMBOLIC_KEYS = st.one_of(
    st.builds(slice, _SYMBOLIC_BOUNDS, _SYMBOLIC_BOUNDS, st.one_of(st.none(), st.integers(-3, 3).filter(bool))),
    st.sampled_from([0, -1]),
)


def _symbolic_spec(constraints: tuple[str, ...] = ()) -> object:
    (n,) = export.symbolic_shape("n", constraints=constraints)
    return jax.tree.map(lambda leaf: jax.ShapeDtypeStruct((n, 3), leaf.dtype), xp.ones((1, 3), dtype=xp.float32))


@pytest.mark.slow
@given(key=_SYMBOLIC_KEYS, other=st.sampled_from([slice(None), 1, slice(None, None, -2)]))
def test_basic_indexing_along_an_axis_of_symbolic_size_matches_numpy_at_every_size(key, other):
    # it was a NotImplementedError for anything but ":" along the symbolic axis
    def f(v):
        written = xp.asarray(v, copy=True)
        written[key, other] = -1.0
        view = v[key]  # a view: writing into it writes into v (here a copy of it)
        base = xp.asarray(v, copy=True)
        base_view = base[key]
        base_view[...] = 7.0
        return v[key, other], written, view, base

    restored = export.deserialize(export.export(jax.jit(f))(_symbolic_spec()).serialize())
    for rows in (1, 2, 5, 8):
        v = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
        if isinstance(key, int) and not -rows <= key < rows:
            continue
        got, written, view, base = restored.call(xp.asarray(v))
        ref_written, ref_base = v.copy(), v.copy()
        ref_written[key, other] = -1.0
        ref_base[key] = 7.0
        same(got, v[key, other])
        same(written, ref_written)
        same(view, v[key])
        same(base, ref_base)


def test_an_integer_index_along_a_symbolic_axis_must_be_in_bounds_for_every_allowed_size():
    with pytest.raises(
        NotImplementedError,
        match=r"^xp.Array.__getitem__: index 2 may be out of bounds for axis 0, whose size n is symbolic "
        r"\(jax.export shape polymorphism\)",
    ):
        export.export(jax.jit(lambda v: v[2]))(_symbolic_spec())
    with pytest.raises(IndexError, match=r"^xp.Array.__getitem__: index -5 is out of bounds for axis 0 with size n\n"):
        export.export(jax.jit(lambda v: v[-5]))(_symbolic_spec(("n <= 4",)))
    with pytest.raises(IndexError, match=r"^xp.Array.__setitem__: slice bounds must be integers or None"):
        export.export(jax.jit(lambda v: v.__setitem__(slice(1.5, None), 0.0)))(_symbolic_spec())
    restored = export.export(jax.jit(lambda v: (v[2], v[-3:-1])))(_symbolic_spec(("n >= 3",)))
    v = np.arange(12, dtype=np.float32).reshape(4, 3)
    third, window = restored.call(xp.asarray(v))
    same(third, v[2])
    same(window, v[-3:-1])


# generic code makes arrays from the sizes of its arguments: under jax.export those are symbolic
SIZED_BY_AN_ARGUMENT = {
    "zeros": (lambda v: xp.zeros((v.shape[0], 2)), lambda k: np.zeros((k, 2))),
    "ones_like-free full": (lambda v: xp.full(v.shape, 2.5), lambda k: np.full((k, 3), 2.5)),
    "empty + fill": (lambda v: xp.empty((v.shape[0],), dtype=xp.int32) * 0, lambda k: np.zeros(k, np.int32)),
    "broadcast_to": (
        lambda v: xp.broadcast_to(v[:, :1], v.shape),
        lambda k: np.repeat(np.arange(0, 3 * k, 3, dtype=np.float32)[:, None], 3, 1),
    ),
    "reshape": (lambda v: xp.reshape(v, (v.shape[0] * 3,)), lambda k: np.arange(k * 3, dtype=np.float32)),
    "reshape -1": (lambda v: xp.reshape(v, (3, -1)), lambda k: np.arange(k * 3, dtype=np.float32).reshape(3, -1)),
    "arange": (lambda v: xp.arange(v.shape[0]), lambda k: np.arange(k)),
    "arange by 2": (lambda v: xp.arange(1, v.shape[0], 2), lambda k: np.arange(1, k, 2)),
    "arange down": (lambda v: xp.arange(v.shape[0], 0, -1), lambda k: np.arange(k, 0, -1)),
    "arange float": (lambda v: xp.arange(v.shape[0], dtype=xp.float32), lambda k: np.arange(k, dtype=np.float32)),
    "arange float from a symbolic start": (
        lambda v: xp.arange(v.shape[0], 2 * v.shape[0] + 1, 2, dtype=xp.float32),
        lambda k: np.arange(k, 2 * k + 1, 2, dtype=np.float32),
    ),
    "arange of an expression": (lambda v: xp.arange(-2, v.shape[0] * 2, 3), lambda k: np.arange(-2, 2 * k, 3)),
    "eye": (lambda v: xp.eye(v.shape[0]), lambda k: np.eye(k)),
    "eye with k": (lambda v: xp.eye(v.shape[0], 3, k=1), lambda k: np.eye(k, 3, k=1)),
    "flip": (lambda v: xp.flip(v), lambda k: np.arange(3 * k, dtype=np.float32).reshape(k, 3)[::-1, ::-1]),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", SIZED_BY_AN_ARGUMENT)
def test_arrays_sized_by_a_symbolic_size_match_numpy_at_every_size(name):
    # each was a TypeError ("shape[0] must be an integer, got _DimExpr")
    make, reference = SIZED_BY_AN_ARGUMENT[name]
    restored = export.deserialize(export.export(jax.jit(make))(_symbolic_spec()).serialize())
    for rows in (1, 4, 7):
        v = xp.reshape(xp.arange(rows * 3, dtype=xp.float32), (rows, 3))
        got, eager = restored.call(v), make(v)
        assert type(got) is xp.Array and got.dtype == eager.dtype
        same(got, reference(rows).astype(eager.dtype))  # (the default dtypes follow JAX's 64-bit mode)


def test_a_symbolic_size_is_checked_like_an_int_where_it_can_be():
    with pytest.raises(TypeError, match=r"^xp.arange: start must be an integer, got float"):
        export.export(jax.jit(lambda v: xp.arange(0.5, v.shape[0])))(_symbolic_spec())
    with pytest.raises(ValueError, match=r"^xp.arange: step must not be zero"):
        export.export(jax.jit(lambda v: xp.arange(0, v.shape[0], 0)))(_symbolic_spec())
    with pytest.raises(ValueError, match=r"^xp.zeros: shape\[1\] must be non-negative, got -1"):
        export.export(jax.jit(lambda v: xp.zeros((v.shape[0], -1))))(_symbolic_spec())
    # what xp does not compute along a symbolic axis (nor does jax.numpy): an error that names the function
    with pytest.raises(
        NotImplementedError,
        match=r"^xp.searchsorted cannot compute with a size jax.export leaves symbolic here \(Symbolic dimension .*\); "
        r"export with a concrete size for that axis\n",
    ):
        export.export(jax.jit(lambda v: xp.searchsorted(xp.sort(v[:, 0]), v[:, 1])))(_symbolic_spec())
    with pytest.raises(NotImplementedError, match=r"^xp.linspace: num is a size jax.export leaves symbolic \(n\)"):
        export.export(jax.jit(lambda v: xp.linspace(0.0, 1.0, v.shape[0])))(_symbolic_spec())
    with pytest.raises(
        NotImplementedError, match=r"^xp.fft.fftn: x has a size jax.export leaves symbolic \(n\) along axis 0"
    ):
        export.export(jax.jit(lambda v: xp.fft.fftn(v)))(_symbolic_spec())
    restored = export.export(jax.jit(lambda v: xp.fft.fft(v, axis=1)))(_symbolic_spec())  # a concrete axis
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    same(restored.call(xp.asarray(v)), np.fft.fft(v, axis=1).astype(np.complex64), rtol=1e-5)


# functions that compute along an axis of symbolic size, with the shifts, indices and sizes that
# every allowed size (n >= 2 here) has
ALONG_A_SYMBOLIC_AXIS = {
    "take": (lambda v: xp.take(v, xp.asarray([0, -1, 1]), axis=0), lambda a: a[[0, -1, 1]]),
    "take with NumPy indices": (lambda v: xp.take(v, np.array([-2, 1], np.int8), axis=0), lambda a: a[[-2, 1]]),
    "take with unsigned indices": (lambda v: xp.take(v, np.array([1, 0], np.uint32), axis=0), lambda a: a[[1, 0]]),
    "take with traced indices": (
        lambda v: xp.take(v, xp.astype(v[:2, 0] % 2, xp.int32), axis=0),
        lambda a: a[(a[:2, 0] % 2).astype(int)],
    ),
    "take_along_axis": (
        lambda v: xp.take_along_axis(v, xp.asarray([[1, -1, 0]]), axis=0),
        lambda a: np.take_along_axis(a, np.array([[1, -1, 0]]), axis=0),
    ),
    "index array": (lambda v: v[np.array([-1, 0]), 1:], lambda a: a[[-1, 0], 1:]),
    "roll": (lambda v: xp.roll(v, 5, axis=0), lambda a: np.roll(a, 5, axis=0)),
    "roll two axes": (lambda v: xp.roll(v, (-1, 2), axis=(0, 1)), lambda a: np.roll(a, (-1, 2), axis=(0, 1))),
    "roll flattened": (lambda v: xp.roll(v, 4), lambda a: np.roll(a, 4)),
    "isin": (lambda v: xp.isin(v, xp.asarray([1.0, 4.0, 9.0])), lambda a: np.isin(a, [1.0, 4.0, 9.0])),
    "isin of a symbolic test set": (lambda v: xp.isin(xp.arange(7.0), v), lambda a: np.isin(np.arange(7.0), a)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", ALONG_A_SYMBOLIC_AXIS)
def test_functions_along_an_axis_of_symbolic_size_match_numpy_at_every_size(name):
    # each was a NotImplementedError (InconclusiveDimensionOperation inside xp); jax.numpy has them
    compute, reference = ALONG_A_SYMBOLIC_AXIS[name]
    restored = export.deserialize(export.export(jax.jit(compute))(_symbolic_spec(("n >= 2",))).serialize())
    for rows in (2, 3, 6):
        a = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
        got = restored.call(xp.asarray(a))
        assert type(got) is xp.Array
        same(got, reference(a))


def test_constant_indices_along_a_symbolic_axis_are_checked_where_every_size_decides_them():
    # a constant index is checked when traced: along a symbolic axis, in bounds or out of bounds
    # for every allowed size, or a NotImplementedError that says how to decide it
    undecided = r" may be out of bounds for axis 0, whose size n is symbolic \(jax.export shape polymorphism\)"
    with pytest.raises(NotImplementedError, match=r"^xp.take: index 2" + undecided):
        export.export(jax.jit(lambda v: xp.take(v, np.array([0, 2], np.int32), axis=0)))(_symbolic_spec())
    with pytest.raises(NotImplementedError, match=r"^xp.Array.__getitem__: index -3" + undecided):
        export.export(jax.jit(lambda v: v[np.array([-3, 0], np.int32)]))(_symbolic_spec())
    with pytest.raises(
        IndexError, match=r"^xp.take: indices holds -5, which is out of bounds for axis 0 of x with size n"
    ):
        export.export(jax.jit(lambda v: xp.take(v, np.array([-5], np.int32), axis=0)))(_symbolic_spec(("n <= 4",)))
    restored = export.export(jax.jit(lambda v: xp.take(v, np.array([2], np.int32), axis=0)))(
        _symbolic_spec(("n >= 3",))
    )
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    same(restored.call(xp.asarray(a)), a[[2]])
    # traced indices: checked when the computation runs, in checked mode, against the actual size
    checked = export.export(jax.jit(xp.checked(lambda v, i: xp.take(v, i, axis=0))))(
        _symbolic_spec(), jax.tree.map(lambda leaf: jax.ShapeDtypeStruct((2,), leaf.dtype), xp.zeros(2, dtype=xp.int32))
    )
    same(checked.call(xp.asarray(a), xp.asarray([3, -4], dtype=xp.int32)), a[[3, -4]])
    with pytest.raises(
        IndexError, match=r"^xp.take: indices holds 4, which is out of bounds for axis 0 of x with size n"
    ):
        checked.call(xp.asarray(a), xp.asarray([0, 4], dtype=xp.int32))
    with pytest.raises(IndexError, match=r"^xp.take: indices holds -5, which is out of bounds"):
        checked.call(xp.asarray(a), xp.asarray([-5, 0], dtype=xp.int32))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["BCOO", "BCSR"])
def test_export_serialize_and_call_sparse(fmt):
    dense = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], np.float32)
    A = xp.sparse.fromdense(dense, format=fmt.lower())
    assert type(A).__name__ == fmt
    v = xp.asarray(np.float32([1.0, 2.0, 3.0]))
    restored = export.deserialize(export.export(jax.jit(lambda M, w: (M * 2, M @ w)))(A, v).serialize())
    scaled, product = restored.call(A, v)
    assert type(scaled) is type(A)
    np.testing.assert_allclose(np.asarray(scaled.todense()), dense * 2)
    same(product, dense @ np.asarray(v))


# --- writing into an argument (docs/jax.md, "Writing into an argument") ----------------------


def _writes_into_its_argument(a: xp.Array) -> xp.Array:
    a[...] = a * 10.0  # (any shape: vmap hands the function 0-d slices)
    a += 1
    return a


def test_a_write_into_an_argument_changes_the_callers_array_eagerly(x):
    _writes_into_its_argument(x)
    same(x, VALUES * 10 + 1)


def test_a_write_into_a_view_passed_in_reaches_the_callers_array_eagerly():
    x = xp.zeros((2, 3))
    _writes_into_its_argument(x[1])
    np.testing.assert_array_equal(np.asarray(x), [[0, 0, 0], [1, 1, 1]])


@pytest.mark.parametrize(
    "transform", [jax.jit, jax.vmap, lambda f: jax.grad(lambda a: xp.sum(f(a)).jax)], ids=["jit", "vmap", "grad"]
)
def test_under_a_transform_the_callers_array_and_view_are_unchanged(x, transform):
    base = xp.asarray(np.arange(8, dtype=np.float32).reshape(2, 4))
    row = base[1]
    transform(_writes_into_its_argument)(x)
    transform(_writes_into_its_argument)(row)
    same(x, VALUES)
    same(base, np.arange(8, dtype=np.float32).reshape(2, 4))
    same(row, np.arange(4, 8, dtype=np.float32))


def test_the_returned_array_holds_the_writes_made_under_jit(x):
    out = jax.jit(_writes_into_its_argument)(x)
    same(out, VALUES * 10 + 1)


def test_views_keep_numpy_semantics_inside_the_jitted_function(x):
    def program(a):
        head = a[:2]
        flipped = xp.flip(a)
        head[0] = 7.0  # into a view: reaches a, and a's other views
        a[3] = 8.0  # into a: reaches its views
        return a, head, flipped

    a, head, flipped = jax.jit(program)(x)
    expected = VALUES.copy()
    expected[0], expected[3] = 7.0, 8.0
    same(a, expected)
    same(head, expected[:2])
    same(flipped, expected[::-1])


def test_arrays_returned_by_a_jitted_function_are_independent(x):
    base, row = jax.jit(lambda a: (a, a[:2]))(x)
    row[0] = 100.0  # eagerly row would be a view of base; out of jit it is not
    same(base, VALUES)
    same(row, np.array([100.0, VALUES[1]], dtype=np.float32))
    same(x, VALUES)


def test_a_write_under_jit_into_an_array_not_passed_in_leaks_a_tracer(x):
    outside = xp.zeros(4)

    def f(a):
        outside[0] = a[0]
        return a

    jax.jit(f)(x)
    with pytest.raises(jax.errors.UnexpectedTracerError):
        outside + 1


def test_sparse_arrays_are_immutable_and_in_place_operators_rebind():
    A = xp.sparse.fromdense(xp.eye(2))
    before = A
    A *= 2
    assert A is not before
    np.testing.assert_array_equal(np.asarray(before.todense()), np.eye(2))
    with pytest.raises(TypeError):
        before[0, 0] = 5.0


@pytest.mark.slow
@pytest.mark.cpu_only(reason="XLA's CPU backend maps compiled kernels into this process; an accelerator's live on it")
@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="counts the memory mappings Linux lists in /proc")
def test_compiled_kernels_hold_memory_mappings_until_jax_clears_its_caches():
    # why tests/conftest.py clears JAX's caches when a test process nears Linux's cap on mappings
    from conftest import memory_mappings

    jax.clear_caches()
    before = memory_mappings()
    for n in range(1, 51):  # 100 distinct kernels: sin and the product, one of each per shape
        xp.sin(xp.ones(n)) * 3.0
    compiled = memory_mappings()
    assert compiled - before > 100
    jax.clear_caches()
    assert compiled - memory_mappings() > 100
