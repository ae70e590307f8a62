"""The boundary: what public functions accept, the errors they give, and their cost."""

import inspect
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xp
import xp.sparse
import xp.sparse.linalg
from xp import _boundary, _routing, _typing


@pytest.mark.x64
def test_array_like_members_are_accepted():
    for value in (xp.asarray([1.0]), jnp.asarray([1.0]), np.asarray([1.0]), np.float64(1.0), 1.0, 1):
        assert isinstance(xp.sin(value), xp.Array)
    assert xp.logical_not(True).dtype == xp.bool


def test_tracers_are_array_like():
    # isinstance(tracer, jax.typing.ArrayLike) is False, but xp accepts tracers
    out = jax.jit(lambda t: xp.sin(t).jax)(jnp.asarray([0.5]))
    assert np.allclose(np.asarray(out), np.sin(0.5))
    assert jax.grad(lambda t: xp.exp(t).jax)(1.0) == pytest.approx(np.e)


def test_sequences_are_not_arrays():
    with pytest.raises(
        TypeError,
        match=r"xp.exp: x must be an array, got list \(lists and tuples are not arrays; convert with xp.asarray\)",
    ):
        xp.exp([1.0, 2.0])
    with pytest.raises(TypeError, match="got tuple"):
        xp.add((1, 2), 1)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: xp.zeros((2, -1)), ValueError, r"xp.zeros: shape\[1\] must be non-negative, got -1"),
        (lambda: xp.zeros("3"), TypeError, "xp.zeros: shape must be an int or a tuple of ints, got str '3'"),
        (lambda: xp.ones(2, dtype="float16"), TypeError, "xp.ones: dtype must be one of the array API dtypes"),
        (lambda: xp.eye(2, k=1.5), TypeError, "xp.eye: k must be an integer, got float 1.5"),
        (lambda: xp.eye(True), TypeError, "xp.eye: n_rows must be an integer, got bool"),
        (lambda: xp.tril(xp.zeros(3)), ValueError, r"xp.tril: x must have at least 2 dimensions, got shape \(3,\)"),
        (lambda: xp.full(2, "a"), TypeError, "xp.full: fill_value must be an array, got str 'a'"),
        (lambda: xp.asarray(1, device="cpu"), TypeError, "xp.asarray: device must be a jax.Device"),
        (lambda: xp.isdtype(xp.int8, "integer"), ValueError, "xp.isdtype: kind must be a dtype or one of"),
    ],
)
def test_errors_name_function_parameter_expectation_and_value(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_rejected_call_changes_nothing():
    x = xp.asarray([1, 2], dtype=xp.int8)
    before = x.jax
    with pytest.raises(OverflowError):
        x[0] = 1000
    with pytest.raises(TypeError):
        x += 0.5
    assert x.jax is before


def test_public_signatures_are_annotated_with_the_boundary_types():
    hints = inspect.signature(xp.asarray).parameters
    assert hints["dtype"].annotation in ("DTypeLike | None", _typing.DTypeLike | None)
    assert "ArrayLike" in str(inspect.signature(xp.full_like).parameters["x"].annotation)
    assert "Device" in str(inspect.signature(xp.zeros).parameters["device"].annotation)


def test_functions_report_their_public_names():
    assert xp.add.__name__ == "add" and xp.add.__module__ == "xp"
    with pytest.raises(TypeError, match=r"^xp\.add: "):
        xp.add("a", 1)


def _probe(a, b=2, /, c=3, *rest, d, e=5, **more):
    """Every kind of parameter, with and without defaults: what xp's public functions are made from."""
    if a == "bad":
        xp._errors.fail(ValueError, f"a must not be 'bad', got {a!r}")
    return a, b, c, rest, d, e, more


@pytest.fixture
def published(monkeypatch):
    """``_routing.api`` applied to a function, registered in a throwaway registry."""
    monkeypatch.setattr(_routing, "PUBLIC_FUNCTIONS", dict(_routing.PUBLIC_FUNCTIONS))
    return _routing.api


_PROBE_CALLS = [
    ((1,), {"d": 4}),
    ((1, 0), {"d": 4}),
    ((1, 0, 7), {"d": 4, "e": 8}),
    ((1, 0, 7, 9, 10), {"d": 4, "x": 11}),
    ((1,), {"c": 7, "d": 4, "more": 12}),
]


@pytest.mark.parametrize("first", range(len(_PROBE_CALLS)))
def test_a_public_function_takes_its_implementations_parameters(published, first):
    # The public function is an ordinary wrapper (xp/_routing.py): the implementation's signature,
    # and every call passed on as written, whichever call comes first
    public = published(_probe)
    order = [first, *(i for i in range(len(_PROBE_CALLS)) if i != first)]
    for i in order:
        args, kwargs = _PROBE_CALLS[i]
        assert public(*args, **kwargs) == _probe(*args, **kwargs)
    assert public.__name__ == "_probe" and public.__wrapped__ is _probe
    assert inspect.signature(public) == inspect.signature(_probe)


def test_a_public_function_reports_the_same_errors_before_and_after_its_first_call(published):
    def errors(public):
        found = []
        for args, kwargs in [(("bad",), {"d": 1}), ((), {"d": 1}), ((1, 2), {}), ((1, 2, 3), {"c": 4, "d": 1})]:
            with pytest.raises((TypeError, ValueError)) as info:
                public(*args, **kwargs)
            found.append((type(info.value), str(info.value)))
        return found

    first, later = published(_probe), published(_probe)
    later(1, d=2)
    assert errors(first) == errors(later)
    kind, message = errors(later)[0]
    assert kind is ValueError and re.fullmatch(r"xp\.(\w+\.)?_probe: a must not be 'bad', got 'bad'", message)
    assert all("_probe()" in message for _, message in errors(later)[1:])  # Python's own, under its name


def test_a_first_call_from_several_threads_at_once_is_answered_in_each(published):
    import concurrent.futures

    public = published(_probe)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: public(i, c=i, d=-i), range(64)))
    assert results == [_probe(i, c=i, d=-i) for i in range(64)]


