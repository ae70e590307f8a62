"""xp.sparse's native CPU kernel (xp/sparse/_products/native.py): the four products against NumPy, padding
entries, empty operands, the transformations (jit, grad, jvp, vmap), export, and XLA's fallback.

The tests of results run whether or not the kernel could be built (the products then use XLA's
kernels, which must agree), and on every backend (XLA's kernels, where the default backend is not
the CPU); only the tests that check the kernel itself is used skip without it (``needs_native``:
marked ``cpu_only`` too, so that an accelerator's run gives that reason).
"""

import os
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax.experimental import sparse as jsparse
from subprocess_env import failure, run_script, subprocess_env

from xp.sparse._products import kernels, native

from .helpers import dense_product

X64 = jax.config.jax_enable_x64
VALUE_DTYPES = ["float32", "complex64", "int32"] + (["float64", "complex128", "int64"] if X64 else [])
INDEX_DTYPES = ["int32"] + (["int64"] if X64 else [])

NATIVE_IS_CPU = (
    "xp.sparse's native kernel (xp/sparse/_products/native.py) is a CPU library, built and used only where "
    "JAX's default backend is the CPU"
)
_native_built = pytest.mark.skipif(
    not native.available(), reason="the native kernel is not built here (no compiler, or XP_NATIVE=0)"
)


def needs_native(test):
    """For a test that checks the native kernel itself: skipped without it (on CPU: no compiler,
    or XP_NATIVE=0) and on other backends (``cpu_only``)."""
    return pytest.mark.cpu_only(reason=NATIVE_IS_CPU)(_native_built(test))


def _values(rng, dtype, size):
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        return rng.integers(-5, 6, size).astype(dtype)
    values = rng.standard_normal(size)
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(size)
    return values.astype(dtype)


@st.composite
def problems(draw, dtypes=VALUE_DTYPES):
    """A matrix as entries (rows, cols, values; rows == m or cols == n are JAX's padding), its
    CSR buffers (padding also past indptr[-1]), and a dense operand (1-d or k columns, k may be 0)."""
    m, n = draw(st.integers(0, 9)), draw(st.integers(0, 9))
    nse = draw(st.integers(0, 70))  # rows longer than a vector of 16 (8) lanes, and runs across blocks
    dtype = draw(st.sampled_from(dtypes))
    index_dtype = draw(st.sampled_from(INDEX_DTYPES))
    # k: the vector, no columns, one; then float32 / float64 widths that take the panel path of
    # A @ X with a tail (13: one vector of 8 float32 + 5; 37: 8 vectors of 4 float64 + 1 + 1),
    # and a full panel of 64 float32 columns plus 6.
    k = draw(st.sampled_from([None, 0, 1, 3, 13, 37, 70]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rows = np.sort(rng.integers(0, m + 1, nse)) if draw(st.booleans()) else rng.integers(0, m + 1, nse)
    cols = rng.integers(0, n + 1, nse)
    data = _values(rng, dtype, nse)
    shape_x = lambda rows_: (rows_,) if k is None else (rows_, k)  # noqa: E731
    return {
        "m": m, "n": n, "rows": rows.astype(index_dtype), "cols": cols.astype(index_dtype), "data": data,
        "x": _values(rng, dtype, shape_x(n)), "xt": _values(rng, dtype, shape_x(m)),
    }  # fmt: skip


def dense(p):
    """The matrix the entries stand for, padding left out, in float64 / complex128 / int64."""
    wide = np.result_type(p["data"].dtype, np.float64) if p["data"].dtype.kind != "i" else np.int64
    a = np.zeros((p["m"], p["n"]), wide)
    for r, c, v in zip(p["rows"], p["cols"], p["data"], strict=True):
        if r < p["m"] and c < p["n"]:
            a[r, c] += v
    return a


def bcoo(p):
    indices = np.stack([p["rows"], p["cols"]], axis=1).reshape(-1, 2)
    sorted_ = bool(np.all(np.diff(p["rows"].astype(np.int64)) >= 0))
    return jsparse.BCOO((jnp.asarray(p["data"]), jnp.asarray(indices)), shape=(p["m"], p["n"]), indices_sorted=sorted_)


def bcsr(p):
    """The entries in row order (padding rows past indptr[-1], as JAX pads a BCSR)."""
    order = np.argsort(p["rows"], kind="stable")
    rows, cols, data = p["rows"][order], p["cols"][order], p["data"][order]
    counts = np.bincount(rows[rows < p["m"]].astype(np.int64), minlength=p["m"])
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(p["rows"].dtype)
    return jsparse.BCSR((jnp.asarray(data), jnp.asarray(cols), jnp.asarray(indptr)), shape=(p["m"], p["n"]))


def check(got, expected, dtype):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype) and got.shape == expected.shape
    tol = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-10, "complex128": 1e-10}.get(np.dtype(dtype).name, 0)
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * (1 + np.abs(expected).max(initial=0)))


