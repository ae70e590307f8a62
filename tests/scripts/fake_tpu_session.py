"""A pytest session of its own whose JAX reports a TPU backend (its devices stay the CPU's), run
by tests/test_platform_facts.py on the witness test named by its argument: that test must be
skipped with its reason."""

import sys

import jax
import pytest

jax.default_backend = lambda: "tpu"  # what tests/platform_facts.py reads: a TPU, as far as the tests can tell
sys.exit(
    pytest.main(
        [
            "-p",
            "no:xdist",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=--strict-markers",
            "-rs",
            sys.argv[1] + "::test_a_test_marked_cpu_only_runs_on_the_cpu_only",
        ]
    )
)
