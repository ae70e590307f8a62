"""The TPU kernels of the sparse products, and how a product chooses them: primitives whose lowering
picks a Pallas kernel on a TPU and XLA's formulation elsewhere.

The kernels are those of three layouts, each a format of its own (``xp.sparse.DIA``,
``xp.sparse.BSR``, ``xp.sparse.ELL``) built once per matrix: :mod:`.tpu_dia` (a banded matrix by its
diagonals: shifted slices, the vector unit), :mod:`.tpu_bsr` (a matrix of dense blocks: the matrix
unit) and :mod:`.tpu_ell` (a matrix of no structure, as rows padded per chunk of columns: gathers
within registers of the vector unit, column by column for a matrix ``X``; XLA's formulation reads a
second layout, by the rows' lengths).
A BCOO or BCSR keeps XLA's and the CPU's kernels (:mod:`.kernels`): on a TPU a general sparse
product is a gather and a scatter-add, which XLA serializes there; the layouts that avoid both are
built once per matrix, by the user's conversion, not for each product.

**The choice** is made when XLA lowers a product, as for the native CPU kernel (:mod:`.native`):
each product is a primitive with a lowering rule for the TPU (the Pallas kernel, or XLA's
formulation where :data:`ON_TPU` says it is as fast) and one for every other platform (XLA's
formulation), so one jitted or exported program takes the right one on each platform. The Pallas
kernels take float32, the DIA and ELL kernels also 32-bit integers (:data:`VECTOR_UNIT_DTYPES`);
other dtypes, and shapes a kernel does not tile (:func:`_pallas_takes`), lower to XLA's formulation
everywhere; so do, on a TPU choosing by itself, the products XLA's formulation computes faster
(:func:`_pallas_faster`: a BSR matrix times a vector or a few columns, an ELL matrix times a matrix
whose columns would cost the kernel more than XLA's gathers).

:func:`forced` makes every product traced inside it lower to one kind on every platform: the
Pallas kernels (run by Pallas's interpreter where the platform is not a TPU: how the tests check
their logic on a CPU), or XLA's formulation (to measure one against the other on a TPU).

**Transformations**, rules of the primitives as the native kernel's: each product is bilinear in
``(data, x)``, so its JVP is two products, its transpose with respect to ``x`` the transposed
product (a kernel too), with respect to ``data`` the sampled product (``ct[i] . x[j]`` at each
stored position, in XLA: element-wise for DIA, a batched product for BSR; not for ELL, whose
entries are stored in four layouts, two of the matrix and two of its transpose: a cotangent would
reach only the layout a product reads, and a gradient step would set them apart); ``vmap`` over
``x`` is one product with more columns, over the matrix a ``lax.map``.
"""

from __future__ import annotations

import contextlib
import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from xp.sparse._products import rules, tpu_bsr, tpu_dia, tpu_ell

VECTOR_UNIT_DTYPES = frozenset(map(np.dtype, (np.float32, np.int32, np.uint32)))
"""The dtypes of the DIA and ELL kernels, which run on the vector unit: the 32-bit floats and
integers it computes natively (integers wrap, as in XLA's formulation). The BSR kernel's matrix
unit takes float32 (its integer products are 8-bit): :data:`MATRIX_UNIT_DTYPES`."""

MATRIX_UNIT_DTYPES = frozenset({np.dtype(np.float32)})
"""The dtypes of the BSR kernel."""

ON_TPU = {"dia": "pallas", "bsr": "pallas", "ell": "pallas"}
"""What each layout's products lower to on a TPU, "pallas" or "xla": the Pallas kernels, faster than
XLA's formulation for every layout as measured by bench/sparse_tpu.py (docs/sparse.md, "On a TPU"),
but for the products :func:`_pallas_faster` leaves to XLA."""

