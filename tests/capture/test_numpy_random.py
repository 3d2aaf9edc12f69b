"""NumPy's random draws under capture (capture/variables/numpy_random.py): a
sampling method of a ``np.random.Generator`` or ``RandomState`` the entry can
name, or a legacy ``np.random.*`` function, with constant arguments and an
array result, is a graph input the entry draws just before the graph, in
program order, from the same object.  Each test runs the plain and the
jitted function from the same seeds over several calls (the first a
translation, then cache hits) and compares the results and every
generator's next draw (where the call left it) bit for bit, then counts
``frame.explain``'s graphs and breaks."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import CompileCounter, assert_same, resolved_backend

RNG = np.random.default_rng(0)   # a module-level generator the functions read as a global


def _reseed():
    """Every generator a test draws from, at a known state."""
    np.random.seed(1234)
    RNG.bit_generator.state = np.random.default_rng(77).bit_generator.state
    frame.manual_seed(5)


def _after(gens) -> list:
    """Where the call left each generator: its next draws."""
    return [g.random(4) if isinstance(g, np.random.Generator) else g.random_sample(4)
            for g in gens] + [np.random.random_sample(4), RNG.random(4), frame.rand(4).numpy()]


def _run(fn, make_args, calls: int):
    _reseed()
    args = make_args()
    gens = [a for a in args if isinstance(a, (np.random.Generator, np.random.RandomState))]
    results = [fn(*args) for _ in range(calls)]
    return results, _after(gens)


def _bitwise(native, jitted, path="result"):
    """Every array in ``native`` equal bit for bit to its place in ``jitted``."""
    if isinstance(native, np.ndarray):
        assert native.dtype == jitted.dtype and np.array_equal(native, jitted, equal_nan=True), path
    elif isinstance(native, (tuple, list)):
        for i, (a, b) in enumerate(zip(native, jitted)):
            _bitwise(a, b, f"{path}[{i}]")


def assert_same_draws(fn, make_args, *, graphs: int | None = 1, breaks: int = 0, calls: int = 3,
                      exact=lambda result: result):
    """Plain vs jitted from the same seeds: results (``exact(result)`` bit for
    bit, the rest as ``assert_same``), the generators' next draws bit for bit;
    then ``explain``'s graph and break counts."""
    native_results, native_after = _run(fn, make_args, calls)
    jitted_results, jitted_after = _run(frame.jit(fn), make_args, calls)
    assert_same(native_results, jitted_results, backend=resolved_backend())
    for a, b in zip(native_results, jitted_results):
        _bitwise(exact(a), exact(b))
    _bitwise(native_after, jitted_after, "generator left at")
    if graphs is not None:
        _reseed()
        out = frame.explain(fn)(*make_args())
        assert out.exception is None, out.exception
        assert (out.graph_count, out.graph_break_count) == (graphs, breaks), out.break_reasons
        return out


def x34(dtype=np.float64):
    return np.arange(12, dtype=dtype).reshape(3, 4) / 7


def test_generator_argument_noise_and_indices():
    def f(x, rng):
        noisy = x + rng.normal(0, 0.1, size=x.shape)
        idx = rng.permutation(x.shape[0])
        pick = rng.choice(4, 2, replace=False)
        k = rng.integers(0, 5, size=(3, 4))
        return noisy[idx], pick, k * x, rng.random((2,)), rng.standard_normal(3, dtype=np.float32)
    assert_same_draws(f, lambda: (x34(), np.random.default_rng(3)),
                      exact=lambda r: (r[1], r[3], r[4]))


def test_legacy_module_functions():
    def f(x):
        mask = (np.random.rand(*x.shape) < 0.5) / 0.5
        return x * mask, np.random.randn(3, 4), np.random.randint(0, 9, size=5), \
            np.random.normal(1.0, 2.0, size=(2, 2)), np.random.uniform(-1, 1, 3), \
            np.random.choice(6, 3), np.random.permutation(5), np.random.random((2,))
    assert_same_draws(f, lambda: (x34(),), exact=lambda r: r[1:])


