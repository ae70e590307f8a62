"""The native CPU kernel for sparse products (``native_spmm.cc``), called by XLA through JAX's FFI.

What it computes: ``A @ x`` and ``A.T @ x`` for a CSR matrix (data, column indices, row pointers)
and ``y[out[j]] += data[j] * x[in[j]]`` for a COO one (``A @ x`` with ``out`` the row indices,
``A.T @ x`` with the column indices), ``x`` a vector or a row-major matrix, multithreaded over
row (or entry) blocks on XLA's own intra-op thread pool; entries with out-of-range indices
(JAX's padding) contribute nothing. :mod:`xp.sparse._products.kernels` chooses it on CPU. The same
library holds the eager product of two sparse matrices on the host (``native_spgemm.cc``, called
through ctypes by :mod:`xp.sparse._products.sparse_sparse`).

**How it is built: on first use, into a per-user cache** (``$XP_NATIVE_CACHE``, else
``$XDG_CACHE_HOME/xp`` or ``~/.cache/xp``), one shared library per hash of the sources, the
compiler, the flags, the CPU (it is built for the host's instruction set) and jaxlib's version (the FFI headers come from the installed jaxlib:
``jax.ffi.include_dir()``). The compile takes about 15 s of CPU once per user and jaxlib version;
concurrent processes (pytest-xdist workers) wait on a lock file and the library is renamed into
place atomically. Nothing happens at ``import xp``: the first sparse product on CPU loads (or
builds) it. Why not at install (a setuptools extension): the headers are jaxlib's, so jaxlib
would become a build requirement, downloaded and unpacked into pip's isolated build environment
on every ``pip install -e`` (about 80 MB; measured in docs/sparse.md), and an editable install
would keep a library built for the jaxlib present at install time, not the one in use after an
upgrade. The library is identical either way, so the kernel's speed is too.

``XP_NATIVE=0`` forces XLA's kernels; where JAX's default backend is not the CPU (a GPU machine)
nothing is built and XLA's kernels are used, in their GPU forms (docs/sparse.md, "On a GPU").
With no compiler, or a failed build, the first product warns once per process
(:class:`NativeKernelWarning`) and XLA's kernels are used.

**Where the XLA kernels are used instead**, decided when XLA lowers the computation (a primitive
whose lowering picks): for any platform but CPU alone (a function lowered for GPU never names the
CPU target) and for ``jax.export`` (a custom call has no compatibility guarantee and the target
would not exist where the artifact is loaded).

**Transformations**: rules of the primitive. The product is bilinear in ``(data, x)``: the JVP
is two products, the transpose with respect to ``x`` is the transposed product (native too), with
respect to ``data`` it is ``ct[out] * x[in]`` summed over columns: for a CSR a second native
kernel (``xp_csr_sampled``, a primitive whose own rules are products again), for a COO XLA's
gathers; so forward and reverse mode run natively, and any order of them. vmap: a batch of dense
operands is one product with more columns; batched sparse operands go through ``lax.map``. (A ``custom_jvp``
with ``linear_call`` tangents was tried first: ``linear_call`` has no batching rule, so
``vmap(grad(...))`` failed.)

Threads: below ``kMinParallelWork`` (32k multiply-adds) a product stays on the calling thread,
waking pool threads costing microseconds: at about 40k entries (jitted ``A @ x``) one thread and
two take the same time, and the second thread pays more as products grow (about half the time
at 400k). ``XP_NATIVE_MIN_PARALLEL_WORK`` overrides it, for measuring. The helpers are tasks on
the pool, and the calling thread waits for their last chunks on a condition variable (a spinning
caller and helpers lingering for the next product lost time against that: bench/RESULTS.md,
"native_threads").
Kernel times and ratios to SciPy: bench/RESULTS.md, "Sparse arrays".
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from xp.sparse._products import rules, xla

# The products' FFI kernels, and the host product of two sparse matrices (called through ctypes)
SOURCES = (Path(__file__).with_name("native_spmm.cc"), Path(__file__).with_name("native_spgemm.cc"))
# Every warning of -Wall and -Wextra is on, none switched off; jaxlib's FFI headers are included as
# system headers (-isystem), whose warnings are jaxlib's to fix, not this kernel's. They are errors
# where XP_NATIVE_WERROR=1 (CI sets it) and in the sanitizer builds, not by default: the library is
# built on users' machines by whatever compiler they have, and a warning that a newer compiler adds
# must not take the kernel away from them (a failed build falls back to XLA's slower kernels).
FLAGS = ("-std=c++20", "-O3", "-fPIC", "-shared", "-Wall", "-Wextra")
# The instrumented builds of tests/sparse_arrays/test_native_sanitizers.py (each its own library in
# the cache): AddressSanitizer with UndefinedBehaviorSanitizer, every finding fatal, and
# ThreadSanitizer; at -O1 with debug information, as the sanitizers' manuals advise.
SANITIZERS = {
    "address": ("-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"),
    "thread": ("-fsanitize=thread",),
}
SANITIZED = ("-O1", "-g", "-Werror")
# Built for the CPU it runs on: `A @ X` with 64 columns (a row of X per stored entry) ran 2-3x
# faster with AVX2/FMA than with the x86-64 baseline's SSE2 (docs/sparse.md, "The native CPU
# kernel"; XLA's own kernels use the host's instructions too). The cache key holds
# the CPU's identity, so a home directory shared by different machines gets one library per kind.
HOST_FLAGS = {
    "x86_64": ("-march=native",),
    "AMD64": ("-march=native",),
    "aarch64": ("-mcpu=native",),
    "arm64": ("-mcpu=native",),
}
TARGETS = {
    "xp_csr_matmul": "XpCsrMatmul",
    "xp_csr_rmatmul": "XpCsrRmatmul",
    "xp_coo_matmul": "XpCooMatmul",
    "xp_csr_sampled": "XpCsrSampled",
}
DTYPES = frozenset(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128", "int32", "int64"))


class NativeKernelWarning(UserWarning):
    """The native sparse kernel could not be built or loaded; XLA's kernels are used."""


