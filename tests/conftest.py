"""Test configuration: JAX's 64-bit mode, JAX's persistent compilation cache, the hypothesis
profiles, the two tiers of tests and the markers (``cpu_only``: tests/platform_facts.py).

Tiers: ``python -m pytest`` runs the unit tier, the tests that run inside the test processes;
``python -m pytest --integration`` runs the integration tier, ``--all`` both (CI runs both). The
integration tier is the tests that start processes (Python children, meshes of simulated devices,
clusters, the type checkers, the examples, the conformance harness, SciPy and scikit-learn as
clients of xp) or sweep the whole API: ``INTEGRATION_MODULES`` below, and single tests marked
``@pytest.mark.integration`` in the other modules. ``-m`` naming ``integration`` selects by the
marker itself.

Environment variables (all optional):

- ``JAX_ENABLE_X64``: the suite runs with JAX's 64-bit mode on unless this says otherwise;
  ``JAX_ENABLE_X64=0 python -m pytest`` runs it with the mode off (JAX's default). Tests marked
  ``x64`` need the mode on, tests marked ``x64_off`` need it off; the others run in both.
- ``HYPOTHESIS_PROFILE``: ``dev`` (the default: few examples, the same on every run), ``ci``
  (more, still the same on every run: a red CI is a regression, not a new draw), ``modes``
  (fewer: CI's second pass, in the other modes) or ``thorough`` (many, fresh ones on every run).
- ``XP_TEST_SLOW``: ``1`` runs the tests marked ``slow`` (as ``--slow`` does), ``0`` leaves them
  out. By default they run with the ``ci`` and ``thorough`` profiles only.
- ``JAX_COMPILATION_CACHE_DIR``: where JAX keeps compiled kernels between runs (by default
  ``.jax-cache/`` at the repository root); ``JAX_ENABLE_COMPILATION_CACHE=0`` turns the cache off.
  Most of the suite's time is XLA compiling small kernels, so a warm cache makes runs several
  times faster. Subprocesses started by tests inherit these settings.
- ``JAX_PLATFORMS``: JAX's own; the suite runs on JAX's default backend. Where that is not the CPU
  (a TPU), the tests marked ``cpu_only`` are skipped with their reason and the children of tests
  run on the CPU (tests/platform_facts.py; CONTRIBUTING.md, "Running the tests on an
  accelerator").
"""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

