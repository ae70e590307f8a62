"""The calls of the bad-input sweep (tests/test_bad_input.py, issue #10): every public function,
a valid call of it, and the bad values that replace one of its arguments.

A function's valid call (:func:`base_call`) is written out below where its parameters need
particular values, else built from its signature: every required parameter gets a 3x3 array of
the first dtype among float32, int32, bool, complex64 that the function takes (found by trying;
the sweep's first test checks that each valid call is valid). A bad call replaces exactly one
argument, so the error it raises is about that argument.

The bad values are picked by the parameter's role (an array, an axis, a shape, a dtype, ...),
read from its name and annotation. Huge sizes (2**62, 10**20) are not drawn here: some of them
abort the process (issue #10, defect 3), so the sweep runs them in a subprocess
(:data:`HUGE`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

import xp
import xp.fft
import xp.linalg
import xp.sparse
import xp.sparse.linalg
import xp.special
from xp import _routing

SPEC = json.loads((Path(__file__).resolve().parent.parent / "conformance/data/api_2025_12.json").read_text())

# --- which functions ----------------------------------------------------------------------------

OUT_OF_SCOPE = {
    "narrow_64bit": "a context manager and switch, not a computation on arguments (tests/test_narrowing.py)",
    "transforms.grad": "a JAX transformation of a function (tests/test_jax_values.py)",
    "transforms.value_and_grad": "a JAX transformation of a function (tests/test_jax_values.py)",
    "transforms.while_loop": "a JAX control-flow primitive taking functions (tests/test_jax_values.py)",
    "sparse.sparsify": "JAX's transformation of a function (tests/sparse_arrays/test_jax_api.py)",
    "checked": "a transformation of a function (its own argument checks: tests/test_checked.py)",
    "sparse.from_pydata": "needs pydata sparse, which the test environment does not install",
}


# Public functions that report their errors with ``errors.reported`` rather than ``@api``.
REPORTED = {"sparse.linalg.lobpcg_standard": xp.sparse.linalg.lobpcg_standard}


def public_functions() -> dict[str, Callable[..., Any]]:
    """Every public function by public name (``"sum"``, ``"linalg.solve"``, ``"sparse.zeros"``):
    the registry of ``@api`` and :data:`REPORTED`, which the sweep's coverage test checks against
    the spec data and ``dir()`` of each namespace."""
    functions = _routing.PUBLIC_FUNCTIONS | REPORTED
    return {n: f for n, f in sorted(functions.items()) if n not in OUT_OF_SCOPE}


def spec_functions() -> dict[str, Callable[..., Any]]:
    """The standard's functions by qualified name (``linalg.`` and ``fft.`` prefixed), without its
    constants, dtypes and ``__array_namespace_info__`` (whose methods have a test of their own).
    ``xp.linalg.matmul`` and the other three the extension shares are the main namespace's."""
    functions = {n: getattr(xp, n) for n in SPEC["namespace"]}
    functions |= {f"linalg.{n}": getattr(xp.linalg, n) for n in SPEC["linalg"]}
    functions |= {f"fft.{n}": getattr(xp.fft, n) for n in SPEC["fft"]}
    return {n: f for n, f in functions.items() if inspect.isfunction(f) and n != "__array_namespace_info__"}


# --- valid calls -------------------------------------------------------------------------------


def matrix(dtype: Any = xp.float32) -> xp.Array:
    """A 3x3 array of distinct small positive values (invertible; none zero, so sparse is exact)."""
    values = np.asarray([[0.75, 0.25, 0.5], [0.125, 0.625, 0.375], [0.5, 0.875, 0.25]])
    if np.dtype(dtype).kind in "iu":
        values = np.arange(1, 10).reshape(3, 3)
    elif np.dtype(dtype).kind == "b":
        values = values > 0.4
    return xp.asarray(values, dtype=dtype)


def vector(dtype: Any = xp.float32) -> xp.Array:
    return xp.asarray([0.25, 0.5, 0.75], dtype=dtype)


def bcoo() -> Any:
    return xp.sparse.fromdense(matrix())


def bcsr() -> Any:
    return xp.sparse.fromdense(matrix(), format="bcsr")


CONTRACT = (((1,), (0,)), ((), ()))
GATHER = jax.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))

Call = tuple[tuple[Any, ...], dict[str, Any]]