_state: dict[str, Any] = {"loaded": None, "enabled": True}


def _compiler() -> str | None:
    import shutil

    return os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++") or shutil.which("c++")


def cache_dir() -> Path:
    if os.environ.get("XP_NATIVE_CACHE"):
        return Path(os.environ["XP_NATIVE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "xp"


def host_flags() -> tuple[str, ...]:
    """The compiler flags that target this machine's CPU (none where its kind is not known)."""
    import platform

    return HOST_FLAGS.get(platform.machine(), ())


def host_cpu() -> str:
    """What identifies this CPU for a library built for it: model and instruction-set features."""
    import platform

    try:
        with open("/proc/cpuinfo") as cpuinfo:
            lines = [line for line in cpuinfo if line.startswith(("model name", "flags", "Features", "CPU part"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return f"{platform.machine()} {platform.processor()}"


def flags(sanitizer: str | None = None) -> tuple[str, ...]:
    """The compiler's flags but the host's: FLAGS, ``-Werror`` where ``XP_NATIVE_WERROR=1``, and
    for a build under ``sanitizer`` (a key of SANITIZERS) its flags."""
    strict = ("-Werror",) if os.environ.get("XP_NATIVE_WERROR", "0").strip() == "1" else ()
    if sanitizer is None:
        return FLAGS + strict
    return FLAGS + SANITIZERS[sanitizer] + SANITIZED


def library_path(compiler: str, sanitizer: str | None = None) -> Path:
    """The cached library's path: keyed by the source, the compiler, the flags, the CPU and jaxlib
    (an instrumented build's name says its sanitizer)."""
    import hashlib
    import importlib.metadata
    import subprocess

    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=True).stdout
    key = hashlib.sha256()
    for part in (
        *(source.read_bytes() for source in SOURCES),
        version.encode(),
        " ".join(flags(sanitizer) + host_flags()).encode(),
        host_cpu().encode(),
        importlib.metadata.version("jaxlib").encode(),
    ):
        key.update(part)
        key.update(b"\0")
    return cache_dir() / f"xp_spmm-{f'{sanitizer}-' if sanitizer else ''}{key.hexdigest()[:20]}.so"


@contextlib.contextmanager
def _locked(path: Path) -> Any:
    """An exclusive lock on ``path`` (POSIX), so concurrent processes build the library once."""
    try:
        import fcntl
    except ImportError:  # no POSIX locks: concurrent builds each rename a whole file into place
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build(compiler: str, target: Path, sanitizer: str | None = None) -> None:
    """Compiles the library to ``target`` (through a temporary file renamed into place), for a
    build under ``sanitizer`` instrumented by it."""
    import subprocess
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.with_suffix(".lock")):
        if target.exists():
            return
        handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".so.tmp")
        os.close(handle)
        try:
            sources = [str(source) for source in SOURCES]
            include = ("-isystem", jax.ffi.include_dir())
            command = [compiler, *flags(sanitizer), *host_flags(), *include, *sources, "-o", temporary]
            done = subprocess.run(command, capture_output=True, text=True)
            # A compiler that does not know the CPU: the portable build (not for a warning made an
            # error, which the portable build would hide)
            if done.returncode and host_flags() and "-Werror" not in done.stderr:
                command = [c for c in command if c not in host_flags()]
                done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
            os.replace(temporary, target)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)


def _load() -> bool:
    if os.environ.get("XP_NATIVE", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    if jax.default_backend() != "cpu":  # products lower for the accelerator: no build needed
        return False
    try:
        import ctypes

        if sys.platform == "win32":
            raise RuntimeError("the native kernel is built on Linux and macOS only")
        compiler = _compiler()
        if compiler is None:
            raise RuntimeError("no C++ compiler found (set CXX, or install g++ or clang++)")
        path = library_path(compiler)
        if not path.exists():
            build(compiler, path)
        library = ctypes.cdll.LoadLibrary(str(path))
        for name, symbol in TARGETS.items():
            jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(library, symbol)), platform="cpu")
        # the host functions of native_spgemm.cc (their arguments: int64s and pointers, as passed)
        library.xp_spgemm_count.restype = ctypes.c_int64
        for dtype in ("float32", "float64"):
            getattr(library, f"xp_spgemm_fill_{dtype}").restype = None
        _state["library"] = library
    except Exception as error:
        warnings.warn(
            f"xp.sparse: the native CPU kernel for sparse products is not available ({error}); "
            "XLA's kernels are used. Set XP_NATIVE=0 to silence this.",
            NativeKernelWarning,
            stacklevel=4,
        )
        return False
    return True


