"""The environment of a test's subprocess: this session's (JAX's 64-bit mode, the compilation
cache, any XLA_FLAGS), with the project importable, and optionally a number of simulated CPU
devices added to ``XLA_FLAGS`` (which JAX reads when its backend starts)."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def subprocess_env(host_devices: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if host_devices is not None:
        # added to the flags already set, not instead of them (the last of a repeated flag wins)
        flags = f"{env.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={host_devices}"
        env["XLA_FLAGS"] = flags.strip()
    return env
