"""The TPU kernels of xp.sparse's DIA and BSR layouts (xp/sparse/_products/tpu_dia.py, tpu_bsr.py):
each Pallas kernel and each XLA formulation against the dense product, on hypothesis-drawn shapes,
offsets, block patterns and operands (empty rows, a last tile that the matrix does not fill,
several tiles, windows split into groups, blocks of zeros added for empty block rows and columns).

Where the default backend is not a TPU, the kernels run in Pallas's interpreter (``interpret``):
their logic (windows, shifts, rotations, the walk over the blocks) is checked here, what Mosaic
makes of them only on a TPU, where the same tests run the compiled kernels. The TPU interpreter
(``pltpu.InterpretParams``) also checks that no block reads outside its array.
"""

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from xp.sparse._products import tpu, tpu_bsr, tpu_dia, tpu_ell

ON_TPU = jax.default_backend() == "tpu"
INTERPRET = not ON_TPU
# float32 sums of a few products: the kernels and the dense product add in different orders
TOLERANCE = {"rtol": 2e-5, "atol": 2e-5}

# (m, n): one tile and several (with at most 8 rows of 128 per tile), a last tile the matrix does
# not fill, wider and taller matrices, more rows than one matrix kernel's tile of 1024
DIA_SHAPES = [(1, 1), (5, 9), (37, 29), (130, 300), (1100, 1300), (2100, 1900)]
# offsets that are multiples of 128 and not, across a row of 128 either way, and far apart (groups)
OFFSETS = (0, 1, -1, 2, -3, 127, 128, 129, -128, -129, -130, 300, -1000, 1200)


def dia_reference(shape, offsets, diagonals, x, transposed):
    """``A @ x`` (``A.T @ x``) in float64 from the row-aligned diagonals, entry by entry (NumPy; the
    dense matrix of the largest cases would not fit)."""
    m, n = shape
    x = x.astype(np.float64)
    out = np.zeros(((n if transposed else m), *x.shape[1:]))
    for d, o in enumerate(offsets):
        i = np.arange(max(0, -o), min(m, n - o))
        values = diagonals[d, i].astype(np.float64).reshape(-1, *([1] * (x.ndim - 1)))
        if transposed:
            out[i + o] += values * x[i]
        else:
            out[i] += values * x[i + o]
    return out


@st.composite
def dia_problems(draw):
    m, n = draw(st.sampled_from(DIA_SHAPES))
    candidates = sorted({o for o in (*OFFSETS, n - 1, 1 - m) if -m < o < n})
    offsets = tuple(sorted(draw(st.sets(st.sampled_from(candidates), min_size=1, max_size=5))))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    diagonals = rng.standard_normal((len(offsets), m)).astype(np.float32)
    diagonals[:, rng.random(m) < 0.2] = 0  # empty rows
    k = draw(st.sampled_from([None, 1, 3]))
    return {
        "plan": tpu_dia.plan((m, n), offsets, draw(st.sampled_from([8, 512]))),
        "diagonals": diagonals,
        "x": rng.standard_normal((n,) if k is None else (n, k)).astype(np.float32),
        "y": rng.standard_normal((m,) if k is None else (m, k)).astype(np.float32),
    }


@pytest.mark.slow
@given(p=dia_problems())
def test_dia_kernels_match_the_dense_product(p):
    plan = p["plan"]
    data = tpu_dia.stored(plan, jnp.asarray(p["diagonals"]))
    kept = np.asarray(tpu_dia.diagonals(plan, data))
    np.testing.assert_array_equal(
        np.asarray(tpu_dia.diagonals(plan, data)) != 0, _on_matrix(plan) & (p["diagonals"] != 0)
    )
    pallas = tpu_dia.vector_product if p["x"].ndim == 1 else tpu_dia.matrix_product
    for transposed, x in ((False, p["x"]), (True, p["y"])):
        want = dia_reference(plan.shape, plan.offsets, kept, x, transposed)
        got = tpu_dia.xla_product(data, jnp.asarray(x), plan=plan, transposed=transposed)
        np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)
        if x.ndim == 1 or tpu_dia.column_tile(plan, x.shape[1], transposed) is not None:
            got = pallas(data, jnp.asarray(x), plan=plan, transposed=transposed, interpret=INTERPRET)
            np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)


