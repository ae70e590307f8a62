"""Real array-API client calls on xp and on plain ``jax.numpy``, eagerly and under ``jax.jit``.

Each call below is a small function of arrays that calls a client library the way its users do:
SciPy (``SCIPY_ARRAY_API=1``), array-api-extra and scikit-learn (``array_api_dispatch=True``).
The clients find the namespace from the arrays (array-api-compat). Every call runs in five modes:

- ``numpy``: on NumPy arrays, the reference;
- ``xp`` and ``xp_jit``: on xp arrays, eagerly and inside ``jax.jit``;
- ``jnp`` and ``jnp_jit``: on ``jax.numpy`` arrays, eagerly and inside ``jax.jit``.

Inputs are small float64 arrays (int64 labels, float32 where a call's name says so); JAX's 64-bit
mode is on. A mode's outcome is ``pass`` (NumPy's values, shapes and dtypes, in the namespace's
arrays: a result that came back as a NumPy array is a mismatch), ``mismatch: ...`` or
``error: Type: first line of the message``. A failure also records where it was raised (the
innermost frames in xp and in the client) and, when SciPy computed a special function on NumPy
for want of ``<namespace>.special.<name>``, which one.

    python tests/clients_probe.py                          # the JSON table on stdout
    python tests/clients_probe.py --markdown docs/clients.md

SciPy reads ``SCIPY_ARRAY_API`` when it is imported, so this runs as a script of its own
(``tests/test_clients.py`` starts it in a subprocess and checks the table).
"""

from __future__ import annotations

import os

os.environ["SCIPY_ARRAY_API"] = "1"  # read by SciPy (and scikit-learn) at import
os.environ["JAX_ENABLE_X64"] = "1"  # float64 inputs, as NumPy's
# JAX's persistent compilation cache, as tests/conftest.py sets it up (a test run passes its own
# settings down): most of the time here is XLA compiling small kernels
_CACHE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".jax-cache")
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", _CACHE)
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import array_api_extra as xpx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
from array_api_compat import array_namespace  # noqa: E402
from scipy import (  # noqa: E402
    cluster,
    fft,
    integrate,
    interpolate,
    linalg,
    ndimage,
    optimize,
    signal,
    special,
    stats,
)
from scipy.optimize import elementwise  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

import xp  # noqa: E402

try:
    import sklearn
    from sklearn import (
        discriminant_analysis,
        kernel_approximation,
        linear_model,
        metrics,
        model_selection,
        naive_bayes,
        preprocessing,
    )
    from sklearn.decomposition import PCA
except ImportError:  # scikit-learn is optional: its calls are then reported as unavailable
    sklearn = None

ROOT = Path(__file__).resolve().parent.parent
MODES = ("numpy", "xp", "xp_jit", "jnp", "jnp_jit")
RTOL, ATOL = 1e-8, 1e-12

# --- the inputs -------------------------------------------------------------------------------

