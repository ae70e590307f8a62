"""Test configuration: JAX's 64-bit mode and hypothesis profiles.

The suite runs with JAX's 64-bit mode on unless JAX_ENABLE_X64 is set in the environment
(``tests/test_x64_off.py`` reruns the dtype-sensitive modules with it off, in a subprocess).
"""

import os

os.environ.setdefault("JAX_ENABLE_X64", "1")

import hypothesis

# "default" and "quick" draw the same examples on every run (a red CI is a real regression, not
# a new random draw); "thorough" explores: more examples, fresh ones each run.
hypothesis.settings.register_profile("default", max_examples=40, deadline=None, print_blob=True, derandomize=True)
hypothesis.settings.register_profile("thorough", max_examples=300, deadline=None, print_blob=True)
hypothesis.settings.register_profile("quick", max_examples=10, deadline=None, print_blob=True, derandomize=True)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