def _wrapped_product(a, x, dtype):
    """``a @ x`` of integers of ``dtype`` (32-bit) as XLA computes it: wrapped around (in uint64,
    whose wrapping keeps the low 32 bits, and two's complement for signed integers)."""
    wide = lambda v: v.astype(np.int64).view(np.uint64) if np.dtype(dtype).kind == "i" else v.astype(np.uint64)  # noqa: E731
    return (wide(a) @ wide(x)).astype(np.uint32).view(dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@given(p=dia_problems(), seed=st.integers(0, 2**32 - 1))
def test_dia_kernels_take_32_bit_integers(p, dtype, seed):
    # the vector unit's integers, whose sums wrap around: exactly XLA's formulation and NumPy's
    rng = np.random.default_rng(seed)
    plan, info = p["plan"], np.iinfo(dtype)
    diagonals = rng.integers(info.min, info.max, p["diagonals"].shape, dtype=dtype, endpoint=True)
    data = tpu_dia.stored(plan, jnp.asarray(diagonals))
    kept = np.asarray(tpu_dia.diagonals(plan, data))
    (m, n), dense = plan.shape, np.zeros(plan.shape, dtype)
    for d, o in enumerate(plan.offsets):
        i = np.arange(max(0, -o), min(m, n - o))
        dense[i, i + o] = kept[d, i]
    pallas = tpu_dia.vector_product if p["x"].ndim == 1 else tpu_dia.matrix_product
    for transposed, shape in ((False, p["x"].shape), (True, p["y"].shape)):
        x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        want = _wrapped_product(dense.T if transposed else dense, x, dtype)
        got = tpu_dia.xla_product(data, jnp.asarray(x), plan=plan, transposed=transposed)
        np.testing.assert_array_equal(np.asarray(got), want)
        if x.ndim == 1 or tpu_dia.column_tile(plan, x.shape[1], transposed) is not None:
            got = pallas(data, jnp.asarray(x), plan=plan, transposed=transposed, interpret=INTERPRET)
            assert got.dtype == dtype
            np.testing.assert_array_equal(np.asarray(got), want)


def _on_matrix(plan):
    """Where the row-aligned diagonals hold elements of the matrix."""
    m, n = plan.shape
    i = np.arange(m)
    return np.stack([(i + o >= 0) & (i + o < n) for o in plan.offsets])


@pytest.mark.slow
@given(p=dia_problems())
def test_dia_data_cotangent_is_the_dense_gradient_on_the_diagonals(p):
    plan = p["plan"]
    for transposed, ct, x in ((False, p["y"], p["x"]), (True, p["x"], p["y"])):
        got = tpu_dia.diagonals(
            plan, tpu_dia.sampled(jnp.asarray(ct), jnp.asarray(x), plan=plan, transposed=transposed)
        )
        # d<ct, A @ x>/dA = ct x^T (of A.T @ x: x ct^T), read on each diagonal
        outer = np.outer(ct, x) if ct.ndim == 1 else ct @ x.T
        gradient = outer.T if transposed else outer
        want = np.zeros(p["diagonals"].shape)
        for d, o in enumerate(plan.offsets):
            for i in range(max(0, -o), min(plan.shape[0], plan.shape[1] - o)):
                want[d, i] = gradient[i, i + o]
        np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)


def test_dia_windows_group_close_offsets_and_split_far_ones():
    found, picks = tpu_dia.windows((-1000, -1, 0, 1, 1000), 512, 128)
    assert [(w.first, w.stop) for w in found] == [(0, 5)]  # 2000 values: 16 rows, within a tile
    found, picks = tpu_dia.windows((-100_000, 0, 100_000), 8, 128)
    assert [(w.first, w.stop) for w in found] == [(0, 1), (1, 2), (2, 3)]
    assert all(w.start % 8 == 0 and w.rows % 8 == 0 for w in found)
    # a shift is rows and lanes: 129 = 1 row of 128 and 1 lane
    found, picks = tpu_dia.windows((129,), 8, 128)
    assert picks[0].lane == 1 and found[0].start + picks[0].row == 1


def test_dia_layout_is_a_few_tiles_more_than_the_diagonals():
    plan = tpu_dia.plan((1_000_000, 1_000_000), (-1000, -1, 0, 1, 1000))
    assert plan.tile == tpu_dia.VECTOR_TILE
    stored_values = plan.rows * tpu_dia.LANES
    assert 1_000_000 <= stored_values <= 1_000_000 + 2 * plan.tile * tpu_dia.LANES


# Pallas's interpreter (on a TPU: the compiled kernels), and the TPU interpreter, which checks that
# no block reads outside its array (slow: a callback per access)
INTERPRETERS = [
    pytest.param(INTERPRET, id="interpreted" if INTERPRET else "compiled"),
    pytest.param("checked", id="reads-checked", marks=[
        pytest.mark.slow, pytest.mark.skipif(ON_TPU, reason="the TPU interpreter checks reads of interpreted kernels")
    ]),
]  # fmt: skip


# (shape, offsets, rows of 128 per tile): 3 tiles of 8 rows; 3 tiles of 64 rows, each computed in two
# steps of 32 (tpu_dia.CHUNK); a wide matrix and far offsets (several windows)
SEVERAL = [((2100, 1900), (-1000, -129, 0, 1, 300), 8), ((300, 2100), (-299, 1200, 2099), 8),
           ((17000, 16900), (-1000, -129, 0, 1, 300), 64)]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("interpret", INTERPRETERS)
