"""The native kernel's threaded tests again, in a process started with XP_NATIVE_LINGER_US=0
(tests/sparse_arrays/test_native.py; argument: that file)."""

import sys

import pytest

sys.exit(
    pytest.main(
        ["-q", "-p", "no:cacheprovider", "-n", "0", "-k", "several_threads or several_python_threads", sys.argv[1]]
    )
)