BASES: dict[str, Callable[[], Call]] = {
    "arange": lambda: ((5,), {}),
    "asarray": lambda: (([[1.0, 2.0], [3.0, 4.0]],), {}),
    "astype": lambda: ((matrix(), xp.int32), {}),
    "broadcast_shapes": lambda: (((3, 3), (1, 3)), {}),
    "broadcast_to": lambda: ((vector(), (2, 3)), {}),
    "can_cast": lambda: ((xp.float32, xp.complex64), {}),
    "concat": lambda: (([matrix(), matrix()],), {}),
    "empty": lambda: (((2, 3),), {}),
    "expand_dims": lambda: ((matrix(),), {"axis": 0}),
    "cumulative_prod": lambda: ((vector(),), {}),
    "cumulative_sum": lambda: ((vector(),), {}),
    "eye": lambda: ((3,), {}),
    "fft.fftfreq": lambda: ((4,), {}),
    "fft.rfftfreq": lambda: ((4,), {}),
    "finfo": lambda: ((xp.float32,), {}),
    "full": lambda: (((2, 3), 1.5), {}),
    "full_like": lambda: ((matrix(), 1.5), {}),
    "iinfo": lambda: ((xp.int32,), {}),
    "isdtype": lambda: ((xp.float32, "real floating"), {}),
    "linalg.matrix_power": lambda: ((matrix(), 2), {}),
    "linalg.outer": lambda: ((vector(), vector()), {}),
    "linspace": lambda: ((0.0, 1.0, 5), {}),
    "meshgrid": lambda: ((vector(), vector()), {}),
    "moveaxis": lambda: ((matrix(), 0, 1), {}),
    "ones": lambda: (((2, 3),), {}),
    "permute_dims": lambda: ((matrix(), (1, 0)), {}),
    "repeat": lambda: ((matrix(), 2), {}),
    "reshape": lambda: ((matrix(), (9,)), {}),
    "result_type": lambda: ((matrix(), xp.float32), {}),
    "roll": lambda: ((matrix(), 1), {}),
    "searchsorted": lambda: ((vector(), matrix()), {}),
    "squeeze": lambda: ((xp.reshape(vector(), (1, 3)), 0), {}),
    "stack": lambda: (([matrix(), matrix()],), {}),
    "take": lambda: ((matrix(), xp.asarray([0, 2])), {"axis": 0}),
    "take_along_axis": lambda: ((matrix(), xp.asarray([[0, 2, 1]])), {"axis": 0}),
    "tile": lambda: ((matrix(), (2, 1)), {}),
    "where": lambda: ((matrix() > 0.4, matrix(), vector()), {}),
    "zeros": lambda: (((2, 3),), {}),
    "special.expn": lambda: ((matrix(xp.int32), matrix()), {}),
    "special.multigammaln": lambda: ((matrix() + 2, 2), {}),
    "special.polygamma": lambda: ((matrix(xp.int32), matrix()), {}),
    # xp.sparse's creation functions, like the dense ones
    "sparse.arange": lambda: ((5,), {}),
    "sparse.asarray": lambda: (([[1.0, 0.0], [0.0, 4.0]],), {}),
    "sparse.empty": lambda: (((2, 3),), {}),
    "sparse.eye": lambda: ((3,), {}),
    "sparse.from_dlpack": lambda: ((matrix(),), {}),
    "sparse.from_scipy": lambda: ((_scipy_matrix(),), {}),
    "sparse.full": lambda: (((2, 3), 1.5), {}),
    "sparse.full_like": lambda: ((matrix(), 1.5), {}),
    "sparse.linspace": lambda: ((0.0, 1.0, 5), {}),
    "sparse.meshgrid": lambda: ((vector(), vector()), {}),
    "sparse.ones": lambda: (((2, 3),), {}),
    "sparse.zeros": lambda: (((2, 3),), {}),
    "sparse.linalg.spsolve": lambda: ((bcsr(), vector()), {}),
    "sparse.linalg.lobpcg_standard": lambda: (
        (xp.sparse.fromdense(xp.linspace(1.0, 2.0, 6, dtype=xp.float32) * xp.eye(6, dtype=xp.float32)),),
        {"X": xp.ones((6, 1), dtype=xp.float32), "m": 5},
    ),
    # JAX's sparse API
    "sparse.bcoo_broadcast_in_dim": lambda: ((bcoo(),), {"shape": (2, 3, 3), "broadcast_dimensions": (1, 2)}),
    "sparse.bcoo_concatenate": lambda: (([bcoo(), bcoo()],), {"dimension": 0}),
    "sparse.bcoo_dot_general": lambda: ((bcoo(), matrix()), {"dimension_numbers": CONTRACT}),
    "sparse.bcoo_dot_general_sampled": lambda: ((matrix(), matrix(), bcoo().indices), {"dimension_numbers": CONTRACT}),
    "sparse.bcoo_dynamic_slice": lambda: ((bcoo(), (0, 1), (2, 2)), {}),
    "sparse.bcoo_extract": lambda: ((bcoo(), matrix()), {}),
    "sparse.bcoo_fromdense": lambda: ((matrix(),), {}),
    "sparse.bcoo_gather": lambda: ((bcoo(), jnp.asarray([[0], [2]]), GATHER, (1, 3)), {}),
    "sparse.bcoo_multiply_dense": lambda: ((bcoo(), matrix()), {}),
    "sparse.bcoo_multiply_sparse": lambda: ((bcoo(), bcoo()), {}),
    "sparse.bcoo_reduce_sum": lambda: ((bcoo(),), {"axes": (0,)}),
    "sparse.bcoo_reshape": lambda: ((bcoo(),), {"new_sizes": (9,)}),
    "sparse.bcoo_slice": lambda: ((bcoo(),), {"start_indices": (0, 0), "limit_indices": (2, 2)}),
    "sparse.bcoo_squeeze": lambda: ((xp.sparse.fromdense(xp.reshape(vector(), (1, 3))),), {"dimensions": (0,)}),
    "sparse.bcoo_transpose": lambda: ((bcoo(),), {"permutation": (1, 0)}),
    "sparse.bcoo_update_layout": lambda: ((bcoo(),), {"n_batch": 0}),
    "sparse.bcsr_broadcast_in_dim": lambda: ((bcsr(),), {"shape": (2, 3, 3), "broadcast_dimensions": (1, 2)}),
    "sparse.bcsr_concatenate": lambda: (([bcsr(), bcsr()],), {"dimension": 0}),
    "sparse.bcsr_dot_general": lambda: ((bcsr(), matrix()), {"dimension_numbers": CONTRACT}),
    "sparse.bcsr_extract": lambda: ((bcsr().indices, bcsr().indptr, matrix()), {}),
    "sparse.bcsr_fromdense": lambda: ((matrix(),), {}),
}
_SPARSE_OPERAND = ("sparse.bcoo_", "sparse.bcsr_")