BSR_KERNEL_COLUMNS = 8
"""The fewest columns of ``X`` for which a TPU takes the BSR kernel unless forced: a grid step per
block costs the kernel about the same for one column as for 128, while XLA's formulation (a gather
of ``X``'s tiles, one batched product, a sorted ``segment_sum``) grows with the columns; for a vector
XLA's was faster for every block size and density measured (8 to 128, 10 and 30 %: 1.6 to 11
times), from 8 columns the kernel (docs/sparse.md)."""

PREFETCHED_BYTES = 2**19
"""The most the BSR kernel scalar-prefetches (three ``int32`` per block: its position in the walk,
its block row and column) into SMEM, half of the 1 MiB a TPU core has up to v6e: a matrix of more
blocks fails to compile there (a v5e ran out of SMEM at 104757 blocks), so XLA's formulation takes
its products."""

_state = {"forced": "auto"}


def forced(kind: str) -> contextlib.AbstractContextManager[None]:
    """Within this block, the DIA, BSR and ELL products traced lower to ``kind`` on every platform:
    "pallas" (interpreted where the platform is not a TPU) or "xla". JAX's caches are cleared on
    the way in and out (:func:`rules.switched`)."""
    if kind not in ("pallas", "xla"):
        raise ValueError(f"kind must be 'pallas' or 'xla', got {kind!r}")
    return rules.switched(_state, "forced", kind)


def _precision() -> str:
    """The matmul precision of a product traced now: the user's JAX setting, else float32's."""
    chosen = jax.config.jax_default_matmul_precision  # type: ignore[attr-defined]
    return "highest" if chosen is None else str(chosen)


# --- the lowering: a Pallas kernel or XLA's formulation, per platform ---------------------------


class DiaSpec(NamedTuple):
    """A DIA product: the matrix's layout, ``A.T @ x`` where ``transposed``, and what it was traced
    under (``forced``: "auto", "pallas" or "xla")."""

    plan: tpu_dia.Plan
    transposed: bool
    forced: str


class BsrSpec(NamedTuple):
    """A BSR product, as :class:`DiaSpec`, with the matmul precision it was traced at."""

    plan: tpu_bsr.Plan
    transposed: bool
    forced: str
    precision: str


class EllSpec(NamedTuple):
    """An ELL product: the layouts of the matrix (``plan``) and of its transpose (``t_plan``), which
    of them the product reads (``A.T @ x`` where ``transposed``), and ``forced`` as in :class:`DiaSpec`."""

    plan: tpu_ell.Plan
    t_plan: tpu_ell.Plan
    transposed: bool
    forced: str


def _pallas_takes(spec: Any, avals: Any) -> bool:
    """Whether the Pallas kernel of ``spec`` takes this product (its operands' ``avals``): its dtype
    (float32; for DIA and ELL, :data:`VECTOR_UNIT_DTYPES`), a matrix with stored values, and a shape
    it tiles."""
    data, x = avals[0], avals[-1]
    takes = MATRIX_UNIT_DTYPES if isinstance(spec, BsrSpec) else VECTOR_UNIT_DTYPES
    if x.dtype not in takes or data.shape[0] == 0:
        return False
    columns = int(np.prod(x.shape[1:])) if x.ndim > 1 else 0
    if isinstance(spec, DiaSpec):
        return x.ndim == 1 or tpu_dia.column_tile(spec.plan, columns, spec.transposed) is not None
    if isinstance(spec, EllSpec):  # (a matrix x column by column: _pallas_faster weighs it)
        return x.ndim in (1, 2)
    return (tpu_bsr.fits(spec.plan) and tpu_bsr.column_tile(max(columns, 1)) is not None
            and bsr_indices_fit(data.shape[0]))  # fmt: skip


def bsr_indices_fit(blocks: int) -> bool:
    """Whether the BSR kernel's indices of a matrix of ``blocks`` stored blocks (three ``int32`` a
    block) fit in :data:`PREFETCHED_BYTES` of SMEM."""
    return 3 * 4 * blocks <= PREFETCHED_BYTES


