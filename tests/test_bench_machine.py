"""The machine line of the benchmarks (bench/_machine.py): which CPU a section of
bench/RESULTS.md was measured on, read from /proc/cpuinfo's text."""

from __future__ import annotations

import importlib.util
import platform
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("bench_machine", Path(__file__).parents[1] / "bench" / "_machine.py")
assert _spec is not None and _spec.loader is not None
machine = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(machine)


def block(name: str, family: int, model: int, flags: str, processor: int = 0) -> str:
    return (
        f"processor\t: {processor}\nvendor_id\t: AuthenticAMD\ncpu family\t: {family}\n"
        f"model\t\t: {model}\nmodel name\t: {name}\nflags\t\t: {flags}\n"
    )


def test_the_first_processor_is_described() -> None:
    # a VM that reports the same model name for two generations: the family and model tell them
    # apart, and the widest vector extension is the one named
    newer = block("Example CPU", 25, 17, "fpu sse2 avx avx2 fma avx512f avx512vl")
    other = block("Other CPU", 23, 1, "fpu sse2 avx avx2", processor=1)
    described = machine.describe(newer + "\n" + other)
    assert described.startswith(f"{platform.machine()}, Example CPU (family 25, model 17), AVX-512, ")
    assert described.endswith(" CPUs")
    assert "Other CPU" not in described


@pytest.mark.parametrize(("flags", "widest"), [("sse2 avx avx2 fma", "AVX2"), ("sse2 avx", "AVX")])
def test_the_widest_vector_extension_is_named(flags: str, widest: str) -> None:
    described = machine.describe(block("Example CPU", 23, 1, flags))
    assert f"Example CPU (family 23, model 1), {widest}, " in described
    assert "AVX-512" not in described


def test_no_cpuinfo_still_names_the_architecture_and_cpus() -> None:
    described = machine.describe("")
    assert described.startswith(platform.machine())
    assert described.endswith(" CPUs")
