"""The ``cpu_only`` marker (tests/platform_facts.py, applied by tests/conftest.py): where JAX's
default backend is not the CPU a marked test is skipped with its own reason; on the CPU it runs."""

import pytest
from platform_facts import BACKEND, ON_CPU, cpu_only_skip
from subprocess_env import ROOT, failure, run_script

WITNESS = "the marker's own witness (tests/test_platform_facts.py)"


@pytest.mark.cpu_only(reason=WITNESS)
def test_a_test_marked_cpu_only_runs_on_the_cpu_only():
    # on any other backend conftest must have skipped this test: reaching this line there fails
    assert ON_CPU, f"a test marked cpu_only ran on JAX's {BACKEND} backend"


class Item:
    """A stand-in for a collected test, with the marks given."""

    nodeid = "stand-in"

    def __init__(self, *marks):
        self.marks = [mark.mark for mark in marks]

    def get_closest_marker(self, name):
        return next((mark for mark in self.marks if mark.name == name), None)


def test_the_skip_has_the_markers_reason_on_other_backends_only():
    marked = Item(pytest.mark.cpu_only(reason="a CPU library"))
    skip = cpu_only_skip(marked, backend="tpu")
    assert skip is not None and skip.name == "skipif" and skip.args == (True,)
    assert skip.kwargs["reason"] == "needs JAX's CPU backend (this run's is tpu): a CPU library"
    assert cpu_only_skip(marked, backend="cpu") is None
    assert cpu_only_skip(Item(), backend="tpu") is None
    assert cpu_only_skip(Item(pytest.mark.slow), backend="tpu") is None
    for backend in ("cpu", "tpu"):  # a marker without its reason is an error on every backend
        with pytest.raises(pytest.UsageError, match="cpu_only needs reason="):
            cpu_only_skip(Item(pytest.mark.cpu_only), backend=backend)


@pytest.mark.integration
def test_a_session_on_another_backend_skips_the_marked_test_with_its_reason():
    """The whole mechanism in a pytest session of its own whose JAX reports a TPU backend (its
    devices stay the CPU's): the witness above is skipped, with its reason, not run and failed."""
    done = run_script("fake_tpu_session", __file__, cwd=ROOT, timeout=300)
    assert done.returncode == 0, failure(done)
    assert "1 skipped" in done.stdout and "passed" not in done.stdout and "failed" not in done.stdout, done.stdout
    assert f"needs JAX's CPU backend (this run's is tpu): {WITNESS}" in done.stdout, done.stdout
    assert "JAX backend tpu (tests marked cpu_only skipped)" in done.stdout, done.stdout  # the run's header
