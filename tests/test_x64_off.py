"""JAX's 64-bit mode off (JAX's default): xp tells the truth and never truncates silently.

These run in a subprocess, since the mode is process-wide JAX configuration that xp never
changes.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHECKS = textwrap.dedent(
    """
    import jax, numpy as np, pytest
    import xp

    assert not jax.config.jax_enable_x64
    info = xp.__array_namespace_info__()
    assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32",
                                  "float32", "complex64"}

    # Python scalars and sequences take the 32-bit defaults: the standard's rule, no truncation
    assert xp.asarray(1.5).dtype == xp.float32 and xp.asarray([1, 2]).dtype == xp.int32

    # 64-bit data or requests are errors, not silent 32-bit results
    for request in (lambda: xp.zeros(2, dtype=xp.float64), lambda: xp.asarray(np.ones(2)),
                    lambda: xp.asarray(np.arange(3)), lambda: xp.astype(xp.ones(2), xp.int64),
                    lambda: xp.asarray(1, dtype="int64")):
        with pytest.raises(TypeError, match="64-bit mode"):
            request()
    # ... unless the 32-bit conversion is asked for explicitly
    assert xp.asarray(np.ones(2), dtype=xp.float32).dtype == xp.float32
    with pytest.raises(OverflowError):
        xp.asarray([2**40])
    with pytest.raises(OverflowError):
        xp.asarray([1], dtype=xp.int32) + 2**40

    # promotions whose result needs 64 bits are errors too
    with pytest.raises(TypeError, match="64-bit mode"):
        xp.asarray([1], dtype=xp.int32) + xp.asarray([1], dtype=xp.uint32)

    # dtype queries still know all 13 dtypes
    assert xp.finfo(xp.float64).bits == 64 and xp.iinfo(xp.int64).bits == 64
    assert xp.can_cast(xp.int32, xp.int64) and xp.isdtype(xp.float64, "real floating")

    # the rest works as with 64-bit mode on
    x = xp.asarray([1.0, 2.0])
    assert (jax.jit(lambda v: v * 2 + 1)(x)).jax.tolist() == [3.0, 5.0]
    print("ok")
    """
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["JAX_ENABLE_X64"] = "0"
    env.setdefault("HYPOTHESIS_PROFILE", "quick")  # the modules' full runs happen with 64-bit mode on
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_policy_with_64_bit_mode_off():
    out = subprocess.run([sys.executable, "-c", CHECKS], env=_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout + out.stderr


def test_mode_agnostic_modules_pass_with_64_bit_mode_off():
    modules = [
        "tests/test_info.py",
        "tests/test_special_cases.py",
        "tests/test_searching.py",
        "tests/test_sorting.py",
        "tests/test_set.py",
        "tests/test_statistical.py",
        "tests/test_utility.py",
        "tests/test_indexing_functions.py",
        "tests/test_linalg.py",
        "tests/test_fft.py",
        "tests/test_linear_algebra.py",
    ]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *modules],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