PRODUCTS = {
    "bcoo A @ x": (bcoo, kernels.bcoo_matmul, False),
    "bcoo A.T @ x": (bcoo, kernels.bcoo_rmatmul, True),
    "bcsr A @ x": (bcsr, kernels.bcsr_matmul, False),
    "bcsr A.T @ x": (bcsr, kernels.bcsr_rmatmul, True),
}


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
@given(p=problems())
def test_products_match_dense_and_xla(product, p):
    make, fn, transposed = PRODUCTS[product]
    a, x = dense(p), p["xt"] if transposed else p["x"]
    expected = (a.T if transposed else a) @ x
    matrix = make(p)
    check(jax.jit(fn)(matrix, jnp.asarray(x)), expected, p["data"].dtype)
    with native.disabled():  # XLA's kernels, traced afresh
        check(jax.jit(lambda m, x: fn(m, x))(matrix, jnp.asarray(x)), expected, p["data"].dtype)


def _data_cotangent(p, matrix, ct, x, transposed):
    """What the data cotangent of a product is, entry by entry in the matrix's storage order:
    ``ct[out] . x[in]`` over the columns for an entry inside the shape, 0 for a padding entry."""
    rows, cols = _entry_positions(matrix, p)
    valid = (rows < p["m"]) & (cols < p["n"])
    out, inp = (cols, rows) if transposed else (rows, cols)
    wide = np.result_type(ct.dtype, np.float64)
    k = x.shape[1] if x.ndim == 2 else 1
    ct2, x2 = ct.astype(wide).reshape(ct.shape[0], k), x.astype(wide).reshape(x.shape[0], k)
    expected = np.zeros(len(rows), wide)
    for j in np.flatnonzero(valid):
        expected[j] = np.sum(ct2[out[j]] * x2[inp[j]])
    return expected


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
@given(p=problems(dtypes=[d for d in VALUE_DTYPES if not d.startswith("int")]))
def test_data_cotangents_match_numpy_and_xla(product, p):
    """Reverse mode with respect to the stored values: on CPU a BCSR's comes from the native
    kernel (xp_csr_sampled), a BCOO's from XLA's gathers; padding entries get 0."""
    make, fn, transposed = PRODUCTS[product]
    matrix = make(p)
    x = jnp.asarray(p["xt"] if transposed else p["x"])
    rng = np.random.default_rng(0)
    ct = _values(rng, p["data"].dtype, (p["n"] if transposed else p["m"], *x.shape[1:]))
    expected = _data_cotangent(p, matrix, ct, np.asarray(x), transposed)

    def data_cotangent(data, x, ct):
        return jax.vjp(lambda d: fn(_with_data(matrix, d), x), data)[1](ct)[0]

    check(jax.jit(data_cotangent)(matrix.data, x, jnp.asarray(ct)), expected, p["data"].dtype)
    with native.disabled():
        check(jax.jit(lambda d, x, c: data_cotangent(d, x, c))(matrix.data, x, jnp.asarray(ct)), expected,
              p["data"].dtype)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("product", ["bcsr A @ x", "bcoo A @ x"])
@pytest.mark.parametrize("m, n", [(0, 1), (1, 0), (0, 0)])
def test_xla_kernels_differentiate_products_of_matrices_without_rows_or_columns(product, m, n):
    """XLA's path picks JAX's CSR kernel for many columns (a BCOO's through row pointers); its
    data cotangent failed to trace for a matrix without rows or columns (a gather from an empty
    operand), so those take the other path. A padding entry, so that there is a stored value to
    differentiate."""
    make, fn, _ = PRODUCTS[product]
    p = {"m": m, "n": n, "rows": np.array([m], np.int32), "cols": np.array([n], np.int32),
         "data": np.array([0.5], np.float32)}  # fmt: skip
    matrix, x = make(p), jnp.ones((n, 13), jnp.float32)
    ct = jnp.ones((m, 13), jnp.float32)

    def data_cotangent(data):
        return jax.vjp(lambda d: fn(_with_data(matrix, d), x), data)[1](ct)[0]

    with native.disabled():
        np.testing.assert_array_equal(np.asarray(jax.jit(data_cotangent)(matrix.data)), [0.0])
        assert fn(matrix, x).shape == (m, 13)