def available() -> bool:
    """Whether the native kernel is loaded (loading or building it on the first call)."""
    if _state["loaded"] is None:
        _state["loaded"] = _load()
    return bool(_state["loaded"]) and bool(_state["enabled"])


def disabled() -> contextlib.AbstractContextManager[None]:
    """Within this block, products traced choose XLA's kernels (tests and bench/sparse.py compare
    both); JAX's caches are cleared on the way in and out (:func:`rules.switched`)."""
    return rules.switched(_state, "enabled", False)


def host_functions() -> Any:
    """The loaded library (its ``xp_spgemm_*`` functions, called through ctypes), where the native
    kernel is available (:func:`available`), else None."""
    return _state.get("library") if available() else None


def supported(dtype: Any) -> bool:
    return np.dtype(dtype) in DTYPES


# --- the primitive: native on CPU, XLA elsewhere ------------------------------------------------


class Spec(NamedTuple):
    """A product: ``kind`` "csr" (A @ x), "csr_t" (A.T @ x) or "coo"; ``n_out`` rows of the result;
    for a COO, ``rows_sorted``: whether the matrix's indices are claimed sorted (JAX's
    ``indices_sorted``, rows first: a property of the matrix, whichever way it is multiplied; XLA's
    kernels and the native one rely on it), ``column``: which column of the ``(nse, 2)`` indices
    the output's (0: ``A @ x``, 1: ``A.T @ x``).

    The operands are ``(data, indices, indptr, x)`` for CSR, ``(data, indices, indices, x)`` for COO
    (the BCOO's ``(nse, 2)`` indices, read in place by the native kernel: slicing out the columns
    would copy them)."""

    kind: str
    n_out: int
    rows_sorted: bool = False
    column: int = 0


def _native_call(data: Any, a: Any, b: Any, x: Any, *, spec: Spec) -> Any:
    out = jax.ShapeDtypeStruct((spec.n_out, *x.shape[1:]), x.dtype)
    if spec.kind == "coo":
        column, rows_sorted = np.int64(spec.column), np.int64(spec.rows_sorted)
        return jax.ffi.ffi_call("xp_coo_matmul", out)(data, a, x, column=column, rows_sorted=rows_sorted)
    return jax.ffi.ffi_call("xp_csr_matmul" if spec.kind == "csr" else "xp_csr_rmatmul", out)(data, a, b, x)