def _pallas_faster(spec: Any, avals: Any) -> bool:
    """Whether a TPU, choosing by itself (not :func:`forced`), takes the Pallas kernel of a product
    it takes (:func:`_pallas_takes`): always, but a BSR product of ``X`` of fewer than
    :data:`BSR_KERNEL_COLUMNS` columns, and an ELL product of a matrix ``X`` whose columns, each
    the vector kernel's work, cost more than XLA's gathers of the row layout (which bring each row
    of ``X`` whole: :func:`tpu_ell.kernel_cost`, :func:`tpu_ell.gather_cost`)."""
    x = avals[-1]
    columns = int(np.prod(x.shape[1:]))
    if isinstance(spec, BsrSpec):
        return columns >= BSR_KERNEL_COLUMNS
    if isinstance(spec, EllSpec) and x.ndim > 1:
        plan = spec.t_plan if spec.transposed else spec.plan
        return tpu_ell.kernel_cost(plan, columns) < tpu_ell.gather_cost(plan)
    return True


def _lowering(pallas: Any, xla: Any, on_tpu: bool) -> Any:
    """The lowering rule, for a TPU (``on_tpu``) or any other platform, of a product whose Pallas
    kernel is ``pallas(*args, spec, interpret)`` and XLA formulation ``xla(*args, spec)``."""

    def lower(ctx: Any, *args: Any, spec: Any) -> Any:
        layout = "dia" if isinstance(spec, DiaSpec) else "ell" if isinstance(spec, EllSpec) else "bsr"
        kind = spec.forced if spec.forced != "auto" else ON_TPU[layout] if on_tpu else "xla"
        chosen = spec.forced == "pallas" or _pallas_faster(spec, ctx.avals_in)
        if kind == "pallas" and chosen and _pallas_takes(spec, ctx.avals_in):
            return rules.lowered(lambda *a, spec: pallas(*a, spec=spec, interpret=not on_tpu), ctx, *args, spec=spec)
        return rules.lowered(xla, ctx, *args, spec=spec)

    return lower


def _abstract(*args: Any, spec: Any) -> Any:
    from jax.core import ShapedArray

    x = args[-1]
    m, n = spec.plan.shape
    return ShapedArray((n if spec.transposed else m, *x.shape[1:]), x.dtype)


def _dia_pallas(data: Any, x: Any, *, spec: DiaSpec, interpret: bool) -> Any:
    product = tpu_dia.vector_product if x.ndim == 1 else tpu_dia.matrix_product
    return product(data, x, plan=spec.plan, transposed=spec.transposed, interpret=interpret)


def _dia_xla(data: Any, x: Any, *, spec: DiaSpec) -> Any:
    return tpu_dia.xla_product(data, x, plan=spec.plan, transposed=spec.transposed)


def _bsr_pallas(data: Any, rows: Any, cols: Any, order: Any, x: Any, *, spec: BsrSpec, interpret: bool) -> Any:
    return tpu_bsr.pallas_product(data, rows, cols, order, x, plan=spec.plan, transposed=spec.transposed,
                                  interpret=interpret, precision=spec.precision)  # fmt: skip


def _bsr_xla(data: Any, rows: Any, cols: Any, order: Any, x: Any, *, spec: BsrSpec) -> Any:
    with jax.default_matmul_precision(spec.precision):
        return tpu_bsr.xla_product(data, rows, cols, order, x, plan=spec.plan, transposed=spec.transposed)


ELL_LEAVES = 5
"""The leaves of each of an ELL's two layouts (the matrix's, then its transpose's), in this order:
the chunked layout's values and columns (the Pallas kernel's), the row layout's values, columns and
rank (XLA's formulation: :func:`tpu_ell.xla_product`)."""

ELL_VALUES = (0, 2)
"""Where the stored values are among a layout's leaves (the rest are integers)."""

ELL_VALUES_AT = tuple(start + i for start in (0, ELL_LEAVES) for i in ELL_VALUES)
"""Where the stored values are among an ELL's leaves, both layouts'."""


def _ell_start(spec: EllSpec) -> int:
    """Where the leaves of the layout a product reads start: the matrix's, or its transpose's where
    ``spec.transposed``."""
    return ELL_LEAVES if spec.transposed else 0