def _narrowing_probe(x, *, note):
    return x, xp._narrowing.narrowed(np.dtype(np.float64), f"note is {note}")


def test_a_public_functions_warnings_name_it_and_point_at_its_caller(published):
    # A NarrowingWarning is issued by the public function's error handling (xp._routing.failed),
    # which knows its name, and is attributed to the public function's caller, on every call
    public = published(_narrowing_probe)
    for call in range(3):
        with xp.narrow_64bit(), pytest.warns(xp.NarrowingWarning) as record:
            assert public(call, note=f"call {call}") == (call, np.dtype(np.float32))
        [warning] = record
        assert re.fullmatch(
            rf"xp\.(\w+\.)?_narrowing_probe: note is call {call}; narrowed to float32 .*", str(warning.message)
        )
        assert warning.filename == __file__


def test_a_sparse_implementation_gets_the_arguments_as_the_caller_wrote_them(monkeypatch):
    class FakeSparse:
        pass

    calls = []
    monkeypatch.setattr(_routing, "SPARSE_TYPES", (*_routing.SPARSE_TYPES, FakeSparse))
    monkeypatch.setitem(_routing.SPARSE_IMPLEMENTATIONS, "sort", lambda *args, **kwargs: calls.append((args, kwargs)))
    monkeypatch.setitem(_routing.SPARSE_IMPLEMENTATIONS, "std", lambda *args, **kwargs: calls.append((args, kwargs)))
    x = FakeSparse()
    for _ in range(2):  # before and after the public functions' first calls
        calls.clear()
        xp.sort(x), xp.sort(x, descending=True), xp.sort(x, axis=0, stable=False), xp.std(x, correction=1)
        assert calls == [((x,), {}), ((x,), {"descending": True}), ((x,), {"axis": 0, "stable": False}),
                         ((x,), {"correction": 1})]  # fmt: skip


def test_the_argument_check_of_an_xp_array_calls_nothing():
    """The boundary's fast path is a type check and an attribute read: no further Python or C
    function runs (what that costs is bench/RESULTS.md's; a test counts calls, not time)."""
    x = xp.asarray([1.0])
    calls = []

    def profile(frame, event, arg):
        calls.append((event, getattr(arg, "__qualname__", None) or frame.f_code.co_qualname))

    sys.setprofile(profile)
    try:
        value = _boundary.array(x, "x")
    finally:
        sys.setprofile(None)
    assert value is x.jax
    assert calls[:2] == [("call", "array"), ("return", "array")], calls