def _xla_call(data: Any, a: Any, b: Any, x: Any, *, spec: Spec) -> Any:
    if spec.kind == "coo":
        out, inp = a[:, spec.column], a[:, 1 - spec.column]
        sorted_out = spec.rows_sorted and spec.column == 0
        return xla.xla_coo_product(data, out, inp, x, n_out=spec.n_out, sorted_out=sorted_out)
    if spec.kind == "csr":
        return xla.xla_csr_product(data, a, b, x)
    return xla.xla_csr_rproduct(data, a, b, x, n_cols=spec.n_out)


def _abstract(data: Any, a: Any, b: Any, x: Any, *, spec: Spec) -> Any:
    from jax.core import ShapedArray

    return ShapedArray((spec.n_out, *x.shape[1:]), x.dtype)


def _lowering(native_call: Any, xla_call: Any) -> Any:
    """The lowering rule of a primitive whose native and XLA forms are ``native_call`` and ``xla_call``."""

    def lower(ctx: Any, *args: Any, spec: Spec) -> Any:
        module = ctx.module_context
        native = tuple(module.platforms) == ("cpu",) and not module.lowering_parameters.for_export
        return rules.lowered(native_call if native and _state["loaded"] else xla_call, ctx, *args, spec=spec)

    return lower


def _primitive(name: str, abstract: Any, native_call: Any, xla_call: Any) -> Any:
    return rules.primitive(name, abstract, _lowering(native_call, xla_call))


_PRODUCT = _primitive("xp_sparse_product", _abstract, _native_call, _xla_call)


# --- the data cotangent of a CSR product: native on CPU, XLA elsewhere --------------------------
# ``out[j] = ct[out_j] . x[in_j]`` over the columns, for each stored entry j (``_entry_indices``).
# In XLA the CSR's row of each entry is a scatter and a running sum over the entries, which cost
# several times the gathers themselves, even with the parallel prefix sum XLA's kernels use on CPU
# (``xla.rows_from_indptr``); and where the matrix is a constant of the jitted function
# XLA folds that sum at compile time. The native kernel walks the rows as the product does: about
# a third of the XLA kernels' time (bench/RESULTS.md, "Sparse arrays", the gradient row). A COO
# has its rows stored: its gathers stay in XLA.


def _native_sampled(a: Any, b: Any, ct: Any, x: Any, *, spec: Spec) -> Any:
    out = jax.ShapeDtypeStruct((a.shape[0],), x.dtype)
    return jax.ffi.ffi_call("xp_csr_sampled", out)(a, b, ct, x, transposed=np.int64(spec.kind == "csr_t"))


def _xla_sampled(a: Any, b: Any, ct: Any, x: Any, *, spec: Spec) -> Any:
    out, inp = _entry_indices(spec, a, b, a.shape[0])
    terms = xla.take(ct, out) * xla.take(x, inp)
    return terms if terms.ndim == 1 else jnp.sum(terms, axis=1)


def _sampled_abstract(a: Any, b: Any, ct: Any, x: Any, *, spec: Spec) -> Any:
    from jax.core import ShapedArray

    return ShapedArray((a.shape[0],), x.dtype)


_SAMPLED = _primitive("xp_sparse_sampled_product", _sampled_abstract, _native_sampled, _xla_sampled)


# --- transformation rules ----------------------------------------------------------------------
# The product is bilinear in (data, x): its JVP is two products, its transpose with respect to x
# the transposed product (native too), with respect to data ``ct[out] * x[in]`` summed over columns
# (the sampled primitive above for a CSR, gathers for a COO). vmap: a batch of dense operands is
# one product with more columns.


def _entry_indices(spec: Spec, a: Any, b: Any, nse: int) -> tuple[Any, Any]:
    """Each stored entry's index into the result and into ``x``."""
    if spec.kind == "coo":
        return a[:, spec.column], a[:, 1 - spec.column]
    rows = xla.rows_from_indptr(b, nse=nse).astype(a.dtype)
    return (rows, a) if spec.kind == "csr" else (a, rows)