@pytest.mark.parametrize("shape, offsets, most", SEVERAL)
def test_dia_kernels_on_several_tiles_and_windows(shape, offsets, most, interpret):
    if interpret == "checked":
        from jax.experimental.pallas import tpu as pltpu

        interpret = pltpu.InterpretParams(out_of_bounds_reads="raise", uninitialized_memory="nan")
    plan = tpu_dia.plan(shape, offsets, most)
    rng = np.random.default_rng(0)
    diagonals = rng.standard_normal((len(offsets), shape[0])).astype(np.float32)
    data = tpu_dia.stored(plan, jnp.asarray(diagonals))
    kept = np.asarray(tpu_dia.diagonals(plan, data))
    for transposed in (False, True):
        length = shape[0] if transposed else shape[1]
        for x in (rng.standard_normal(length), rng.standard_normal((length, 3))):
            pallas = tpu_dia.vector_product if x.ndim == 1 else tpu_dia.matrix_product
            got = pallas(data, jnp.asarray(x.astype(np.float32)), plan=plan, transposed=transposed, interpret=interpret)
            want = dia_reference(shape, offsets, kept, x.astype(np.float32), transposed)
            np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)


# --- BSR ----------------------------------------------------------------------------------------

BSR_SHAPES = [(8, 8), (37, 50), (64, 64), (100, 90)]
BLOCKS = [(8, 8), (16, 8), (8, 16)]


@st.composite
def bsr_problems(draw):
    m, n = draw(st.sampled_from(BSR_SHAPES))
    plan = tpu_bsr.Plan((m, n), draw(st.sampled_from(BLOCKS)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.sampled_from([0.0, 0.05, 0.3]))
    a = np.where(rng.random((m, n)) < density, rng.standard_normal((m, n)), 0).astype(np.float32)
    k = draw(st.sampled_from([None, 1, 3, 640]))  # 640: five tiles of 128 columns
    return {
        "plan": plan,
        "a": a,
        "x": rng.standard_normal((n,) if k is None else (n, k)).astype(np.float32),
        "y": rng.standard_normal((m,) if k is None else (m, k)).astype(np.float32),
    }


def _bsr_layout(p):
    rows, cols = np.nonzero(p["a"])
    return [jnp.asarray(leaf) for leaf in tpu_bsr.host_layout(rows, cols, p["a"][rows, cols], p["plan"])]


@pytest.mark.slow
@pytest.mark.parametrize("walk", tpu_bsr.WALKS)
@given(p=bsr_problems())
def test_bsr_kernels_match_the_dense_product(p, walk):
    layout = _bsr_layout(p)
    rows, cols = layout[1:3]
    block_rows, block_cols = p["plan"].grid
    assert set(np.asarray(rows).tolist()) == set(range(block_rows))  # every block row holds a block
    assert set(np.asarray(cols).tolist()) == set(range(block_cols))  # and every block column
    a = p["a"].astype(np.float64)
    with jax.default_matmul_precision("highest"):
        for transposed, x, want in ((False, p["x"], a @ p["x"]), (True, p["y"], a.T @ p["y"])):
            got = tpu_bsr.xla_product(*layout, jnp.asarray(x), plan=p["plan"], transposed=transposed)
            np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)
            columns = x.shape[1] if x.ndim == 2 else 1
            assert tpu_bsr.chosen_walk(p["plan"], transposed, columns, walk) == walk  # (the walk tested is taken)
            got = tpu_bsr.pallas_product(*layout, jnp.asarray(x), plan=p["plan"], transposed=transposed,
                                         interpret=INTERPRET, walk=walk)  # fmt: skip
            np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)


@pytest.mark.parametrize("walk", tpu_bsr.STREAMED_WALKS)
@pytest.mark.parametrize("count", [1, 3, 8, 13, 24, 29])
def test_bsr_streamed_walks_copy_every_block_once_in_groups(count, walk):
    # groups of 8 blocks a copy: fewer blocks than a group (1, 3), whole groups (8, 24: the ring of 4
    # wraps), and a last group that starts early and must not add its first blocks again (13, 29)
    rng = np.random.default_rng(count)
    width = 8 * min(count, 2)
    plan = tpu_bsr.Plan((8 * count, width), (8, 8))
    a = np.zeros(plan.shape, np.float32)
    for r in range(count):  # block (r, r % 2): every block row and block column holds one
        a[8 * r : 8 * r + 8, 8 * (r % 2) : 8 * (r % 2) + 8] = rng.standard_normal((8, 8))
    layout = _bsr_layout({"a": a, "plan": plan})
    assert len(layout[0]) == count
    assert tpu_bsr.blocks_per_copy(plan, count) == min(8, count)
    assert tpu_bsr.blocks_per_copy(tpu_bsr.Plan(plan.shape, (512, 512)), count) == 1  # (a group at most 512 KiB)
    assert tpu_bsr.blocks_per_copy(plan, count, wanted=16) == min(16, count)
    x, y = rng.standard_normal((width, 5)).astype(np.float32), rng.standard_normal((8 * count, 5)).astype(np.float32)
    with jax.default_matmul_precision("highest"):
        for transposed, operand, want in ((False, x, a.astype(np.float64) @ x), (True, y, a.T.astype(np.float64) @ y)):
            got = tpu_bsr.pallas_product(*layout, jnp.asarray(operand), plan=plan, transposed=transposed,
                                         interpret=INTERPRET, walk=walk)  # fmt: skip
            np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)


