"""``xp.special``: the special functions that SciPy's array API support looks up in a namespace.

With ``SCIPY_ARRAY_API=1``, ``scipy.special.erf(x)`` on an xp array finds xp as the array's
namespace and, for each function of its table of element-wise special functions
(``scipy/special/_support_alternative_backends.py``), calls ``xp.special.<name>`` where that
exists; otherwise it converts to NumPy, which fails under ``jax.jit``. This module provides
those functions under SciPy's names and signatures (``gammainc(a, x)``, ``betainc(a, b, x)``,
``zeta(x, q=None)``, ...), so SciPy's special functions, and ``scipy.stats`` code built on them,
run on xp arrays eagerly and under ``jax.jit``, ``vmap`` and ``grad``. The functions SciPy's
table lists that are not here (JAX has no way to compute them: inverse incomplete beta and
gamma functions, Bessel functions J, Y, K, Legendre functions) are listed with their reasons in
docs/special.md, with the domain in which each function here is computed.

Each function takes any ``ArrayLike`` (xp, JAX and NumPy arrays, Python scalars) and returns an
``xp.Array``. dtypes follow SciPy's rules on the array API dtypes: integer and boolean input is
computed in the default real floating dtype, float32 stays float32, float64 stays float64, and
the operands of a function of several arguments promote and broadcast as in xp's element-wise
functions. Complex input is accepted where SciPy and JAX both compute the function on complex
numbers (``gamma``, ``loggamma``, ``erfcx``, ``xlogy``, ``xlog1py``, ``sinc``); elsewhere it is
a TypeError. Outside a function's domain the result is SciPy's value where one is defined by a
limit, and NaN otherwise: never a number other than SciPy's. Sparse arguments are computed on
dense copies, with a ``SparseEfficiencyWarning`` (xp's routing).
"""

from __future__ import annotations

from xp import _boundary as boundary
from xp import _dtypes as dt
from xp._array import Array
from xp._errors import fail
from xp._routing import api
from xp._typing import ArrayLike
from xp.special import _elementary as elementary
from xp.special import _error_functions as error_functions
from xp.special import _gamma as gamma_functions
from xp.special import _integrals as integrals
from xp.special import _probability as probability
from xp.special._kernel import call

__all__ = [
    "bdtr", "bdtrc", "betainc", "betaincc", "betaln", "binom", "boxcox", "boxcox1p", "cbrt", "chdtr",
    "chdtrc", "cosdg", "cosm1", "cotdg", "digamma", "ellipk", "ellipkm1", "entr", "erf", "erfc", "erfcx",
    "erfinv", "exp1", "exp2", "exp10", "expi", "expit", "expn", "exprel", "fdtr", "fdtrc", "gamma",
    "gammainc", "gammaincc", "gammaln", "gammasgn", "gdtr", "gdtrc", "huber", "hyp1f1", "i0", "i0e", "i1",
    "i1e", "inv_boxcox", "inv_boxcox1p", "kl_div", "log_ndtr", "loggamma", "logit", "multigammaln",
    "nbdtr", "nbdtrc", "ndtr", "ndtri", "pdtr", "pdtrc", "poch", "polygamma", "pseudo_huber", "psi",
    "radian", "rel_entr", "rgamma", "sinc", "sindg", "spence", "stdtr", "tandg", "xlog1py", "xlogy",
    "zeta", "zetac",
]  # fmt: skip


# --- the functions SciPy defines in Python (keyword arguments allowed, as there) ---------------


@api
def multigammaln(a: ArrayLike, d: int) -> Array:
    """Logarithm of the multivariate gamma function of dimension ``d`` (a Python int >= 1).

    Defined for a > (d - 1) / 2; elsewhere the result is NaN (SciPy raises a ValueError there,
    which a function of traced values cannot).
    """
    dimension = boundary.integer(d, "d")
    if dimension < 1:
        fail(ValueError, f"d must be a positive integer, got {dimension}")
    boundary.check_int_range(dimension, dt.default_int(), "d")  # (JAX sums d terms, counted in a default int)
    boundary.allocation((dimension,), dt.default_float(), None, "d")  # (of the d terms)
    return call(gamma_functions.MULTIGAMMALN, a, static=(dimension,))


@api
def polygamma(n: ArrayLike, x: ArrayLike) -> Array:
    """Polygamma function, the n-th derivative of digamma, for integer-valued n >= 0 (NaN for
    other n, as in SciPy)."""
    return call(gamma_functions.POLYGAMMA, n, x)


@api
def sinc(x: ArrayLike) -> Array:
    """Normalized sinc function sin(pi x) / (pi x), 1 at 0."""
    return call(elementary.SINC, x)


