"""Run the benchmarks and write their sections of bench/RESULTS.md.

    python bench/run.py                 # every benchmark
    python bench/run.py eager           # some of them: the others' sections are kept as they are
    python bench/run.py --quick         # a smoke test (fewer rounds; results not meaningful)

Benchmarks compare xp with jax.numpy (and, for sparse arrays, SciPy and pydata sparse) in the
same run and report ratios; they are not tests. On a shared CPU machine absolute times are noisy;
ratios of interleaved medians are what to read.

Each benchmark's section sits between ``<!-- bench:NAME -->`` markers and says when and how it
was run, so that rerunning one benchmark replaces its section only.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    "eager",
    "overhead",
    "workloads",
    "sparse",
    "sparse_tpu",
    "cg",
    "checked",
    "sharding",
    "precision",
    "special",
]
HEADER = "# Benchmark results\n\nWritten by `python bench/run.py`; each section says when it was run.\n"


def _section_name(name: str) -> str:
    """A benchmark's section: its name, with the platform where JAX's default backend is not the
    CPU (``overhead-tpu``), so that a run on an accelerator keeps the CPU's section beside its own."""
    import jax

    platform = jax.default_backend()
    return name if platform == "cpu" else f"{name}-{platform}"


def section(name: str, body: str, quick: bool) -> str:
    how = f"`python bench/run.py {name}{' --quick' if quick else ''}`"
    load = os.getloadavg()[0]
    stamp = f"_Run on {date.today().isoformat()} with {how}; load average {load:.1f} at the end._\n\n"
    key = _section_name(name)
    return f"<!-- bench:{key} -->\n{stamp}{body.strip()}\n<!-- /bench:{key} -->\n"


_SECTION = re.compile(r"<!-- bench:([\w-]+) -->\n.*?<!-- /bench:\1 -->\n", flags=re.S)


def merge(existing: str, sections: dict[str, str]) -> str:
    """``existing`` with the sections of ``sections`` replaced (or added), in BENCHMARKS order."""
    kept = {m.group(1): m.group(0) for m in _SECTION.finditer(existing)}
    kept.update(sections)
    order = [n for b in BENCHMARKS for n in kept if n == b or n.startswith(f"{b}-")]
    order += [n for n in kept if n not in order]
    return HEADER + "".join("\n" + kept[n] for n in order)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", default=BENCHMARKS, help=f"benchmarks to run ({', '.join(BENCHMARKS)})")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    sections = {}
    for name in args.names:
        module = importlib.import_module(name)
        sections[_section_name(name)] = section(name, module.main(["--quick"] if args.quick else []), args.quick)
    existing = args.output.read_text() if args.output.exists() else ""
    args.output.write_text(merge(existing, sections))
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