def _transposed(spec: Spec, n_in: int) -> Spec:
    if spec.kind == "coo":
        return Spec("coo", n_in, spec.rows_sorted, 1 - spec.column)
    return Spec("csr_t" if spec.kind == "csr" else "csr", n_in)


def _transpose(ct: Any, data: Any, a: Any, b: Any, x: Any, *, spec: Spec) -> tuple[Any, ...]:
    from jax.interpreters import ad

    linear_data, linear_x = ad.is_undefined_primal(data), ad.is_undefined_primal(x)
    if linear_data == linear_x:
        raise NotImplementedError("xp.sparse: the product is linear in data or in x, not in both")
    if type(ct) is ad.Zero:
        return (None, None, None, ad.Zero(x.aval)) if linear_x else (ad.Zero(data.aval), None, None, None)
    if linear_x:
        n_in = x.aval.shape[0]
        return None, None, None, _PRODUCT.bind(data, a, b, ct, spec=_transposed(spec, n_in))
    if spec.kind == "coo":
        return _xla_sampled(a, b, ct, x, spec=spec), None, None, None
    return _SAMPLED.bind(a, b, ct, x, spec=spec), None, None, None


def _batch(args: Any, dims: Any, *, spec: Spec) -> tuple[Any, int]:
    data, a, b, x = args
    batched = [d is not None for d in dims]  # None: not mapped
    if not any(batched[:3]):
        x = jnp.moveaxis(x, dims[3], -1)  # (n, [k,] B) -> (n, k * B): one product
        y = _PRODUCT.bind(data, a, b, x.reshape(x.shape[0], -1), spec=spec)
        y = y.reshape(spec.n_out, *x.shape[1:])
        return y, y.ndim - 1
    return rules.mapped(_PRODUCT, args, dims, spec=spec)


# The data cotangent is bilinear in (ct, x) too, and its transposes are products with the
# cotangent as data: so gradients of any order stay on these two primitives.


def _sampled_transpose(g: Any, a: Any, b: Any, ct: Any, x: Any, *, spec: Spec) -> tuple[Any, ...]:
    from jax.interpreters import ad

    linear_ct, linear_x = ad.is_undefined_primal(ct), ad.is_undefined_primal(x)
    if linear_ct == linear_x:
        raise NotImplementedError("xp.sparse: the data cotangent is linear in ct or in x, not in both")
    if type(g) is ad.Zero:
        return (None, None, None, ad.Zero(x.aval)) if linear_x else (None, None, ad.Zero(ct.aval), None)
    if linear_ct:  # ct_bar[out_j] += g[j] x[in_j]: the product itself, g as its data
        return None, None, _PRODUCT.bind(g, a, b, x, spec=spec), None
    # x_bar[in_j] += g[j] ct[out_j]: the transposed product
    return None, None, None, _PRODUCT.bind(g, a, b, ct, spec=_transposed(spec, x.aval.shape[0]))


def _register_rules() -> None:
    from jax.interpreters import ad, batching

    ad.primitive_jvps[_PRODUCT] = rules.bilinear_jvp(_PRODUCT, (0, 3))  # (data, x)
    ad.primitive_transposes[_PRODUCT] = _transpose
    batching.primitive_batchers[_PRODUCT] = _batch
    ad.primitive_jvps[_SAMPLED] = rules.bilinear_jvp(_SAMPLED, (2, 3))  # (ct, x)
    ad.primitive_transposes[_SAMPLED] = _sampled_transpose
    batching.primitive_batchers[_SAMPLED] = functools.partial(rules.mapped, _SAMPLED)


_register_rules()


def product(data: Any, a: Any, b: Any, x: Any, spec: Spec) -> Any:
    """The product ``spec`` names (see :class:`Spec`), ``x`` of ``data``'s dtype, ``a`` and ``b``
    of one index dtype (:func:`common_index`)."""
    return _PRODUCT.bind(data, a, b, x, spec=spec)


def common_index(a: Any, b: Any) -> tuple[Any, Any]:
    """Both index arrays in one dtype (the kernel takes one): int64 if either is."""
    if a.dtype == b.dtype:
        return a, b
    dtype = jnp.promote_types(a.dtype, b.dtype)
    return a.astype(dtype), b.astype(dtype)
