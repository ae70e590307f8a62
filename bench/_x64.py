"""Benchmarks of float64 need JAX's 64-bit mode, which is read when JAX starts."""

from __future__ import annotations

import os
import subprocess
import sys


def output_with_x64(script: str, argv: list[str] | None) -> str | None:
    """The output of ``script`` rerun in a subprocess with ``JAX_ENABLE_X64=1``, or None where
    the mode is on already (float32 arrays are unaffected by it, so one run measures both)."""
    import jax

    if jax.config.read("jax_enable_x64"):
        return None
    env = dict(os.environ, JAX_ENABLE_X64="1")
    command = [sys.executable, os.path.abspath(script), *(argv or [])]
    return subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