_rng = np.random.default_rng(20251201)
DATA: dict[str, np.ndarray] = {
    "x": _rng.normal(size=12),
    "y": _rng.normal(size=12) * 2 + 0.5,
    "pos": _rng.uniform(0.5, 3.0, size=12),
    "p": _rng.uniform(0.05, 0.95, size=12),
    "probs": np.array([0.1, 0.25, 0.5, 0.9]),
    "kernel": np.array([0.25, 0.5, 0.25]),
    "X": _rng.normal(size=(10, 3)),
    "X2": _rng.normal(size=(10, 3)),
    "img": _rng.normal(size=(8, 8)),
    "K2": np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]),
    "coords": _rng.uniform(0.0, 7.0, size=(2, 5)),
    "quats": _rng.normal(size=(3, 4)),
    "vectors": _rng.normal(size=(3, 3)),
    "labels": np.array([0, 2, 1, 2, 0, 1, 1, 2, 0, 2]),
    "labels_pred": np.array([0, 2, 1, 1, 0, 1, 2, 2, 0, 0]),
    "sorted": np.array([-1.5, -0.5, 0.0, 0.25, 1.0, 2.0]),
    "index": np.array([7, 0, 3, 10]),
    "gaps": np.array([1.0, np.nan, -2.5, np.inf, 0.5, -np.inf, np.nan, 3.0]),
    "nans": np.array([[1.0, np.nan, -2.5], [np.nan, 0.5, 3.0]]),
    "x9": _rng.normal(size=9),  # 2**k + 1 samples, for Romberg integration
    "ba": np.array([[0.2, 0.3, 0.0], [1.0, -0.5, 0.1]]),  # an IIR filter's numerator and denominator
    "sos": signal.butter(2, 0.3, output="sos"),
    "points": _rng.normal(size=(8, 2)),
    "queries": _rng.normal(size=(3, 2)),
}
DATA["target"] = DATA["X"] @ np.array([1.5, -2.0, 0.5]) + 0.1 * _rng.normal(size=10)
DATA["target_pred"] = DATA["target"] + 0.2 * _rng.normal(size=10)
DATA["Xc"] = DATA["X"] + DATA["labels"][:, None].astype(float)  # classes that LDA can separate
DATA["proba"] = np.exp(DATA["X"]) / np.exp(DATA["X"]).sum(axis=1, keepdims=True)
DATA["xy"] = np.concatenate([DATA["x"], DATA["y"]])  # 24 samples, for the normality tests
DATA["x32"] = DATA["x"].astype(np.float32)
DATA["X32"] = DATA["X"].astype(np.float32)


# --- the calls --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    name: str  # what the user calls, as written in the table
    fn: Callable
    inputs: tuple[str, ...]  # keys of DATA
    why_no_jit: str | None  # why the client cannot run under jax.jit on any namespace
    rtol: float


CALLS: list[Call] = []


def call(name: str, *inputs: str, why_no_jit: str | None = None, rtol: float = RTOL) -> Callable:
    def register(fn: Callable) -> Callable:
        CALLS.append(Call(name, fn, inputs, why_no_jit, rtol))
        return fn

    return register


# Why a call cannot be traced on any namespace: the client's own Python control flow or host code,
# as "what: where or how" (the table adds the line the error came from).
ON_NUMPY = "computed on NumPy: SciPy converts the input with np.asarray for every namespace but CuPy"
BOOL_CHECK = "branches on the data"  # a Python bool of a traced value
MASK_READ = "reads through a boolean mask"  # a data-dependent shape
UNIQUE = "finds the distinct values: unique_values (a data-dependent shape)"
ITERATION = "iterates until convergence: Python loop conditions on the data"
FLOAT = "returns a Python float: float() of the result"
F32 = 1e-5  # float32 inputs: the results are float32 (NumPy's too)

# SciPy special: jax.scipy.special for jax.numpy, xp.special.<name> where xp has it, NumPy otherwise

call("scipy.special.erf", "x")(lambda x: special.erf(x))
call("scipy.special.erf[float32]", "x32", rtol=F32)(lambda x: special.erf(x))
call("scipy.special.gammaln", "pos")(lambda a: special.gammaln(a))
call("scipy.special.xlogy", "pos", "y")(lambda a, b: special.xlogy(a, b))
call("scipy.special.ndtr", "x")(lambda x: special.ndtr(x))
call("scipy.special.ndtri", "p")(lambda p: special.ndtri(p))
call("scipy.special.expit", "x")(lambda x: special.expit(x))
call("scipy.special.logit", "p")(lambda p: special.logit(p))
call("scipy.special.entr", "pos")(lambda a: special.entr(a))
call("scipy.special.rel_entr", "p", "pos")(lambda p, q: special.rel_entr(p, q))
call("scipy.special.logsumexp", "X")(lambda X: special.logsumexp(X, axis=0))
call("scipy.special.logsumexp[float32]", "X32", rtol=F32)(lambda X: special.logsumexp(X, axis=0))
call("scipy.special.softmax", "X")(lambda X: special.softmax(X, axis=1))
call("scipy.special.log_softmax", "X")(lambda X: special.log_softmax(X, axis=1))

# SciPy stats

