"""``with np.errstate(...)`` inside a jitted function is captured into the
graph (capture/variables/errstate.py, ``Node.errstate``): one graph, and the
jitted call behaves as the plain one -- values, RuntimeWarnings (where the
executable runs NumPy's ufuncs), FloatingPointError with the plain
function's side effects, and NumPy's error state after the call."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import capture
import frame
from frame.hal.fp_errors import GraphErrorStates
from frame.ir import GraphBuilder, dump_text, parse_text
from frame.passes.pipeline import standard_pipeline

from .corpus import effective_backend
from .helpers import assert_same, assert_same_as_eager

# backends whose executables run NumPy's ufuncs, so that they warn as NumPy does
# (an OpenVINO graph prints no RuntimeWarning: docs/openvino.md)
WARNING_BACKENDS = ["cpu"]


def graphs(fn, *args) -> tuple[int, list[str]]:
    """The graphs one call makes, and its graph breaks' reasons."""
    capture.reset_caches()
    out = frame.explain(fn)(*args)
    return out.graph_count, [r.reason for r in out.break_reasons]


def observed(fn, *args):
    """(result or exception, the warnings as (message, category)), the error
    state checked unchanged."""
    before = np.geterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", fn(*args))
        except FloatingPointError as e:
            out = ("raised", type(e), str(e))
    assert np.geterr() == before, "NumPy's error state is not restored"
    return out, [(str(w.message), w.category) for w in caught]


def check(fn, *args, backend=None, calls=3):
    """Plain vs jitted, ``calls`` times: results and exceptions (and warnings
    where ``backend`` runs NumPy's ufuncs); one graph."""
    native = observed(fn, *args)
    jitted = frame.jit(fn, backend=backend)
    for _ in range(calls):
        got = observed(jitted, *args)
        assert_same(native[0], got[0], "result")
        if (backend or effective_backend()) in WARNING_BACKENDS:
            assert got[1] == native[1], f"warnings: native {native[1]}, jitted {got[1]}"
        else:   # OpenVINO: never a warning the plain function does not give
            assert set(got[1]) <= set(native[1])