os.environ.setdefault("JAX_ENABLE_X64", "1")
# Every kernel is worth caching: the suite compiles thousands of small ones, each in well under
# JAX's default threshold of one second.
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(ROOT / ".jax-cache"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1")

import hypothesis  # noqa: E402
import jax  # noqa: E402
import pytest  # noqa: E402


def _flag(value: str) -> bool:
    """An environment flag as JAX reads it (1/0, true/false, yes/no, on/off)."""
    if value.lower() in ("1", "true", "t", "yes", "y", "on"):
        return True
    if value.lower() in ("0", "false", "f", "no", "n", "off", ""):
        return False
    raise ValueError(f"not a boolean flag: {value!r}")


# JAX reads these variables when it is imported; if something imported it before this file ran,
# the configuration is set here so that the environment still decides.
jax.config.update("jax_enable_x64", _flag(os.environ["JAX_ENABLE_X64"]))
jax.config.update("jax_enable_compilation_cache", _flag(os.environ.get("JAX_ENABLE_COMPILATION_CACHE", "1")))
jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
jax.config.update(
    "jax_persistent_cache_min_compile_time_secs", float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"])
)
jax.config.update(
    "jax_persistent_cache_min_entry_size_bytes", int(os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"])
)

X64 = jax.config.jax_enable_x64

# (after the configuration: this starts JAX's backend)
from platform_facts import BACKEND, cpu_only_skip  # noqa: E402

# --- hypothesis profiles ----------------------------------------------------------------------
# Example counts are set here only: no test sets its own (a test too expensive for the dev loop is
# marked slow instead). dev and ci draw the same examples on every run; thorough explores.
# Why so few: most of a run's time is XLA compiling a kernel for each new shape and dtype, not
# running examples, and few examples of fixed shapes (tests/fixed_shapes.py) compile few kernels;
# most kernels belong to a test, not to an example. dev's 5 are the loop run after every change
# (CONTRIBUTING.md, "The fast loop"; about a fifth of the unit tier's time fewer than 10), CI runs
# 10 of each property; ci's 10 keep CI's whole run (both tiers, two
# passes, from a cold cache at worst) well under 30 minutes on two cores, also on machines where
# XLA compiles several times slower (CONTRIBUTING.md, "What CI runs"). modes' 5 is CI's second
# pass (64-bit mode and the native kernel off), where what differs is the dtypes and the kernels,
# which every example shows; that pass also leaves out the modules the modes do not reach
# (.ci/run). ci differs from dev by the slow tests and twice the examples.

PROFILES = {
    "dev": {"max_examples": 5, "derandomize": True},
    "ci": {"max_examples": 10, "derandomize": True},
    "modes": {"max_examples": 5, "derandomize": True},
    "thorough": {"max_examples": 300, "derandomize": False},
}
for _name, _settings in PROFILES.items():
    hypothesis.settings.register_profile(_name, deadline=None, print_blob=True, **_settings)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
if PROFILE not in PROFILES:
    raise ValueError(f"HYPOTHESIS_PROFILE must be one of {', '.join(PROFILES)}, got {PROFILE!r}")
hypothesis.settings.load_profile(PROFILE)


# --- tiers, markers and options ----------------------------------------------------------------

# Modules of the integration tier (paths under tests/): each test in them is marked integration.
# A unit module's test that starts a process is marked ``@pytest.mark.integration`` itself.
INTEGRATION_MODULES = frozenset(
    {
        "test_sharding.py",  # meshes of simulated devices, in children
        "sparse_arrays/test_meshes.py",
        "test_distributed.py",  # clusters of processes
        "test_typing.py",  # mypy and pyright, in children
        "test_conformance.py",  # the conformance harness, in children
        "test_conformance_deviations.py",
        "test_conformance_html.py",  # its HTML report, in a browser
        "test_clients.py",  # SciPy and scikit-learn on xp arrays, in children
        "test_special_functions_scipy.py",
        "test_examples.py",  # the examples, in children
        "test_bad_input.py",  # every public function with bad arguments
    }
)


def pytest_addoption(parser):
    parser.addoption(
        "--slow",
        action="store_true",
        help="also run the tests marked slow (the default with HYPOTHESIS_PROFILE=ci or thorough; or XP_TEST_SLOW=1)",
    )
    group = parser.getgroup("xp tiers")
    group.addoption(
        "--integration",
        action="store_const",
        const="integration",
        dest="tier",
        default="unit",
        help="run the integration tier (subprocesses, meshes, clusters, typing, conformance, clients, examples) "
        "instead of the unit tier",
    )
    group.addoption("--all", action="store_const", const="all", dest="tier", help="run both tiers")


def tier(config) -> str:
    """The tier this run selects: ``unit`` (the default), ``integration``, ``all``; ``-m`` naming
    the marker selects by it alone (``all`` here)."""
    if "integration" in (config.getoption("markexpr") or ""):
        return "all"
    return config.getoption("tier")


def in_integration_tier(item) -> bool:
    return item.get_closest_marker("integration") is not None


def _deselect(config, items, unwanted) -> None:
    dropped = [item for item in items if unwanted(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not unwanted(item)]


def run_slow(config) -> bool:
    if config.getoption("slow"):
        return True
    if "slow" in (config.getoption("markexpr") or ""):
        return True  # -m selects by the marker itself
    if "XP_TEST_SLOW" in os.environ:
        return _flag(os.environ["XP_TEST_SLOW"])
    return PROFILE in ("ci", "thorough")


def pytest_report_header(config):
    settings = hypothesis.settings.default
    cache = jax.config.jax_compilation_cache_dir if jax.config.jax_enable_compilation_cache else "off"
    selected = tier(config)
    return [
        f"xp tests: {'both tiers' if selected == 'all' else f'the {selected} tier'} "
        f"({'--integration or --all for the rest' if selected == 'unit' else 'tests/conftest.py'}), "
        f"hypothesis profile {PROFILE} ({settings.max_examples} examples"
        f"{', derandomized' if settings.derandomize else ''}), "
        f"slow tests {'included' if run_slow(config) else 'deselected (--slow or XP_TEST_SLOW=1 runs them)'}, "
        f"JAX 64-bit mode {'on' if X64 else 'off'}, compilation cache {cache}, "
        f"JAX backend {BACKEND}{'' if BACKEND == 'cpu' else ' (tests marked cpu_only skipped)'}"
    ]


@pytest.hookimpl(tryfirst=True)  # the markers are in place before -m selects by them
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.relative_to(TESTS).as_posix() in INTEGRATION_MODULES:
            item.add_marker(pytest.mark.integration)
    selected = tier(config)
    if selected == "unit":
        _deselect(config, items, in_integration_tier)
    elif selected == "integration":
        _deselect(config, items, lambda item: not in_integration_tier(item))
    if not run_slow(config):
        _deselect(config, items, lambda item: item.get_closest_marker("slow") is not None)
    x64_skip = pytest.mark.skip(reason="needs JAX's 64-bit mode (this run has JAX_ENABLE_X64=0)")
    x64_off_skip = pytest.mark.skip(reason="needs JAX's 64-bit mode off (run with JAX_ENABLE_X64=0)")
    for item in items:
        if not X64 and item.get_closest_marker("x64"):
            item.add_marker(x64_skip)
        if X64 and item.get_closest_marker("x64_off"):
            item.add_marker(x64_off_skip)
        cpu_skip = cpu_only_skip(item)
        if cpu_skip is not None:
            item.add_marker(cpu_skip, append=False)  # first: its reason is the one reported


# --- compiled kernels and the process's memory mappings ----------------------------------------
# XLA keeps each compiled CPU kernel's code in memory mappings of its own (about 3 per kernel),
# and Linux caps the mappings of a process (vm.max_map_count, 65530 by default). A test process
# that compiles some 20,000 kernels over the suite (hypothesis draws many shapes and dtypes) can
# then no longer map memory: XLA fails ("LLVM compilation error: Cannot allocate memory") or the
# process dies with a segmentation fault inside a compile or a persistent-cache write. Dropping
# JAX's caches when the count nears the cap unmaps them; kernels still in use are recompiled.
MAPS_PATH = Path("/proc/self/maps")
MAPPINGS_LIMIT = 30_000  # of 65530: room for the kernels one test compiles
_tests_run = 0


def memory_mappings() -> int:
    with MAPS_PATH.open("rb") as maps:
        return maps.read().count(b"\n")


@pytest.fixture
def without_cpu_backend(monkeypatch):
    """``jax.devices("cpu")`` raises as JAX does where ``JAX_PLATFORMS`` leaves the CPU out (what
    xp's host computations, through ``jax.pure_callback``, need)."""
    devices = jax.devices

    def without_cpu(backend=None):
        if backend == "cpu":
            raise RuntimeError("Unknown backend cpu")
        return devices(backend)

    monkeypatch.setattr(jax, "devices", without_cpu)


@pytest.fixture(autouse=True)
def _release_compiled_kernels():
    yield
    global _tests_run
    _tests_run += 1
    if _tests_run % 10 == 0 and MAPS_PATH.exists() and memory_mappings() > MAPPINGS_LIMIT:
        jax.clear_caches()