call("scipy.stats.ttest_1samp", "x")(lambda x: tuple(stats.ttest_1samp(x, 0.1)))
call("scipy.stats.ttest_ind", "x", "y")(lambda a, b: tuple(stats.ttest_ind(a, b)))
call("scipy.stats.pearsonr", "x", "y")(lambda a, b: tuple(stats.pearsonr(a, b)))
call("scipy.stats.describe", "x")(lambda x: tuple(stats.describe(x)))
call("scipy.stats.zscore", "X")(lambda X: stats.zscore(X, axis=0))
call("scipy.stats.zscore[float32]", "X32", rtol=F32)(lambda X: stats.zscore(X, axis=0))
call("scipy.stats.skew", "x")(lambda x: stats.skew(x))
call("scipy.stats.kurtosis", "x")(lambda x: stats.kurtosis(x))
call("scipy.stats.variation", "pos")(lambda a: stats.variation(a))
call("scipy.stats.gmean", "pos")(lambda a: stats.gmean(a))
call("scipy.stats.hmean", "pos", why_no_jit=BOOL_CHECK + ": `if xp.any(a < 0)`")(lambda a: stats.hmean(a))
call("scipy.stats.gstd", "pos")(lambda a: stats.gstd(a))
call("scipy.stats.entropy", "p", "pos")(lambda p, q: (stats.entropy(p), stats.entropy(p, q)))
call("scipy.stats.differential_entropy", "x")(lambda x: stats.differential_entropy(x))
call("scipy.stats.moment", "x", why_no_jit=BOOL_CHECK + ": `if xp.any(order != xp.round(order))`")(
    lambda x: stats.moment(x, order=3)
)
call("scipy.stats.sem", "x")(lambda x: stats.sem(x))
call("scipy.stats.quantile", "x", "probs", why_no_jit=BOOL_CHECK + ": `if contains_nans:`")(
    lambda x, q: stats.quantile(x, q)
)
call("scipy.stats.tmean", "x")(lambda x: stats.tmean(x, (-1.0, 1.0)))
call("scipy.stats.trim_mean", "x")(lambda x: stats.trim_mean(x, 0.1))
call("scipy.stats.kstat", "x")(lambda x: stats.kstat(x, 2))
call("scipy.stats.circmean", "x")(lambda x: stats.circmean(x))
call("scipy.stats.directional_stats", "X")(
    lambda X: (lambda r: (r.mean_direction, r.mean_resultant_length))(stats.directional_stats(X))
)
call("scipy.stats.bartlett", "x", "y")(lambda a, b: tuple(stats.bartlett(a, b)))
call("scipy.stats.skewtest", "x")(lambda x: tuple(stats.skewtest(x)))
call("scipy.stats.normaltest", "xy")(lambda x: tuple(stats.normaltest(x)))
call("scipy.stats.rankdata", "x", why_no_jit=MASK_READ + ": the ties")(lambda x: stats.rankdata(x))

# SciPy's elementwise iterative solvers (the brackets and limits are arrays: SciPy takes the
# namespace from them)

call("scipy.optimize.elementwise.find_root", "x", why_no_jit=ITERATION)(
    lambda c: (
        elementwise.find_root(lambda t, c: t**3 - c, (c * 0 - 3, c * 0 + 3), args=(c,), tolerances={"xatol": 1e-6}).x
    )
)
call("scipy.integrate.tanhsinh", "x", why_no_jit=MASK_READ + ": `c[inf_a] = b[inf_a] - 1.`")(
    lambda c: (
        integrate.tanhsinh(lambda t, c: array_namespace(t).exp(c * t), c * 0, c * 0 + 1, args=(c,), maxlevel=3).integral
    )
)

# SciPy signal, ndimage, fft, cluster, spatial, integrate, interpolate, linalg, optimize