def test_sparse_routing_without_an_implementation_computes_densely_and_says_so(monkeypatch):
    monkeypatch.setattr(_routing, "SPARSE_IMPLEMENTATIONS", {})  # none, whether xp.sparse is loaded or not

    class FakeSparse:
        def todense(self):
            return xp.asarray([0.5, 0.0])

    monkeypatch.setattr(_routing, "SPARSE_TYPES", (*_routing.SPARSE_TYPES, FakeSparse))
    with pytest.warns(xp._errors.SparseEfficiencyWarning, match=r"^xp.sin has no sparse implementation: computed"):
        out = xp.sin(FakeSparse())
    assert type(out) is xp.Array
    np.testing.assert_array_equal(np.asarray(out), np.asarray(xp.sin(xp.asarray([0.5, 0.0]))))
    with pytest.raises(TypeError, match="^xp.sin: x must be"):  # argument errors stay errors
        xp.sin("a")


# --- issue #10: bad input that leaked an internal exception or a bare message --------------------


def test_writing_a_sparse_value_into_a_dense_array_is_a_named_type_error():
    A = xp.sparse.fromdense(xp.eye(3, dtype=xp.float32))
    z = xp.zeros((3, 3), dtype=xp.float32)
    view = z[0]
    for key, value in [(Ellipsis, A), (0, A[0])]:
        with pytest.raises(TypeError, match=r"^xp.Array.__setitem__: value is a sparse array.*todense\(\)"):
            z[key] = value
    assert not np.asarray(z).any() and not np.asarray(view).any()  # nothing written, the view unchanged


@pytest.mark.parametrize("bad", [{}, [], {"float32"}])
def test_an_unhashable_dtype_is_a_named_type_error(bad):
    with pytest.raises(TypeError, match=r"^xp.zeros: dtype must be one of the array API dtypes"):
        xp.zeros(2, dtype=bad)
    with pytest.raises(TypeError, match=r"^xp.astype: dtype must be one of the array API dtypes"):
        xp.astype(xp.zeros(2), bad)


def test_isdtype_checks_every_kind_of_a_tuple():
    with pytest.raises(ValueError, match="xp.isdtype: kind must be a dtype or one of .* got 'nonsense'"):
        xp.isdtype(xp.float32, ("real floating", "nonsense"))
    assert xp.isdtype(xp.float32, ("integral", xp.float32))
    assert not xp.isdtype(xp.float32, ("integral", "complex floating"))


def test_category_messages_have_the_right_article():
    with pytest.raises(TypeError, match="x1 must have an integer or boolean dtype"):
        xp.bitwise_and(xp.asarray(1.5), xp.asarray(2.5))
    with pytest.raises(TypeError, match="x must have a real-valued dtype"):
        xp.floor(xp.asarray(1j))


# found by the bad-input sweep (tests/test_bad_input.py)


def test_a_kind_that_is_neither_a_string_nor_a_tuple_is_a_named_error():
    with pytest.raises(ValueError, match=r"^xp.__array_namespace_info__\(\).dtypes: kind must be .* got 0$"):
        xp.__array_namespace_info__().dtypes(kind=0)  # pyright: ignore[reportArgumentType]  (the bad call under test)


def test_jax_api_todense_of_a_boolean_sparse_array():
    mask = xp.asarray([[True, False], [False, True]])
    for A, todense in [
        (xp.sparse.fromdense(mask), xp.sparse.bcoo_todense),
        (xp.sparse.fromdense(mask, format="bcsr"), xp.sparse.bcsr_todense),
    ]:
        out = todense(A)
        assert out.dtype == xp.bool
        np.testing.assert_array_equal(np.asarray(out), np.asarray(mask))


def test_bcoo_gather_takes_a_scalar_fill_value_only():
    dimension_numbers = jax.lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    A = xp.sparse.fromdense(xp.eye(3))
    with pytest.raises(
        TypeError, match=r"^xp.sparse.bcoo_gather: fill_value must be None or a Python scalar, got list"
    ):
        xp.sparse.bcoo_gather(A, jnp.asarray([[0], [2]]), dimension_numbers, (1, 3), fill_value=[1])


def test_lobpcg_iterations_beyond_the_default_int_are_a_named_overflow_error():
    A = xp.sparse.fromdense(xp.eye(6, dtype=xp.float32))
    with pytest.raises(OverflowError, match=r"^xp.sparse.linalg.lobpcg_standard: Python int \d+ in m is out of bounds"):
        xp.sparse.linalg.lobpcg_standard(A, xp.ones((6, 1), dtype=xp.float32), m=2**70)


def test_astype_of_a_complex_array_to_a_real_dtype_names_x():
    with pytest.raises(TypeError, match=r"^xp.astype: cannot convert complex x to int32"):
        xp.astype(xp.asarray([1j]), xp.int32)