@pytest.mark.parametrize("walk", tpu_bsr.WALKS)
def test_bsr_kernel_takes_the_columns_in_narrower_steps_where_asked(walk):
    # width= (a benchmark's option): 384 columns in three grid steps of 128, each streaming every
    # block again (the streamed walks) or walking them again; a width that does not tile is refused
    rng = np.random.default_rng(7)
    plan = tpu_bsr.Plan((24, 16), (8, 8))
    a = np.where(np.kron(np.eye(3, 2, dtype=bool) | np.eye(3, 2, -1, dtype=bool), np.ones((8, 8), bool)),
                 rng.standard_normal((24, 16)), 0.0).astype(np.float32)  # fmt: skip
    layout = _bsr_layout({"a": a, "plan": plan})
    x, y = rng.standard_normal((16, 384)).astype(np.float32), rng.standard_normal((24, 384)).astype(np.float32)
    with jax.default_matmul_precision("highest"):
        for transposed, operand, want in ((False, x, a.astype(np.float64) @ x), (True, y, a.T.astype(np.float64) @ y)):
            got = tpu_bsr.pallas_product(*layout, jnp.asarray(operand), plan=plan, transposed=transposed,
                                         interpret=INTERPRET, walk=walk, width=128)  # fmt: skip
            np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)
    with pytest.raises(ValueError, match="width must be a multiple of 128 that divides x's 384 columns, got 256"):
        tpu_bsr.pallas_product(*layout, jnp.asarray(x), plan=plan, transposed=False, interpret=INTERPRET, width=256)


@pytest.mark.slow
@given(p=bsr_problems())
def test_bsr_kernel_at_float32_precision_from_bfloat16_parts(p):
    # float32 split into three bfloat16 parts, six one-pass products: float32's precision
    layout = _bsr_layout(p)
    a = p["a"].astype(np.float64)
    for transposed, x, want in ((False, p["x"], a @ p["x"]), (True, p["y"], a.T @ p["y"])):
        got = tpu_bsr.pallas_product(*layout, jnp.asarray(x), plan=p["plan"], transposed=transposed,
                                     interpret=INTERPRET, precision="highest", split=True)  # fmt: skip
        np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)


@given(p=bsr_problems())
def test_bsr_block_cotangent_is_the_dense_gradient_on_the_blocks(p):
    rows, cols = _bsr_layout(p)[1:3]
    (bm, bk), (m, n) = p["plan"].block, p["plan"].shape
    with jax.default_matmul_precision("highest"):
        got = tpu_bsr.sampled(jnp.asarray(p["y"]), jnp.asarray(p["x"]), rows, cols, plan=p["plan"], transposed=False)
    y, x = p["y"].astype(np.float64), p["x"].astype(np.float64)
    gradient = np.outer(y, x) if y.ndim == 1 else y @ x.T
    padded = np.zeros((p["plan"].grid[0] * bm, p["plan"].grid[1] * bk))
    padded[:m, :n] = gradient
    for b, (r, c) in enumerate(zip(np.asarray(rows), np.asarray(cols), strict=True)):
        want = padded[r * bm : (r + 1) * bm, c * bk : (c + 1) * bk]
        np.testing.assert_allclose(np.asarray(got[b]), want, **TOLERANCE)


def test_bsr_layout_sorts_blocks_and_fills_empty_block_rows_and_columns():
    a = np.zeros((24, 24), np.float32)
    a[0, 20] = 1.0  # block (0, 2)
    a[17, 3] = 2.0  # block (2, 0)
    rows, cols = np.nonzero(a)
    data, block_rows, block_cols, order = tpu_bsr.host_layout(rows, cols, a[rows, cols], tpu_bsr.Plan((24, 24), (8, 8)))
    assert list(zip(block_rows.tolist(), block_cols.tolist(), strict=True)) == [(0, 1), (0, 2), (1, 0), (2, 0)]
    assert [float(np.abs(block).sum()) for block in data] == [
        0.0,
        1.0,
        0.0,
        2.0,
    ]  # zeros where a row or column was empty
    assert block_cols[order].tolist() == sorted(block_cols.tolist())  # the transposed walk: by block column


def test_bsr_column_tiles():
    assert tpu_bsr.column_tile(1) == 1 and tpu_bsr.column_tile(512) == 512
    assert tpu_bsr.column_tile(1024) == 512 and tpu_bsr.column_tile(640) == 128
    assert tpu_bsr.column_tile(600) is None  # not tiled: XLA's product