call("scipy.signal.convolve", "x", "kernel")(lambda a, k: signal.convolve(a, k))
call("scipy.signal.correlate", "x", "kernel")(lambda a, k: signal.correlate(a, k, mode="same"))
call("scipy.signal.fftconvolve", "x", "kernel")(lambda a, k: signal.fftconvolve(a, k))
call("scipy.signal.convolve2d", "img", "K2")(lambda a, k: signal.convolve2d(a, k, mode="same"))
call("scipy.signal.detrend", "x")(lambda x: signal.detrend(x))
call("scipy.signal.savgol_filter", "x", why_no_jit=ON_NUMPY)(lambda x: signal.savgol_filter(x, 5, 2))
call("scipy.signal.lfilter", "ba", "x", why_no_jit=ON_NUMPY)(lambda ba, x: signal.lfilter(ba[0], ba[1], x))
call("scipy.signal.sosfilt", "sos", "x", why_no_jit=ON_NUMPY)(lambda sos, x: signal.sosfilt(sos, x))
call("scipy.signal.envelope", "x")(lambda x: signal.envelope(x)[0])
call("scipy.signal.windows.hann", "x")(lambda x: signal.windows.hann(12, xp=array_namespace(x)) * x)
call("scipy.ndimage.gaussian_filter", "img", why_no_jit=ON_NUMPY)(lambda a: ndimage.gaussian_filter(a, 1.0))
call("scipy.ndimage.uniform_filter", "img", why_no_jit=ON_NUMPY)(lambda a: ndimage.uniform_filter(a, 3))
call("scipy.ndimage.median_filter", "img", why_no_jit=ON_NUMPY)(lambda a: ndimage.median_filter(a, 3))
call("scipy.ndimage.map_coordinates", "img", "coords")(lambda a, c: ndimage.map_coordinates(a, c, order=1))
call("scipy.fft.fft", "x")(lambda x: fft.fft(x))
call("scipy.fft.irfft", "x")(lambda x: fft.irfft(fft.rfft(x), n=12))
call("scipy.fft.fht", "x")(lambda x: fft.fht(x, 0.1, 0.0))
call("scipy.fft.dct", "x", why_no_jit=ON_NUMPY)(lambda x: fft.dct(x))
call("scipy.cluster.vq.whiten", "X")(lambda X: cluster.vq.whiten(X))
call("scipy.spatial.transform.Rotation", "quats", "vectors")(
    lambda q, v: (Rotation.from_quat(q).apply(v), Rotation.from_quat(q).mean().as_euler("xyz"))
)
call("scipy.integrate.cumulative_trapezoid", "x")(lambda x: integrate.cumulative_trapezoid(x))
call("scipy.integrate.romb", "x9")(lambda x: integrate.romb(x))
call("scipy.interpolate.RBFInterpolator", "points", "x", "queries")(
    lambda pts, values, q: interpolate.RBFInterpolator(pts, values[:8])(q)
)
call("scipy.linalg.fiedler", "x")(lambda x: linalg.fiedler(x[:5]))
call("scipy.optimize.rosen", "x")(lambda x: optimize.rosen(x))

# array-api-extra

call("xpx.cov", "X")(lambda X: xpx.cov(X.T))
call("xpx.cov[float32]", "X32", rtol=F32)(lambda X: xpx.cov(X.T))
call("xpx.atleast_nd", "x")(lambda x: xpx.atleast_nd(x, ndim=3))
call("xpx.expand_dims", "x")(lambda x: xpx.expand_dims(x, axis=(0, 2)))
call("xpx.kron", "X", "K2")(lambda a, b: xpx.kron(a, b))
call("xpx.pad", "X")(lambda X: xpx.pad(X, 2))
call("xpx.sinc", "x")(lambda x: xpx.sinc(x))
call("xpx.isclose", "x", "y")(lambda a, b: xpx.isclose(a, a + b * 1e-9))
call("xpx.one_hot", "labels")(lambda labels: xpx.one_hot(labels, 3))
call("xpx.apply_where", "x")(lambda x: xpx.apply_where(x > 0, (x,), lambda v: v**0.5, fill_value=0.0))
call("xpx.at.set", "x")(lambda x: xpx.at(x)[2:5].set(0.0))
call("xpx.at.add", "x", "index")(lambda x, i: xpx.at(x)[i].add(1.0))
call("xpx.at.min[float32]", "x32")(lambda x: xpx.at(x)[:4].min(0.0))
call("xpx.create_diagonal", "x")(lambda x: xpx.create_diagonal(x))
call("xpx.nan_to_num", "gaps")(lambda x: xpx.nan_to_num(x))
call("xpx.nanmean", "nans")(lambda x: xpx.nanmean(x, axis=0))
call("xpx.searchsorted", "sorted", "x")(lambda a, v: xpx.searchsorted(a, v))
call("xpx.partition", "x")(lambda x: xpx.partition(x, 4)[4])
call("xpx.nunique", "labels")(lambda labels: xpx.nunique(labels))
call("xpx.setdiff1d", "labels", "labels_pred", why_no_jit=UNIQUE)(lambda a, b: xpx.setdiff1d(a, b))