@api
def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Array:
    """Hurwitz zeta function sum((k + q)**-x for k >= 0), or Riemann's (q = 1) without ``q``.

    Hurwitz's for x >= 1 (inf at x = 1), NaN for x < 1; Riemann's (without ``q``) for every x,
    continued below 1 as SciPy does (JAX's is NaN there).
    """
    if q is None:
        return call(gamma_functions.RIEMANN_ZETA, x)
    return call(gamma_functions.ZETA, x, q)


# --- SciPy's ufuncs (positional arguments, as a ufunc takes them) ------------------------------


@api
def bdtr(k: ArrayLike, n: ArrayLike, p: ArrayLike, /) -> Array:
    """Binomial cumulative distribution function: the terms 0 to floor(k) of n trials with success probability p."""
    return call(probability.BDTR, k, n, p)


@api
def bdtrc(k: ArrayLike, n: ArrayLike, p: ArrayLike, /) -> Array:
    """Binomial survival function, computed as a complement."""
    return call(probability.BDTRC, k, n, p)


@api
def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike, /) -> Array:
    """Regularized incomplete beta function I_x(a, b)."""
    return call(probability.BETAINC, a, b, x)


@api
def betaincc(a: ArrayLike, b: ArrayLike, x: ArrayLike, /) -> Array:
    """Complement 1 - I_x(a, b) of the regularized incomplete beta function, computed as a complement."""
    return call(probability.BETAINCC, a, b, x)


@api
def betaln(a: ArrayLike, b: ArrayLike, /) -> Array:
    """Natural logarithm of the absolute value of the beta function B(a, b)."""
    return call(gamma_functions.BETALN, a, b)


@api
def binom(x: ArrayLike, y: ArrayLike, /) -> Array:
    """Binomial coefficient x choose y, for x >= 0 and y >= 0 (NaN elsewhere)."""
    return call(gamma_functions.BINOM, x, y)


@api
def boxcox(x: ArrayLike, lmbda: ArrayLike, /) -> Array:
    """Box-Cox transformation (x**lmbda - 1) / lmbda (log x at lmbda = 0)."""
    return call(elementary.BOXCOX, x, lmbda)


@api
def boxcox1p(x: ArrayLike, lmbda: ArrayLike, /) -> Array:
    """Box-Cox transformation of 1 + x."""
    return call(elementary.BOXCOX1P, x, lmbda)


@api
def cbrt(x: ArrayLike, /) -> Array:
    """Real cube root of x."""
    return call(elementary.CBRT, x)


@api
def chdtr(v: ArrayLike, x: ArrayLike, /) -> Array:
    """Chi-square cumulative distribution function with v degrees of freedom."""
    return call(probability.CHDTR, v, x)


@api
def chdtrc(v: ArrayLike, x: ArrayLike, /) -> Array:
    """Chi-square survival function (1 - chdtr), computed as a complement."""
    return call(probability.CHDTRC, v, x)


@api
def cosdg(x: ArrayLike, /) -> Array:
    """Cosine of x given in degrees (exact at multiples of 90)."""
    return call(elementary.COSDG, x)


@api
def cosm1(x: ArrayLike, /) -> Array:
    """cos(x) - 1, accurate for small x."""
    return call(elementary.COSM1, x)


@api
def cotdg(x: ArrayLike, /) -> Array:
    """Cotangent of x given in degrees."""
    return call(elementary.COTDG, x)


@api
def digamma(z: ArrayLike, /) -> Array:
    """Digamma function, the logarithmic derivative of gamma (SciPy's alias of psi)."""
    return call(gamma_functions.DIGAMMA, z)


@api
def ellipk(m: ArrayLike, /) -> Array:
    """Complete elliptic integral of the first kind K(m)."""
    return call(integrals.ELLIPK, m)


@api
def ellipkm1(p: ArrayLike, /) -> Array:
    """Complete elliptic integral of the first kind K(1 - p), accurate near p = 0."""
    return call(integrals.ELLIPKM1, p)


@api
def entr(x: ArrayLike, /) -> Array:
    """Elementwise entropy -x log x (0 at 0, -inf for x < 0)."""
    return call(elementary.ENTR, x)


@api
def erf(z: ArrayLike, /) -> Array:
    """Error function."""
    return call(error_functions.ERF, z)


@api
def erfc(x: ArrayLike, /) -> Array:
    """Complementary error function 1 - erf(x)."""
    return call(error_functions.ERFC, x)