def _scipy_matrix() -> Any:
    import scipy.sparse  # (only this base call needs SciPy; imported on use to keep collection fast)

    return scipy.sparse.csr_matrix(np.asarray([[1.0, 0.0], [0.0, 2.0]], dtype=np.float32))


def _generic(fn: Callable[..., Any], name: str, dtype: Any) -> Call:
    required = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind is not p.VAR_POSITIONAL
    ]
    if name.startswith(_SPARSE_OPERAND):  # bcoo_todense(mat) and the like: one sparse operand
        operand = bcsr() if name.startswith("sparse.bcsr_") else bcoo()
        return tuple(operand for _ in required), {}
    args = tuple(matrix(dtype) for p in required if p.kind is not p.KEYWORD_ONLY)
    return args, {p.name: matrix(dtype) for p in required if p.kind is p.KEYWORD_ONLY}


_DISCOVERED: dict[str, Any] = {}


def base_call(name: str) -> Call:
    """A valid call of ``xp.<name>`` (fresh arrays on every call)."""
    if name in BASES:
        return BASES[name]()
    fn = public_functions()[name]
    if name not in _DISCOVERED:
        for dtype in (xp.float32, xp.int32, xp.bool, xp.complex64):
            args, kwargs = _generic(fn, name, dtype)
            try:
                fn(*args, **kwargs)
            except (TypeError, ValueError):
                continue
            _DISCOVERED[name] = dtype
            break
        else:
            raise AssertionError(f"no valid call of xp.{name} from its signature: write one in BASES")
    return _generic(fn, name, _DISCOVERED[name])


def parameters(name: str) -> list[inspect.Parameter]:
    return list(inspect.signature(public_functions()[name]).parameters.values())


# --- bad values by role --------------------------------------------------------------------------

ARRAY_NAMES = {"x", "x1", "x2", "condition", "obj", "prepend", "append", "sorter", "indices", "arrays",
               "mat", "sparr", "arr", "operand", "lhs", "rhs", "sp_mat", "v", "A", "B", "b_", "operands",
               "min", "max", "start_indices", "indptr", "repeats", "from_", "type", "arrays_and_dtypes"}  # fmt: skip
