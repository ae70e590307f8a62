"""Random view/write programs (issue #10): the generator, the NumPy mirror and the xp runner.

A *program* starts from one array and takes 1 to 8 steps; each step acts on one live *handle*
(the starting array, a view of a handle, or a copy) and takes a view, reads a copy, writes
through an index, or applies an in-place operator. ``tests/test_view_write_programs.py`` runs
programs on xp, eagerly and under ``jax.jit``, and compares every handle with the mirror.

The mirror is NumPy, with each handle kept as the *positions* of its elements in a flat root
array: NumPy's view of a handle is exactly a map from its elements to its base's, and applying
NumPy's own indexing, ``reshape``, ``transpose``, ``flip``, ... to the positions gives the view's
map (``pos[key]`` is the positions of ``a[key]``). Reading a handle is ``root[pos]``; a step
computes the handle's new value with NumPy's own operation on that value and writes it back to
``root[pos]``, so every other handle sharing those positions sees it, as NumPy's views do.
The model goes beyond what NumPy's strided views can express in one place, on purpose: xp's
``reshape`` is always a view (its docstring: "every reshape can be a view here, so copy=False
never raises"), where NumPy copies a reshape of a non-contiguous array; positions model xp's
documented choice. Elsewhere the mirror departs from NumPy only where the standard leaves
NumPy's behaviour out and xp documents another; each such place says why.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from hypothesis import strategies as st

import xp

X64 = jax.config.jax_enable_x64
# Small fixed sets, so that eager kernels compile once and are reused across programs.
DTYPES = [np.dtype(d) for d in ("int8", "uint8", "int16", "int32", "float32")] + (
    [np.dtype("int64"), np.dtype("float64")] if X64 else []
)
SHAPES = [(6,), (2, 3), (3, 4), (2, 3, 2), (2, 1, 3)]
INDEX_DTYPES = [np.dtype(d) for d in ("int8", "int16", "int32")] + ([np.dtype("int64")] if X64 else [])
INT_OPS = ("+=", "-=", "*=", "//=", "%=", "&=", "|=", "^=", "<<=", ">>=")
FLOAT_OPS = ("+=", "-=", "*=", "//=", "%=")
IN_PLACE = {
    "+=": (operator.iadd, np.add), "-=": (operator.isub, np.subtract), "*=": (operator.imul, np.multiply),
    "//=": (operator.ifloordiv, np.floor_divide), "%=": (operator.imod, np.remainder),
    "&=": (operator.iand, np.bitwise_and), "|=": (operator.ior, np.bitwise_or), "^=": (operator.ixor, np.bitwise_xor),
    "<<=": (operator.ilshift, np.left_shift), ">>=": (operator.irshift, np.right_shift),
}  # fmt: skip
# A sparse operand whose result is sparse (x * A, x & A keep A's zeros) cannot be stored in a
# dense array: xp raises TypeError and changes nothing (tests/test_array.py, issue #10 defect 1);
# with the other operators the result is dense and is written (with a SparseEfficiencyWarning).
SPARSE_RESULT = ("*=", "&=")
SPARSE_OPS = ("+=", "-=", "*=", "&=", "|=", "^=")


@dataclasses.dataclass(eq=False)
class Step:
    handle: int  # the handle the step acts on
    action: str  # a key of XP_ACTIONS / MIRROR_ACTIONS
    args: tuple[Any, ...]
    text: str  # the step as Python, for hypothesis' report
    numpy: bool = False  # pass index, mask and value arrays to xp as NumPy arrays, not xp arrays

    def __repr__(self) -> str:
        return self.text + ("  # NumPy arrays as they are" if self.numpy else "")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis' report prints the repr
        printer.text(repr(self))


@dataclasses.dataclass(eq=False)
class Program:
    initial: np.ndarray
    steps: list[Step]
    errors: list[type[Exception] | None]  # the exception each step raises (None: it succeeds)
    states: list[list[np.ndarray]]  # every handle's value after each step

    def __repr__(self) -> str:
        lines = [f"h0 = xp.asarray({_fmt_array(self.initial)})"] + [repr(s) for s in self.steps]
        return "Program:\n    " + "\n    ".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


# --- the mirror -----------------------------------------------------------------------------


class Mirror:
    """NumPy's semantics on handles kept as positions into flat roots (see the module docstring)."""

    def __init__(self, initial: np.ndarray) -> None:
        self.roots = [initial.ravel().copy()]
        self.handles = [(0, np.arange(initial.size).reshape(initial.shape))]

    def value(self, i: int) -> np.ndarray:
        root, pos = self.handles[i]
        return np.asarray(self.roots[root][pos], dtype=self.roots[root].dtype)

    def write(self, i: int, value: np.ndarray) -> None:
        root, pos = self.handles[i]
        assert value.shape == pos.shape and value.dtype == self.roots[root].dtype
        self.roots[root][pos] = value

    def add_view(self, i: int, positions: Any, numpy_may_copy: bool = False) -> None:
        """A view of handle ``i`` whose positions NumPy's operation gave. NumPy made them a view
        of the handle's positions (so the model is NumPy's own view), except where
        ``numpy_may_copy`` says xp deliberately views where NumPy copies, and where NumPy gives
        a scalar (an index of integers only, flip or unstack of a 0-d or 1-d array): the
        standard's result is a 0-d array, which xp makes a view like the others."""
        base = self.handles[i][1]
        if isinstance(positions, np.ndarray) and positions.size and not numpy_may_copy:
            assert np.shares_memory(positions, base), "NumPy copies here: xp's view is not NumPy's"
        self.handles.append((self.handles[i][0], np.asarray(positions)))

    def add_copy(self, value: np.ndarray) -> None:
        self.roots.append(np.asarray(value).ravel().copy())
        self.handles.append((len(self.roots) - 1, np.arange(value.size).reshape(value.shape)))

    def state(self) -> list[np.ndarray]:
        return [self.value(i) for i in range(len(self.handles))]