def ignore_inside_warn_outside(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / x
        lg = np.log(x)
    return inv * 2, lg, np.log(x) + 1


def nested(x):
    with np.errstate(all="ignore"):
        a = np.log(x)
        with np.errstate(divide="warn"):
            b = 1.0 / x
            c = np.sqrt(x)      # invalid: still ignored by the outer block
        d = 1.0 / x
    return a, b, c, d


def in_loop_and_branch(x, n):
    out = x
    for i in range(n):
        if i % 2:
            with np.errstate(divide="ignore"):
                out = out + 1.0 / (x - i)
        else:
            out = out + np.log(x - i)
    return out


def from_dict(x):
    modes = {"divide": "ignore", "invalid": "ignore"}
    with np.errstate(**modes):
        y = np.log(x)
    return y, np.log(x)


def cse_inside_then_outside(x):
    with np.errstate(divide="ignore"):
        a = 1.0 / x
    b = 1.0 / x       # the same computation, warns here
    return a + b


def fused_across_the_block(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x) * 2.0
    return y * 3.0 + 1.0 / x


def all_inside(x):
    with np.errstate(all="ignore"):
        return np.log(x) * 1e308 * 1e10


CASES = [
    (ignore_inside_warn_outside, (np.array([1.0, 0.0, -1.0]),)),
    (nested, (np.array([4.0, 0.0, -1.0]),)),
    (in_loop_and_branch, (np.array([0.0, 1.0, 2.0, 3.0]), 4)),
    (from_dict, (np.array([1.0, 0.0, -1.0], np.float32),)),
    (cse_inside_then_outside, (np.array([1.0, 0.0]),)),
    (fused_across_the_block, (np.full((64, 64), 0.0),)),
    (all_inside, (np.array([0.0, -1.0, 2.0]),)),
    # a large region mixing states: chunks on the pool's threads (unchunked while
    # every warning is shown), the state switched between the region's ufuncs
    (fused_across_the_block, (np.linspace(-1.0, 1.0, 1024 * 512).reshape(1024, 512),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[f"{c[0].__name__}-{c[1][0].size}" for c in CASES])
def test_one_graph_same_results_and_warnings(fn, args):
    assert graphs(fn, *args) == (1, [])
    check(fn, *args)
    for backend in WARNING_BACKENDS:
        check(fn, *args, backend=backend)


def raise_inside(x, sink):
    sink.append(len(sink))
    with np.errstate(divide="raise"):
        y = np.log(x)
    return y + 1


def raise_in_a_large_region(x):
    with np.errstate(over="raise"):
        y = x * 1e300
    return y * 2.0 + 1.0


@pytest.mark.parametrize("backend", [None, "cpu"])
def test_a_raising_block_in_a_large_region(backend):
    """One fused region of two states, chunked on the pool's threads under the
    default warnings filters: the block's overflow raises (from a chunk),
    the call then runs natively and raises NumPy's error."""
    big = np.linspace(-1.0, 1.0, 1024 * 512).reshape(1024, 512)
    assert graphs(raise_in_a_large_region, big) == (1, [])
    jitted = frame.jit(raise_in_a_large_region, backend=backend)
    for _ in range(3):
        np.testing.assert_array_equal(jitted(big), raise_in_a_large_region(big))
        with pytest.raises(FloatingPointError, match="overflow encountered in multiply"):
            jitted(big * 1e10)
    assert np.geterr()["over"] == "warn"


def warn_in_a_large_region(x):
    with np.errstate(divide="warn"):
        y = 1.0 / x
    return y * 2.0 + 1.0


def test_a_warning_block_in_a_large_region_under_a_quiet_caller():
    """Called inside the caller's ``np.errstate(all="ignore")``, with every
    warning shown: the region's block warns, so the region runs unchunked
    (one warning, as NumPy gives), though the caller's own state is quiet."""
    big = np.linspace(-1.0, 1.0, 1024 * 512).reshape(1024, 512)
    big[::64, 0] = 0.0   # zeros in every block of rows
    assert graphs(warn_in_a_large_region, big) == (1, [])
    jitted = frame.jit(warn_in_a_large_region, backend="cpu")
    with np.errstate(all="ignore"):
        native = observed(warn_in_a_large_region, big)
        for _ in range(3):
            got = observed(jitted, big)
            assert_same(native[0], got[0], "result")
            assert got[1] == native[1] == [("divide by zero encountered in divide", RuntimeWarning)]


def raise_caught(x):
    try:
        with np.errstate(invalid="raise"):
            y = np.sqrt(x)
    except FloatingPointError as e:
        return "caught", str(e)
    return "ok", y


@pytest.mark.parametrize("backend", [None, "cpu"])
def test_a_block_that_raises_raises_once_with_the_side_effects(backend):
    assert graphs(raise_inside, np.array([1.0, 2.0]), []) == (1, [])
    for x in (np.array([1.0, 2.0]), np.array([1.0, 0.0])):
        # (the raise comes from the graph, then the call runs natively: captured=None)
        assert_same_as_eager(raise_inside, x, [], backend=backend, captured=None)
    jitted = frame.jit(raise_inside, backend=backend)
    sink = []
    for _ in range(3):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in log"):
            jitted(np.array([1.0, 0.0]), sink)
    assert sink == [0, 1, 2]          # the append happened once per call
    assert np.geterr()["divide"] == "warn"


@pytest.mark.parametrize("backend", [None, "cpu"])
def test_a_raise_caught_in_the_function(backend):
    assert graphs(raise_caught, np.array([1.0, 4.0])) == (1, [])
    for x in (np.array([1.0, 4.0]), np.array([1.0, -4.0])):
        for _ in range(2):
            assert_same_as_eager(raise_caught, x, backend=backend, captured=None)


@pytest.mark.parametrize("backend", [None, "cpu"])
def test_the_callers_raising_state_applies_outside_the_block_only(backend):
    """Called inside the caller's ``with np.errstate(all="raise")``: the block's
    ``ignore`` wins for its ops, the caller's ``raise`` for the others."""
    assert graphs(ignore_inside_warn_outside, np.array([1.0, 2.0])) == (1, [])
    jitted = frame.jit(ignore_inside_warn_outside, backend=backend)
    runs_before = frame.stats().extra.get("graph_run_errors", 0)
    quiet = np.array([1.0, 0.0, 2.0])            # errors inside the block only... and log(0)
    clean = np.array([1.0, 0.5, 2.0])
    for x in (clean, quiet):
        for _ in range(3):
            with np.errstate(all="raise"):
                assert_same(observed(ignore_inside_warn_outside, x)[0], observed(jitted, x)[0],
                            "under the caller's raise")
    with np.errstate(all="raise"):
        for _ in range(3):
            jitted(np.array([2.0, 0.5]))   # no error anywhere: no native rerun
    assert frame.stats().extra.get("graph_run_errors", 0) - runs_before == 3   # the three log(0)s


def only_inside(x):
    with np.errstate(divide="ignore"):
        y = 1.0 / x
    return y


@pytest.mark.parametrize("backend", [None, "cpu"])
def test_a_block_that_ignores_needs_no_native_run_when_the_caller_raises(backend):
    x = np.array([1.0, 0.0])
    assert graphs(only_inside, x) == (1, [])
    jitted = frame.jit(only_inside, backend=backend)
    before = frame.stats().extra.get("graph_run_errors", 0)
    for _ in range(4):
        with np.errstate(divide="raise"):
            np.testing.assert_array_equal(jitted(x), [1.0, np.inf])
    assert frame.stats().extra.get("graph_run_errors", 0) == before


def step_with_block(w, x):
    w -= np.float32(1)
    with np.errstate(over="raise"):
        y = x * np.float32(1e38)
    return y.sum()


@pytest.mark.parametrize("backend", [None, "cpu"])
def test_donated_update_then_a_raising_block(backend):
    """The graph computes ``w -= 1`` into ``w``: a raise of the block after that
    could not rerun natively, so the entry runs natively at once while some op
    of the graph would raise (here always: the block raises)."""
    x = np.ones(4, np.float32)
    assert graphs(step_with_block, np.zeros(4, np.float32), x) == (1, [])
    jitted = frame.jit(step_with_block, backend=backend)
    for _ in range(3):
        w = np.zeros(4, np.float32)
        assert jitted(w, x) == step_with_block(np.zeros(4, np.float32), x)
        assert w.tolist() == [-1.0] * 4
    outcomes = []
    for fn in (step_with_block, jitted):
        w = np.zeros(4, np.float32)
        with pytest.raises(FloatingPointError) as caught:
            fn(w, x * 10)
        outcomes.append((str(caught.value), w.tolist()))
    assert outcomes[0] == outcomes[1]


def break_inside(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(x)
        b = np.arctanh(x)      # no frame op: a graph break inside the block
        c = 1.0 / x
    return a, b, c, np.log(x)


def test_a_graph_break_inside_the_block():
    x = np.array([0.0, 0.5, -2.0])
    # the graph before the break runs the block's ops in its state; the rest of the
    # block runs in a resume function with a real np.errstate entered, whose exit
    # is a break (docs/capture.md, `with`)
    count, reasons = graphs(break_inside, x)
    assert count == 3 and len(reasons) == 2
    assert "numpy.arctanh" in reasons[0] and "numpy.__exit__" in reasons[1]
    for backend in [None] + WARNING_BACKENDS:
        check(break_inside, x, backend=backend)


def test_node_errstate_in_the_ir_text_and_the_cache_key():
    b = GraphBuilder()
    x = b.input("float64", (3,))
    y = b.op("log", x)
    y.producer.errstate = (("divide", "ignore"), ("invalid", "raise"))
    g = b.build(b.op("exp", y))
    text = dump_text(g)
    assert "log(%0) : float64[3] !errstate(divide=ignore,invalid=raise)" in text
    assert dump_text(parse_text(text)) == text
    plain = GraphBuilder()
    px = plain.input("float64", (3,))
    assert dump_text(plain.build(plain.op("exp", plain.op("log", px)))) != text
    work = g
    for p in standard_pipeline("cpu")[:-1]:   # (up to backend_lowering)
        work = p.run(work)
    assert work.errstates() == ((("divide", "ignore"), ("invalid", "raise")), None)


def test_graph_error_states_ask_each_ops_effective_state():
    ignore = GraphErrorStates(((("divide", "ignore"),),))
    with np.errstate(divide="raise"):
        assert not ignore.raise_requested()
    with np.errstate(over="raise"):
        assert ignore.raise_requested()       # the block sets divide only
    mixed = GraphErrorStates(((("divide", "ignore"),), None))
    with np.errstate(divide="raise"):
        assert mixed.raise_requested()        # an op outside the block
    raising = GraphErrorStates(((("invalid", "raise"),),))
    assert raising.raise_requested()
    warn = GraphErrorStates(((("over", "warn"),),))
    with np.errstate(all="ignore"):
        assert not warn.raise_requested()
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            assert warn.raise_requested()     # its warning would be an error
