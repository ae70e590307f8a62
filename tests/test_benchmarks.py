"""The benchmarks measure what their tables say: bench/sparse_tpu.py's matrices are the ones its
titles name, one failing implementation does not end its run, a product the kernel does not take
is not timed under its name, and bench/precision.py's chain of calls runs each call on its own
inputs, reading them from the memory one call reads them from, and bench/special.py times
every function inside its domain."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import xp

BENCH = Path(__file__).parents[1] / "bench"


@pytest.fixture
def bench(monkeypatch):
    """``bench(name)``: the benchmark module ``bench/name.py``, imported as its runner does (its
    neighbours by name), and forgotten after the test."""
    monkeypatch.syspath_prepend(str(BENCH))
    imported = []

    def load(name):
        imported.append(name)
        return importlib.import_module(name)

    yield load
    for name in imported:
        sys.modules.pop(name, None)


@pytest.mark.parametrize("side, block", [(512, 128), (1024, 64)])
def test_the_blocks_case_stores_only_the_blocks_it_draws(bench, side, block):
    # A dense matrix made as values times a mask of blocks holds -0.0 wherever a value is negative,
    # and BSR.fromdense stores a negative zero as the entry it is: every block would be stored, and
    # the "10 % of the blocks" matrix would be multiplied as a dense one.
    dense = bench("sparse_tpu").block_sparse(side, block, np.random.default_rng(1))
    count = side // block
    drawn = np.abs(dense).reshape(count, block, count, block).max(axis=(1, 3)) > 0
    assert not np.signbit(dense[dense == 0]).any()
    matrix = xp.sparse.BSR.fromdense(xp.asarray(dense), block_shape=(block, block))
    stored = {
        (int(r), int(c)) for r, c in zip(np.asarray(matrix.block_rows), np.asarray(matrix.block_columns), strict=True)
    }
    # every drawn block, and at most one block of zeros for each block row or column with none
    assert {tuple(map(int, rc)) for rc in np.argwhere(drawn)} <= stored
    assert len(stored) <= drawn.sum() + (~drawn.any(axis=1)).sum() + (~drawn.any(axis=0)).sum()
    assert 0.05 * count * count < drawn.sum() < 0.2 * count * count


def test_an_implementation_that_fails_is_its_row_and_the_others_are_timed(bench):
    # one kernel that does not compile on the device must not end the run (nor hide the others)
    import jax.numpy as jnp

    sparse_tpu = bench("sparse_tpu")
    works = sparse_tpu.jitted(None, lambda a, x: a @ x, jnp.eye(4), jnp.ones(4))
    fails = sparse_tpu.jitted(None, lambda a, x: a @ x, jnp.eye(4), jnp.ones(5))  # (does not trace)
    lines = sparse_tpu.run_case("t", {"works": (works, np.ones(4)), "fails": (fails, np.ones(4))}, 64, 1, 0.001,
                                1e9, {})  # fmt: skip
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines if line.startswith("| ")}
    assert rows["works"].endswith("| 0.0e+00 |")
    assert "| failed: TypeError: dot_general requires contracting dimensions" in rows["fails"]


def test_the_chained_program_runs_each_call_on_inputs_that_depend_on_the_last(bench):
    precision = bench("precision")
    a = xp.asarray(np.full((16, 16), 0.5, np.float32))
    chained = jax.jit(precision._chained(xp.matmul))
    # each call's result summed: REPEAT times the sum of a @ a (the zero added changes nothing)
    assert float(chained(a, a)) == precision.REPEAT * float(xp.sum(a @ a))
    # the zero is a select on a comparison of the running total, which no compiler can fold (a
    # product by 0.0 can be, under a platform's float rules): the loop's body computes it, so the
    # product that reads it cannot move out of the loop
    text = chained.lower(a, a).compile().as_text()
    assert re.search(r"compare\(.*jit\(run\)/while/body/", text)
    assert re.search(r"select\(.*jit\(run\)/while/body/", text)
    assert re.search(r"jit\(run\)/while/body/[\w/]*dot_general", text)
    assert not re.search(r"jit\(run\)/while/body/[\w/]*mul\b", text)
    # and each call's result is held behind a barrier, not fused into the sum
    assert "optimization_barrier" in str(chained.lower(a, a).as_text())


def test_the_precision_benchmark_times_operands_beyond_the_chip_and_errors_over_the_drawn(bench, monkeypatch):
    # A chained program keeps operands of a few MB in a TPU's own memory (a v5e's VMEM: 128 MiB) from
    # one call to the next, where one call reads them from HBM: the rows bound by memory take
    # operands that cannot stay there
    precision = bench("precision")
    on_chip = 128 * 2**20
    assert 4 * precision.MEMORY_SIDE**2 > on_chip and 4 * precision.ELEMENTS >= on_chip
    # the element-wise functions: the drawn values, repeated, timed; the error over the drawn ones
    monkeypatch.setattr(precision, "DRAWN", 1000)
    cases = precision._elementwise_cases
    monkeypatch.setattr(precision, "_elementwise_cases", lambda size: cases(size)[:1])  # exp
    compiled, timed = precision._compiled, []

    def recording(function, args, setting):
        timed.append([np.asarray(a) for a in args])
        return compiled(function, args, setting)

    monkeypatch.setattr(precision, "_compiled", recording)
    [(name, _, xp_error, _, jnp_error)] = precision.measure_elementwise(2500, 1)
    drawn = cases(1000)[0][-1][0]
    assert name == "exp" and len(timed) == 2
    for [operand] in timed:
        np.testing.assert_array_equal(operand, np.resize(drawn, 2500))
    assert 0 < xp_error < 1e-6 and 0 <= jnp_error < 1e-5


def test_the_bsr_columns_case_names_a_matrix_the_kernel_does_not_take(bench, monkeypatch):
    # a matrix whose blocks' indices would not fit in SMEM is XLA's even when the kernel is forced:
    # its kernel cell says so, rather than timing XLA's formulation under the kernel's name
    from xp.sparse._products import tpu

    sparse_tpu = bench("sparse_tpu")
    fits = sparse_tpu.bsr_columns_case(((64, 8, 0.3),), 1, 0.001)
    monkeypatch.setattr(tpu, "PREFETCHED_BYTES", 12)
    too_many = sparse_tpu.bsr_columns_case(((64, 8, 0.3),), 1, 0.001)
    rows = [[line for line in lines if line.startswith("| 64 |")] for lines in (fits, too_many)]
    assert len(rows[0]) == len(rows[1]) == 3  # a vector, 8 and 128 columns
    timed = r"\| 64 \| 8 \| 30% \| \d+ \| \w+ \| -?\d+\.\d \| -?\d+\.\d \| -?\d+\.\d\d \|"
    assert all(re.match(timed, row) for row in rows[0])
    assert all("n/a: its blocks' indices exceed SMEM" in row for row in rows[1])


@pytest.mark.slow
def test_the_special_functions_are_timed_inside_their_domains(bench):
    # bench/special.py's rows are worth reading only if every function computes real values there
    # (a NaN or a clipped result is computed at another speed): xp's and SciPy's values agree
    # (SciPy's row is timed on a CPU only; its values are the reference on any backend)
    scipy_special = pytest.importorskip("scipy.special")
    special = bench("special")
    values = special._arguments(64)
    for name in special.FUNCTIONS:
        ours = np.asarray(special._cases(name, values)["xp"]())
        reference = getattr(scipy_special, name)(*special._scipy_arguments(name, values)).astype(np.float64)
        assert np.all(np.isfinite(reference)), name
        np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-30, err_msg=name)