AXIS_NAMES = {"axis", "axes", "source", "destination", "dimension", "dimensions", "permutation",
              "broadcast_dimensions", "shift"}  # fmt: skip
SHAPE_NAMES = {"shape", "s", "repetitions", "new_sizes", "slice_sizes", "limit_indices", "strides", "shapes"}
SIZE_NAMES = {"n", "num", "n_rows", "n_cols", "nse", "n_batch", "n_dense", "k", "offset", "reorder"}
BOOL_NAMES = {"keepdims", "copy", "endpoint", "descending", "stable", "upper", "full_matrices", "invert",
              "include_initial", "assume_unique", "unique_indices", "indices_are_sorted"}  # fmt: skip
DTYPE_NAMES = {"dtype", "to", "index_dtype", "preferred_element_type"}
CHOICE_NAMES = {"norm", "side", "mode", "indexing", "format", "on_inefficient", "kind", "ord", "precision"}


def role(name: str, param: inspect.Parameter) -> str:
    """How a parameter is attacked: by its name (the standard's names are few and consistent),
    else by its annotation; xp.special's arguments are arrays whatever their names."""
    p = param.name
    if name.startswith("special.") or name == "sparse.from_scipy":  # (k, n, s there are arrays, d a size)
        return "array" if "ArrayLike" in str(param.annotation) or p == "s" else "size"
    if name.startswith(("sparse.bcoo_", "sparse.bcsr_")) and p in ("shape", "start_indices"):
        return "shape"  # JAX's sparse API: sequences of ints
    for names, kind in ((AXIS_NAMES, "axis"), (SHAPE_NAMES, "shape"), (SIZE_NAMES, "size"), (BOOL_NAMES, "bool"),
                        (DTYPE_NAMES, "dtype"), (CHOICE_NAMES, "choice"), (ARRAY_NAMES, "array")):  # fmt: skip
        if p in names:
            return kind
    if p == "device":
        return "device"
    if "ArrayLike" in str(param.annotation):
        return "array"
    return "scalar"


class Bad:
    """A bad value, made fresh for each call (arrays are mutable), with a label for reports."""

    def __init__(self, label: str, make: Callable[[], Any]) -> None:
        self.label, self.make = label, make

    def __repr__(self) -> str:
        return self.label


def _values(*pairs: tuple[str, Callable[[], Any]]) -> list[Bad]:
    return [Bad(label, make) for label, make in pairs]


WRONG_TYPES = _values(
    ("'a'", lambda: "a"),
    ("b'a'", lambda: b"a"),
    ("[1.0, 2.0]", lambda: [1.0, 2.0]),
    ("{'a': 1}", lambda: {"a": 1}),
    ("object()", object),
    ("None", lambda: None),
    ("{1}", lambda: {1}),
    ("lambda", lambda: lambda: 0),
)

ARRAYS = _values(
    ("0-d float32", lambda: xp.asarray(0.5, dtype=xp.float32)),
    ("0-d int32", lambda: xp.asarray(3, dtype=xp.int32)),
    ("0-d bool", lambda: xp.asarray(True)),
    ("empty (0,)", lambda: xp.zeros(0, dtype=xp.float32)),
    ("empty (0, 3)", lambda: xp.zeros((0, 3), dtype=xp.float32)),
    ("empty (3, 0)", lambda: xp.zeros((3, 0), dtype=xp.float32)),
    ("empty (0, 0)", lambda: xp.zeros((0, 0), dtype=xp.float32)),
    ("1-d float32", lambda: vector()),
    ("(1, 3) float32", lambda: xp.reshape(vector(), (1, 3))),
    ("3-d float32", lambda: xp.stack([matrix(), matrix()])),
    ("3x3 bool", lambda: matrix(xp.bool)),
    ("3x3 int8", lambda: matrix(xp.int8)),
    ("3x3 uint8", lambda: matrix(xp.uint8)),
    ("3x3 int32", lambda: matrix(xp.int32)),
    ("3x3 float32", lambda: matrix(xp.float32)),
    ("3x3 complex64", lambda: matrix(xp.complex64)),
    ("3x3 NaN", lambda: xp.full((3, 3), float("nan"), dtype=xp.float32)),
    ("(2, 2) float32", lambda: xp.ones((2, 2), dtype=xp.float32)),
    ("numpy float16", lambda: np.ones((3, 3), dtype=np.float16)),
    ("numpy object", lambda: np.asarray([[1, "a"]], dtype=object)),
    ("numpy str", lambda: np.asarray(["a", "b"])),
    ("numpy datetime64", lambda: np.asarray([0], dtype="datetime64[D]")),
    ("jax bfloat16", lambda: jnp.ones((3, 3), dtype=jnp.bfloat16)),
    ("numpy float32", lambda: np.ones((3, 3), dtype=np.float32)),
    ("Python True", lambda: True),
    ("Python 2", lambda: 2),
    ("Python 1.5", lambda: 1.5),
    ("Python 1j", lambda: 1j),
    ("Python -1", lambda: -1),
    ("Python nan", lambda: float("nan")),
    ("tuple of arrays", lambda: (matrix(), matrix())),
)
SPARSE = _values(
    ("sparse BCOO 3x3", bcoo),
    ("sparse BCSR 3x3", bcsr),
    ("sparse BCOO 1-d", lambda: xp.sparse.fromdense(vector())),
    ("sparse BCOO bool", lambda: xp.sparse.fromdense(matrix(xp.bool))),
)

