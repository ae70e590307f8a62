"""The environment of a test's subprocess: this session's (JAX's 64-bit mode, the compilation
cache, any XLA_FLAGS), with the project importable, and optionally a number of simulated CPU
devices added to ``XLA_FLAGS`` (which JAX reads when its backend starts).

Where this session's JAX backend is not the CPU (a TPU), the child runs on the CPU
(``JAX_PLATFORMS=cpu``): a TPU chip admits one process, and the child of a test that imports JAX
would otherwise fail on libtpu's lock file while this process holds the chip. The tests that start
children here check what is the same on every backend (an example script, an import, an error
message); tests whose point is the CPU itself are marked ``cpu_only`` (tests/platform_facts.py).

What a child runs is a script in tests/scripts/ (linted like the tests, type-checked like xp:
pyproject.toml's ``[tool.mypy]``; ``run_script``), never source in a string: a failing script
raises with its message, and ``failure`` shows the test its command, exit status and both
outputs."""

import os
import subprocess
import sys
from pathlib import Path

from platform_facts import ON_CPU

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "scripts"


def subprocess_env(host_devices: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if not ON_CPU:
        env["JAX_PLATFORMS"] = "cpu"
    if host_devices is not None:
        # added to the flags already set, not instead of them (the last of a repeated flag wins)
        flags = f"{env.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={host_devices}"
        env["XLA_FLAGS"] = flags.strip()
    return env


def run_script(
    name: str, *args: str, env: dict[str, str] | None = None, timeout: float = 600, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run tests/scripts/NAME.py with ``args`` in a fresh Python, in ``env`` (by default
    ``subprocess_env()``), capturing its output."""
    return subprocess.run(
        [sys.executable, str(SCRIPTS / f"{name}.py"), *args],
        env=subprocess_env() if env is None else env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def failure(done: subprocess.CompletedProcess[str]) -> str:
    """The message of a test whose script did not do what it should: the command, its exit status,
    the end of its output and of its error output (a failing script's traceback is there)."""
    command = " ".join(map(str, done.args[1:])).replace(str(ROOT) + os.sep, "")
    return (
        f"python {command[:300]} exited {done.returncode}\n"
        f"--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-5000:]}"
    )