def _unproven_windows(module: str) -> list[str]:
    """The element windows of a Mosaic module (its text) whose start on a tiled dimension (the last
    two) is not a constant, a product (of a grid index and a tile) or marked ``tpu.assume_multiple``:
    what Mosaic cannot prove aligned."""
    import re

    unproven = []
    for name in re.findall(r"transform_indices = @(\w+), window_bounds = array<[^>]*>, window_kind = #tpu.element_window",
                           module):  # fmt: skip
        body = re.search(rf"func.func @{name}\(.*?\n(.*?)\n  }}", module, flags=re.S).group(1)
        defined = dict(re.findall(r"(%\w+) = ([\w.]+)", body))
        returned = re.search(r"return (.*?) :", body).group(1).split(", ")
        unproven += [f"{name}: {value} = {defined.get(value)}" for value in returned[-2:]
                     if defined.get(value) not in ("arith.constant", "arith.muli", "tpu.assume_multiple")]  # fmt: skip
    return unproven


def _mosaic_modules(function, args, monkeypatch, capsys):
    """The text of the Mosaic modules of the Pallas kernels in ``function(*args)``'s program for a
    TPU, lowered here whatever the backend: Pallas lowers a kernel to Mosaic in Python (with
    ``debug``, printing the module); only Mosaic's compiler, run by XLA:TPU, needs the chip."""
    from jax.experimental import pallas as pl

    monkeypatch.setattr(pl, "pallas_call", functools.partial(pl.pallas_call, debug=True))
    capsys.readouterr()
    jax.export.export(jax.jit(function), platforms=["tpu"])(*args)
    return capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32"])
@pytest.mark.parametrize("transposed", [False, True], ids=["A @ x", "A.T @ x"])
@pytest.mark.parametrize("columns", [None, 3, 1024], ids=["vector", "3 columns", "1024 columns"])
def test_dia_kernels_windows_are_provably_aligned_for_mosaic(columns, transposed, dtype, monkeypatch, capsys):
    # Mosaic must prove that an element window starts on the (8, 128) tiling, and its proof sees
    # through products and constants but not sums: a window at ``t * tile + start`` is marked with
    # pl.multiple_of (tpu.assume_multiple), else XLA:TPU refuses to compile the kernel. (The
    # integers' kernels lower too: rotations, selects and the matrix kernel's transpose of 32 bits.)
    n = 300 * 128 + 5
    plan = tpu_dia.plan((n, n), (-300, -1, 0, 1, 300))
    data = jnp.ones((len(plan.offsets), plan.rows, tpu_dia.LANES), dtype)
    x = jnp.ones((n,) if columns is None else (n, columns), dtype)
    product = tpu_dia.vector_product if columns is None else tpu_dia.matrix_product
    module = _mosaic_modules(lambda d, v: product(d, v, plan=plan, transposed=transposed, interpret=False), (data, x),
                             monkeypatch, capsys)  # fmt: skip
    assert "#tpu.element_window" in module
    assert _unproven_windows(module) == []
    assert re.search(rf"vector<\d+x\d+x{'f32' if dtype == 'float32' else 'i32'}>", module)


@pytest.mark.parametrize("setting", ["highest", "float32", "high", "tensorfloat32", "BF16_BF16_F32_X3",
                                     "default", "bfloat16"])  # fmt: skip
def test_bsr_kernel_lowers_at_every_matmul_precision_setting(setting, monkeypatch, capsys):
    # Mosaic multiplies at JAX's DEFAULT precision (one bfloat16 pass) or HIGHEST, and refuses to
    # lower any other (HIGH, an algorithm preset): a user's setting other than DEFAULT's gets
    # float32's, never less than asked.
    import xp

    dense = np.zeros((256, 256), np.float32)
    dense[:128, 128:] = 1.0
    matrix = xp.sparse.BSR.fromdense(xp.asarray(dense), block_shape=(128, 128), max_fill=10.0)
    with jax.default_matmul_precision(setting):
        module = _mosaic_modules(
            lambda a, v: a @ v, (matrix, xp.ones((256, 64), dtype=xp.float32)), monkeypatch, capsys
        )
    assert "tpu.matmul" in module
    assert ("contract_precision<fp32>" in module) == (setting not in ("default", "bfloat16"))


@pytest.mark.parametrize("split", [False, True], ids=["Mosaic's float32", "bfloat16 parts"])
def test_bsr_kernel_lowers_both_ways_of_multiplying_at_float32(split, monkeypatch, capsys):
    plan = tpu_bsr.Plan((256, 256), (128, 128))
    dense = np.zeros((256, 256), np.float32)
    dense[:128, 128:] = 1.0
    rows, cols = np.nonzero(dense)
    layout = [jnp.asarray(leaf) for leaf in tpu_bsr.host_layout(rows, cols, dense[rows, cols], plan)]
    x = jnp.ones((256, 64), jnp.float32)

    def product(*args):
        return tpu_bsr.pallas_product(*args, plan=plan, transposed=False, interpret=False, precision="highest",
                                      split=split)  # fmt: skip

    module = _mosaic_modules(product, (*layout, x), monkeypatch, capsys)
    # one product per block of a streamed group (its two blocks: one stored, one of zeros), six for
    # three bfloat16 parts
    assert tpu_bsr.WALK in tpu_bsr.STREAMED_WALKS and len(layout[0]) == 2 < tpu_bsr.BLOCKS_PER_COPY
    assert module.count("tpu.matmul") == 2 * (6 if split else 1)
    assert ("contract_precision<fp32>" in module) == (not split)


