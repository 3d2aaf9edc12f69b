"""NumPy's floating-point error state and OpenVINO (frame/hal/fp_errors.py):
OpenVINO computes without it, so while NumPy is asked to raise (``np.seterr``,
``np.errstate``, a ``warnings`` filter making RuntimeWarning an error) an
OpenVINO executable runs its graph on the reference kernels, which raise as
NumPy does; a jitted function then raises the plain function's exception.
Differential: every expectation is what plain NumPy does."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from ._helpers import OPTIONS, backend  # noqa: F401 -- skips without openvino

import capture
import frame
from frame.backends.openvino.executable import OpenVinoExecutable
from frame.hal.fp_errors import raise_requested
from frame.ir import GraphBuilder
from frame.runtime import compile as rc


def _log_graph():
    b = GraphBuilder()
    x = b.input("float32", (4, 8))
    return b.build(b.op("add", b.op("mul", b.op("log", x), b.scalar(2.0, like=x)),
                        b.scalar(1.0, like=x)))


def _data():
    x = np.linspace(0.5, 3.0, 32, dtype=np.float32).reshape(4, 8)
    x[1, 3] = 0.0   # log(0): divide by zero
    return x


def _plain(x):
    return np.log(x) * np.float32(2.0) + np.float32(1.0)


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 -- the outcome compared is the exception
        return None, e


@pytest.mark.parametrize("mode", [
    dict(errstate=dict(divide="raise")),
    dict(errstate=dict(all="raise")),
    dict(errstate=dict(divide="call"), errcall=lambda kind, flag: (_ for _ in ()).throw(
        ArithmeticError(kind))),
    dict(filters="error"),
])
def test_the_executable_raises_what_numpy_raises(mode):
    exe = rc.compile(_log_graph(), "openvino")
    assert isinstance(exe, OpenVinoExecutable)
    x = _data()
    with np.errstate(**mode.get("errstate", {}), **({"call": mode["errcall"]}
                                                   if "errcall" in mode else {})), \
            warnings.catch_warnings():
        if "filters" in mode:
            warnings.simplefilter(mode["filters"])
        assert raise_requested()
        _, want = _outcome(_plain, x)
        _, got = _outcome(lambda v: exe.run([v]), x)
    assert want is not None and got is not None
    assert type(got) is type(want) and str(got) == str(want)


def test_without_a_raise_request_openvino_runs_and_matches():
    exe = rc.compile(_log_graph(), "openvino")
    x = _data()
    assert not raise_requested()
    with np.errstate(divide="ignore"):
        want = _plain(x)
    got = exe.run([x])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert np.isneginf(got[1, 3])


@pytest.mark.parametrize("setup, expected", [
    (lambda: np.errstate(all="ignore"), False),
    (lambda: np.errstate(all="warn"), False),
    (lambda: np.errstate(under="raise"), True),
    (lambda: np.errstate(invalid="print"), True),
    (lambda: np.errstate(over="log"), True),
])
def test_raise_requested_follows_np_errstate(setup, expected):
    assert not raise_requested()
    with setup():
        assert raise_requested() is expected
    assert not raise_requested()


def test_raise_requested_follows_np_seterr():
    old = np.seterr(invalid="raise")
    try:
        assert raise_requested()
        np.seterr(**old)
        assert not raise_requested()
    finally:
        np.seterr(**old)


@pytest.mark.parametrize("add_filters, expected", [
    ([("error", RuntimeWarning)], True),
    ([("error", Warning)], True),
    ([("error", UserWarning)], False),
    # the first filter for RuntimeWarning decides; the later "error" never applies
    ([("error", RuntimeWarning), ("ignore", RuntimeWarning)], False),
    ([("error", RuntimeWarning), ("always", Warning)], False),
])
def test_raise_requested_follows_the_warnings_filters(add_filters, expected):
    with warnings.catch_warnings():
        for action, category in add_filters:  # each inserted at the front
            warnings.simplefilter(action, category)
        assert raise_requested() is expected
        with np.errstate(all="ignore"):   # NumPy warns of nothing: nothing to raise
            assert not raise_requested()
    assert not raise_requested()


def test_a_filter_limited_to_a_module_counts():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=RuntimeWarning, module="some_module")
        assert raise_requested()


@pytest.mark.parametrize("strict", [lambda: np.errstate(divide="raise"),
                                    lambda: warnings.catch_warnings(action="error",
                                                                    category=RuntimeWarning)])
def test_a_jitted_function_on_openvino_raises_the_plain_exception(strict):
    def f(x):
        return np.log(x) * 2 + 1
    jitted = frame.jit(f, backend="openvino")
    x = _data()
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(jitted(x), f(x), rtol=1e-5)  # compiled, runs on OpenVINO
    with strict():
        _, want = _outcome(f, x)
        _, got = _outcome(jitted, x)
        assert want is not None and type(got) is type(want) and str(got) == str(want)
        fine = x + 1
        np.testing.assert_allclose(jitted(fine), f(fine), rtol=1e-5)   # no error: a result



def _one_graph(fn, *args) -> bool:
    """Is ``fn`` captured as one graph without a break (the block in it)?"""
    capture.reset_caches()
    out = frame.explain(fn, backend="openvino")(*args)
    return out.graph_count == 1 and not out.break_reasons


def _quiet_inside(x):
    with np.errstate(divide="ignore"):
        return np.log(x) * np.float32(2.0) + np.float32(1.0)


def test_a_block_that_ignores_runs_on_openvino_while_the_caller_raises(monkeypatch):
    """Every op of the graph is in a ``with np.errstate(divide="ignore")``
    block: under the caller's ``divide="raise"`` the graph still runs on
    OpenVINO (no reference run, as the plain function raises nothing); under
    ``over="raise"``, which the block leaves to the caller, it runs on the
    reference kernels (an overflow would raise)."""
    references = []
    original = OpenVinoExecutable._reference

    def counted(self, inputs):
        references.append(1)
        return original(self, inputs)
    monkeypatch.setattr(OpenVinoExecutable, "_reference", counted)
    x = _data()
    assert _one_graph(_quiet_inside, x)
    jitted = frame.jit(_quiet_inside, backend="openvino")
    with np.errstate(divide="raise"):
        for _ in range(3):
            got = jitted(x)
            np.testing.assert_allclose(got, _quiet_inside(x), rtol=1e-5)
            assert np.isneginf(got[1, 3])
    assert not references
    with np.errstate(over="raise"):
        np.testing.assert_array_equal(jitted(x), _quiet_inside(x))   # the reference's bits
    assert references


def test_a_block_that_raises_raises_on_openvino():
    def f(x):
        y = x * np.float32(2.0)
        with np.errstate(divide="raise"):
            return np.log(y)
    ok = np.linspace(0.5, 3.0, 32, dtype=np.float32).reshape(4, 8)
    assert _one_graph(f, ok)
    jitted = frame.jit(f, backend="openvino")
    for _ in range(2):
        np.testing.assert_allclose(jitted(ok), f(ok), rtol=1e-5)
        _, want = _outcome(f, _data())
        _, got = _outcome(jitted, _data())
        assert type(got) is type(want) is FloatingPointError and str(got) == str(want)


def test_the_ops_error_states_survive_the_persistent_cache():
    from frame.backends.openvino import persist
    graph = _log_graph()
    graph.nodes[0].errstate = (("divide", "ignore"),)    # log in a block ignoring divide
    exe = rc.compile(graph, "openvino")
    b = backend()
    artifact = persist.serialize(graph, exe, "CPU")
    loaded = persist.deserialize(b.core, artifact, "CPU", lambda g: b.config_for("CPU", OPTIONS, g))
    assert loaded._errstates.states == exe._errstates.states == ((("divide", "ignore"),), None)
    with np.errstate(divide="raise"):    # log's divide is ignored; mul and add count
        assert loaded._errstates.raise_requested()
    with np.errstate(all="ignore"):
        assert not loaded._errstates.raise_requested()