def test_jax_api_products_name_their_own_parameters():
    A = xp.sparse.fromdense(xp.eye(3, dtype=xp.float32))
    numbers = (((1,), (0,)), ((), ()))
    with pytest.raises(TypeError, match=r"^xp.sparse.bcoo_dot_general_sampled: A must have a numeric dtype, got bool"):
        xp.sparse.bcoo_dot_general_sampled(xp.eye(3) > 0, xp.eye(3), A.indices, dimension_numbers=numbers)
    with pytest.raises(ValueError, match=r"^xp.sparse.bcoo_dot_general_sampled: dimension 1 of A \(size 2\)"):
        xp.sparse.bcoo_dot_general_sampled(xp.ones((3, 2)), xp.eye(3), A.indices, dimension_numbers=numbers)
    with pytest.raises(TypeError, match=r"^xp.sparse.bcoo_multiply_dense: sp_mat must have a numeric dtype, got bool"):
        xp.sparse.bcoo_multiply_dense(xp.sparse.fromdense(xp.eye(3) > 0), xp.eye(3))
    with pytest.raises(TypeError, match=r"^xp.sparse.bcsr_dot_general: preferred_element_type must be a numeric"):
        xp.sparse.bcsr_dot_general(A.to_bcsr(), xp.eye(3), dimension_numbers=numbers, preferred_element_type=bool)
    with pytest.raises(TypeError, match=r"^xp.sparse.linalg.spsolve: b_ must be an array, got tuple"):
        xp.sparse.linalg.spsolve(A.to_bcsr(), (1.0, 2.0, 3.0))  # pyright: ignore[reportArgumentType]


def test_jax_api_layout_and_slice_errors_are_named():
    A = xp.sparse.fromdense(xp.eye(3, dtype=xp.float32))
    with pytest.raises(ValueError, match=r"^xp.sparse.bcoo_update_layout: .*inefficient storage.*on_inefficient"):
        xp.sparse.bcoo_update_layout(A, n_batch=1)
    with pytest.raises(
        IndexError, match=r"^xp.sparse.bcoo_slice: start_indices and limit_indices: the slice \[-1, 2\)"
    ):
        xp.sparse.bcoo_slice(A, start_indices=(2, -1), limit_indices=(3, 2))


def test_multigammaln_of_a_dimension_beyond_the_default_int_is_a_named_overflow_error():
    with pytest.raises(OverflowError, match=r"^xp.special.multigammaln: Python int \d+ in d is out of bounds"):
        xp.special.multigammaln(xp.asarray(5.0), 2**70)


def test_a_diagonal_offset_beyond_any_int64_is_the_empty_diagonal():
    x = xp.reshape(xp.arange(6.0), (2, 3))
    for offset in (10**20, -(10**20)):
        assert xp.linalg.diagonal(x, offset=offset).shape == (0,)
        assert float(xp.linalg.trace(x, offset=offset)) == 0.0
    np.testing.assert_array_equal(np.asarray(xp.linalg.diagonal(x, offset=1)), [1.0, 5.0])
    assert float(xp.linalg.trace(x, offset=-1)) == 3.0


def test_jax_api_bad_patterns_and_bool_sums_are_named_errors():
    A = xp.sparse.fromdense(xp.eye(3) > 0)
    for fn in (xp.sparse.bcoo_sum_duplicates, xp.sparse.bcoo_eliminate_zeros):
        with pytest.raises(TypeError, match=rf"^xp.sparse.{fn.__name__}: mat has dtype bool"):
            fn(A)
    R = xp.sparse.fromdense(xp.eye(3), format="bcsr")
    with pytest.raises(ValueError, match=r"^xp.sparse.bcsr_extract: indices of shape \(3,\) and indptr of shape \(\)"):
        xp.sparse.bcsr_extract(R.indices, xp.asarray(0, dtype=xp.int32), xp.eye(3))
    with pytest.raises(IndexError, match=r"^xp.sparse.bcsr_extract: indices holds a column out of range"):
        xp.sparse.bcsr_extract(R.indices, R.indptr, xp.zeros((3, 0)))
    numbers = jax.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    with pytest.raises(ValueError, match=r"^xp.sparse.bcoo_gather: start_indices must have at least 1 dimension"):
        xp.sparse.bcoo_gather(xp.sparse.fromdense(xp.eye(3)), xp.asarray(-1), numbers, (1, 3))
    with pytest.raises(ValueError, match=r"^xp.sparse.bcoo_gather: slice_sizes\[1\]=-1 must be in \[0, 3\]"):
        xp.sparse.bcoo_gather(xp.sparse.fromdense(xp.eye(3)), xp.asarray([[0]]), numbers, (1, -1))