def _check_scalar(value: Any, dtype: np.dtype) -> None:
    """xp's rule for a Python scalar written into an array (tests/test_array.py
    test_setitem_value_dtype_rules): the standard covers int and float scalars for float arrays
    and int scalars for integer arrays only; xp rejects a float for an integer array with a
    TypeError where NumPy truncates it. An int out of range is NumPy's OverflowError too."""
    if isinstance(value, float) and dtype.kind in "iu":
        raise TypeError("a Python float cannot be written into an integer array")


def _mirror_set(m: Mirror, i: int, key: Any, value: Any) -> None:
    v = m.value(i)
    if isinstance(value, tuple):  # ("handle", j): another live handle, read before the write
        value = m.value(value[1])
    if np.ndim(value) > v[key].ndim:
        # NumPy drops leading axes of length 1 of the value (a[:] = ones((1, 3)) for a of shape
        # (3,)); the standard's value must broadcast to the shape of x[key], and xp says so
        raise ValueError("the value does not broadcast to the indexed shape")
    if isinstance(value, (int, float)):
        _check_scalar(value, v.dtype)
    v[key] = value
    m.write(i, v)


def _mirror_in_place(m: Mirror, i: int, op: str, kind: str, operand: Any) -> None:
    v = m.value(i)
    other = m.value(operand) if kind == "handle" else operand
    if kind == "sparse" and op in SPARSE_RESULT:
        raise TypeError("the result is sparse")
    # The standard's in-place rule: ``x1 op= x2`` is ``x1 = x1 op x2`` where that keeps x1's dtype
    # and shape; xp raises TypeError / ValueError otherwise. NumPy casts a result of the same kind
    # back (int8 += int16 array), so the mirror computes out of place and checks, as xp does.
    result = np.asarray(IN_PLACE[op][1](v, other))
    if result.dtype != v.dtype:
        raise TypeError(f"the result has dtype {result.dtype}")
    if result.shape != v.shape:
        raise ValueError(f"the result has shape {result.shape}")
    m.write(i, result)