# scikit-learn, with array_api_dispatch=True

if sklearn is not None:
    call("sklearn.metrics.accuracy_score", "labels", "labels_pred", why_no_jit=UNIQUE)(metrics.accuracy_score)
    call(
        "sklearn.metrics.confusion_matrix",
        "labels",
        "labels_pred",
        why_no_jit="computed on NumPy: the labels are converted with numpy.asarray",
    )(metrics.confusion_matrix)
    call("sklearn.metrics.log_loss", "labels", "proba", why_no_jit=BOOL_CHECK + ": `if xp.max(y_prob) > 1`")(
        metrics.log_loss
    )
    call(
        "sklearn.metrics.r2_score",
        "target",
        "target_pred",
        why_no_jit=MASK_READ + ": `scores[valid] = 1 - num[valid] / den[valid]`",
    )(metrics.r2_score)
    call("sklearn.metrics.mean_squared_error", "target", "target_pred", why_no_jit=FLOAT)(metrics.mean_squared_error)
    call(
        "sklearn.metrics.mean_tweedie_deviance", "pos", "p", why_no_jit=BOOL_CHECK + ": `if xp.any(y_true < 0) or ...`"
    )(lambda a, b: metrics.mean_tweedie_deviance(a, b, power=1.5))
    call("sklearn.metrics.pairwise.euclidean_distances", "X", "X2")(metrics.pairwise.euclidean_distances)
    call("sklearn.metrics.pairwise.manhattan_distances", "X", "X2")(metrics.pairwise.manhattan_distances)
    call("sklearn.metrics.pairwise.rbf_kernel", "X", "X2")(lambda a, b: metrics.pairwise.rbf_kernel(a, b, gamma=0.5))
    call("sklearn.metrics.pairwise.linear_kernel", "X", "X2")(metrics.pairwise.linear_kernel)
    call("sklearn.metrics.pairwise.cosine_similarity", "X", "X2")(metrics.pairwise.cosine_similarity)
    call("sklearn.metrics.pairwise.paired_euclidean_distances", "X", "X2")(metrics.pairwise.paired_euclidean_distances)
    call("sklearn.preprocessing.StandardScaler", "X", why_no_jit=BOOL_CHECK + ": `if xp.any(X_nan_mask)`")(
        lambda X: preprocessing.StandardScaler().fit_transform(X)
    )
    call(
        "sklearn.preprocessing.StandardScaler[float32]",
        "X32",
        rtol=F32,
        why_no_jit=BOOL_CHECK + ": `if xp.any(X_nan_mask)`",
    )(lambda X: preprocessing.StandardScaler().fit_transform(X))
    call("sklearn.preprocessing.MinMaxScaler", "X", why_no_jit=BOOL_CHECK + ": nanmin's `if xp.any(mask)`")(
        lambda X: preprocessing.MinMaxScaler().fit_transform(X)
    )
    call("sklearn.preprocessing.MaxAbsScaler", "X", why_no_jit=BOOL_CHECK + ": nanmax's `if xp.any(mask)`")(
        lambda X: preprocessing.MaxAbsScaler().fit_transform(X)
    )
    call("sklearn.preprocessing.Normalizer", "X")(lambda X: preprocessing.Normalizer().fit_transform(X))
    call("sklearn.preprocessing.KernelCenterer", "X")(lambda X: preprocessing.KernelCenterer().fit_transform(X @ X.T))
    call("sklearn.preprocessing.PolynomialFeatures", "X")(
        lambda X: preprocessing.PolynomialFeatures(2).fit_transform(X)
    )
    call("sklearn.preprocessing.LabelEncoder", "labels", why_no_jit=UNIQUE)(
        lambda y: preprocessing.LabelEncoder().fit_transform(y)
    )
    call("sklearn.decomposition.PCA", "X")(lambda X: PCA(n_components=2, svd_solver="full").fit_transform(X))
    call("sklearn.kernel_approximation.Nystroem", "X")(
        lambda X: kernel_approximation.Nystroem(n_components=5, random_state=0).fit_transform(X)
    )
    call("sklearn.discriminant_analysis.LinearDiscriminantAnalysis", "Xc", "labels", why_no_jit=UNIQUE)(
        lambda X, y: discriminant_analysis.LinearDiscriminantAnalysis().fit(X, y).predict_proba(X)
    )
    call("sklearn.naive_bayes.GaussianNB", "Xc", "labels", why_no_jit=UNIQUE)(
        lambda X, y: naive_bayes.GaussianNB().fit(X, y).predict_proba(X)
    )
    call("sklearn.linear_model.Ridge", "X", "target", why_no_jit=MASK_READ + ": the SVD solver's `s[s > 1e-15]`")(
        lambda X, y: linear_model.Ridge(alpha=0.5, solver="svd").fit(X, y).predict(X)
    )
    call("sklearn.model_selection.train_test_split", "X", "target")(
        lambda X, y: model_selection.train_test_split(X, y, random_state=0)
    )