@api
def erfcx(x: ArrayLike, /) -> Array:
    """Scaled complementary error function exp(x**2) erfc(x)."""
    return call(error_functions.ERFCX, x)


@api
def erfinv(y: ArrayLike, /) -> Array:
    """Inverse of the error function."""
    return call(error_functions.ERFINV, y)


@api
def exp1(z: ArrayLike, /) -> Array:
    """Exponential integral E1(x)."""
    return call(integrals.EXP1, z)


@api
def exp10(x: ArrayLike, /) -> Array:
    """10**x."""
    return call(elementary.EXP10, x)


@api
def exp2(x: ArrayLike, /) -> Array:
    """2**x."""
    return call(elementary.EXP2, x)


@api
def expi(x: ArrayLike, /) -> Array:
    """Exponential integral Ei(x)."""
    return call(integrals.EXPI, x)


@api
def expit(x: ArrayLike, /) -> Array:
    """Logistic sigmoid 1 / (1 + exp(-x))."""
    return call(error_functions.EXPIT, x)


@api
def expn(n: ArrayLike, x: ArrayLike, /) -> Array:
    """Generalized exponential integral E_n(x), for integer-valued n >= 0 (NaN for others)."""
    return call(integrals.EXPN, n, x)


@api
def exprel(x: ArrayLike, /) -> Array:
    """Relative error exponential (exp(x) - 1) / x."""
    return call(elementary.EXPREL, x)


@api
def fdtr(dfn: ArrayLike, dfd: ArrayLike, x: ArrayLike, /) -> Array:
    """F cumulative distribution function."""
    return call(probability.FDTR, dfn, dfd, x)


@api
def fdtrc(dfn: ArrayLike, dfd: ArrayLike, x: ArrayLike, /) -> Array:
    """F survival function, computed as a complement."""
    return call(probability.FDTRC, dfn, dfd, x)


@api
def gamma(z: ArrayLike, /) -> Array:
    """Gamma function."""
    return call(gamma_functions.GAMMA, z)


@api
def gammainc(a: ArrayLike, x: ArrayLike, /) -> Array:
    """Regularized lower incomplete gamma function P(a, x)."""
    return call(probability.GAMMAINC, a, x)