@pytest.mark.parametrize("per_copy", [1, 3], ids=["a block a copy", "3 blocks a copy"])
@pytest.mark.parametrize("walk", ["resident", "streamed", "block_weights"])
@pytest.mark.parametrize("transposed", [False, True], ids=["A @ X", "A.T @ X"])
def test_bsr_kernel_walks_with_the_result_in_vmem_lower_for_mosaic(transposed, walk, per_copy, monkeypatch, capsys):
    # the walks with the whole result in VMEM add each block's product to its rows at a dynamic
    # offset, which Mosaic must prove a multiple of the tiling's 8 rows (tpu.assume_multiple); the
    # streamed walk also reads X's tile at one, and copies the blocks from HBM itself (DMAs started
    # ahead and waited on in one loop, not a grid step each), in groups: of the 4 blocks, 1 a copy
    # (4 turns of the loop, a product in each), or 3 (one turn of 3 products, then the last group,
    # which starts at the second block and multiplies the fourth: 4 products in the program); the
    # blocks as the MXU's weights index the transposed tiles along their first axis, and put the
    # block on the product's right
    plan = tpu_bsr.Plan((384, 256), (128, 128))
    dense = np.zeros((384, 256), np.float32)
    dense[:128, 128:] = dense[256:, :128] = dense[128:256, :] = 1.0
    rows, cols = np.nonzero(dense)
    layout = [jnp.asarray(leaf) for leaf in tpu_bsr.host_layout(rows, cols, dense[rows, cols], plan)]
    x = jnp.ones((384 if transposed else 256, 64), jnp.float32)

    def product(*args):
        return tpu_bsr.pallas_product(*args, plan=plan, transposed=transposed, interpret=False, walk=walk,
                                      per_copy=per_copy)  # fmt: skip

    module = _mosaic_modules(product, (*layout, x), monkeypatch, capsys)
    assert len(layout[0]) == 4
    streams = walk in tpu_bsr.STREAMED_WALKS
    assert module.count("tpu.matmul") == ((1 if per_copy == 1 else 4) if streams else 1)
    assert re.search(r"vector.load %arg\d+\[%\w+, %c0", module)  # rows (or tiles) at a dynamic offset
    if walk == "block_weights":  # X's tile (64 columns by 128) times the block, contracted on its rows for A.T @ X
        contracted = r"\[1\], \[0\]" if transposed else r"\[1\], \[1\]"
        assert re.search(rf"dot_dimension_numbers<{contracted}.*: vector<64x128xf32>, vector<128x128xf32>", module)
    else:
        assert "tpu.assume_multiple" in module
    streamed = ("tpu.enqueue_dma" in module, "tpu.wait_dma" in module)
    assert streamed == (streams, streams)
    assert ("scf.for" in module) == (streams and per_copy == 1)  # (a loop of one turn is no loop)


def test_bsr_kernel_walks_keep_tiles_in_vmem_only_where_they_fit(monkeypatch):
    monkeypatch.setattr(tpu_bsr, "_vmem_bytes", lambda: 4 * 256 * 128 * 4)  # a quarter: 256 x 128 float32
    plan = tpu_bsr.Plan((256, 512), (128, 128))
    square = tpu_bsr.Plan((128, 128), (128, 128))
    walk = functools.partial(tpu_bsr.chosen_walk, transposed=False)
    # the result in VMEM: its tile of 256 rows fits with 128 columns (and a vector, which takes a
    # whole register row), not with 256, nor with the 512 rows of A.T @ X
    assert walk(plan, columns=128, walk="resident") == walk(plan, columns=1, walk="resident") == "resident"
    assert walk(plan, columns=256, walk="resident") == "by_result"
    assert tpu_bsr.chosen_walk(plan, transposed=True, columns=128, walk="resident") == "by_result"
    # streamed: X's tile (512 rows) and the result's (256) together do not fit: the result in VMEM,
    # then the walk by the result's blocks, where that does not fit either
    assert walk(plan, columns=128, walk="streamed") == "resident"
    assert tpu_bsr.chosen_walk(plan, transposed=True, columns=128, walk="streamed") == "by_result"
    assert walk(square, columns=128, walk="streamed") == "streamed"
    # the blocks as the MXU's weights: both tiles transposed, 8 columns take 8 rows of 128 lanes (not
    # 128 lanes of each of 768 rows, as streamed)
    assert walk(plan, columns=8, walk="streamed") == "resident"
    assert walk(plan, columns=8, walk="block_weights") == "block_weights"
    assert walk(plan, columns=128, walk="block_weights") == "resident"
    assert walk(square, columns=128, walk="block_weights") == "block_weights"
    # the default: WALK, by the same rules
    for default in tpu_bsr.WALKS:
        monkeypatch.setattr(tpu_bsr, "WALK", default)
        assert walk(square, columns=128) == default
    assert walk(plan, columns=128, walk="by_result") == "by_result"
    with pytest.raises(ValueError, match="walk must be one of"):
        tpu_bsr.chosen_walk(plan, transposed=False, columns=128, walk="sideways")