def _mirror_mask(m: Mirror, i: int, mask: Any) -> np.ndarray:
    if isinstance(mask, tuple):  # ("data", t, key): the mask h[key] > t, from the handle's value now
        return m.value(i)[mask[2]] > mask[1]
    return mask


def _mask_key(mask: Any, rest: tuple[Any, ...]) -> Any:
    """``mask`` alone, or followed by whole axes (``x[mask, ...]``, ``x[mask, :]``: the same)."""
    return (mask, *rest) if rest else mask


MIRROR_ACTIONS: dict[str, Callable[..., None]] = {
    # views: NumPy's operation on the positions (Mirror.add_view checks that NumPy made a view),
    # except reshape: xp's is always a view (xp.reshape's docstring), NumPy's copies when the
    # elements are not evenly strided (a reshape of a transpose, of a flipped slice, ...)
    "index": lambda m, i, key: m.add_view(i, m.handles[i][1][key]),
    "reshape": lambda m, i, shape: m.add_view(i, m.handles[i][1].reshape(shape), numpy_may_copy=True),
    "permute_dims": lambda m, i, axes: m.add_view(i, np.transpose(m.handles[i][1], axes)),
    "T": lambda m, i: m.add_view(i, m.handles[i][1].T),
    "mT": lambda m, i: m.add_view(i, np.swapaxes(m.handles[i][1], -1, -2)),
    "matrix_transpose": lambda m, i: m.add_view(i, np.matrix_transpose(m.handles[i][1])),
    "flip": lambda m, i, axis: m.add_view(i, np.flip(m.handles[i][1], axis)),
    "squeeze": lambda m, i, axis: m.add_view(i, np.squeeze(m.handles[i][1], axis)),
    "expand_dims": lambda m, i, axis: m.add_view(i, np.expand_dims(m.handles[i][1], axis)),
    "moveaxis": lambda m, i, source, destination: m.add_view(i, np.moveaxis(m.handles[i][1], source, destination)),
    "unstack": lambda m, i, axis, k: m.add_view(i, np.unstack(m.handles[i][1], axis=axis)[k]),
    # asarray(x) with copy=None or False is x itself (NumPy's np.asarray(a) is a, too)
    "asarray": lambda m, i, copy: m.handles.append(m.handles[i]),
    # from_dlpack(x) shares x's memory (NumPy's np.from_dlpack(a) is a view of a)
    "from_dlpack": lambda m, i: m.add_view(i, m.handles[i][1]),
    # copies
    "take": lambda m, i, key: m.add_copy(m.value(i)[key]),
    "mask_read": lambda m, i, mask: m.add_copy(m.value(i)[_mirror_mask(m, i, mask)]),
    "copy": lambda m, i: m.add_copy(m.value(i)),
    "reshape_copy": lambda m, i, shape: m.add_copy(m.value(i).reshape(shape)),
    # writes
    "set": lambda m, i, key, value: _mirror_set(m, i, key, value),
    "set_mask": lambda m, i, mask, rest, value: _mirror_set(m, i, _mask_key(_mirror_mask(m, i, mask), rest), value),
    "in_place": lambda m, i, op, kind, operand: _mirror_in_place(m, i, op, kind, operand),
}


# --- the xp runner --------------------------------------------------------------------------


def _xp_mask(h: xp.Array, mask: Any) -> Any:
    return h[mask[2]] > mask[1] if isinstance(mask, tuple) else mask


def _xp_in_place(handles: list[xp.Array], i: int, op: str, kind: str, operand: Any) -> None:
    h = handles[i]
    result = IN_PLACE[op][0](h, handles[operand] if kind == "handle" else operand)
    assert result is h, f"{op} did not work in place"


def _xp_value(hs: list[xp.Array], value: Any) -> Any:
    return hs[value[1]] if isinstance(value, tuple) else value


