"""What machine a benchmark ran on, for the "Measured ... on" line of each section.

The ratios depend on the processor, not only on the number of cores: the native sparse kernel
(xp/sparse/_products/native_spmm.cc) gathers with AVX-512 where the CPU has it and runs scalar loops
where it does not, and a cloud VM of one name can land on different processor generations from
one day to the next (the development VM's "AMD EPYC" was a Zen 1 without AVX-512 on some days
and a Zen 4 with it on others). So the line names the CPU as the operating system reports it
(model name, and for x86 its family and model numbers, which tell the generation apart where a
VM hides the exact model) and the widest vector extension it offers.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

# The widest first: (flag in /proc/cpuinfo, name)
_VECTOR_EXTENSIONS = (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("sve", "SVE"), ("asimd", "NEON"))


def first_processor(cpuinfo: str) -> dict[str, str]:
    """The fields of the first processor's block of ``cpuinfo`` (the text of /proc/cpuinfo)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            if fields:
                break  # the first processor's block ends here
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def _read_cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:  # not Linux
        return ""


def describe(cpuinfo: str | None = None) -> str:
    """``x86_64, AMD EPYC (family 25, model 17), AVX-512, 2 CPUs``: architecture, CPU, widest
    vector extension, and the number of CPUs this process may use; the CPU as ``cpuinfo`` (the
    text of /proc/cpuinfo, read where not given) describes it."""
    info = first_processor(_read_cpuinfo() if cpuinfo is None else cpuinfo)
    parts = [platform.machine()]
    name = info.get("model name") or platform.processor()
    if name:
        if "cpu family" in info and "model" in info:
            name += f" (family {info['cpu family']}, model {info['model']})"
        parts.append(name)
    flags = set((info.get("flags") or info.get("Features") or "").split())
    parts += [label for flag, label in _VECTOR_EXTENSIONS if flag in flags][:1]
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    parts.append(f"{cpus} CPUs")
    return ", ".join(parts)


if __name__ == "__main__":
    print(describe())