def test_random_state_object_and_global_generator():
    def f(x, rs):
        return x + rs.randn(3, 4) + RNG.normal(size=(3, 4)), rs.random_sample(2), RNG.integers(9, size=3)
    assert_same_draws(f, lambda: (x34(), np.random.RandomState(8)), exact=lambda r: r[1:])


def test_two_generators_and_frames_own_draws_in_program_order():
    def f(x, a, b):
        u = a.random((3, 4))
        v = b.random((3, 4))
        w = frame.rand(3, 4).numpy() if False else a.random((3, 4))
        return x + u - v * w, np.random.rand(2), frame.rand(2)
    assert_same_draws(f, lambda: (x34(), np.random.default_rng(1), np.random.default_rng(2)))


def test_frame_tensor_draws_next_to_numpy_draws():
    def f(t, rng):
        return t + frame.rand(3, 4), rng.normal(size=(3, 4)) + 1, t * frame.randn(3, 4)
    assert_same_draws(f, lambda: (frame.tensor(x34(np.float32)), np.random.default_rng(4)))


def _loop(x, rng):
    for _ in range(3):
        x = x + rng.normal(size=(3, 4))
    return x


def _dtypes(x, rng):
    return rng.random(3, dtype=np.float32), rng.integers(0, 10, size=3, dtype=np.uint8), \
        rng.integers(0, 2, size=4, dtype=bool), rng.random(0), rng.random(size=())


def _vector_parameters(x, rng):
    return rng.multivariate_normal([0.0, 1.0], [[1.0, 0.2], [0.2, 1.0]], size=3), \
        rng.dirichlet([1.0, 2.0], size=2), rng.multinomial(10, [0.5, 0.5], size=2), \
        rng.choice(5, 3, p=[0.1, 0.2, 0.3, 0.2, 0.2])


def _written_in_place(x, rng):
    m = rng.random((3, 4))
    m[0] = 5
    m += x
    return m


def _random_state_distributions(x, rs):
    return rs.normal(size=3), rs.gamma(2.0, size=3), rs.randn(3), rs.standard_t(3, size=2), \
        rs.binomial(10, 0.5, 3), rs.exponential(size=2), rs.poisson(3.0, 4)


@pytest.mark.parametrize("fn,make", [
    (_loop, np.random.default_rng), (_dtypes, np.random.default_rng),
    (_vector_parameters, np.random.default_rng), (_written_in_place, np.random.default_rng),
    (_random_state_distributions, np.random.RandomState), (_vector_parameters, np.random.RandomState),
], ids=lambda v: getattr(v, "__name__", None))
def test_samplers(fn, make):
    computed = fn in (_loop, _written_in_place)   # (arithmetic: the backend's, as assert_same has it)
    assert_same_draws(fn, lambda: (x34(), make(12)), exact=(lambda r: ()) if computed else (lambda r: r))


def test_a_new_generator_per_call_is_no_recompile():
    def f(x, rng):
        return x + rng.normal(size=x.shape)
    jitted = frame.jit(f)
    counter = CompileCounter()
    counter.reset()
    for seed in range(4):
        native = f(x34(), np.random.default_rng(seed))
        got = jitted(x34(), np.random.default_rng(seed))
        assert_same(native, got, backend=resolved_backend())
    assert counter.translations == 1 and counter.recompiles == 0, counter
    # another class is another trace: its methods are the class's own
    got = jitted(x34(), np.random.RandomState(0))
    assert_same(f(x34(), np.random.RandomState(0)), got, backend=resolved_backend())
    assert counter.translations == 2, counter


def test_draws_on_both_sides_of_a_break(capsys):
    def f(x, rng):
        a = x + rng.normal(size=x.shape)
        print("between")
        b = rng.random(3) * 2 + np.random.rand(3)
        return a, b
    assert_same_draws(f, lambda: (x34(), np.random.default_rng(6)), graphs=2, breaks=1,
                      exact=lambda r: r[1])