AXES = _values(
    ("1.0", lambda: 1.0),
    ("'0'", lambda: "0"),
    ("True", lambda: True),
    ("(0, 0)", lambda: (0, 0)),
    ("(0, -2)", lambda: (0, -2)),
    ("(1, 1.5)", lambda: (1, 1.5)),
    ("[0]", lambda: [0]),
    ("()", lambda: ()),
    ("(0, 1, 2, 3)", lambda: (0, 1, 2, 3)),
    ("((0,), (1,))", lambda: ((0,), (1,))),
    ("np.int64(5)", lambda: np.int64(5)),
    ("0-d array 0", lambda: xp.asarray(0)),
    ("array [0, 1]", lambda: xp.asarray([0, 1])),
    ("np.float64(0.0)", lambda: np.float64(0.0)),
)
SHAPES = _values(
    ("-1", lambda: -1),
    ("(2, -1)", lambda: (2, -1)),
    ("2.5", lambda: 2.5),
    ("(2.5,)", lambda: (2.5,)),
    ("'3'", lambda: "3"),
    ("('3',)", lambda: ("3",)),
    ("()", lambda: ()),
    ("(0,)", lambda: (0,)),
    ("(0, 3)", lambda: (0, 3)),
    ("((2,), 3)", lambda: ((2,), 3)),
    ("(True, 2)", lambda: (True, 2)),
    ("(None, 3)", lambda: (None, 3)),
    ("[2, 3]", lambda: [2, 3]),
    ("(1, 1, 1, 1)", lambda: (1, 1, 1, 1)),
    ("array (2,)", lambda: xp.asarray([2, 3])),
    ("np.int64(3)", lambda: np.int64(3)),
    ("0", lambda: 0),
    ("(7,)", lambda: (7,)),
)
SIZES = _values(
    ("-1", lambda: -1),
    ("-5", lambda: -5),
    ("0", lambda: 0),
    ("1.5", lambda: 1.5),
    ("2.0", lambda: 2.0),
    ("'1'", lambda: "1"),
    ("True", lambda: True),
    ("np.float32(1)", lambda: np.float32(1)),
    ("np.int8(2)", lambda: np.int8(2)),
    ("(2,)", lambda: (2,)),
    ("0-d array 2", lambda: xp.asarray(2)),
    ("1j", lambda: 1j),
    ("100", lambda: 100),
)
BOOLS = _values(
    ("'yes'", lambda: "yes"),
    ("1", lambda: 1),
    ("0", lambda: 0),
    ("1.5", lambda: 1.5),
    ("[True]", lambda: [True]),
    ("np.bool_(True)", lambda: np.bool_(True)),
    ("0-d array True", lambda: xp.asarray(True)),
    ("array [True, False]", lambda: xp.asarray([True, False])),
)
DTYPES = _values(
    ("'flaot32'", lambda: "flaot32"),
    ("'float16'", lambda: "float16"),
    ("np.float16", lambda: np.float16),
    ("np.dtype(object)", lambda: np.dtype(object)),
    ("np.dtype('<U1')", lambda: np.dtype("<U1")),
    ("jnp.bfloat16", lambda: jnp.bfloat16),
    ("{}", lambda: {}),
    ("[]", lambda: []),
    ("1", lambda: 1),
    ("str", lambda: str),
    ("object", lambda: object),
    ("'int'", lambda: "int"),
    ("float64", lambda: xp.float64),
    ("np.dtype('>f4')", lambda: np.dtype(">f4")),
    ("bool", lambda: bool),
    ("complex", lambda: complex),
    ("an array", lambda: matrix()),
    ("a NumPy array", lambda: np.ones(3, np.float32)),
    ("a JAX array", lambda: jnp.ones(3, jnp.int32)),
)
DEVICES = _values(
    ("'cpu'", lambda: "cpu"),
    ("0", lambda: 0),
    ("'cuda:0'", lambda: "cuda:0"),
    ("[device]", lambda: [jax.devices()[0]]),
    ("device", lambda: jax.devices()[0]),
    ("an array", lambda: matrix()),
)
CHOICES = _values(
    ("'bad'", lambda: "bad"),
    ("'BACKWARD'", lambda: "BACKWARD"),
    ("b'ortho'", lambda: b"ortho"),
    ("1", lambda: 1),
    ("-1", lambda: -1),
    ("2.5", lambda: 2.5),
    ("1j", lambda: 1j),
    ("['ortho']", lambda: ["ortho"]),
    ("inf", lambda: float("inf")),
    ("nan", lambda: float("nan")),
    ("0-d array 2", lambda: xp.asarray(2)),
)
SCALARS = _values(
    ("'1'", lambda: "1"),
    ("1j", lambda: 1j),
    ("nan", lambda: float("nan")),
    ("-inf", lambda: float("-inf")),
    ("-1", lambda: -1),
    ("True", lambda: True),
    ("2**70", lambda: 2**70),
    ("-2**70", lambda: -(2**70)),
    ("1e300", lambda: 1e300),
    ("[1]", lambda: [1]),
    ("0-d array 1.5", lambda: xp.asarray(1.5, dtype=xp.float32)),
    ("3x3 array", lambda: matrix()),
    ("3x3 complex array", lambda: matrix(xp.complex64)),
    ("numpy float16 scalar", lambda: np.float16(1)),
)