XP_ACTIONS: dict[str, Callable[..., Any]] = {
    "index": lambda hs, i, key: hs.append(hs[i][key]),
    "reshape": lambda hs, i, shape: hs.append(xp.reshape(hs[i], shape)),
    "permute_dims": lambda hs, i, axes: hs.append(xp.permute_dims(hs[i], axes)),
    "T": lambda hs, i: hs.append(hs[i].T),
    "mT": lambda hs, i: hs.append(hs[i].mT),
    "matrix_transpose": lambda hs, i: hs.append(xp.matrix_transpose(hs[i])),
    "flip": lambda hs, i, axis: hs.append(xp.flip(hs[i], axis=axis)),
    "squeeze": lambda hs, i, axis: hs.append(xp.squeeze(hs[i], axis)),
    "expand_dims": lambda hs, i, axis: hs.append(xp.expand_dims(hs[i], axis=axis)),
    "moveaxis": lambda hs, i, source, destination: hs.append(xp.moveaxis(hs[i], source, destination)),
    "unstack": lambda hs, i, axis, k: hs.append(xp.unstack(hs[i], axis=axis)[k]),
    "asarray": lambda hs, i, copy: hs.append(xp.asarray(hs[i], copy=copy)),
    "from_dlpack": lambda hs, i: hs.append(xp.from_dlpack(hs[i])),
    "take": lambda hs, i, key: hs.append(hs[i][key]),
    "mask_read": lambda hs, i, mask: hs.append(hs[i][_xp_mask(hs[i], mask)]),
    "copy": lambda hs, i: hs.append(xp.asarray(hs[i], copy=True)),
    "reshape_copy": lambda hs, i, shape: hs.append(xp.reshape(hs[i], shape, copy=True)),
    "set": lambda hs, i, key, value: hs[i].__setitem__(key, _xp_value(hs, value)),
    "set_mask": lambda hs, i, mask, rest, value: hs[i].__setitem__(
        _mask_key(_xp_mask(hs[i], mask), rest), _xp_value(hs, value)
    ),
    "in_place": _xp_in_place,
}


def xp_arguments(step: Step) -> tuple[Any, ...]:
    """The step's arguments for xp: NumPy arrays become xp arrays (a sparse operand a BCOO),
    made eagerly, so that under jax.jit they are concrete constants like the NumPy ones."""

    def convert(a: Any) -> Any:
        if isinstance(a, np.ndarray) and step.numpy and a.ndim == 0 and a.dtype != bool:
            return a[()]  # a NumPy scalar (np.int8(3)): typed like a 0-d array, NumPy's and xp's rule
        if isinstance(a, np.ndarray) and not step.numpy:
            return xp.asarray(a)
        if isinstance(a, tuple):
            return tuple(convert(k) for k in a)
        return a

    if step.action == "in_place" and step.args[1] == "sparse":
        op, kind, operand = step.args
        return (op, kind, xp.sparse.fromdense(xp.asarray(operand)))
    return tuple(convert(a) for a in step.args)


def _fmt_array(a: np.ndarray) -> str:
    return f"np.array({a.tolist()!r}, dtype=np.{a.dtype})"


def run_step(handles: list[xp.Array], step: Step, arguments: tuple[Any, ...]) -> BaseException | None:
    """Apply ``step`` to the xp handles; the exception it raised, if any."""
    try:
        XP_ACTIONS[step.action](handles, step.handle, *arguments)
    except Exception as e:
        return e
    return None


# --- the generator --------------------------------------------------------------------------


def _elements(dtype: np.dtype) -> st.SearchStrategy[int]:
    # Small integer values (floats too): every result below is then exact in each dtype, so a
    # difference is a real one and not rounding (8 steps of at most doubling stay far below 2**24).
    return st.integers(0, 16) if dtype.kind == "u" else st.integers(-8, 8)


