"""What the product primitives share: how a primitive is made, and its generic transformation rules.

xp's own sparse products are JAX primitives whose lowering chooses the kernel (the native CPU
kernel, :mod:`.native`; the TPU kernels, :mod:`.tpu`): a primitive, not a ``custom_jvp`` or
``custom_vjp`` around the kernel, because a kernel (an FFI call, a ``pallas_call``) has no
transpose of its own, and the products' rules are products again, so that forward and reverse
mode, to any order, and ``vmap`` of either, run on the kernels. Each product is bilinear in its
stored values and its dense operand: its JVP is the sum of the product applied to each tangent
(:func:`bilinear_jvp`); a batching rule's general case applies the primitive to each batch
element (:func:`mapped`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import jax
import jax.numpy as jnp


def primitive(name: str, abstract: Callable[..., Any], lowering: Callable[..., Any],
              platforms: dict[str, Callable[..., Any]] | None = None) -> Any:  # fmt: skip
    """A primitive of one static parameter ``spec``: its abstract evaluation ``abstract``, its
    lowering ``lowering`` (an MLIR lowering rule) and, for the platforms named in ``platforms``,
    their own lowering rules; called eagerly, it runs as a jitted call of itself."""
    from jax.extend.core import Primitive
    from jax.interpreters import mlir

    made = Primitive(name)
    made.def_abstract_eval(abstract)
    made.def_impl(lambda *args, spec: jitted_bind(made, spec)(*args))
    mlir.register_lowering(made, lowering)
    for platform, rule in (platforms or {}).items():
        mlir.register_lowering(made, rule, platform=platform)
    return made


@functools.cache
def jitted_bind(primitive: Any, spec: Hashable) -> Any:
    return jax.jit(lambda *args: primitive.bind(*args, spec=spec))


def lowered(fn: Callable[..., Any], ctx: Any, *args: Any, spec: Any) -> Any:
    """The lowering of ``fn(*args, spec=spec)`` (a function of JAX arrays) in the context ``ctx``."""
    from jax.interpreters import mlir

    return mlir.lower_fun(functools.partial(fn, spec=spec), multiple_results=False)(ctx, *args)


def bilinear_jvp(primitive: Any, linear: tuple[int | tuple[int, ...], int | tuple[int, ...]]) -> Any:
    """The JVP rule of ``primitive``, bilinear in its operands at the positions ``linear``: the sum
    of the primitive applied to each tangent with the other operand kept. A position may be a group
    of positions, copies of one operand in several layouts (an ELL's), whose tangents replace them
    together (zeros where one has none), so that the tangent reaches whichever copy the lowering reads."""

    def jvp(primals: Any, tangents: Any, *, spec: Any) -> tuple[Any, Any]:
        from jax.interpreters import ad

        y = primitive.bind(*primals, spec=spec)
        terms = []
        for group in linear:
            positions = (group,) if isinstance(group, int) else group
            if any(type(tangents[p]) is not ad.Zero for p in positions):
                operands = list(primals)
                for p in positions:
                    operands[p] = ad.instantiate_zeros(tangents[p])
                terms.append(primitive.bind(*operands, spec=spec))
        if not terms:  # JAX does not call the rule then; kept total
            return y, jnp.zeros_like(y)
        return y, terms[0] if len(terms) == 1 else terms[0] + terms[1]

    return jvp


def mapped(primitive: Any, args: Any, dims: Any, *, spec: Any) -> tuple[Any, int]:
    """A batching rule's general case: ``primitive`` applied to each batch element (``lax.map``)."""
    size = next(v.shape[d] for v, d in zip(args, dims, strict=True) if d is not None)
    operands = tuple(jnp.moveaxis(v, d, 0) if d is not None else jnp.broadcast_to(v, (size, *v.shape))
                     for v, d in zip(args, dims, strict=True))  # fmt: skip
    return jax.lax.map(lambda o: primitive.bind(*o, spec=spec), operands), 0


@contextlib.contextmanager
def switched(state: dict[str, Any], key: str, value: Any) -> Iterator[None]:
    """``state[key]`` set to ``value`` within the block (a choice of kernel that a product's
    lowering reads), JAX's caches cleared on the way in and out: xp's products are jitted kernels
    whose traces JAX caches without regard to such a switch, so a product traced before the block
    would be reused inside it, and one traced inside, after it."""
    saved = state[key]
    state[key] = value
    jax.clear_caches()
    try:
        yield
    finally:
        state[key] = saved
        jax.clear_caches()