@needs_native
@pytest.mark.parametrize("product", ["bcsr A @ x", "bcsr A.T @ x"])
def test_the_native_kernel_computes_a_bcsrs_data_cotangent(product):
    """In XLA a CSR's row of each entry is a scatter and a cumulative sum (1.3 ms against 0.2 for
    400k entries, and constant-folded for seconds at compile time when the matrix is a constant)."""
    make, fn, transposed = PRODUCTS[product]
    p = _fixed()
    matrix, x = make(p), jnp.asarray(p["xt"] if transposed else p["x"])
    grad = jax.jit(jax.grad(lambda d, x: jnp.sum(fn(_with_data(matrix, d), x)).real))
    assert "xp_csr_sampled" in grad.lower(matrix.data, x).as_text()
    exported = jax.export.export(grad)(matrix.data, x)  # an exported gradient keeps XLA's form
    assert "xp_c" not in exported.mlir_module()
    ones = np.ones(p["n"] if transposed else p["m"], np.float32)  # the cotangent of a sum
    expected = _data_cotangent(p, matrix, ones, np.asarray(x), transposed)
    check(grad(matrix.data, x), expected, np.float32)
    check(exported.call(matrix.data, x), expected, np.float32)


@needs_native
@pytest.mark.parametrize("product", PRODUCTS)
def test_the_native_kernel_is_what_runs_on_cpu(product):
    make, fn, transposed = PRODUCTS[product]
    rng = np.random.default_rng(0)
    p = {"m": 6, "n": 5, "rows": np.sort(rng.integers(0, 6, 12)).astype(np.int32),
         "cols": rng.integers(0, 5, 12).astype(np.int32), "data": rng.standard_normal(12).astype(np.float32),
         "x": np.ones(5, np.float32), "xt": np.ones(6, np.float32)}  # fmt: skip
    text = jax.jit(fn).lower(make(p), jnp.asarray(p["xt"] if transposed else p["x"])).as_text()
    assert "xp_c" in text  # xp_csr_matmul, xp_csr_rmatmul or xp_coo_matmul


@needs_native
def test_disabled_retraces_what_was_traced_natively():
    """xp's sparse functions are jitted kernels whose traces JAX caches: switching the native
    kernel off must not reuse a trace made with it (nor leave its own traces behind)."""
    import xp
    import xp.sparse as xs

    matrix = xs.fromdense(xp.asarray([[1.0, 0, 2], [0, 3, 0]]), format="bcsr")
    x = xp.ones(3)

    def lowered():
        return jax.jit(lambda a, v: a @ v).lower(matrix, x).as_text()

    assert "xp_csr_matmul" in lowered()
    with native.disabled():
        assert "xp_c" not in lowered()
    assert "xp_csr_matmul" in lowered()


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
@pytest.mark.parametrize("k", [None, 3, 16])
def test_padding_entries_add_nothing_even_where_x_is_not_finite(product, k):
    """The kernel masks padding entries without a branch (reading x[0] in their place): an inf or
    NaN there must not leak into the result; every product path (sorted and unsorted COO)."""
    make, fn, transposed = PRODUCTS[product]
    m, n = 4, 3
    rows = np.array([0, 0, 2, m, m, 3], np.int32)  # m: a padding row
    cols = np.array([1, n, 2, 0, n, 0], np.int32)  # n: a padding column
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], np.float32)
    # rows sorted (padding last, as JAX pads: the sorted paths), then two unsorted orders
    for order in (np.array([0, 1, 2, 5, 3, 4]), np.arange(6), np.array([5, 3, 0, 4, 2, 1])):
        q = {"m": m, "n": n, "rows": rows[order], "cols": cols[order], "data": data[order]}
        size = m if transposed else n
        x = np.arange(1.0, size + 1, dtype=np.float32)
        if k is not None:
            x = np.repeat(x[:, None], k, axis=1)
        x[0] = np.inf if order[0] == 0 else np.nan
        # the stored in-range entries only (a dense product would multiply inf by structural zeros)
        expected = np.zeros((n if transposed else m, *x.shape[1:]))
        for r, c, v in zip(q["rows"], q["cols"], q["data"], strict=True):
            if r < m and c < n:
                out, inner = (c, r) if transposed else (r, c)
                expected[out] += v * x[inner]
        got = np.asarray(jax.jit(fn)(make(q), jnp.asarray(x)))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def _fixed(dtype=np.float32, k=None, seed=0):
    rng = np.random.default_rng(seed)
    m, n, nse = 7, 5, 14
    shape = (lambda r: (r,)) if k is None else (lambda r: (r, k))
    return {"m": m, "n": n, "rows": np.sort(rng.integers(0, m + 1, nse)).astype(np.int32),
            "cols": rng.integers(0, n + 1, nse).astype(np.int32), "data": _values(rng, dtype, nse),
            "x": _values(rng, dtype, shape(n)), "xt": _values(rng, dtype, shape(m))}  # fmt: skip


