"""``import xp`` in a fresh process (tests/test_architecture.py): nothing is compiled at import,
the optional parts are imported on first use, and no JAX backend is started by importing them (their
kernels are ``jax.jit`` objects made at import; ``jax.distributed.initialize`` must come before any
backend starts, and the dtype policy asks for the default backend only on first use)."""

import sys

import jax.monitoring
from jax._src import xla_bridge

events = []
jax.monitoring.register_event_duration_secs_listener(lambda event, *args, **kwargs: events.append(event))
import xp  # noqa: E402

assert not [e for e in events if "compile" in e], events  # no computation compiled (nor run) at import
deferred = ("xp.fft", "xp.linalg", "xp.sparse", "xp.special", "xp.transforms", "xp._checked.running")
for name in (*deferred, "jax.experimental.checkify", "jax.experimental.sparse"):
    assert name not in sys.modules, name
assert {"fft", "linalg", "sparse", "special", "transforms", "checked"} <= set(dir(xp))
assert callable(xp.checked)
assert xp.fft.fft.__module__ == "xp.fft" and xp.linalg.solve.__module__ == "xp.linalg"  # then imported on first use
xp.special.erf, xp.sparse.BCOO, xp.transforms.grad
assert all(name in sys.modules for name in deferred)
assert xp.linalg is sys.modules["xp.linalg"] and xp.fft is sys.modules["xp.fft"]
assert not xla_bridge.backends_are_initialized()  # (JAX's own flag: no public one says this)