def _values(draw: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    elements = _elements(dtype)
    flat = draw(st.lists(elements, min_size=math.prod(shape), max_size=math.prod(shape)))
    return np.array(flat, dtype=dtype).reshape(shape)


def _basic_key(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """Integers, slices (steps negative too), ``...`` and ``None``, valid for ``shape``."""
    key: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "full"] if n else ["slice", "full"]))
        if kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            bounds = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
            key.append(slice(draw(bounds), draw(bounds), step))
        else:
            key.append(slice(None))
    shorten = draw(st.sampled_from(["no", "no", "drop trailing", "ellipsis"]))
    if shorten == "drop trailing":  # trailing axes left out are taken whole
        key = key[: draw(st.integers(0, len(key)))]
    elif shorten == "ellipsis":  # one ``...`` for a run of axes (maybe none), each taken whole
        start = draw(st.integers(0, len(key)))
        stop = draw(st.integers(start, len(key)))
        key[start:stop] = [Ellipsis]  # the components after it still index the same axes
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), None)
    return tuple(key)


@st.composite
def basic_keys(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The strategy of :func:`_basic_key`'s keys, for tests of indexing alone."""
    return _basic_key(draw, shape)


def _reshapes(size: int) -> list[tuple[int, ...]]:
    divisors = [d for d in range(1, size + 1) if size % d == 0] if size else [0, 1, 2]
    shapes: set[tuple[int, ...]] = {(size,)}
    for a, b in itertools.product(divisors, repeat=2):
        if size == 0 or a * b == size:
            shapes.add((a, b) if size else (a, 0))
        if size and size % (a * b) == 0:
            shapes.add((a, b, size // (a * b)))
    return sorted(shapes)


def _fmt_key(key: Any) -> str:
    def one(k: Any) -> str:
        if k is None:
            return "None"
        if k is Ellipsis:
            return "..."
        if type(k) is slice:
            return ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step)).rstrip(":") or ":"
        if isinstance(k, np.ndarray):
            return _fmt_array(k)
        return repr(k)

    return ", ".join(one(k) for k in (key if type(key) is tuple else (key,))) or "()"


@st.composite
def _step(draw: Any, m: Mirror, traced: bool) -> Step:
    # the newest handle half the time, so that views of views (a reshape of a transpose, a
    # write into a flipped slice of a view, ...) come often
    i = draw(st.one_of(st.just(len(m.handles) - 1), st.integers(0, len(m.handles) - 1)))
    pos = m.handles[i][1]
    shape, ndim, size = pos.shape, pos.ndim, pos.size
    dtype = m.roots[m.handles[i][0]].dtype
    h = f"h{i}"
    new = f"h{len(m.handles)} = "
    kind = draw(st.sampled_from(["view", "view", "copy", "set", "set", "set_mask", "in_place", "in_place"]))
    if kind == "view":
        choices = ["index", "reshape", "flip", "expand_dims", "asarray", "from_dlpack"]
        choices += ["permute_dims", "moveaxis", "unstack"] if ndim else []
        choices += ["T"] if ndim == 2 else []
        choices += ["mT", "matrix_transpose"] if ndim >= 2 else []
        choices += ["squeeze"] if 1 in shape else []
        action = draw(st.sampled_from(choices))
        if action == "index":
            key = _basic_key(draw, shape)
            return Step(i, action, (key,), f"{new}{h}[{_fmt_key(key)}]")
        if action == "reshape":
            target = draw(st.sampled_from(_reshapes(size)))
            if size and draw(st.booleans()):
                at = draw(st.integers(0, len(target) - 1))
                target = (*target[:at], -1, *target[at + 1 :])
            return Step(i, action, (target,), f"{new}xp.reshape({h}, {target})")
        if action == "permute_dims":
            axes = tuple(draw(st.permutations(range(ndim))))
            return Step(i, action, (axes,), f"{new}xp.permute_dims({h}, {axes})")
        if action == "flip":
            axis = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1))) if ndim else None
            return Step(i, action, (axis,), f"{new}xp.flip({h}, axis={axis})")
        if action == "squeeze":
            axis = draw(st.sampled_from([a for a, n in enumerate(shape) if n == 1]))
            return Step(i, action, (axis,), f"{new}xp.squeeze({h}, {axis})")
        if action == "expand_dims":
            axis = draw(st.integers(-ndim - 1, ndim))
            return Step(i, action, (axis,), f"{new}xp.expand_dims({h}, axis={axis})")
        if action == "moveaxis":
            source, destination = draw(st.integers(-ndim, ndim - 1)), draw(st.integers(-ndim, ndim - 1))
            return Step(i, action, (source, destination), f"{new}xp.moveaxis({h}, {source}, {destination})")
        if action == "unstack":
            axis = draw(st.integers(-ndim, ndim - 1))
            if shape[axis] == 0:
                return Step(i, "asarray", (None,), f"{new}xp.asarray({h})")
            k = draw(st.integers(0, shape[axis] - 1))
            return Step(i, action, (axis, k), f"{new}xp.unstack({h}, axis={axis})[{k}]")
        if action == "asarray":
            copy = draw(st.sampled_from([None, False]))
            return Step(i, action, (copy,), f"{new}xp.asarray({h}, copy={copy})")
        return Step(i, action, (), f"{new}" + (f"{h}.{action}" if action in ("T", "mT") else f"xp.{action}({h})"))
    if kind == "copy":
        choices = ["copy", "reshape_copy"] + (["take"] if ndim and shape[0] else []) + ["mask_read"]
        action = draw(st.sampled_from(choices))
        if action == "copy":
            return Step(i, action, (), f"{new}xp.asarray({h}, copy=True)")
        if action == "reshape_copy":
            target = draw(st.sampled_from(_reshapes(size)))
            return Step(i, action, (target,), f"{new}xp.reshape({h}, {target}, copy=True)")
        if action == "take":
            key = _index_arrays(draw, shape, unique=False)
            return Step(i, action, (key,), f"{new}{h}[{_fmt_key(key)}]")
        mask = _mask(draw, m, i, data=not traced)
        return Step(i, action, (mask,), f"{new}{h}[{_fmt_mask(h, mask)}]")
    if kind == "set":
        if ndim and shape[0] and draw(st.booleans()):
            key: Any = _index_arrays(draw, shape, unique=True)  # duplicates: the standard leaves the order open
            target = m.value(i)[key].shape
        else:
            key = _basic_key(draw, shape)
            target = np.empty(shape)[key].shape
        value = _value_for(draw, m, dtype, target)
        return Step(i, "set", (key, value), f"{h}[{_fmt_key(key)}] = {_fmt_value(value)}")
    if kind == "set_mask":
        mask = _mask(draw, m, i, data=True)
        selected = _mirror_mask(m, i, mask)
        count = int(selected.sum())
        tail = shape[selected.ndim :]
        # One value per selected element (NumPy's x[mask] = values), or one for all. Under
        # jax.jit a traced mask cannot check that no values fit no elements (a ValueError,
        # tests/test_array.py), so a traced program writes a scalar then.
        if draw(st.booleans()) and not (traced and isinstance(mask, tuple) and count == 0):
            value: Any = _values(draw, dtype, (count, *tail))
        else:
            value = _scalar(draw, dtype)
        rest: tuple[Any, ...] = ()
        # whole axes after the mask (the standard requires a mask only as the sole index; xp takes
        # an n-d mask followed by whole axes, and refuses a 0-d one with others: left out)
        if 0 < selected.ndim < ndim and draw(st.booleans()):
            rest = draw(st.sampled_from([(Ellipsis,), (slice(None),) * (ndim - selected.ndim)]))
        text = f"{h}[{_fmt_mask(h, mask)}{''.join(', ' + _fmt_key(k) for k in rest)}] = {_fmt_value(value)}"
        return Step(i, "set_mask", (mask, rest, value), text)
    return _in_place_step(draw, m, i, shape, dtype)