# --- ELL (the prototype of a random matrix's product) -------------------------------------------

ELL_SHAPES = [(1, 1), (37, 50), (100, 2100), (1100, 30)]  # several registers of x; of rows


@st.composite
def ell_problems(draw):
    m, n = draw(st.sampled_from(ELL_SHAPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    entries = draw(st.integers(0, 3 * m))
    rows, cols = rng.integers(0, m, entries), rng.integers(0, n, entries)  # duplicates: summed
    return (
        (m, n),
        rows,
        cols,
        rng.standard_normal(entries).astype(np.float32),
        rng.standard_normal(n).astype(np.float32),
    )


@pytest.mark.slow
@pytest.mark.parametrize("chunk", [None, 1024], ids=["one chunk", "chunks of 1024 columns"])
@given(p=ell_problems())
def test_ell_kernel_matches_the_dense_product(p, chunk):
    shape, rows, cols, values, x = p
    plan, stored_values, stored_columns = tpu_ell.host_layout(rows, cols, values, shape, chunk=chunk)
    per_chunk = np.bincount(rows * plan.chunks + cols // plan.chunk, minlength=shape[0] * plan.chunks)
    assert plan.slots == max(per_chunk.max(initial=0), 1)  # the most entries of a row in a chunk
    assert stored_values.shape == stored_columns.shape == (plan.chunks, plan.slots, plan.rows)
    dense = np.zeros(shape)
    np.add.at(dense, (rows, cols), values)
    want = dense @ x.astype(np.float64)
    layout = (jnp.asarray(stored_values), jnp.asarray(stored_columns))
    got = tpu_ell.pallas_product(*layout, jnp.asarray(x), plan=plan, interpret=INTERPRET)
    np.testing.assert_allclose(np.asarray(got), want, **TOLERANCE)


@pytest.mark.slow
@given(p=ell_problems(), k=st.integers(0, 3))
def test_ell_kernel_takes_a_matrix_column_by_column(p, k):
    # the kernel's first grid axis walks x's columns, each the product of a vector
    shape, rows, cols, values, _ = p
    X = np.random.default_rng(k).standard_normal((shape[1], k)).astype(np.float32)
    plan, stored_values, stored_columns = tpu_ell.host_layout(rows, cols, values, shape)
    dense = np.zeros(shape)
    np.add.at(dense, (rows, cols), values)
    got = tpu_ell.pallas_product(jnp.asarray(stored_values), jnp.asarray(stored_columns), jnp.asarray(X), plan=plan,
                                 interpret=INTERPRET)  # fmt: skip
    assert got.shape == (shape[0], k)
    np.testing.assert_allclose(np.asarray(got), dense @ X.astype(np.float64), **TOLERANCE)


@pytest.mark.slow
@pytest.mark.parametrize("side, density, most", [(20000, 0.001, (2, 2)), (2048, 0.1, (16, 24))])
def test_ell_products_of_a_matrix_take_the_kernel_where_its_columns_cost_less(side, density, most):
    # the choice a TPU makes by itself, by the measured costs: the kernel's work per column against
    # XLA's gathers of whole rows of X. At 0.1 % density (the random case: 20 chunks of 9 slots for
    # 20 entries a row) a column costs the kernel about 0.4 of what XLA's gathers cost: the kernel
    # for 1 and 2 columns; at 10 % of 2048 columns (2 chunks of about 140 slots for 200 entries a
    # row) about 0.05: the kernel up to about 20. A vector: the kernel.
    rng = np.random.default_rng(0)
    entries = np.unique(rng.integers(0, side * side, int(density * side * side)))
    rows, cols = entries // side, entries % side
    plan, _, _ = tpu_ell.host_layout(rows, cols, np.ones(len(entries), np.float32), (side, side))
    bands, *_ = tpu_ell.host_row_layout(rows, cols, np.ones(len(entries), np.float32), (side, side))
    spec = tpu.EllSpec(plan._replace(bands=bands), plan, False, "auto")
    kernel = [tpu._pallas_faster(spec, (jax.ShapeDtypeStruct((side, k), jnp.float32),)) for k in range(1, 65)]
    taken = kernel.count(True)
    assert kernel == [True] * taken + [False] * (64 - taken)  # the first few column counts, then XLA's
    assert most[0] <= taken <= most[1]
    assert tpu._pallas_faster(spec, (jax.ShapeDtypeStruct((side,), jnp.float32),))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@given(p=ell_problems(), seed=st.integers(0, 2**32 - 1))
def test_ell_kernel_takes_32_bit_integers(p, dtype, seed):
    # the vector unit's integers, whose sums wrap around: exactly NumPy's (duplicates summed)
    shape, rows, cols, _, _ = p
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, len(rows), dtype=dtype, endpoint=True)
    x = rng.integers(info.min, info.max, shape[1], dtype=dtype, endpoint=True)
    plan, stored_values, stored_columns = tpu_ell.host_layout(rows, cols, values, shape)
    dense = np.zeros(shape, np.uint64)
    np.add.at(dense, (rows, cols), values.astype(np.int64).view(np.uint64) if info.min else values.astype(np.uint64))
    want = _wrapped_product(dense.astype(np.uint32).view(dtype), x, dtype)
    got = tpu_ell.pallas_product(jnp.asarray(stored_values), jnp.asarray(stored_columns), jnp.asarray(x), plan=plan,
                                 interpret=INTERPRET)  # fmt: skip
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got), want)


