"""Resume functions of code with 3.13's two-local instructions
(``LOAD_FAST_LOAD_FAST``, ``STORE_FAST_LOAD_FAST``, ``STORE_FAST_STORE_FAST``).

A resume function's parameters renumber the locals.  Written as one
instruction, a pair whose index reached 16 read another local (the ``bytecode``
package packs 16 into the 4-bit field) or became two instructions, and the map
from the resume code's instructions to the original's (``resume.canonical``)
pointed two instructions too far: a loop with breaks continued in the middle of
``epoch_losses.append(total / n)`` (3.13: "Failed to compute stacksize").
On 3.11 and 3.12 these run as ordinary differential tests."""
from __future__ import annotations

import dis

import numpy as np

import frame
from capture import resume

from .helpers import assert_same_as_eager


def minibatch_sgd(X, y, batch_size=4, epochs=2, lr=0.05):
    n, d = X.shape
    w = np.zeros(d)
    rng = np.random.default_rng(0)
    epoch_losses = []
    for epoch in range(epochs):
        order = rng.permutation(n)
        total = 0.0
        for start in range(0, n, batch_size):
            batch = order[start:start + batch_size]
            xb, yb = X[batch], y[batch]
            err = xb @ w - yb
            total += float((err ** 2).sum())      # a break inside two loops
            w -= lr * 2 * xb.T @ err / len(batch)
        epoch_losses.append(total / n)
    return w, epoch_losses


def test_breaks_in_nested_loops_with_many_locals_same_as_eager():
    X = np.random.default_rng(18).normal(size=(11, 3))
    y = np.random.default_rng(19).normal(size=11)
    assert_same_as_eager(minibatch_sgd, X, y, captured=None)
    jitted = frame.jit(minibatch_sgd)
    for _ in range(2):
        np.testing.assert_allclose(jitted(X, y)[1], minibatch_sgd(X, y)[1], rtol=1e-5)


def pair_of_locals(x, y, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14):
    z = x + y
    return z * 100 + a0


def _offset_of(code, opname, argval=None):
    for ins in dis.get_instructions(code):
        if ins.opname == opname and (argval is None or ins.argval == argval):
            return ins.offset
    raise AssertionError(f"no {opname} {argval!r} in {code.co_name}")


def test_resume_code_reads_the_locals_of_a_pair_renumbered_past_15():
    code = pair_of_locals.__code__
    # x and y are locals 0 and 1 here (3.13: one LOAD_FAST_LOAD_FAST); the resume
    # function takes them as its parameters 15 and 16
    start = _offset_of(code, "LOAD_FAST_LOAD_FAST" if "LOAD_FAST_LOAD_FAST" in dis.opmap else "LOAD_FAST",
                       ("x", "y") if "LOAD_FAST_LOAD_FAST" in dis.opmap else "x")
    names = tuple(f"a{i}" for i in range(15)) + ("x", "y")
    rcode = resume.resume_code(code, start, (), names, ())
    fn = resume.resume_function(rcode, pair_of_locals)
    values = dict(zip(names, range(1, 16)), x=1000, y=20000)
    assert fn(*(values[n] for n in names)) == pair_of_locals(**values) == 2100001


def test_canonical_maps_every_copied_instruction_back():
    code = minibatch_sgd.__code__
    target = _offset_of(code, "STORE_FAST", "total")
    live = tuple(sorted(n for n in resume.live_locals(code, 0) | {"X", "y", "n", "w", "lr", "rng",
                                                                   "batch_size", "epoch_losses"}))
    stack = tuple(f"_resume_stack{i}_" for i in range(4))
    rcode = resume.resume_code(code, target, (True,) * 4, live, stack)
    originals = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    copied = [i for i in dis.get_instructions(rcode) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    mapped = {}
    for ins in copied:
        try:
            mapped[ins.offset] = resume.canonical(rcode, ins.offset)[1]
        except ValueError:
            pass
    assert sorted(mapped.values()) == [i.offset for i in originals]
    by_offset = {i.offset: i for i in originals}
    for ins in copied:
        if ins.offset in mapped:
            orig = by_offset[mapped[ins.offset]]
            # a split pair's first half stands for the pair
            assert ins.opname == orig.opname or orig.opname.startswith(ins.opname + "_"), (ins, orig)