def _valid(p):
    return (p["rows"] < p["m"]) & (p["cols"] < p["n"])


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
@pytest.mark.parametrize("k", [None, 3])
def test_grad_matches_the_dense_gradient(product, k):
    make, fn, transposed = PRODUCTS[product]
    p = _fixed(k=k)
    matrix = make(p)
    x = jnp.asarray(p["xt"] if transposed else p["x"])

    def loss(data, x):
        return jnp.sum(jnp.sin(fn(_with_data(matrix, data), x)))

    def dense_loss(a, x):
        return jnp.sum(jnp.sin(dense_product(a.T if transposed else a, x)))

    grad_data, grad_x = jax.jit(jax.grad(loss, argnums=(0, 1)))(matrix.data, x)
    a = jnp.asarray(dense(p), jnp.float32)
    dense_a, dense_x = jax.grad(dense_loss, argnums=(0, 1))(a, x)
    np.testing.assert_allclose(grad_x, dense_x, rtol=1e-5, atol=1e-5)
    rows, cols = _entry_positions(matrix, p)
    expected_data = np.where(
        _entry_valid(matrix, p), np.asarray(dense_a)[np.minimum(rows, p["m"] - 1), np.minimum(cols, p["n"] - 1)], 0
    )
    np.testing.assert_allclose(grad_data, expected_data, rtol=1e-5, atol=1e-5)
    # forward mode, and a Hessian-vector product (forward over reverse)
    _, tangent = jax.jvp(loss, (matrix.data, x), (jnp.ones_like(matrix.data), jnp.ones_like(x)))
    mask = np.zeros((p["m"], p["n"]), np.float32)
    for r, c in zip(rows[_entry_valid(matrix, p)], cols[_entry_valid(matrix, p)], strict=True):
        mask[r, c] += 1
    _, dense_tangent = jax.jvp(dense_loss, (a, x), (jnp.asarray(mask), jnp.ones_like(x)))
    np.testing.assert_allclose(tangent, dense_tangent, rtol=1e-4, atol=1e-4)
    hvp = jax.jvp(jax.grad(lambda x: loss(matrix.data, x)), (x,), (jnp.ones_like(x),))[1]
    dense_hvp = jax.jvp(jax.grad(lambda x: dense_loss(a, x)), (x,), (jnp.ones_like(x),))[1]
    np.testing.assert_allclose(hvp, dense_hvp, rtol=1e-4, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
@pytest.mark.parametrize("k", [None, 3])
def test_higher_order_and_batched_gradients_with_respect_to_data(product, k):
    """The data cotangent's own rules (a BCSR's is a primitive of its own on CPU): forward over
    reverse, reverse over reverse with respect to data and to x, and per-example gradients, each
    against the same function of a dense matrix built from the data (padding entries dropped)."""
    make, fn, transposed = PRODUCTS[product]
    p = _fixed(k=k)
    matrix = make(p)
    x = jnp.asarray(p["xt"] if transposed else p["x"])
    rows, cols = _entry_positions(matrix, p)
    valid = jnp.asarray((rows < p["m"]) & (cols < p["n"]))
    rows, cols = np.minimum(rows, p["m"] - 1), np.minimum(cols, p["n"] - 1)

    def loss(data, x):
        return jnp.sum(jnp.sin(fn(_with_data(matrix, data), x)))

    def dense_loss(data, x):
        a = jnp.zeros((p["m"], p["n"]), data.dtype).at[rows, cols].add(jnp.where(valid, data, 0))
        return jnp.sum(jnp.sin(dense_product(a.T if transposed else a, x)))

    data, v = matrix.data, jnp.linspace(-1.0, 1.0, matrix.data.shape[0], dtype=jnp.float32)
    for derivative in (
        lambda f: jax.jvp(lambda d: jax.grad(f)(d, x), (data,), (v,))[1],  # forward over reverse
        lambda f: jax.grad(lambda d: jnp.vdot(v, jax.grad(f)(d, x)))(data),  # reverse over reverse
        lambda f: jax.grad(lambda x: jnp.vdot(v, jax.grad(f)(data, x)))(x),  # ... with respect to x
        lambda f: jax.vmap(lambda x: jax.grad(f)(data, x))(jnp.stack([x, 2 * x, -x])),  # per example
    ):
        got = jax.jit(lambda derivative=derivative: derivative(loss))()
        np.testing.assert_allclose(got, derivative(dense_loss), rtol=1e-4, atol=1e-4)


def _with_data(matrix, data):
    if isinstance(matrix, jsparse.BCSR):
        return jsparse.BCSR((data, matrix.indices, matrix.indptr), shape=matrix.shape)
    return jsparse.BCOO((data, matrix.indices), shape=matrix.shape, indices_sorted=matrix.indices_sorted)


def _entry_positions(matrix, p):
    if isinstance(matrix, jsparse.BCSR):
        indptr = np.asarray(matrix.indptr)
        rows = np.searchsorted(indptr, np.arange(matrix.data.shape[0]), side="right") - 1
        return np.minimum(rows, p["m"]), np.asarray(matrix.indices)
    return np.asarray(matrix.indices[:, 0]), np.asarray(matrix.indices[:, 1])


def _entry_valid(matrix, p):
    rows, cols = _entry_positions(matrix, p)
    return (rows < p["m"]) & (cols < p["n"])


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
def test_vmap(product):
    make, fn, transposed = PRODUCTS[product]
    p = _fixed()
    matrix = make(p)
    a = dense(p).astype(np.float32)
    op = a.T if transposed else a
    xs_np = np.random.default_rng(1).standard_normal((4, op.shape[1])).astype(np.float32)
    xs = jnp.asarray(xs_np)
    np.testing.assert_allclose(jax.jit(jax.vmap(lambda x: fn(matrix, x)))(xs), xs_np @ op.T, rtol=1e-5, atol=1e-5)
    batch_x = jnp.stack([xs.T, 2 * xs.T], axis=-1)  # two (n, 4) matrices, batched on the last axis
    out = jax.vmap(lambda x: fn(matrix, x), in_axes=2, out_axes=2)(batch_x)
    np.testing.assert_allclose(out, np.einsum("ij,jkb->ikb", op, np.asarray(batch_x)), rtol=1e-5, atol=1e-5)
    datas = jnp.stack([matrix.data, 3 * matrix.data])  # batched sparse values: one product each
    out = jax.vmap(lambda d: fn(_with_data(matrix, d), xs[0]))(datas)
    np.testing.assert_allclose(out, np.stack([op @ xs_np[0], 3 * op @ xs_np[0]]), rtol=1e-5, atol=1e-5)
    per_example = jax.vmap(jax.grad(lambda x: jnp.sum(fn(matrix, x) ** 2)))(xs)
    np.testing.assert_allclose(per_example, 2 * (xs_np @ op.T) @ op, rtol=1e-4, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
def test_export_uses_xla_kernels(product):
    """A custom call has no compatibility guarantee: exported functions carry XLA's kernels."""
    make, fn, transposed = PRODUCTS[product]
    p = _fixed()
    matrix, x = make(p), jnp.asarray(p["xt"] if transposed else p["x"])
    exported = jax.export.export(jax.jit(fn))(matrix, x)
    assert "xp_c" not in exported.mlir_module()
    restored = jax.export.deserialize(exported.serialize())
    check(restored.call(matrix, x), (dense(p).T if transposed else dense(p)) @ np.asarray(x), np.float32)
    for_gpu = jax.export.export(jax.jit(fn), platforms=["cuda"])(matrix, x)
    assert "xp_c" not in for_gpu.mlir_module()


def _child(script, *args, **env):
    """tests/scripts/SCRIPT.py in a fresh Python, with ``env`` added to the session's environment
    (on the CPU, whatever this process's backend)."""
    return run_script(script, *args, env={**subprocess_env(), **env})


@pytest.mark.integration
def test_xp_native_0_forces_xla_kernels():
    done = _child("native_kernel_choice", XP_NATIVE="0")
    assert done.returncode == 0, failure(done)
    assert done.stdout.split() == ["False", "False", "0"]


@pytest.mark.integration
def test_without_a_compiler_one_warning_and_xla_kernels(tmp_path):
    done = _child(
        "native_kernel_choice", CXX=str(tmp_path / "no-compiler"), XP_NATIVE_CACHE=str(tmp_path), XP_NATIVE="1"
    )
    assert done.returncode == 0, failure(done)
    # (the child runs on the CPU, where a build is tried; where JAX's default backend is an
    # accelerator none is, so nothing warns: seen on a GPU)
    assert done.stdout.split() == ["False", "False", "1"]


def test_the_library_is_built_for_this_cpu_and_keyed_by_it(tmp_path, monkeypatch):
    """Built with the host's instruction set (so a cached library must name the CPU it was built
    for), and built portably when the compiler does not know the host flag."""
    monkeypatch.setenv("XP_NATIVE_CACHE", str(tmp_path))
    compiler = tmp_path / "fake-compiler"
    # A compiler that refuses the host flags, records its arguments and writes an empty "library".
    compiler.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then echo fake 1.0; exit 0; fi\n'
        'for a in "$@"; do case "$a" in -march=*|-mcpu=*) exit 1;; esac; done\n'
        'echo "$@" > "$(dirname "$0")/arguments"\n'
        'while [ "$#" -gt 1 ]; do shift; done; : > "$1"\n'
    )
    compiler.chmod(0o755)
    path = native.library_path(str(compiler))
    monkeypatch.setattr(native, "host_cpu", lambda: "another CPU")
    assert native.library_path(str(compiler)) != path
    monkeypatch.undo()
    monkeypatch.setenv("XP_NATIVE_CACHE", str(tmp_path))
    monkeypatch.setattr(
        native, "HOST_FLAGS", {k: ("-march=this-cpu",) for k in ("x86_64", "aarch64", "arm64", "AMD64")}
    )
    native.build(str(compiler), tmp_path / "library.so")
    assert (tmp_path / "library.so").exists()
    arguments = (tmp_path / "arguments").read_text().split()
    assert "-O3" in arguments and not any(a.startswith(("-march", "-mcpu")) for a in arguments)


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
def test_a_large_product_on_several_threads(product):
    """Big enough for the kernel's parallel path (and its sorted / scatter paths for a COO)."""
    make, fn, transposed = PRODUCTS[product]
    rng = np.random.default_rng(3)
    m, n, nse = 3000, 2000, 60000
    rows = rng.integers(0, m + 1, nse)
    p = {"m": m, "n": n, "rows": np.sort(rows).astype(np.int32), "cols": rng.integers(0, n + 1, nse).astype(np.int32),
         "data": rng.standard_normal(nse).astype(np.float32)}  # fmt: skip
    a = dense(p)
    for k in (None, 4):
        size = m if transposed else n
        x = rng.standard_normal((size,) if k is None else (size, k)).astype(np.float32)
        check(jax.jit(fn)(make(p), jnp.asarray(x)), (a.T if transposed else a) @ x, np.float32)
        matrix = make(p)  # and the data cotangent (a BCSR's: the native kernel's parallel path)
        ct = rng.standard_normal((n if transposed else m, *x.shape[1:])).astype(np.float32)
        vjp = jax.jit(lambda d, x, c, m=matrix: jax.vjp(lambda d: fn(_with_data(m, d), x), d)[1](c)[0])
        got = vjp(matrix.data, jnp.asarray(x), jnp.asarray(ct))
        check(got, _data_cotangent(p, matrix, ct, x, transposed), np.float32)
        if make is bcoo:  # unsorted rows: the scatter path
            q = dict(p, rows=rows.astype(np.int32))
            check(jax.jit(fn)(make(q), jnp.asarray(x)), (dense(q).T if transposed else dense(q)) @ x, np.float32)


@pytest.mark.slow
def test_products_on_several_python_threads_at_once():
    """Parallel loops of several callers at once on one pool: each caller's helpers are pool tasks
    that may start after another caller's, and a scatter's per-thread buffers are indexed by the
    slot each joining thread takes. Four threads, each a different product and shape, each result
    checked against the dense product."""
    rng = np.random.default_rng(11)
    cases = []
    columns = {"bcoo A @ x": None, "bcoo A.T @ x": 4, "bcsr A @ x": 4, "bcsr A.T @ x": None}
    for i, product in enumerate(PRODUCTS):
        make, fn, transposed = PRODUCTS[product]
        m, n, nse, k = 2500 + 300 * i, 1800 + 200 * i, 150000, columns[product]  # 2 threads even for k = 1
        p = {"m": m, "n": n, "rows": np.sort(rng.integers(0, m + 1, nse)).astype(np.int32),
             "cols": rng.integers(0, n + 1, nse).astype(np.int32), "data": rng.standard_normal(nse).astype(np.float32)}  # fmt: skip
        a = dense(p).T if transposed else dense(p)
        x = rng.standard_normal((a.shape[1],) if k is None else (a.shape[1], k)).astype(np.float32)
        cases.append((jax.jit(fn), make(p), jnp.asarray(x), a @ x))
    errors = []

    def calls(product_fn, matrix, x, expected):
        try:
            for _ in range(40):
                check(product_fn(matrix, x), expected, np.float32)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=calls, args=case) for case in cases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]