def _ell_read(args: Any, spec: EllSpec) -> tuple[tuple[Any, ...], tpu_ell.Plan]:
    """The leaves of the layout a product reads, and its plan."""
    start = _ell_start(spec)
    return tuple(args[start : start + ELL_LEAVES]), spec.t_plan if spec.transposed else spec.plan


def _ell_pallas(*args: Any, spec: EllSpec, interpret: bool) -> Any:
    (values, columns, *_), plan = _ell_read(args, spec)
    return tpu_ell.pallas_product(values, columns, args[-1], plan=plan, interpret=interpret)


def _ell_xla(*args: Any, spec: EllSpec, limit: int = 0) -> Any:
    (_, _, values, columns, rank), plan = _ell_read(args, spec)
    return tpu_ell.xla_product(values, columns, rank, args[-1], plan=plan, limit=limit)


_DIA = rules.primitive("xp_dia_product", _abstract, _lowering(_dia_pallas, _dia_xla, False),
                       {"tpu": _lowering(_dia_pallas, _dia_xla, True)})  # fmt: skip
_BSR = rules.primitive("xp_bsr_product", _abstract, _lowering(_bsr_pallas, _bsr_xla, False),
                       {"tpu": _lowering(_bsr_pallas, _bsr_xla, True)})  # fmt: skip
_ELL = rules.primitive("xp_ell_product", _abstract, _lowering(_ell_pallas, _ell_xla, False),
                       {"tpu": _lowering(_ell_pallas, functools.partial(_ell_xla, limit=tpu_ell.GATHERED_BYTES), True)})  # fmt: skip


# --- transformation rules ----------------------------------------------------------------------


def _flipped(spec: Any) -> Any:
    return spec._replace(transposed=not spec.transposed)


def _dia_transpose(ct: Any, data: Any, x: Any, *, spec: DiaSpec) -> tuple[Any, Any]:
    from jax.interpreters import ad

    linear_data, linear_x = ad.is_undefined_primal(data), ad.is_undefined_primal(x)
    if linear_data == linear_x:
        raise NotImplementedError("xp.sparse: the DIA product is linear in data or in x, not in both")
    if type(ct) is ad.Zero:
        return (None, ad.Zero(x.aval)) if linear_x else (ad.Zero(data.aval), None)
    if linear_x:
        return None, _DIA.bind(data, ct, spec=_flipped(spec))
    return tpu_dia.sampled(ct, x, plan=spec.plan, transposed=spec.transposed), None


def _bsr_transpose(ct: Any, data: Any, rows: Any, cols: Any, order: Any, x: Any, *, spec: BsrSpec) -> tuple[Any, ...]:
    from jax.interpreters import ad

    linear_data, linear_x = ad.is_undefined_primal(data), ad.is_undefined_primal(x)
    if linear_data == linear_x:
        raise NotImplementedError("xp.sparse: the BSR product is linear in data or in x, not in both")
    if type(ct) is ad.Zero:
        return (None, None, None, None, ad.Zero(x.aval)) if linear_x else (ad.Zero(data.aval), None, None, None, None)
    if linear_x:
        return None, None, None, None, _BSR.bind(data, rows, cols, order, ct, spec=_flipped(spec))
    with jax.default_matmul_precision(spec.precision):
        blocks = tpu_bsr.sampled(ct, x, rows, cols, plan=spec.plan, transposed=spec.transposed)
    return blocks, None, None, None, None


def _ell_transpose(ct: Any, *args: Any, spec: EllSpec) -> tuple[Any, ...]:
    """The transposed product for ``x``. Not for the stored values: an ELL stores its entries four
    times (two layouts of the matrix and two of its transpose), leaves a gradient step would set
    apart."""
    from jax.interpreters import ad

    if any(ad.is_undefined_primal(args[i]) for i in ELL_VALUES_AT):
        raise NotImplementedError(
            "xp.sparse.ELL: derivatives with respect to the stored values in reverse mode (jax.grad, jax.vjp) are "
            "not implemented: an ELL stores its entries several times, in layouts of the matrix and of its transpose, "
            "which a gradient step would set apart. Differentiate with respect to x, or keep a matrix being learned "
            "as a BCOO, DIA or BSR"
        )
    unused = (None,) * (len(args) - 1)
    if type(ct) is ad.Zero:
        return (*unused, ad.Zero(args[-1].aval))
    return (*unused, _ELL.bind(*args[:-1], ct, spec=_flipped(spec)))