# --- running them -----------------------------------------------------------------------------


def leaves(result) -> tuple:
    """The arrays (and Python scalars) of a result, in order: nested tuples flattened."""
    if isinstance(result, tuple | list):
        return tuple(leaf for item in result for leaf in leaves(item))
    return (result,)


def convert(value: np.ndarray, mode: str):
    if mode == "numpy":
        return value.copy()
    if mode.startswith("xp"):
        return xp.asarray(value)
    return jnp.asarray(value)


def where(error: BaseException) -> dict[str, str]:
    """Where a call failed: the innermost frames in xp and in the client (paths from the package),
    and the SciPy special function that SciPy computed on NumPy when that was the failure."""
    found = {}
    tb = error.__traceback__
    while tb is not None:
        path = Path(tb.tb_frame.f_code.co_filename)
        parts = path.parts
        if "xp" in parts and path.is_relative_to(ROOT):
            found["xp"] = f"{path.relative_to(ROOT).as_posix()}:{tb.tb_lineno}"
        for package in ("scipy", "sklearn", "array_api_extra", "array_api_compat"):
            if package in parts and "site-packages" in parts:
                tail = parts[parts.index("site-packages") + 1 :]
                found["client"] = f"{'/'.join(tail)}:{tb.tb_lineno}"
        if parts[-2:] == ("special", "_support_alternative_backends.py") and "_f" in tb.tb_frame.f_locals:
            # SciPy's last resort for a namespace without a native implementation: NumPy
            found["special_on_numpy"] = getattr(tb.tb_frame.f_locals["_f"], "__name__", "?")
        tb = tb.tb_next
    return found


def describe(error: BaseException) -> str:
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    message = re.sub(r"0x[0-9a-f]+", "0x...", message)
    if len(message) > 160:
        message = message[:157] + "..."
    return f"error: {type(error).__name__}: {message}"


def compare(got: tuple, expected: tuple, mode: str, rtol: float) -> str:
    """``pass`` if ``got`` (a mode's result) is NumPy's result in the mode's arrays: the same
    number of results, each of the namespace's array type (or the same Python scalar type as
    NumPy's), shape, dtype and values."""
    array_type = xp.Array if mode.startswith("xp") else jax.Array
    if len(got) != len(expected):
        return f"mismatch: {len(got)} results, NumPy gives {len(expected)}"
    for index, (a, b) in enumerate(zip(got, expected, strict=True)):
        label = f"result {index}: " if len(expected) > 1 else ""
        scalar = type(a) is type(b) and isinstance(b, bool | int | float | complex)
        if not (isinstance(a, array_type) or scalar):
            kind = "xp.Array" if mode.startswith("xp") else "jax.Array"
            return f"mismatch: {label}a {type(a).__module__}.{type(a).__name__}, not a {kind}"
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"mismatch: {label}shape {a.shape}, NumPy gives {b.shape}"
        if a.dtype != b.dtype:
            return f"mismatch: {label}dtype {a.dtype}, NumPy gives {b.dtype}"
        try:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=ATOL)
        except AssertionError:
            worst = np.max(np.abs(a.astype(complex) - b.astype(complex)))
            return f"mismatch: {label}values differ by up to {worst:.3g}"
    return "pass"