@api
def gammaincc(a: ArrayLike, x: ArrayLike, /) -> Array:
    """Regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return call(probability.GAMMAINCC, a, x)


@api
def gammaln(x: ArrayLike, /) -> Array:
    """Logarithm of the absolute value of the gamma function."""
    return call(gamma_functions.GAMMALN, x)


@api
def gammasgn(x: ArrayLike, /) -> Array:
    """Sign of the gamma function."""
    return call(gamma_functions.GAMMASGN, x)


@api
def gdtr(a: ArrayLike, b: ArrayLike, x: ArrayLike, /) -> Array:
    """Gamma cumulative distribution function with rate a and shape b."""
    return call(probability.GDTR, a, b, x)


@api
def gdtrc(a: ArrayLike, b: ArrayLike, x: ArrayLike, /) -> Array:
    """Gamma survival function, computed as a complement."""
    return call(probability.GDTRC, a, b, x)


@api
def huber(delta: ArrayLike, r: ArrayLike, /) -> Array:
    """Huber loss."""
    return call(elementary.HUBER, delta, r)


@api
def hyp1f1(a: ArrayLike, b: ArrayLike, x: ArrayLike, /) -> Array:
    """Confluent hypergeometric function 1F1(a; b; x), for a, b > 0 and x >= 0 (NaN elsewhere)."""
    return call(integrals.HYP1F1, a, b, x)


@api
def i0(x: ArrayLike, /) -> Array:
    """Modified Bessel function of the first kind of order 0."""
    return call(integrals.I0, x)


@api
def i0e(x: ArrayLike, /) -> Array:
    """Exponentially scaled modified Bessel function of order 0, exp(-|x|) i0(x)."""
    return call(integrals.I0E, x)


@api
def i1(x: ArrayLike, /) -> Array:
    """Modified Bessel function of the first kind of order 1."""
    return call(integrals.I1, x)


@api
def i1e(x: ArrayLike, /) -> Array:
    """Exponentially scaled modified Bessel function of order 1, exp(-|x|) i1(x)."""
    return call(integrals.I1E, x)


@api
def inv_boxcox(y: ArrayLike, lmbda: ArrayLike, /) -> Array:
    """Inverse of the Box-Cox transformation."""
    return call(elementary.INV_BOXCOX, y, lmbda)


@api
def inv_boxcox1p(y: ArrayLike, lmbda: ArrayLike, /) -> Array:
    """Inverse of the Box-Cox transformation of 1 + x."""
    return call(elementary.INV_BOXCOX1P, y, lmbda)


@api
def kl_div(x: ArrayLike, y: ArrayLike, /) -> Array:
    """Elementwise function for the Kullback-Leibler divergence, x log(x / y) - x + y."""
    return call(elementary.KL_DIV, x, y)


@api
def log_ndtr(x: ArrayLike, /) -> Array:
    """Logarithm of the standard normal cumulative distribution function."""
    return call(error_functions.LOG_NDTR, x)


@api
def loggamma(z: ArrayLike, /) -> Array:
    """Principal branch of the logarithm of the gamma function."""
    return call(gamma_functions.LOGGAMMA, z)


@api
def logit(x: ArrayLike, /) -> Array:
    """Logit function log(x / (1 - x))."""
    return call(error_functions.LOGIT, x)


@api
def nbdtr(k: ArrayLike, n: ArrayLike, p: ArrayLike, /) -> Array:
    """Negative binomial cumulative distribution function."""
    return call(probability.NBDTR, k, n, p)


@api
def nbdtrc(k: ArrayLike, n: ArrayLike, p: ArrayLike, /) -> Array:
    """Negative binomial survival function, computed as a complement."""
    return call(probability.NBDTRC, k, n, p)


@api
def ndtr(x: ArrayLike, /) -> Array:
    """Standard normal cumulative distribution function."""
    return call(error_functions.NDTR, x)


@api
def ndtri(y: ArrayLike, /) -> Array:
    """Inverse of ndtr."""
    return call(error_functions.NDTRI, y)


@api
def pdtr(k: ArrayLike, m: ArrayLike, /) -> Array:
    """Poisson cumulative distribution function."""
    return call(probability.PDTR, k, m)


@api
def pdtrc(k: ArrayLike, m: ArrayLike, /) -> Array:
    """Poisson survival function, computed as a complement."""
    return call(probability.PDTRC, k, m)


@api
def poch(z: ArrayLike, m: ArrayLike, /) -> Array:
    """Pochhammer symbol gamma(z + m) / gamma(z), for z > 0 and z + m > 0 (NaN elsewhere)."""
    return call(gamma_functions.POCH, z, m)


@api
def pseudo_huber(delta: ArrayLike, r: ArrayLike, /) -> Array:
    """Pseudo-Huber loss delta**2 (sqrt(1 + (r / delta)**2) - 1)."""
    return call(elementary.PSEUDO_HUBER, delta, r)


@api
def psi(z: ArrayLike, /) -> Array:
    """Digamma function, the logarithmic derivative of gamma."""
    return call(gamma_functions.PSI, z)


@api
def radian(d: ArrayLike, m: ArrayLike, s: ArrayLike, /) -> Array:
    """Degrees, arc minutes and arc seconds converted to radians."""
    return call(elementary.RADIAN, d, m, s)


@api
def rel_entr(x: ArrayLike, y: ArrayLike, /) -> Array:
    """Elementwise function for relative entropy, x log(x / y)."""
    return call(elementary.REL_ENTR, x, y)


@api
def rgamma(z: ArrayLike, /) -> Array:
    """Reciprocal of the gamma function (0 at its poles)."""
    return call(gamma_functions.RGAMMA, z)


@api
def sindg(x: ArrayLike, /) -> Array:
    """Sine of x given in degrees (exact at multiples of 90)."""
    return call(elementary.SINDG, x)


@api
def spence(z: ArrayLike, /) -> Array:
    """Spence's function (the dilogarithm), for real z."""
    return call(integrals.SPENCE, z)


@api
def stdtr(df: ArrayLike, t: ArrayLike, /) -> Array:
    """Student's t cumulative distribution function."""
    return call(probability.STDTR, df, t)


@api
def tandg(x: ArrayLike, /) -> Array:
    """Tangent of x given in degrees."""
    return call(elementary.TANDG, x)


@api
def xlog1py(x: ArrayLike, y: ArrayLike, /) -> Array:
    """x * log1p(y), 0 where x = 0."""
    return call(elementary.XLOG1PY, x, y)


@api
def xlogy(x: ArrayLike, y: ArrayLike, /) -> Array:
    """x * log(y), 0 where x = 0."""
    return call(elementary.XLOGY, x, y)


@api
def zetac(x: ArrayLike, /) -> Array:
    """Riemann zeta function minus 1, continued below x = 1 as SciPy does."""
    return call(gamma_functions.ZETAC, x)


def __dir__() -> list[str]:
    # the namespace is the module's functions (``__all__``), not the names its code imports
    return sorted(__all__)