def _ell_jvp(primals: Any, tangents: Any, *, spec: EllSpec) -> tuple[Any, Any]:
    """Bilinear in ``x`` and the stored values of the layout the product reads, whose tangent
    replaces every copy of them the lowering may read (the chunked layout's, a TPU's kernel; the
    row layout's, XLA's formulation)."""
    read = tuple(_ell_start(spec) + i for i in ELL_VALUES)
    return rules.bilinear_jvp(_ELL, (read, len(primals) - 1))(primals, tangents, spec=spec)


def _batcher(primitive: Any) -> Any:
    """vmap: a batch of dense operands (the last operand) is one product with more columns; a
    batch of matrices, one product per element."""

    def batch(args: Any, dims: Any, *, spec: Any) -> tuple[Any, int]:
        if all(d is None for d in dims[:-1]):
            x = jnp.moveaxis(args[-1], dims[-1], -1)  # (n, [k,] B) -> (n, k * B)
            y = primitive.bind(*args[:-1], x.reshape(x.shape[0], math.prod(x.shape[1:])), spec=spec)
            y = y.reshape(y.shape[0], *x.shape[1:])
            return y, y.ndim - 1
        return rules.mapped(primitive, args, dims, spec=spec)

    return batch


def _register_rules() -> None:
    from jax.interpreters import ad, batching

    ad.primitive_jvps[_DIA] = rules.bilinear_jvp(_DIA, (0, 1))  # (data, x)
    ad.primitive_transposes[_DIA] = _dia_transpose
    batching.primitive_batchers[_DIA] = _batcher(_DIA)
    ad.primitive_jvps[_BSR] = rules.bilinear_jvp(_BSR, (0, 4))  # (data, x)
    ad.primitive_transposes[_BSR] = _bsr_transpose
    batching.primitive_batchers[_BSR] = _batcher(_BSR)
    ad.primitive_jvps[_ELL] = _ell_jvp  # (the values of the layout read, x)
    ad.primitive_transposes[_ELL] = _ell_transpose
    batching.primitive_batchers[_ELL] = _batcher(_ELL)


_register_rules()


# --- the products -------------------------------------------------------------------------------


def dia_product(data: Any, x: Any, plan: tpu_dia.Plan, transposed: bool) -> Any:
    """``A @ x`` (``A.T @ x``) of a DIA matrix's stored diagonals ``data`` and ``x`` (1-d or 2-d,
    of ``data``'s dtype), traced inside the caller's kernel."""
    return _DIA.bind(data, x, spec=DiaSpec(plan, transposed, _state["forced"]))


def bsr_product(data: Any, rows: Any, cols: Any, order: Any, x: Any, plan: tpu_bsr.Plan, transposed: bool) -> Any:
    """``A @ x`` (``A.T @ x``) of a BSR matrix's layout and ``x`` (1-d or 2-d, of ``data``'s dtype)."""
    spec = BsrSpec(plan, transposed, _state["forced"], _precision())
    return _BSR.bind(data, rows, cols, order, x, spec=spec)


def ell_product(layouts: tuple[Any, ...], x: Any, plan: tpu_ell.Plan, t_plan: tpu_ell.Plan, transposed: bool) -> Any:
    """``A @ x`` (``A.T @ x``) of an ELL matrix's layouts (:data:`ELL_LEAVES` of the matrix, then as
    many of its transpose) and ``x`` (1-d or 2-d, of the values' dtype)."""
    return _ELL.bind(*layouts, x, spec=EllSpec(plan, t_plan, transposed, _state["forced"]))
