"""The native kernel's rows-of-every-length tests again, in a process whose library is built
without the host's instruction set (tests/sparse_arrays/test_native.py; argument: that file)."""

import sys

import pytest

from xp.sparse._products import native

native.HOST_FLAGS.clear()  # the build for the architecture's baseline: no AVX-512, the scalar loops
assert native.host_flags() == () and native.available()
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-n", "0", "-k", "every_length", sys.argv[1]]))
