"""``import xp`` in a fresh process (tests/test_architecture.py): nothing is compiled at import,
and the optional parts are imported on first use."""

import sys

import jax.monitoring

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
