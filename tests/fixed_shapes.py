"""The array shapes (and lengths) that the property tests draw: a small fixed set.

Most of the suite's time is XLA compiling kernels, and a kernel is compiled once per shape and
dtype: drawing shapes from a handful, rather than from all shapes up to some size, makes each
kernel compile a few times instead of once per example (in a run, and across runs through JAX's
persistent compilation cache). The set keeps the edge cases: 0-d arrays, empty arrays (a zero
side first, in the middle, last), sides of 1 (broadcasting, squeezing), unequal sides (an axis
mixed up shows), odd and even lengths, and leading batch dimensions.
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SIDES = (0, 1, 2, 3, 5, 8)

SHAPES = (
    (),
    *((0,), (1,), (2,), (3,), (5,)),
    *((0, 3), (2, 0), (1, 3), (3, 1), (2, 3), (3, 3), (4, 2)),
    *((2, 0, 3), (1, 2, 3), (3, 2, 1), (2, 3, 4)),
    *((2, 1, 3, 2), (2, 3, 0, 1)),
)

# (input shapes, for one, two or three arrays) that broadcast together
BROADCASTING = (
    ((), ()),
    ((3,), ()),
    ((), (2, 3)),
    ((3,), (3,)),
    ((1,), (3,)),
    ((0,), (1,)),
    ((2, 3), (3,)),
    ((3,), (2, 1)),
    ((2, 1), (1, 3)),
    ((0, 3), (1, 3)),
    ((2, 3), (2, 3)),
    ((2, 1, 3), (2, 1)),
    ((1, 2, 3), (3, 1, 1)),
    ((), (), ()),
    ((3,), (), (1,)),
    ((3,), (3,), (3,)),
    ((2, 3), (3,), ()),
    ((2, 1), (1, 3), (3,)),
    ((0, 3), (3,), (1, 1)),
    ((1, 2, 1), (2, 3), (3, 1, 1)),
)


def _fits(shape, min_dims, max_dims, min_side, max_side):
    return min_dims <= len(shape) <= max_dims and all(min_side <= n <= max_side for n in shape)


def _sampled(candidates, what):
    candidates = list(dict.fromkeys(candidates))
    if not candidates:
        raise ValueError(f"no {what} of the fixed set fits")
    return st.sampled_from(candidates)


def sides(min_side=0, max_side=8):
    """A length (of a 1-d array, a matrix side, a number of stored elements) from SIDES."""
    return _sampled([n for n in SIDES if min_side <= n <= max_side], f"side in [{min_side}, {max_side}]")


def shapes(*, min_dims=1, max_dims=None, min_side=1, max_side=None):
    """A shape from SHAPES, within the bounds (``hnp.array_shapes``'s arguments and defaults)."""
    max_dims = min_dims + 2 if max_dims is None else max_dims
    max_side = min_side + 5 if max_side is None else max_side
    found = [s for s in SHAPES if _fits(s, min_dims, max_dims, min_side, max_side)]
    return _sampled(found, f"shape with {min_dims} to {max_dims} dims and sides in [{min_side}, {max_side}]")


def mutually_broadcastable_shapes(num_shapes, *, min_dims=0, max_dims=None, min_side=1, max_side=None):
    """Shapes from BROADCASTING, within the bounds (``hnp.mutually_broadcastable_shapes``'s
    arguments and defaults): ``input_shapes`` and their ``result_shape``."""
    max_dims = min_dims + 2 if max_dims is None else max_dims
    max_side = min_side + 2 if max_side is None else max_side
    found = [
        hnp.BroadcastableShapes(case, np.broadcast_shapes(*case))
        for case in BROADCASTING
        if len(case) == num_shapes and all(_fits(s, min_dims, max_dims, min_side, max_side) for s in case)
    ]
    return _sampled(found, f"{num_shapes} broadcastable shapes")


def broadcastable_with(shape):
    """A shape that broadcasts with ``shape``: itself, without its first dimension, with ones,
    or with one more leading dimension."""
    shape = tuple(shape)
    longer = [(2, *shape)] if len(shape) < 3 else []
    return _sampled([shape, shape[1:], (1,) * len(shape), *longer], "shape")