def run(entry: Call, mode: str) -> tuple[str, object]:
    """One call in one mode: (outcome, leaves or the exception)."""

    def flat(*args):
        return leaves(entry.fn(*args))

    fn = jax.jit(flat) if mode.endswith("_jit") else flat
    try:
        args = [convert(DATA[name], mode) for name in entry.inputs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ran", fn(*args)
    except Exception as error:
        return describe(error), error


def probe(calls: list[Call]) -> dict:
    rows = []
    for entry in calls:
        started = time.perf_counter()
        outcomes, places = {}, {}
        reference = None
        for mode in MODES:
            outcome, value = run(entry, mode)
            if outcome == "ran":
                if mode == "numpy":
                    reference = value
                    outcome = "pass"
                else:
                    outcome = compare(value, reference, mode, entry.rtol) if reference is not None else "ran"
            else:
                places[mode] = where(value)
            outcomes[mode] = outcome
        rows.append(
            {
                "name": entry.name,
                "outcomes": outcomes,
                "where": places,
                "why_no_jit": entry.why_no_jit,
                "seconds": round(time.perf_counter() - started, 2),
            }
        )
    return {
        "versions": {
            "scipy": scipy.__version__,
            "sklearn": sklearn.__version__ if sklearn is not None else None,
            "array_api_extra": xpx.__version__,
            "jax": jax.__version__,
            "numpy": np.__version__,
        },
        # the functions of xp.special, where xp has that module (SciPy then calls them)
        "xp_special": sorted(name for name in dir(xp.special) if not name.startswith("_"))
        if hasattr(xp, "special")
        else None,
        "calls": rows,
    }


# --- the markdown table -----------------------------------------------------------------------


def load_known() -> object:
    """tests/test_clients.py, where the known xp failures and their reasons are listed."""
    spec = importlib.util.spec_from_file_location("test_clients", Path(__file__).with_name("test_clients.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def short(outcome: str) -> str:
    """An outcome for a table cell: pass, mismatch, or the exception's type."""
    return outcome.split(":")[1].strip() if outcome.startswith("error") else outcome.split(":")[0]


def reasons(row: dict, known: object, special: set[str]) -> list[str]:
    """Why the row's failing modes fail: the known xp failures' reasons and the client's reason."""
    name, outcomes = row["name"], row["outcomes"]
    found = []
    if outcomes["xp"] != "pass" and name in known.XP_EAGER_KNOWN:
        found.append(f"xp: {known.XP_EAGER_KNOWN[name]}")
    if outcomes["xp_jit"] != "pass":
        fallback = row["where"].get("xp_jit", {}).get("special_on_numpy")
        if name in known.NEEDS_XP_SPECIAL and fallback is not None and fallback not in special:
            found.append(f"xp jit: {known.special_reason(fallback)}")
        elif name in known.XP_JIT_KNOWN:
            found.append(f"xp jit: {known.XP_JIT_KNOWN[name]}")
    if row["why_no_jit"]:
        found.append(f"jit: {row['why_no_jit']}")
    if len(found) > 1 and found[0].removeprefix("xp: ") == found[1].removeprefix("xp jit: "):
        found[:2] = [f"xp, xp jit: {found[0].removeprefix('xp: ')}"]  # the same reason eagerly and under jit
    return found


def markdown(table: dict) -> str:
    known = load_known()
    special = set(table["xp_special"] or ())
    rows = table["calls"]
    count = {mode: sum(row["outcomes"][mode] == "pass" for row in rows) for mode in MODES}
    xp_only = [r["name"] for r in rows if r["outcomes"]["jnp_jit"] == "pass" and r["outcomes"]["xp_jit"] != "pass"]
    jnp_only = [r["name"] for r in rows if r["outcomes"]["xp_jit"] == "pass" and r["outcomes"]["jnp_jit"] != "pass"]
    categories: dict[str, int] = {}
    for row in rows:
        if row["name"] in xp_only:
            for reason in reasons(row, known, special):
                mode, _, text = reason.partition(": ")
                if "xp jit" in mode:
                    category = text.split(": ")[0]
                    category = "needs xp.special" if category.startswith("needs xp.special") else category
                    categories[category] = categories.get(category, 0) + 1
    why_xp_only = ", ".join(f"{category}: {count}" for category, count in categories.items()) or "none"
    versions = ", ".join(f"{name} {version}" for name, version in table["versions"].items() if version)
    lines = [
        "# Client libraries on xp and on jax.numpy",
        "",
        "Generated by `python tests/clients_probe.py --markdown docs/clients.md`; checked by",
        "`tests/test_clients.py`. Each row is a real call of a library that finds the namespace from its",
        "array arguments: SciPy with `SCIPY_ARRAY_API=1`, array-api-extra, and scikit-learn with",
        "`array_api_dispatch=True` (and `assume_finite=True`, which skips a finiteness check that reads",
        "the data). The inputs are small float64 (or int64, or where marked float32) arrays, with JAX's",
        "64-bit mode on. A mode passes when its result has NumPy's values, shapes and dtypes in the",
        "namespace's arrays; *jit* is the call inside `jax.jit` (a function of the arrays that returns",
        "the library's result).",
        "",
        f"Versions: {versions}; `xp.special` {'absent' if table['xp_special'] is None else 'present'}.",
        "",
        "| passes | NumPy | xp | xp under jit | jax.numpy | jax.numpy under jit |",
        "|---|---|---|---|---|---|",
        f"| of {len(rows)} calls | {count['numpy']} | {count['xp']} | {count['xp_jit']} | {count['jnp']} "
        f"| {count['jnp_jit']} |",
        "",
        f"Under jit, xp fails where jax.numpy passes in {len(xp_only)} calls ({why_xp_only}), and xp "
        f"passes where jax.numpy fails in {len(jnp_only)}: " + ", ".join(f"`{name}`" for name in jnp_only) + ".",
        "",
        "| call | xp | xp jit | jnp | jnp jit | why |",
        "|---|---|---|---|---|---|",
    ]
    details = []
    for row in rows:
        outcomes = row["outcomes"]
        cells = [short(outcomes[mode]) for mode in ("xp", "xp_jit", "jnp", "jnp_jit")]
        why = reasons(row, known, special)
        failing = [mode for mode in MODES if outcomes[mode] != "pass"]
        if failing:
            details.append(f"- `{row['name']}`: " + "; ".join(why) if why else f"- `{row['name']}`")
        by_outcome: dict[str, list[str]] = {}
        for mode in failing:
            place = row["where"].get(mode, {}).get("client") or row["where"].get(mode, {}).get("xp")
            text = outcomes[mode] + (f" (`{place}`)" if place else "")
            by_outcome.setdefault(text, []).append(mode)
        details += [f"  - {', '.join(modes)}: {text}" for text, modes in by_outcome.items()]
        summary = "; ".join(": ".join(reason.split(": ", 2)[:2]) for reason in why)  # mode: what
        lines.append(f"| `{row['name']}` | {' | '.join(cells)} | {summary} |")
    lines += ["", "## The failures", "", "The reasons, then each failing mode's error and where it came from.", ""]
    return "\n".join(lines + details) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", type=Path, help="also write the table as markdown to this file")
    parser.add_argument("--only", help="run only the calls whose name contains this text")
    options = parser.parse_args()
    if sklearn is not None:
        # assume_finite skips the check that the data is finite (a bool of a traced value under
        # jax.jit); the inputs here are finite, so it changes no result
        sklearn.set_config(array_api_dispatch=True, assume_finite=True)
    calls = [entry for entry in CALLS if options.only is None or options.only in entry.name]
    table = probe(calls)
    if options.markdown:
        options.markdown.write_text(markdown(table))
    json.dump(table, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