ROW_LENGTHS = [0, 1, 7, 8, 9, 15, 16, 17, 2, 31, 32, 33, 0, 48, 3, 5]  # around 8 and 16 lanes


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32"])
@pytest.mark.parametrize("order", ["sorted", "sorted, not claimed", "unsorted"])
def test_rows_of_every_length_around_the_vector_width(product, dtype, order):
    """Rows shorter than, as long as and longer than a vector of 8 or 16 lanes (the kernel
    gathers x by vectors with AVX-512 for float32 and float64), each ending where the next
    begins, padding columns inside them (JAX's index n; their stored values not finite, so that
    one taken in would show), a padding row, and BCOO rows claimed sorted or not, or not sorted
    (two runs swapped, the second's row one below the first's: the kernel must see the decrease
    and scatter instead); against NumPy, the native kernel and XLA's."""
    if dtype == "float64" and not X64:
        pytest.skip("float64 needs JAX's 64-bit mode (the x64 test run covers it)")
    make, fn, transposed = PRODUCTS[product]
    if make is bcsr and order != "sorted":
        pytest.skip("a BCSR's rows are sorted by construction")
    rng = np.random.default_rng(7)
    m, n = len(ROW_LENGTHS), 40
    rows = np.repeat(np.arange(m + 1), [*ROW_LENGTHS, 9])  # the last 9: padding row m
    if order == "unsorted":  # row 8's 2 entries before row 7's 17: a block of 8 holds the decrease
        rows[(rows == 7) | (rows == 8)] = [8, 8] + [7] * 17
    cols = rng.integers(0, n, len(rows))
    padding = rng.random(len(rows)) < 0.1
    cols[padding] = n
    data = _values(rng, dtype, len(rows))
    if dtype.startswith(("float", "complex")):
        data[padding] = np.inf
    p = {"m": m, "n": n, "rows": rows.astype(np.int32), "cols": cols.astype(np.int32), "data": data}
    matrix = make(p)
    if make is bcoo and order != "sorted":
        matrix = jsparse.BCOO((matrix.data, matrix.indices), shape=matrix.shape, indices_sorted=False)
    x = _values(rng, dtype, m if transposed else n)
    a = dense(p)
    expected = (a.T if transposed else a) @ x
    check(jax.jit(fn)(matrix, jnp.asarray(x)), expected, dtype)
    with native.disabled():  # XLA's kernels too: a padding entry's infinite value adds nothing there either
        check(jax.jit(lambda m, v: fn(m, v))(matrix, jnp.asarray(x)), expected, dtype)