def _index_arrays(draw: Any, shape: tuple[int, ...], unique: bool) -> tuple[Any, ...]:
    n = shape[0]
    count = draw(st.integers(1, n))
    if unique:
        rows = draw(st.permutations(range(n)))[:count]
        rows = [r - n if draw(st.booleans()) else r for r in rows]  # negative indices too
    else:
        rows = draw(st.lists(st.integers(-n, n - 1), min_size=count, max_size=count))
    index_dtype = draw(st.sampled_from(INDEX_DTYPES))
    first = np.array(rows, dtype=index_dtype)
    if len(shape) >= 2 and shape[1] and draw(st.booleans()):
        cols = draw(st.lists(st.integers(-shape[1], shape[1] - 1), min_size=count, max_size=count))
        return (first, np.array(cols, dtype=index_dtype))
    return (first,)


def _mask(draw: Any, m: Mirror, i: int, data: bool) -> Any:
    shape = m.handles[i][1].shape
    if data and draw(st.booleans()):
        # (uint8 > -1 is NumPy's True and xp's OverflowError: the standard leaves a Python int
        # out of the array dtype's range open, so the threshold stays in range)
        low = 0 if m.roots[m.handles[i][0]].dtype.kind == "u" else -4
        # over the whole shape, or over leading axes only (h[..., 0] > t)
        leading = draw(st.integers(1, len(shape))) if len(shape) and 0 not in shape else len(shape)
        key = (slice(None),) * leading + (0,) * (len(shape) - leading)
        return ("data", draw(st.integers(low, 4)), key)
    leading = draw(st.integers(0, len(shape)))  # 0: a mask of the whole shape
    if leading == 0 and draw(st.booleans()):
        return np.bool_(draw(st.booleans()))  # a 0-d mask
    mask_shape = shape[:leading] if leading else shape
    flat = draw(st.lists(st.booleans(), min_size=math.prod(mask_shape), max_size=math.prod(mask_shape)))
    return np.array(flat, dtype=bool).reshape(mask_shape)


