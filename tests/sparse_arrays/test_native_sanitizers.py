"""xp.sparse's native kernel under AddressSanitizer with UndefinedBehaviorSanitizer, and under
ThreadSanitizer.

Each sanitizer gets its own build of the library (xp/sparse/_products/native.py, ``SANITIZERS``: its own
file in the cache, warnings as errors), linked into ``native_driver.cc``, a program that calls the
library's FFI handlers as XLA does, on a thread pool of its own, and compares every product with a
plain loop (that file says why a program of its own and not the Python process).

The builds compile the whole kernel again, instrumented, so the tests run only where
``XP_TEST_SANITIZERS=1`` (.ci/run sets it for one run of this module); they skip, with the reason,
where there is no C++ compiler or it cannot build and run a program under the sanitizer.
"""

import hashlib
import os
import re
import subprocess
from pathlib import Path

import jax
import pytest

from xp.sparse._products import native

DRIVER = Path(__file__).with_name("native_driver.cc")
# The findings of every sanitizer are fatal, and the report's stack traces symbolized
OPTIONS = {
    "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
    "TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1",
}


def _compile(compiler: str, sanitizer: str, arguments: list[str]) -> subprocess.CompletedProcess:
    command = [compiler, "-std=c++20", *native.SANITIZERS[sanitizer], *native.SANITIZED, *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=1200)


def _unusable(compiler: str, sanitizer: str, folder: Path) -> str | None:
    """Why no program can be built and run under ``sanitizer`` here (None where one can)."""
    source, program = folder / "probe.cc", folder / "probe"
    source.write_text("#include <thread>\nint main() { std::thread([] {}).join(); }\n")
    done = _compile(compiler, sanitizer, [str(source), "-o", str(program)])
    if done.returncode == 0:
        done = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    if done.returncode:
        return f"{compiler} cannot build and run a program under -fsanitize={sanitizer}: {done.stderr.strip()[-400:]}"
    return None


@pytest.fixture(scope="module", params=sorted(native.SANITIZERS))
def driver(request, tmp_path_factory):
    """The driver linked with the kernel built under the sanitizer, built once for the module."""
    if os.environ.get("XP_TEST_SANITIZERS", "0") != "1":
        pytest.skip("the sanitizer builds run where XP_TEST_SANITIZERS=1 (.ci/run sets it)")
    sanitizer = request.param
    compiler = native._compiler()
    if compiler is None:
        pytest.skip("no C++ compiler found (set CXX, or install g++ or clang++)")
    folder = tmp_path_factory.mktemp(sanitizer)
    reason = _unusable(compiler, sanitizer, folder)
    if reason:
        pytest.skip(reason)
    library = native.library_path(compiler, sanitizer)
    native.build(compiler, library, sanitizer)
    # Kept beside the library in the cache, keyed by it and by the driver's source, as the library is
    program = library.with_name(f"{library.stem}-driver-{hashlib.sha256(DRIVER.read_bytes()).hexdigest()[:12]}")
    if not program.exists():
        include = ["-isystem", jax.ffi.include_dir()]
        linked = program.with_name(f"{program.name}.{os.getpid()}.tmp")  # renamed into place when linked
        done = _compile(compiler, sanitizer, [*include, str(DRIVER), str(library), f"-Wl,-rpath,{library.parent}", "-o", str(linked)])  # fmt: skip
        assert done.returncode == 0, done.stderr[-4000:]
        os.replace(linked, program)
    return sanitizer, program


def test_the_products_run_clean_under_the_sanitizer(driver):
    sanitizer, program = driver
    environment = {**os.environ, **OPTIONS}
    done = subprocess.run([str(program), "2"], capture_output=True, text=True, env=environment, timeout=1200)
    assert done.returncode == 0, f"under -fsanitize={sanitizer}:\n{done.stdout[-2000:]}\n{done.stderr[-8000:]}"
    summary = re.search(r"(\d+) products checked, (\d+) pool tasks scheduled, 0 failures", done.stdout)
    assert summary, done.stdout
    products, tasks = map(int, summary.groups())
    assert products >= 500 and tasks > 0  # two rounds of every case, on more than the calling thread
    print(f"-fsanitize={sanitizer}: {summary.group(0)}")


@pytest.mark.parametrize("build", ["host", "portable"])
def test_the_library_builds_with_warnings_as_errors(build, monkeypatch):
    """The library as users get it, for this CPU and portably (the fallback where the compiler does
    not know the CPU), with ``XP_NATIVE_WERROR=1``: a warning fails the build (``build`` raises
    with the compiler's output), where by default it would only be printed."""
    if os.environ.get("XP_TEST_SANITIZERS", "0") != "1":
        pytest.skip("the builds run where XP_TEST_SANITIZERS=1 (.ci/run sets it)")
    compiler = native._compiler()
    if compiler is None:
        pytest.skip("no C++ compiler found (set CXX, or install g++ or clang++)")
    monkeypatch.setenv("XP_NATIVE_WERROR", "1")
    if build == "portable":
        monkeypatch.setattr(native, "HOST_FLAGS", {})
    assert "-Werror" in native.flags()
    library = native.library_path(compiler)
    native.build(compiler, library)
    assert library.exists()