BY_ROLE = {
    "array": ARRAYS + SPARSE,
    "axis": AXES,
    "shape": SHAPES,
    "size": SIZES,
    "bool": BOOLS,
    "dtype": DTYPES,
    "device": DEVICES,
    "choice": CHOICES,
    "scalar": SCALARS + ARRAYS[:4],
}


def bad_values(name: str, param: inspect.Parameter) -> st.SearchStrategy[Any]:
    """The bad values for one parameter: its role's, Python's wrong types, and (for ints) any
    int in a small range, negative ones included."""
    kind = role(name, param)
    choices = st.sampled_from(BY_ROLE[kind] + WRONG_TYPES)
    if kind in ("axis", "size"):
        number = st.integers(-12, 12)
        return choices | number.map(lambda n: Bad(repr(n), lambda: n))
    if kind == "shape":
        sides = st.lists(st.integers(-3, 5), min_size=0, max_size=4).map(tuple)
        return choices | sides.map(lambda t: Bad(repr(t), lambda: t))
    return choices


# --- huge sizes (probed in a subprocess) -----------------------------------------------------------

# Sizes that overflow an int64 extent product (2**62 times a few) or any fixed-width int (10**20);
# none that merely needs a lot of memory (2**31 elements), which a shared test machine pays for.
HUGE_VALUES = (2**62, 10**20, -(2**62))


def huge_calls() -> list[tuple[str, str, int]]:
    """(function, parameter, value) for every size-like parameter and huge value."""
    calls: list[tuple[str, str, int]] = []
    for name in public_functions():
        for p in parameters(name):
            if role(name, p) in ("shape", "size") and p.kind is not p.VAR_POSITIONAL:
                calls.extend((name, p.name, v) for v in HUGE_VALUES)
    return calls


def replaced(name: str, param: inspect.Parameter, value: Any) -> Call:
    """The valid call of ``xp.<name>`` with ``param``'s argument replaced by ``value``."""
    args, kwargs = base_call(name)
    params = parameters(name)
    if param.kind is param.VAR_POSITIONAL:
        start = params.index(param)
        return (*args[:start], value, *args[start + 1 :]), kwargs
    if param.kind is param.KEYWORD_ONLY or (
        param.kind is param.POSITIONAL_OR_KEYWORD and len(args) <= params.index(param)
    ):
        return args, {**kwargs, param.name: value}
    position = params.index(param)
    filled = list(args)
    for p in params[len(filled) : position + 1]:  # fill defaulted positional-only parameters up to it
        filled.append(p.default)
    filled[position] = value
    return tuple(filled), kwargs
