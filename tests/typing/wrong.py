"""Typed user code with wrong calls that both mypy and pyright must flag (tests/test_typing.py).

Each line whose comment starts with ``wrong`` must get an error from each checker, and no other
line may. It is never run.
"""

from __future__ import annotations

import xp

x: xp.Array = xp.asarray([1.0, 2.0])
A = xp.sparse.eye(2)

xp.sin("a")  # wrong: a string is not an array
xp.sin(None)  # wrong
xp.add(x, "1")  # wrong
xp.sin(x, x)  # wrong: one argument
xp.add(x)  # wrong: two arguments
xp.sum([1, 2])  # wrong: lists are not arrays
xp.zeros(3, dtype="flaot32")  # wrong: misspelt dtype
xp.asarray(1, dtype="float33")  # wrong
xp.ones(2, dtype=str)  # wrong: not a dtype
xp.fft.fft(x, 4)  # wrong: n is keyword-only
xp.linalg.solve(x, "b")  # wrong
x["a"]  # wrong: not an index
x[0] = "a"  # wrong
y: xp.Array = x > "a"  # wrong
xp.sparse.BCOO((x, [[0], [1]]), shape=(2,))  # wrong: lists are not arrays
xp.sinn(x)  # wrong: no such function
xp.sparse.no_such_function(A)  # wrong
B: xp.sparse.BCOO = A * 2  # wrong: the product may be dense
x *= A  # wrong: the product may be sparse (a TypeError at runtime)
