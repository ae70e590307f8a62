"""The inspection API (works in either JAX 64-bit mode: tests/test_x64_off.py reruns it)."""

import jax
import pytest

import xp
from xp import _dtypes

info = xp.__array_namespace_info__()
X64 = jax.config.jax_enable_x64


def test_capabilities():
    caps = info.capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}


def test_capabilities_inside_a_trace_say_data_dependent_shapes_cannot_work():
    seen = []
    jax.jit(lambda v: seen.append(xp.__array_namespace_info__().capabilities()) or v)(xp.asarray(1.0))
    assert seen[0]["data-dependent shapes"] is False
    assert seen[0]["boolean indexing"] is False


def test_devices():
    assert info.default_device() == jax.devices()[0]
    assert isinstance(info.devices(), tuple)
    assert info.default_device() in info.devices()
    assert xp.asarray(1.0).device == info.default_device()


def test_default_dtypes_follow_the_64_bit_mode():
    defaults = info.default_dtypes()
    if X64:
        assert defaults == {"real floating": xp.float64, "complex floating": xp.complex128,
                            "integral": xp.int64, "indexing": xp.int64}  # fmt: skip
    else:
        assert defaults == {"real floating": xp.float32, "complex floating": xp.complex64,
                            "integral": xp.int32, "indexing": xp.int32}  # fmt: skip
    assert info.default_dtypes(device=info.default_device()) == defaults
    assert xp.asarray(1.0).dtype == defaults["real floating"]
    assert xp.asarray(1).dtype == defaults["integral"]


def test_dtypes_tell_the_truth():
    dtypes = info.dtypes()
    assert len(dtypes) == (13 if X64 else 9)
    for name, dtype in dtypes.items():
        assert dtype == getattr(xp, name)
        assert xp.zeros(1, dtype=dtype).dtype == dtype  # each one reported really works
    for name in {d.name for d in _dtypes.ALL} - set(dtypes):
        with pytest.raises(TypeError, match="needs JAX's 64-bit mode"):
            xp.zeros(1, dtype=getattr(xp, name))


@pytest.mark.parametrize(
    ("kind", "names"),
    [
        ("bool", {"bool"}),
        ("signed integer", {"int8", "int16", "int32", "int64"}),
        ("unsigned integer", {"uint8", "uint16", "uint32", "uint64"}),
        ("real floating", {"float32", "float64"}),
        ("complex floating", {"complex64", "complex128"}),
        (("bool", "real floating"), {"bool", "float32", "float64"}),
    ],
)
def test_dtypes_by_kind(kind, names):
    available = set(info.dtypes())
    assert set(info.dtypes(kind=kind)) == names & available


def test_dtypes_rejects_unknown_kinds_and_devices():
    with pytest.raises(ValueError, match="kind must be None, one of"):
        info.dtypes(kind="floating")
    with pytest.raises(TypeError, match="device must be None or a jax.Device"):
        info.dtypes(device="cpu")