def test_bound_sampler_handed_to_a_resume_function(capsys):
    def f(x, rng):
        draw = rng.normal
        print("between")
        return x + draw(size=(3, 4)), rng.random(2)
    assert_same_draws(f, lambda: (x34(), np.random.default_rng(6)), graphs=1, breaks=1,
                      exact=lambda r: r[1])


def test_graph_that_raises_gives_the_draws_back():
    def f(x, idx, rng, rs):
        noise = rng.normal(size=x.shape) + rs.rand(3, 4) + np.random.rand(3, 4)
        return x[idx] + noise
    good = np.array([0, 2, 1])
    bad = np.array([0, 7, 1])

    def outcome(fn, idx):
        _reseed()
        rng, rs = np.random.default_rng(9), np.random.RandomState(9)
        first = fn(x34(), good, rng, rs)   # (a translation, then the raising call a cache hit)
        try:
            result = fn(x34(), idx, rng, rs)
        except IndexError as e:
            result = (type(e), str(e))
        return first, result, _after([rng, rs])

    for idx in (bad, good):
        native, jitted = outcome(f, idx), outcome(frame.jit(f), idx)
        assert_same(native[:2], jitted[:2], backend=resolved_backend())
        _bitwise(native[2], jitted[2], "generator left at")
    assert outcome(f, bad)[1][0] is IndexError
    out = frame.explain(f)(x34(), good, np.random.default_rng(0), np.random.RandomState(0))
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


def test_run_check_sending_the_call_native_gives_the_draws_back():
    def f(x, rng):
        noise = rng.random(3)
        m = x[x > 100]
        return np.mean(m) + noise   # an empty slice: NumPy warns, the call runs natively
    with pytest.warns(RuntimeWarning):
        assert_same_draws(f, lambda: (x34(), np.random.default_rng(2)))


def test_default_rng_in_the_function():
    def f(x):
        rng = np.random.default_rng(0)
        idx = rng.permutation(x.shape[0])
        return x[idx] + rng.normal(0, 0.1, size=x.shape), rng
    out = assert_same_draws(f, lambda: (x34(),))
    assert isinstance(out.result[1], np.random.Generator)


def test_default_rng_handed_to_a_resume_function_and_stored(capsys):
    class Holder:
        pass
    holder = Holder()

    def f(x):
        rng = np.random.default_rng(seed=11)
        holder.rng = rng
        a = rng.random(3)
        print("between")
        b = rng.random(3)
        return a, b, rng

    def run(fn):
        results, same = [], []
        for _ in range(3):
            results.append(fn(x34()))
            same.append(results[-1][2] is holder.rng)
        return results, holder.rng.random(2), same

    native, jitted = run(f), run(frame.jit(f))
    assert_same(native, jitted, backend=resolved_backend())
    _bitwise(native[:2], jitted[:2])
    assert jitted[2] == [True] * 3
    out = frame.explain(f)(x34())
    assert (out.graph_count, out.graph_break_count) == (2, 1), out.break_reasons


def test_default_rng_without_seed_draws_fresh_entropy():
    def f(x):
        rng = np.random.default_rng()
        return x + rng.random(x.shape), rng
    jitted = frame.jit(f)
    (a, ra), (b, rb) = jitted(x34()), jitted(x34())
    assert a.shape == (3, 4) and a.dtype == np.float64 and not np.array_equal(a, b)
    assert isinstance(ra, np.random.Generator) and ra is not rb
    out = frame.explain(f)(x34())
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


def test_explain_shows_one_graph_for_the_idioms():
    def dropout(x, p=0.5):
        mask = (np.random.rand(*x.shape) < p) / p
        return x * mask

    def noise(x, rng):
        return x + rng.normal(0, 0.1, size=x.shape)

    def minibatch(x, rng):
        idx = rng.choice(x.shape[0], 2, replace=False)
        return x[idx].sum(axis=0), rng.integers(0, 3, size=2)

    def randn(x):
        return x @ np.random.randn(4, 2)

    for fn, args in ((dropout, (x34(),)), (noise, (x34(), np.random.default_rng(0))),
                     (minibatch, (x34(), np.random.default_rng(0))), (randn, (x34(),))):
        out = frame.explain(fn)(*args)
        assert (out.graph_count, out.graph_break_count) == (1, 0), (fn.__name__, out.break_reasons)