@pytest.mark.integration
@needs_native
def test_the_portable_build_computes_the_same_products(tmp_path):
    """Where the host build gathers by AVX-512 vectors, the scalar loops run only on other CPUs:
    the rows of every length again, in a process whose library is built without the host's
    instruction set (the x86-64 or ARM baseline), compiled into an empty cache."""
    done = _child("native_portable_build", __file__, XP_NATIVE_CACHE=str(tmp_path))
    assert done.returncode == 0, failure(done)
    assert " passed" in done.stdout and "failed" not in done.stdout
    assert any(path.name.startswith("xp_spmm-") for path in tmp_path.rglob("*.so"))


@needs_native
@given(data=st.data())
def test_a_bcsr_whose_row_pointers_decrease_is_read_row_by_row(data):
    """Row pointers out of order or out of range (a BCSR built from corrupt buffers): the kernel
    reads row r as the entries [ptr[r], max(ptr[r], ptr[r + 1])), each pointer clamped to [0, nse],
    so no read is out of bounds. Short rows, as here, go through the pass that streams a chunk's
    entries in blocks of 8 (with AVX-512); where a pointer decreases it must give way to the
    row-by-row loop, not sum entries into the wrong rows."""
    m = data.draw(st.integers(1, 12))
    nse = data.draw(st.integers(0, 4 * m + 4))
    dtype = data.draw(st.sampled_from(["float32", "float64"] if X64 else ["float32"]))
    indptr = np.array(data.draw(st.lists(st.integers(-2, nse + 3), min_size=m + 1, max_size=m + 1)), np.int32)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = 6
    cols = rng.integers(0, n + 1, nse).astype(np.int32)  # n: padding
    values, x = _values(rng, dtype, nse), _values(rng, dtype, n)
    matrix = jsparse.BCSR((jnp.asarray(values), jnp.asarray(cols), jnp.asarray(indptr)), shape=(m, n))
    expected = np.zeros(m, np.float64)
    clamped = np.clip(indptr, 0, nse)
    for r in range(m):
        for j in range(clamped[r], max(clamped[r], clamped[r + 1])):
            if cols[j] < n:
                expected[r] += float(values[j]) * float(x[cols[j]])
    check(jax.jit(kernels.bcsr_matmul)(matrix, jnp.asarray(x)), expected, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("product", PRODUCTS)
def test_rows_without_entries_are_zero_on_the_parallel_path(product):
    """Rows no entry falls in (leading, between, trailing, and the padding row) come out 0 when
    the kernel writes the output by threads, each zeroing the rows it owns (not one fill first):
    the output's memory is what the allocator had, so it is soiled with NaN right before."""
    make, fn, transposed = PRODUCTS[product]
    rng = np.random.default_rng(5)
    m, n, nse = 3000, 2000, 40000
    occupied = np.concatenate([np.arange(100, 1400, 3), np.arange(1900, 2700, 7), [m]])  # m: padding
    p = {"m": m, "n": n, "rows": np.sort(rng.choice(occupied, nse)).astype(np.int32),
         "cols": rng.integers(0, n + 1, nse).astype(np.int32), "data": rng.standard_normal(nse).astype(np.float32)}  # fmt: skip
    a = (dense(p).T if transposed else dense(p)).astype(np.float32)
    product_fn, soil = jax.jit(fn), jax.jit(lambda shape: jnp.full(shape, jnp.nan, jnp.float32), static_argnums=0)
    for k in (None, 4, 64):
        x = rng.standard_normal(a.shape[1:] if k is None else (a.shape[1], k)).astype(np.float32)
        for _ in range(3):
            soiled = soil((a.shape[0],) if k is None else (a.shape[0], k))
            soiled.block_until_ready()
            del soiled  # its memory goes back to the allocator, which the product's output may take
            check(product_fn(make(p), jnp.asarray(x)), a @ x, np.float32)


def _vma_flags(address):
    """The VmFlags of the mapping of this process that holds ``address`` (/proc/self/smaps)."""
    with open("/proc/self/smaps") as f:
        inside = False
        for line in f:
            head = line.split()[0]
            if "-" in head and all(c in "0123456789abcdef-" for c in head):
                begin, end = (int(v, 16) for v in head.split("-"))
                inside = begin <= address < end
            elif inside and head == "VmFlags:":
                return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.mark.slow
@needs_native
@pytest.mark.skipif(
    not os.path.isdir("/sys/kernel/mm/transparent_hugepage"),
    reason="huge pages are a Linux hint, and this kernel has no transparent huge pages",
)
@pytest.mark.parametrize("product", PRODUCTS)
def test_a_large_output_is_advised_to_be_backed_by_huge_pages(product):
    """An output of 4 MB or more gets MADV_HUGEPAGE on its 2 MB-aligned interior (fewer page
    faults where the allocator gives back fresh memory): the mapping holding it says so."""
    make, fn, transposed = PRODUCTS[product]
    rng = np.random.default_rng(7)
    m = n = 2048
    nse, k = 20000, 1024  # an 8 MB float32 output: at least one whole 2 MB page inside
    p = {"m": m, "n": n, "rows": np.sort(rng.integers(0, m, nse)).astype(np.int32),
         "cols": rng.integers(0, n, nse).astype(np.int32), "data": rng.standard_normal(nse).astype(np.float32)}  # fmt: skip
    a = (dense(p).T if transposed else dense(p)).astype(np.float32)
    x = rng.standard_normal((a.shape[1], k)).astype(np.float32)
    y = jax.jit(fn)(make(p), jnp.asarray(x))
    y.block_until_ready()
    page = 2 << 20
    start = y.unsafe_buffer_pointer()
    first_whole_page = (start + page - 1) // page * page
    assert first_whole_page + page <= start + y.nbytes
    assert "hg" in _vma_flags(first_whole_page)
    check(y, a @ x, np.float32)


@pytest.mark.slow
@needs_native
@pytest.mark.parametrize("fmt", ["bcoo", "bcsr"])
def test_products_xla_must_partition_keep_xlas_kernels(fmt):
    # on an Auto mesh xp lowers the products XLA partitions with partitionable=True
    # (xp.sparse._meshes): the custom call would run replicated there, so every form of the
    # product (A @ x, x @ A, A.T @ x, x @ A.T) keeps XLA's kernels
    from xp.sparse._linear_algebra import Transposed, _matmul

    a = np.array([[1.0, 0, 2], [0, 3, 0]], np.float32)
    matrix = (jsparse.BCOO if fmt == "bcoo" else jsparse.BCSR).fromdense(jnp.asarray(a))
    forms = {
        "A @ x": (lambda m, v, part: _matmul(m, v, partitionable=part), np.ones(3, np.float32), a @ np.ones(3)),
        "x @ A": (lambda m, v, part: _matmul(v, m, partitionable=part), np.ones(2, np.float32), np.ones(2) @ a),
        "A.T @ x": (lambda m, v, part: _matmul(Transposed(m), v, partitionable=part), np.ones(2, np.float32),
                    a.T @ np.ones(2)),
        "x @ A.T": (lambda m, v, part: _matmul(v, Transposed(m), partitionable=part), np.ones(3, np.float32),
                    np.ones(3) @ a.T),
    }  # fmt: skip
    for name, (form, x, expected) in forms.items():
        for partitionable in (False, True):
            fn = jax.jit(form, static_argnums=2)
            assert ("xp_c" in fn.lower(matrix, x, partitionable).as_text()) is not partitionable, (name, partitionable)
            np.testing.assert_allclose(np.asarray(fn(matrix, x, partitionable)), expected)