@given(p=ell_problems(), k=st.sampled_from([None, 1, 3]))
def test_ell_row_layout_gathers_each_entry_once_in_few_bands(p, k):
    # XLA's formulation: rows sorted by their lengths, slots grouped into bands whose rows are more
    # than half the band's first slot's: at most twice the entries stored (a gather each), in at
    # most as many bands as the binary digits of the number of rows
    shape, rows, cols, values, x = p
    bands, stored_values, stored_columns, rank = tpu_ell.host_row_layout(rows, cols, values, shape)
    lengths = np.bincount(rows, minlength=shape[0])
    assert sorted(rank.tolist()) == list(range(shape[0]))
    assert np.all(np.diff(lengths[np.argsort(rank)]) <= 0)  # longest first
    assert sum(width for _, width in bands) == lengths.max(initial=0)
    assert [r for r, _ in bands] == sorted((r for r, _ in bands), reverse=True)
    assert len(stored_values) == sum(r * w for r, w in bands) <= 2 * len(values)
    assert len(bands) <= int(np.count_nonzero(lengths)).bit_length()
    assert np.count_nonzero(stored_columns >= 0) == len(values)  # each entry once, the rest padding
    rng = np.random.default_rng(len(values))
    operand = x if k is None else rng.standard_normal((shape[1], k)).astype(np.float32)
    dense = np.zeros(shape)
    np.add.at(dense, (rows, cols), values)
    plan = tpu_ell.Plan(shape, tpu_ell.REGISTER, 1, bands)
    layout = (jnp.asarray(stored_values), jnp.asarray(stored_columns), jnp.asarray(rank))
    row_bytes = bands[0][0] * (1 if k is None else k) * 4 if bands else 1
    # one gather a slot (a loop), two (a loop over groups, the last padded where a band's slots are
    # odd), all of a band's slots in one
    for limit in (0, 2 * row_bytes, tpu_ell.GATHERED_BYTES):
        got = tpu_ell.xla_product(*layout, jnp.asarray(operand), plan=plan, limit=limit)
        np.testing.assert_allclose(np.asarray(got), dense @ operand.astype(np.float64), **TOLERANCE)


@given(band_rows=st.integers(1, 10**6), width=st.integers(1, 64), columns=st.integers(1, 4096),
       limit=st.sampled_from([0, 1, 2**20, tpu_ell.GATHERED_BYTES]))  # fmt: skip
def test_ell_row_layout_gathers_as_many_slots_as_fit(band_rows, width, columns, limit):
    # the slots one gather takes: as many as fit in the limit, at least one, at most the band's
    group = tpu_ell.slots_per_gather(band_rows, width, (columns,), 4, limit)
    one_slot = band_rows * columns * 4
    assert 1 <= group <= width
    assert group == width or group == 1 or group * one_slot <= limit < (group + 1) * one_slot
    assert group > 1 or one_slot * 2 > limit or width == 1


@pytest.mark.parametrize("columns", [None, 3], ids=["vector", "3 columns"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32"])
def test_ell_kernel_gathers_within_registers_for_mosaic(dtype, columns, monkeypatch, capsys):
    # Mosaic lowers a gather only within one register (8 x 128, along an axis: take_along_axis),
    # of 32-bit floats and integers alike; a matrix's columns are a grid axis, the same kernel
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, 3000, 9000), rng.integers(0, 2100, 9000)
    plan, stored_values, stored_columns = tpu_ell.host_layout(rows, cols, np.ones(9000, dtype), (3000, 2100),
                                                              chunk=1024)  # fmt: skip
    module = _mosaic_modules(
        lambda v, c, x: tpu_ell.pallas_product(v, c, x, plan=plan, interpret=False),
        (
            jnp.asarray(stored_values),
            jnp.asarray(stored_columns),
            jnp.ones(2100 if columns is None else (2100, columns), dtype),
        ),
        monkeypatch,
        capsys,
    )
    assert module.count("tpu.dynamic_gather") == tpu_ell.SUBLANES
    assert re.search(rf"tpu.dynamic_gather .*vector<8x128x{'f32' if dtype == 'float32' else 'i32'}>", module)


def test_ell_layout_refuses_a_chunk_of_part_of_a_register():
    with pytest.raises(ValueError, match="chunk must be a multiple of 1024, got 1000"):
        tpu_ell.host_layout(np.zeros(1, int), np.zeros(1, int), np.ones(1, np.float32), (4, 4), chunk=1000)