def _fmt_mask(h: str, mask: Any) -> str:
    if isinstance(mask, tuple):
        return f"{h}[{_fmt_key(mask[2])}] > {mask[1]}" if mask[2] else f"{h} > {mask[1]}"
    return _fmt_array(np.asarray(mask))


def _scalar(draw: Any, dtype: np.dtype) -> int | float:
    value = draw(_elements(dtype))
    if dtype.kind == "f" and draw(st.booleans()):
        return float(value)
    if draw(st.integers(0, 9)) == 0:  # now and then a value xp must reject as NumPy does (or the standard)
        return draw(st.sampled_from([float(value) + 0.5, 300, -300]))
    return value


def _value_for(draw: Any, m: Mirror, dtype: np.dtype, target: tuple[int, ...]) -> Any:
    kind = draw(st.sampled_from(["scalar", "scalar", "array", "handle"]))
    if kind == "scalar":
        return _scalar(draw, dtype)
    # another live handle (maybe overlapping the target: NumPy reads it before writing)
    partners = [
        j for j, (root, pos) in enumerate(m.handles) if m.roots[root].dtype == dtype and _broadcasts(pos.shape, target)
    ]
    if kind == "handle" and partners:
        return ("handle", draw(st.sampled_from(partners)))
    # the target shape, or one that broadcasts to it (trailing axes, some of length 1); now and
    # then one with an extra leading axis of length 1, which NumPy takes and the standard does not
    shape = target[draw(st.integers(0, len(target))) :]
    shape = tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in shape)
    if draw(st.integers(0, 7)) == 0:
        shape = (1, *shape)
    return _values(draw, dtype, shape)


def _fmt_value(value: Any) -> str:
    if isinstance(value, tuple):
        return f"h{value[1]}"
    return f"xp.asarray({_fmt_array(value)})" if isinstance(value, np.ndarray) else repr(value)


