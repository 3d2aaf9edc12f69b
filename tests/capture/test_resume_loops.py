"""Graph breaks inside loops and with live closures resume (task HS).

A break inside a loop body has the loop's iterator on the stack; a break
after a ``def`` or ``lambda`` has a function of the frame (and its cells)
live.  Both used to make the whole call run natively ("returning or storing
<LazyIteratorVariable>"); now the entry rebuilds them as real objects (a real
iterator at the trace's position, a real function over real cells shared with
the resume function) and the rest of the frame resumes, compiled
(capture/rebuild.py, docs/capture.md "Graph breaks").

Each test compares the jitted function with the plain one over several calls
on changed data (so the data-dependent branches go both ways), including the
arguments after the call, and checks with ``frame.explain`` that graphs were
compiled and which breaks were taken."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import frame

from .helpers import assert_same, resolved_backend

_TRUTH = "the truth value of a tensor depends on its data"


def _calls(fn, *arg_lists):
    """Call one jitted ``fn`` on each argument tuple (deep copies) and the plain
    ``fn`` on other copies: results and arguments after each call are the same.
    Returns the jitted function."""
    backend = resolved_backend()
    jitted = frame.jit(fn)
    for args in arg_lists:
        native_args, jitted_args = copy.deepcopy(args), copy.deepcopy(args)
        native = fn(*native_args)
        got = jitted(*jitted_args)
        assert_same(native, got, backend=backend)
        assert_same(native_args, jitted_args, "args after the call", backend=backend)
        assert not jitted._frame_cache.entries[0].native, \
            f"the call ran natively: {jitted._frame_cache.entries[0].reason}"
    return jitted


def _explain(fn, *args):
    out = frame.explain(fn)(*copy.deepcopy(args))
    assert out.exception is None, out.exception
    return out


def _limits_reached() -> int:
    """How many codes reached the recompile limit in this process so far."""
    return frame.stats().graph_breaks.get("recompile_limit", 0)


def _assert_breaks(out, reason=_TRUTH, graphs_at_least=1):
    assert out.graph_count >= graphs_at_least, str(out)
    assert out.graph_break_count >= 1, str(out)
    assert all(reason in r.reason for r in out.break_reasons), [r.reason for r in out.break_reasons]
    assert "returning or storing" not in str(out)


# -- the two shapes of the task --------------------------------------------------------------------

def perceptron(X, y, max_epochs):
    w = np.zeros(X.shape[1]); b = 0.0
    t = np.where(y == 1, 1, -1)
    for epoch in range(max_epochs):
        mistakes = 0
        for xi, ti in zip(X, t):
            if ti * (xi @ w + b) <= 0:          # data-dependent: must break here
                w += ti * xi; b += ti; mistakes += 1
        if mistakes == 0:
            break
    return w, b, epoch, mistakes


def _separable(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X @ np.array([1.0, -0.7]) + 0.2 > 0).astype(np.int64)
    return X, y


def test_perceptron_zip_over_rows_resumes():
    limits = _limits_reached()
    jitted = _calls(perceptron, (*_separable(8, 0), 6), (*_separable(8, 1), 6),
                    (*_separable(8, 2), 1))
    _assert_breaks(_explain(perceptron, *_separable(8, 0), 6))
    # a break per row and epoch: once each path was seen (a few calls), its
    # continuations are reused, not translated again per row or per call
    for seed in range(3, 7):
        X, y = _separable(8, seed)
        assert_same(perceptron(X, y, 6), jitted(X, y, 6), backend=resolved_backend())
    before = frame.stats().translations
    for seed in range(7, 11):
        X, y = _separable(8, seed)
        assert_same(perceptron(X, y, 6), jitted(X, y, 6), backend=resolved_backend())
    assert frame.stats().translations == before
    assert _limits_reached() == limits


def closure(coeffs, lo):
    def p(x):
        acc = 0.0
        for c in coeffs: acc = acc * x + c
        return acc
    if p(lo) > 0:                                  # break with the local closure `p` live
        return lo
    return p(lo + 1)


def test_local_closure_live_at_a_break_resumes():
    c1, c2 = np.array([1.0, -2.0]), np.array([1.0, 2.0, -1.0])
    jitted = _calls(closure, (c1, 3.0), (c1, 1.0), (c2, -5.0), (c2, 0.25))
    out = _explain(closure, c1, 1.0)
    _assert_breaks(out, graphs_at_least=2)   # before the break, and p(lo + 1) after it
    entries = jitted._frame_cache.entries
    assert entries and all(not e.native for e in entries)


def test_closure_is_not_recompiled_per_call():
    # ``p`` is a new function object at each call: its resume function is
    # guarded by p's code, not its identity
    def f(coeffs, x):
        def p(v):
            return coeffs[0] * v + coeffs[1]
        if p(x).sum() > 0:
            return p(x) * 2
        return p(-x)
    rng = np.random.default_rng(3)
    jitted = frame.jit(f)
    before, limits = frame.stats().translations, _limits_reached()
    for i in range(6):
        coeffs, x = rng.normal(size=(2, 3)), rng.normal(size=3)
        assert_same(f(coeffs, x), jitted(coeffs, x), backend=resolved_backend())
    # f, and at most one resume function per branch
    assert frame.stats().translations - before <= 3
    assert not jitted._frame_cache.entries[0].native
    assert _limits_reached() == limits


# -- loops -----------------------------------------------------------------------------------------

def test_nested_loops_with_enumerate_and_a_break_in_the_inner_body():
    def f(X):
        pos = np.zeros(X.shape[0])
        neg = 0
        for i, row in enumerate(X):
            for j, v in enumerate(row):
                if v > 0:
                    pos[i] += v * (j + 1)
                else:
                    neg += 1
        return pos, neg
    rng = np.random.default_rng(4)
    _calls(f, (rng.normal(size=(3, 4)),), (rng.normal(size=(3, 4)),), (-np.ones((3, 4)),))
    _assert_breaks(_explain(f, rng.normal(size=(3, 4))))


def first_heavy_row(X, threshold):
    found = None
    for i, row in enumerate(X):
        if row.sum() < 0:
            continue                    # continue after the resumed break
        if row.sum() > threshold:
            found = i
            break                       # break out of the loop after it
    else:
        found = -1                      # the loop's else (not broken out of)
    return found, X[found] * 2


def test_break_continue_and_else_of_a_loop_after_a_resumed_break():
    X = np.array([[1.0, -3.0], [0.5, 0.5], [4.0, 1.0], [9.0, 9.0]])
    _calls(first_heavy_row, (X, 3.0), (X, 100.0), (X, -10.0), (-X, 1.0))
    _assert_breaks(_explain(first_heavy_row, X, 3.0))


def test_row_written_through_the_loop_variable_after_the_break():
    # ndarray rows are views of the caller's array: a write through the loop
    # variable in the resumed body reaches it
    def f(X):
        count = 0
        for row in X:
            if row[0] > 0:
                row *= 2
                count += 1
            else:
                row[:] = 0
        return count
    rng = np.random.default_rng(5)
    _calls(f, (rng.normal(size=(4, 3)),), (rng.normal(size=(4, 3)),), (np.ones((2, 2)),))
    _assert_breaks(_explain(f, rng.normal(size=(4, 3))))


def test_tensor_rows_resume():
    def f(t):
        total = frame.zeros(t.shape[1])
        for row in t:
            if row.sum() > 0:
                total = total + row
            else:
                total = total - row * 0.5
        return total
    rng = np.random.default_rng(6)
    _calls(f, (frame.tensor(rng.normal(size=(4, 3)).astype(np.float32)),),
           (frame.tensor(rng.normal(size=(5, 3)).astype(np.float32)),))
    _assert_breaks(_explain(f, frame.tensor(rng.normal(size=(4, 3)).astype(np.float32))))


def test_list_appended_after_the_break_is_seen_by_the_loop():
    # the rebuilt list iterator is live over the caller's list
    def f(items):
        out = []
        for v in items:
            if v.sum() > 0 and len(items) < 6:
                items.append(v - 10)
            out.append(v * 2)
        return out
    a = [np.array([1.0, 2.0]), np.array([-1.0, 0.5]), np.array([3.0, -1.0])]
    _calls(f, (a,), ([np.array([-1.0, -1.0])],))
    _assert_breaks(_explain(f, a))


def test_dict_items_keys_values_and_reversed_list_resume():
    def f(params, grads, order):
        out = {}
        for name, p in params.items():
            if (p * grads[name]).sum() > 0:
                out[name] = p - grads[name]
            else:
                out[name] = p
        n = 0
        for k in params.keys():
            if params[k].max() > 0.5:
                n += 1
        s = 0.0
        for v in params.values():
            if v.min() < 0:
                s = s + v.min()
        seq = []
        for x in reversed(order):
            if x.sum() > 0:
                seq.append(x)
        return out, n, s, seq
    rng = np.random.default_rng(7)

    def data(seed):
        r = np.random.default_rng(seed)
        params = {"w": r.normal(size=3), "b": r.normal(size=2)}
        grads = {"w": r.normal(size=3), "b": r.normal(size=2)}
        return params, grads, [r.normal(size=2) for _ in range(3)]
    _calls(f, data(1), data(2), data(3))
    _assert_breaks(_explain(f, *data(1)))
    del rng


def test_argument_dict_updated_in_a_loop_over_its_items():
    # the values are assigned key by key after the graph: the rebuilt iterator
    # over the caller's dict stays where it is
    def normalize(weights):
        dropped = []
        for name, w in weights.items():
            if w.sum() > 0:
                weights[name] = w / w.sum()
            else:
                dropped.append(name)
        return dropped
    def data(seed):
        r = np.random.default_rng(seed)
        return ({"a": r.normal(size=3), "b": r.normal(size=3), "c": r.normal(size=3)},)
    _calls(normalize, data(11), data(12), data(13))
    _assert_breaks(_explain(normalize, *data(11)))


def test_an_iterator_in_a_local_and_on_the_stack_is_one_object():
    def f(X):
        it = iter(X)
        first = []
        for row in it:
            if row.sum() > 0:
                first.append(row)
                break
        return first, [r * 2 for r in it]    # the rest of the same iterator
    X = np.array([[-1.0, 0.0], [2.0, 1.0], [3.0, 3.0], [4.0, -9.0]])
    _calls(f, (X,), (-X,))
    _assert_breaks(_explain(f, X))


def test_zip_of_enumerate_and_range_resume():
    def f(X, labels):
        acc = np.zeros(X.shape[1])
        for (i, row), k in zip(enumerate(X, start=1), range(10, 100, 10)):
            if row @ row > labels[i - 1]:
                acc += row * k
        return acc
    rng = np.random.default_rng(8)
    _calls(f, (rng.normal(size=(4, 2)), np.array([0.5, 1.0, 1.5, 2.0])),
           (rng.normal(size=(4, 2)), np.zeros(4)))
    _assert_breaks(_explain(f, rng.normal(size=(4, 2)), np.ones(4)))


def test_map_and_filter_over_rows_resume():
    def f(X):
        total = 0.0
        for s in map(np.sum, filter(lambda r: r[0] != 0, X)):
            if s > 0:
                total = total + s
        return total
    X = np.array([[1.0, 2.0], [0.0, 5.0], [-3.0, 1.0], [2.0, -1.0]])
    _calls(f, (X,), (-X,))
    _assert_breaks(_explain(f, X), graphs_at_least=0)   # (each row's sum runs eagerly)


# -- closures ---------------------------------------------------------------------------------------

def test_closure_mutated_via_nonlocal_after_the_break():
    def f(xs, start):
        total = start
        def bump(v):
            nonlocal total
            total = total + v
            return total
        seen = []
        for x in xs:
            if x.sum() > 0:                 # the break: bump and its cell are live
                seen.append(bump(x))
            else:
                total = total - 1           # the frame's own write, seen by bump
        return total, bump(np.zeros_like(start)), seen
    rng = np.random.default_rng(9)
    _calls(f, (list(rng.normal(size=(4, 2))), np.zeros(2)),
           (list(rng.normal(size=(3, 2))), np.ones(2)))
    _assert_breaks(_explain(f, list(rng.normal(size=(4, 2))), np.zeros(2)))


def test_lambda_with_default_and_cells_live_at_a_break():
    def f(x, scale):
        offset = x.mean()
        g = lambda v, s=scale: v * s + offset   # noqa: E731
        if x.sum() > 0:
            offset = offset * 0                 # rebinding the cell g reads
        return g(x), g(x, 2.0)
    _calls(f, (np.array([1.0, 2.0]), 3.0), (np.array([-1.0, -2.0]), 0.5))
    _assert_breaks(_explain(f, np.array([1.0, 2.0]), 3.0))


def test_recursive_local_function_live_at_a_break():
    def f(x, n):
        def power(v, k):
            return v if k == 1 else v * power(v, k - 1)
        if x.max() > 1:
            return power(x, n)
        return power(-x, n + 1)
    _calls(f, (np.array([2.0, 0.5]), 3), (np.array([0.5, 0.5]), 2))
    _assert_breaks(_explain(f, np.array([2.0, 0.5]), 3))


# -- what stays native ------------------------------------------------------------------------------

def test_loop_over_a_user_generator_still_runs_natively():
    def gen(X):
        for row in X:
            yield row * 2

    def f(X):
        total = 0.0
        for r in gen(X):
            if r.sum() > 0:
                total = total + r.sum()
        return total
    X = np.array([[1.0, 2.0], [-3.0, 1.0]])
    jitted = frame.jit(f)
    assert jitted(X.copy()) == f(X.copy())
    entry = jitted._frame_cache.entries[0]
    assert entry.native and "returning or storing" in entry.reason.reason, entry.reason


# -- bounded caches -----------------------------------------------------------------------------------

def test_a_break_per_iteration_reuses_its_resume_functions():
    def f(X, w):
        acc = np.zeros_like(w)
        for row in X:
            if row @ w > 0:
                acc += row
            else:
                acc -= row
        return acc
    rng = np.random.default_rng(10)
    jitted = frame.jit(f)
    limits = _limits_reached()
    w = rng.normal(size=3)
    X = rng.normal(size=(100, 3))
    assert_same(f(X, w), jitted(X, w), backend=resolved_backend())
    after_first = frame.stats().translations
    for seed in range(3):   # new data, same shapes: no new translation
        X = np.random.default_rng(seed).normal(size=(100, 3))
        assert_same(f(X, w), jitted(X, w), backend=resolved_backend())
    assert frame.stats().translations == after_first
    assert not jitted._frame_cache.entries[0].native
    assert _limits_reached() == limits    # reused, not given up on
    # f and a few continuations, not one per iteration
    out = _explain(f, X, w)
    assert out.graph_break_count <= 4, str(out)
    assert len(jitted._frame_cache.entries) == 1


@pytest.mark.parametrize("n", [1, 3])
def test_loop_whose_body_breaks_on_its_last_or_only_row(n):
    def f(X):
        hits = []
        for i, row in enumerate(X):
            if row.sum() > 0:
                hits.append(i)
        return hits
    _calls(f, (np.ones((n, 2)),), (-np.ones((n, 2)),))


def test_a_loop_carrying_numpy_scalars_stays_bounded():
    # lo, hi, flo are NumPy floats the loop carries from one iteration to the
    # next, with its local closure p live at each break; np.sign reads them by
    # value, so a continuation recompiles per value up to the recompile limit
    # and then runs natively: bounded, and the same results
    def bisect(coeffs, lo, hi, tol=1e-6):
        def p(x):
            acc = 0.0
            for c in coeffs:
                acc = acc * x + c
            return acc
        flo = p(lo)
        n = 0
        while hi - lo > tol:
            mid = 0.5 * (lo + hi)
            fm = p(mid)
            if np.sign(fm) == np.sign(flo):
                lo, flo = mid, fm
            else:
                hi = mid
            n += 1
        return 0.5 * (lo + hi), n
    coeffs = np.array([1.0, -6.0, 11.0, -6.0])   # roots 1, 2, 3
    jitted = _calls(bisect, (coeffs, 2.5, 4.0), (coeffs, 1.5, 2.2), (coeffs, 0.2, 1.6),
                    (coeffs, 2.7, 3.9))
    before = frame.stats().translations
    for lo, hi in ((2.6, 3.7), (0.5, 1.3), (1.7, 2.4), (2.1, 3.3)):
        assert_same(bisect(coeffs, lo, hi), jitted(coeffs, lo, hi), backend=resolved_backend())
    assert frame.stats().translations == before
    assert not jitted._frame_cache.entries[0].native