def test_what_still_breaks():
    def shuffle(x, rng):
        a = x + rng.random((3, 4))
        rng.shuffle(x)                 # in place: a break
        return a

    def scalar_if(x, rng):
        a = x * rng.random((3, 4))
        if rng.random() < 0.5:         # a scalar draw: a break
            return a
        return -a

    def seed_inside(x):
        np.random.seed(3)              # a break (changes the global generator's state)
        return x + np.random.rand(3, 4)

    def traced_scale(x, rng):
        s = rng.normal(0, 1, size=x.shape)
        return rng.normal(0, x.std(), size=x.shape) + s   # an argument computed in the graph

    cases = ((shuffle, "Generator.shuffle() changes"), (scalar_if, "makes a random float"),
             (seed_inside, "numpy.random.seed"), (traced_scale, "arguments computed in the function"))
    for fn, reason in cases:
        make = (lambda: (x34(),)) if fn is seed_inside else (lambda: (x34(), np.random.default_rng(0)))
        out = assert_same_draws(fn, make, graphs=None)
        out = frame.explain(fn)(*make())
        assert out.graph_break_count == 1, (fn.__name__, out.break_reasons)
        assert reason in out.break_reasons[0].reason, (fn.__name__, out.break_reasons)


def test_floating_point_error_gives_the_legacy_draws_back():
    # a graph without data checks: an MT19937's state (~50 us to read) is saved only
    # while NumPy raises on floating-point errors
    def f(x, rs):
        noise = rs.rand(3, 4) + np.random.rand(3, 4)
        return x / 0.0 + noise

    def outcome(fn):
        _reseed()
        rs = np.random.RandomState(4)
        with np.errstate(all="ignore"):
            first = fn(x34(), rs)
        try:
            with np.errstate(all="raise"):
                second = fn(x34(), rs)
        except FloatingPointError as e:
            second = (type(e), str(e))
        return first, second, _after([rs])

    native, jitted = outcome(f), outcome(frame.jit(f))
    assert native[1][0] is FloatingPointError
    assert_same(native[:2], jitted[:2], backend=resolved_backend())
    _bitwise(native[2], jitted[2], "generator left at")
    with np.errstate(all="ignore"):
        out = frame.explain(f)(x34(), np.random.RandomState(0))
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


def _raise_in_graph(jitted) -> None:
    """Make the graph of ``jitted``'s entry raise an error no graph is expected to."""
    entry = jitted._frame_cache.entries[0]
    code = entry.fn.__code__

    def run(inputs):
        raise RuntimeError("the backend failed")
    for name, cell in zip(code.co_freevars, entry.fn.__closure__):
        if name == "__run":
            cell.cell_contents = run


def test_unexpected_graph_error_gives_back_what_it_saved(caplog):
    def f(x, rng):
        return x * rng.random((3, 4))
    jitted = frame.jit(f)
    rng = np.random.default_rng(1)
    jitted(x34(), rng)
    _raise_in_graph(jitted)
    native_rng, jitted_rng = np.random.default_rng(5), np.random.default_rng(5)
    assert_same(f(x34(), native_rng), jitted(x34(), jitted_rng), backend=resolved_backend())
    _bitwise(native_rng.random(4), jitted_rng.random(4))   # PCG64's state is always saved
    out = frame.explain(f)(x34(), rng)
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


def test_unexpected_graph_error_after_an_unsaved_mt19937_draw_raises(caplog):
    def f(x):
        return x * np.random.rand(3, 4)
    jitted = frame.jit(f)
    jitted(x34())
    _raise_in_graph(jitted)
    with pytest.raises(RuntimeError, match="cannot run natively with the same random numbers"):
        jitted(x34())