def _in_place_step(draw: Any, m: Mirror, i: int, shape: tuple[int, ...], dtype: np.dtype) -> Step:
    op = draw(st.sampled_from(INT_OPS if dtype.kind in "iu" else FLOAT_OPS))
    divides, shifts = op in ("//=", "%="), op in ("<<=", ">>=")
    kinds = ["scalar", "array", "array"]
    partners = [
        j for j, (root, pos) in enumerate(m.handles) if m.roots[root].dtype == dtype and _broadcasts(pos.shape, shape)
    ]
    if partners and not divides and not shifts and op != "*=":
        kinds.append("handle")  # another live handle (maybe overlapping): NumPy reads it first
    if op in SPARSE_OPS and len(shape) >= 1 and math.prod(shape):
        kinds.append("sparse")
    if not divides and not shifts:
        kinds.append("other_dtype")
    kind = draw(st.sampled_from(kinds))
    h = f"h{i}"
    bits = dtype.itemsize * 8

    def fitting(v: int) -> int:
        if shifts:
            return abs(v) % bits
        if divides and v == 0:
            return 1  # integer division by zero: the standard leaves the result open
        return v

    if kind == "scalar":
        value: Any = _scalar(draw, dtype)
        if abs(value) < 100:  # (300 and -300 are kept: out of range for some dtypes)
            value = type(value)(fitting(int(value))) if shifts or value == 0 else value
        return Step(i, "in_place", (op, kind, value), f"{h} {op} {value!r}")
    if kind == "handle":
        j = draw(st.sampled_from(partners))
        return Step(i, "in_place", (op, kind, j), f"{h} {op} h{j}")
    if kind == "sparse":
        values = _values(draw, dtype, shape)
        stored = draw(st.lists(st.booleans(), min_size=values.size, max_size=values.size))
        values[~np.array(stored, dtype=bool).reshape(shape)] = 0  # zeros: elements not stored
        if shifts:
            values = np.abs(values) % bits
        return Step(
            i, "in_place", (op, kind, values), f"{h} {op} xp.sparse.fromdense(xp.asarray({_fmt_array(values)}))"
        )
    target = shape[draw(st.integers(0, len(shape))) :]
    target = tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in target)
    if draw(st.integers(0, 7)) == 0:  # a result of another shape: a ValueError, nothing written
        target = (2, *target)
    other = dtype
    if kind == "other_dtype":  # another dtype of the same kind (mixed kinds: the standard leaves them open)
        other = draw(st.sampled_from([d for d in DTYPES if d.kind == dtype.kind or {d.kind, dtype.kind} == {"i", "u"}]))
    values = np.vectorize(fitting, otypes=[other])(_values(draw, other, target)) if target else None
    if values is None:
        values = np.array(fitting(int(_values(draw, other, ()))), dtype=other)
    return Step(i, "in_place", (op, "array", values), f"{h} {op} {_fmt_value(values)}")


def _broadcasts(source: tuple[int, ...], target: tuple[int, ...]) -> bool:
    return len(source) <= len(target) and all(
        s == 1 or s == t for s, t in zip(reversed(source), reversed(target), strict=False)
    )


@st.composite
def programs(draw: Any, traced: bool = False) -> Program:
    """A random program. ``traced``: it will also run under jax.jit, so it reads through no mask
    computed from data (a data-dependent shape, which a trace refuses: tests/test_array.py
    test_mask_reads_under_jit_say_why_they_fail)."""
    dtype = draw(st.sampled_from(DTYPES))
    initial = _values(draw, dtype, draw(st.sampled_from(SHAPES)))
    m = Mirror(initial)
    steps, errors, states = [], [], []
    for _ in range(draw(st.integers(1, 8))):
        step = draw(_step(m, traced))
        step.numpy = draw(st.integers(0, 3)) == 0
        try:
            MIRROR_ACTIONS[step.action](m, step.handle, *step.args)
            error = None
        except (TypeError, ValueError, IndexError, OverflowError) as e:
            error = type(e)
        steps.append(step)
        errors.append(error)
        states.append(m.state())
    return Program(initial, steps, errors, states)
