"""Run the benchmarks and write bench/RESULTS.md.

    python bench/run.py                 # every benchmark
    python bench/run.py eager           # some of them (their sections replaced, the others kept)
    python bench/run.py --quick         # a smoke test (fewer rounds; results not meaningful)

Benchmarks compare xp with jax.numpy (and, for sparse arrays, SciPy and pydata sparse) in the
same run and report ratios; they are not tests. On a shared CPU machine absolute times are noisy;
ratios of interleaved medians are what to read.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ["eager", "sparse", "checked", "sharding", "cg"]


def split(text: str) -> tuple[str, dict[str, str]]:
    """The text before the first ``## `` heading, and each ``## `` section by its heading line."""
    head, *parts = re.split(r"^(?=## )", text, flags=re.MULTILINE)
    return head, {part.split("\n", 1)[0]: part for part in parts}


def merge(old: str, new: str) -> str:
    """``old`` with each section of ``new`` in place of the old section with the same heading;
    sections new to the file go at its end."""
    head, sections = split(old)
    _, replacements = split(new)
    sections.update(replacements)  # a dict keeps the old order; new headings go last
    return head + "".join(part if part.endswith("\n") else part + "\n" for part in sections.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", default=BENCHMARKS, help=f"benchmarks to run ({', '.join(BENCHMARKS)})")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    sections = []
    for name in args.names:
        module = importlib.import_module(name)
        sections.append(module.main(["--quick"] if args.quick else []))
    header = f"# Benchmark results\n\nWritten by `python bench/run.py` on {date.today().isoformat()}.\n\n"
    if set(args.names) != set(BENCHMARKS) and args.output.exists():
        # some benchmarks: replace their sections and keep the others' (measured another day)
        args.output.write_text(merge(args.output.read_text(), "\n".join(sections)))
    else:
        args.output.write_text(header + "\n".join(sections))
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
