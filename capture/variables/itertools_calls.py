"""``itertools`` made inside the traced code: ``chain`` (and
``chain.from_iterable``), ``accumulate``, ``product``, ``zip_longest``,
``islice``, ``starmap``, ``repeat``, ``pairwise``, ``groupby``, ``count``,
``cycle``, ``combinations``, ``permutations``, ``combinations_with_replacement``,
``compress``, ``takewhile``, ``dropwhile``, ``filterfalse``, ``batched`` (3.12+)
and ``tee``; and NumPy's ``np.ndindex`` of constant dimensions.

Each is a ``LazyIteratorVariable`` (or, for ``groupby``'s groups and ``tee``'s
copies, an iterator sharing state with its parent): its items are computed
when they are asked for, in the order CPython computes them, so an argument
that is a generator (or a ``map`` with a side effect) runs exactly as far as
the native run would.  What CPython consumes eagerly when the object is made
(``product``, ``combinations`` and ``permutations`` take ``tuple()`` of their
arguments; most take ``iter()`` of theirs) is consumed then.  Argument checks
(``islice``'s bounds, ``repeat``'s count, ``r``) are the real constructor's,
run on an empty iterable of the same constant arguments, so errors are
Python's own.  Like ``map``/``zip``, such an iterator cannot be rebuilt in an
entry: one live at a graph break runs the function natively.
"""
from __future__ import annotations

import itertools
import operator

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from .base import ConstantVariable, Variable
from .containers import IteratorVariable, LazyIteratorVariable, TupleVariable

__all__ = ["make_itertools", "itertools_function", "ITERTOOLS_CLASSES", "ITERTOOLS_FUNCTIONS"]


def _constants(what: str, *values: Variable | None) -> list:
    """The Python values of constant arguments (None stays None)."""
    out = []
    for v in values:
        if v is None:
            out.append(None)
        elif v.is_constant():
            out.append(v.as_constant())
        else:
            raise Unsupported("unsupported_call", f"itertools.{what}() with a non-constant {v!r}")
    return out


def _check(cls, *args, **kwargs) -> None:
    """Run the real constructor on the constant arguments (empty iterables in
    place of the iterables): the same TypeError / ValueError as CPython."""
    try:
        cls(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - Python's own error, raised natively too
        raise UserCodeRaises(f"{cls.__name__}() raises {type(e).__name__}: {e}", exc=e) from e


def _no_kwargs(cls, kwargs, allowed=()) -> None:
    """Keywords other than ``allowed`` are not modelled (some are valid:
    ``accumulate(iterable=...)``): refused, never guessed to raise."""
    extra = set(kwargs) - set(allowed)
    if extra:
        raise Unsupported("unsupported_call", f"itertools.{cls.__name__}() with the keyword "
                                              f"argument {sorted(extra)[0]!r}")


def _equal(tx, a: Variable, b: Variable) -> bool:
    """``a == b`` as a Python bool (groupby's key comparison)."""
    return tx.truth(tx.binary_op(operator.eq, a, b))


def _lazy(cls, gen) -> LazyIteratorVariable:
    return LazyIteratorVariable(gen, cls)


def _chain_of(tx, sources: IteratorVariable) -> LazyIteratorVariable:
    """Items of each iterable ``sources`` yields, ``iter()`` of each taken when
    the previous one is exhausted (as ``chain`` does)."""
    state = {"it": None, "done": False}

    def gen(tx):
        while not state["done"]:
            if state["it"] is None:
                source = sources.next(tx)
                if source is None:
                    state["done"] = True
                    return None
                state["it"] = source.get_iter(tx)
            item = state["it"].next(tx)
            if item is not None:
                return item
            state["it"] = None
        return None
    return _lazy(itertools.chain, gen)


def _chain(tx, args, kwargs):
    _no_kwargs(itertools.chain, kwargs)
    return _chain_of(tx, IteratorVariable(args))


def chain_from_iterable(tx, args, kwargs):
    """``itertools.chain.from_iterable(iterable)``: ``iter(iterable)`` now, each
    inner iterable when it is reached."""
    _no_kwargs(itertools.chain, kwargs)
    if len(args) != 1:
        message = f"chain.from_iterable() takes exactly one argument ({len(args)} given)"
        raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
    return _chain_of(tx, args[0].get_iter(tx))


def _accumulate(tx, args, kwargs):
    _no_kwargs(itertools.accumulate, kwargs, ("func", "initial"))
    if not 1 <= len(args) <= 2:
        _check(itertools.accumulate, *[()] * len(args))
    func = args[1] if len(args) > 1 else kwargs.get("func")
    if func is not None and func.is_none():
        func = None
    initial = kwargs.get("initial")
    if initial is not None and initial.is_none():
        initial = None
    it = args[0].get_iter(tx)
    state = {"total": None, "started": False}

    def gen(tx):
        if not state["started"]:
            state["started"] = True
            if initial is not None:
                state["total"] = initial
                return initial
        item = it.next(tx)
        if item is None:
            return None
        total = state["total"]
        if total is None:
            total = item
        elif func is None:
            total = tx.binary_op(operator.add, total, item)
        else:
            total = func.call(tx, [total, item], {})
        state["total"] = total
        return total
    return _lazy(itertools.accumulate, gen)


def _indexed(cls, pools: list[list[Variable]], indices) -> LazyIteratorVariable:
    """Tuples of the items ``pools`` hold at the positions the real itertools
    object ``indices`` (over ``range``s) yields."""
    def gen(tx):
        picked = next(indices, None)
        if picked is None:
            return None
        return TupleVariable([pool[i] for pool, i in zip(pools, picked)])
    return _lazy(cls, gen)


def _product(tx, args, kwargs):
    _no_kwargs(itertools.product, kwargs, ("repeat",))
    (repeat,) = _constants("product", kwargs.get("repeat", ConstantVariable(1)))
    _check(itertools.product, *[()] * len(args), repeat=repeat)
    pools = [a.iterate(tx) for a in args] * repeat
    indices = itertools.product(*[range(len(p)) for p in pools])
    return _indexed(itertools.product, pools, indices)


def _combinatoric(cls):
    """``combinations``, ``permutations``, ``combinations_with_replacement``:
    ``tuple(iterable)`` now, the index tuples of the real object over its
    positions."""
    def make(tx, args, kwargs):
        iterable = args[0] if args else kwargs.get("iterable")
        r = args[1] if len(args) > 1 else kwargs.get("r")
        (r_value,) = _constants(cls.__name__, r)
        _check(cls, *[() if i == 0 else r_value for i in range(len(args))],
               **{k: () if k == "iterable" else r_value for k in kwargs})
        pool = iterable.iterate(tx)
        positions = range(len(pool))
        indices = cls(positions) if r is None else cls(positions, r_value)

        def gen(tx):
            picked = next(indices, None)
            if picked is None:
                return None
            return TupleVariable([pool[i] for i in picked])
        return _lazy(cls, gen)
    return make


def _zip_longest(tx, args, kwargs):
    _no_kwargs(itertools.zip_longest, kwargs, ("fillvalue",))
    fill = kwargs.get("fillvalue", ConstantVariable(None))
    its = [a.get_iter(tx) for a in args]
    live = [True] * len(its)

    def gen(tx):
        if not its or not any(live):
            return None
        row = []
        for k, it in enumerate(its):
            item = it.next(tx) if live[k] else None
            if item is None:
                if live[k]:
                    live[k] = False
                    if not any(live):
                        return None
                item = fill
            row.append(item)
        return TupleVariable(row)
    return _lazy(itertools.zip_longest, gen)


def _islice(tx, args, kwargs):
    _no_kwargs(itertools.islice, kwargs)
    bounds = _constants("islice", *args[1:])
    _check(itertools.islice, (), *bounds)
    sl = slice(*bounds) if len(bounds) > 1 else slice(None, bounds[0])
    start = sl.start or 0
    stop = -1 if sl.stop is None else sl.stop
    step = sl.step or 1
    it = args[0].get_iter(tx)
    state = {"next": start, "cnt": 0, "done": False}

    def gen(tx):   # CPython's islice_next
        if state["done"]:
            return None
        while state["cnt"] < state["next"]:
            if it.next(tx) is None:
                state["done"] = True
                return None
            state["cnt"] += 1
        if stop != -1 and state["cnt"] >= stop:
            state["done"] = True
            return None
        item = it.next(tx)
        if item is None:
            state["done"] = True
            return None
        state["cnt"] += 1
        old = state["next"]
        state["next"] += step
        if state["next"] < old or (stop != -1 and state["next"] > stop):
            state["next"] = stop
        return item
    return _lazy(itertools.islice, gen)


def _starmap(tx, args, kwargs):
    _no_kwargs(itertools.starmap, kwargs)
    if len(args) != 2:
        _check(itertools.starmap, *[()] * len(args))
    fn, it = args[0], args[1].get_iter(tx)

    def gen(tx):
        item = it.next(tx)
        if item is None:
            return None
        return fn.call(tx, item.iterate(tx), {})
    return _lazy(itertools.starmap, gen)


def _repeat(tx, args, kwargs):
    obj = args[0] if args else kwargs.get("object")
    times = args[1] if len(args) > 1 else kwargs.get("times")
    (n,) = _constants("repeat", times)
    _check(itertools.repeat, *[None if i == 0 else n for i in range(len(args))],
           **{k: None if k == "object" else n for k in kwargs})
    left = [None if n is None else max(n, 0)]

    def gen(tx):
        if left[0] is not None:
            if left[0] <= 0:
                return None
            left[0] -= 1
        return obj
    return _lazy(itertools.repeat, gen)


def _count(tx, args, kwargs):
    _no_kwargs(itertools.count, kwargs, ("start", "step"))
    start = args[0] if args else kwargs.get("start", ConstantVariable(0))
    step = args[1] if len(args) > 1 else kwargs.get("step", ConstantVariable(1))
    start_value, step_value = _constants("count", start, step)
    _check(itertools.count, start_value, step_value)
    first = next(itertools.count(start_value, step_value))
    if type(first) is not type(start_value):   # count(True) counts in C ints: 1, 2, ...
        start = ConstantVariable(first)
    current = [start]

    def gen(tx):
        value = current[0]
        current[0] = tx.binary_op(operator.add, value, step)
        return value
    return _lazy(itertools.count, gen)


def _cycle(tx, args, kwargs):
    _no_kwargs(itertools.cycle, kwargs)
    if len(args) != 1:
        _check(itertools.cycle, *[()] * len(args))
    it = args[0].get_iter(tx)
    saved: list[Variable] = []
    state = {"first_pass": True, "pos": 0}

    def gen(tx):
        if state["first_pass"]:
            item = it.next(tx)
            if item is not None:
                saved.append(item)
                return item
            state["first_pass"] = False
        if not saved:
            return None
        item = saved[state["pos"] % len(saved)]
        state["pos"] += 1
        return item
    return _lazy(itertools.cycle, gen)


def _pairwise(tx, args, kwargs):
    _no_kwargs(itertools.pairwise, kwargs)
    if len(args) != 1:
        _check(itertools.pairwise, *[()] * len(args))
    it = args[0].get_iter(tx)
    state = {"old": None, "done": False}

    def gen(tx):
        if state["done"]:
            return None
        if state["old"] is None:
            state["old"] = it.next(tx)
            if state["old"] is None:
                state["done"] = True
                return None
        new = it.next(tx)
        if new is None:
            state["done"] = True
            return None
        pair = TupleVariable([state["old"], new])
        state["old"] = new
        return pair
    return _lazy(itertools.pairwise, gen)


def _predicate_filter(cls):
    """``takewhile``, ``dropwhile``, ``filterfalse`` (``pred`` called per item)."""
    def make(tx, args, kwargs):
        _no_kwargs(cls, kwargs)
        if len(args) != 2:
            _check(cls, *[()] * len(args))
        pred, it = args[0], args[1].get_iter(tx)
        state = {"stop": False, "dropping": True}

        def test(tx, item):
            if cls is itertools.filterfalse and pred.is_none():
                return tx.truth(item)
            return tx.truth(pred.call(tx, [item], {}))

        def gen(tx):
            while True:
                if state["stop"]:
                    return None
                item = it.next(tx)
                if item is None:
                    return None
                if cls is itertools.takewhile:
                    if test(tx, item):
                        return item
                    state["stop"] = True
                    return None
                if cls is itertools.dropwhile:
                    if state["dropping"] and test(tx, item):
                        continue
                    state["dropping"] = False
                    return item
                if not test(tx, item):
                    return item
        return _lazy(cls, gen)
    return make


def _compress(tx, args, kwargs):
    _no_kwargs(itertools.compress, kwargs, ("data", "selectors"))
    data = args[0] if args else kwargs.get("data")
    selectors = args[1] if len(args) > 1 else kwargs.get("selectors")
    if data is None or selectors is None:
        _check(itertools.compress, *[()] * len(args))
    data_it, sel_it = data.get_iter(tx), selectors.get_iter(tx)

    def gen(tx):
        while True:
            item = data_it.next(tx)
            if item is None:
                return None
            sel = sel_it.next(tx)
            if sel is None:
                return None
            if tx.truth(sel):
                return item
    return _lazy(itertools.compress, gen)


def _batched(tx, args, kwargs):
    """``batched(iterable, n, *, strict=False)`` (3.12; ``strict`` 3.13): tuples
    of up to ``n`` items, each pulled when its batch is asked for."""
    iterable = args[0] if args else kwargs.get("iterable")
    n = args[1] if len(args) > 1 else kwargs.get("n")
    (size, strict) = _constants("batched", n, kwargs.get("strict"))
    _check(itertools.batched, *[() if i == 0 else size for i in range(len(args))],
           **{k: () if k == "iterable" else size if k == "n" else strict for k in kwargs})
    it = iterable.get_iter(tx)
    done = [False]

    def gen(tx):
        if done[0]:
            return None
        batch = []
        while len(batch) < size:
            item = it.next(tx)
            if item is None:
                done[0] = True
                break
            batch.append(item)
        if not batch:
            return None
        if strict and len(batch) < size:
            message = "batched(): incomplete batch"
            raise UserCodeRaises(f"ValueError: {message}", exc=ValueError(message))
        return TupleVariable(batch)
    return _lazy(itertools.batched, gen)


_GROUPER = type(next(itertools.groupby([1]))[1])
_TEE = type(itertools.tee(())[0])


def _groupby(tx, args, kwargs):
    """``groupby(iterable, key=None)``, as CPython's ``groupby_next`` and
    ``_grouper_next``: a group yields while its parent has not moved on and
    the current key equals the group's (``tgtkey == currkey``)."""
    iterable = args[0] if args else kwargs.get("iterable")
    key = args[1] if len(args) > 1 else kwargs.get("key")
    _check(itertools.groupby, *[()] * len(args), **{k: () for k in kwargs})
    if key is not None and key.is_none():
        key = None
    it = iterable.get_iter(tx)
    # None is CPython's NULL (no key / value yet, or the value was handed out)
    state = {"tgtkey": None, "currkey": None, "currvalue": None, "grouper": None}

    def step(tx) -> bool:
        value = it.next(tx)
        if value is None:
            return False
        new_key = value if key is None else key.call(tx, [value], {})
        state["currvalue"], state["currkey"] = value, new_key
        return True

    def gen(tx):
        state["grouper"] = None
        while True:
            if state["currkey"] is None:
                pass
            elif state["tgtkey"] is None:
                break
            elif not _equal(tx, state["tgtkey"], state["currkey"]):
                break
            if not step(tx):
                return None
        state["tgtkey"] = state["currkey"]
        token = state["grouper"] = object()
        return TupleVariable([state["currkey"], grouper(state["tgtkey"], token)])

    def grouper(tgtkey, token):
        def gen_group(tx):
            if state["grouper"] is not token:
                return None
            if state["currvalue"] is None and not step(tx):
                return None
            if not _equal(tx, tgtkey, state["currkey"]):
                return None
            value, state["currvalue"] = state["currvalue"], None
            return value
        return _lazy(_GROUPER, gen_group)
    return _lazy(itertools.groupby, gen)


def _tee(tx, args, kwargs):
    """``tee(iterable, n=2)``: ``n`` iterators over one shared buffer."""
    _no_kwargs(itertools.tee, kwargs)
    if not 1 <= len(args) <= 2:
        _check(itertools.tee, *[()] * len(args))
    (n,) = _constants("tee", args[1] if len(args) > 1 else ConstantVariable(2))
    _check(itertools.tee, (), n)
    if isinstance(args[0], LazyIteratorVariable) and args[0].kind is _TEE:
        # CPython copies a tee object (__copy__): the copies share its buffer, not its position
        raise Unsupported("unsupported_call", "itertools.tee() of a tee iterator")
    it = args[0].get_iter(tx)
    buffer: list[Variable] = []
    done = [False]

    def copy():
        pos = [0]

        def gen(tx):
            if pos[0] == len(buffer):
                if done[0]:
                    return None
                item = it.next(tx)
                if item is None:
                    done[0] = True
                    return None
                buffer.append(item)
            item = buffer[pos[0]]
            pos[0] += 1
            return item
        return _lazy(_TEE, gen)
    return TupleVariable([copy() for _ in range(n)])


def _ndindex(tx, args, kwargs):
    """``np.ndindex(*shape)`` of constant dimensions (CS231n's gradient check
    ``for ix in np.ndindex(p.shape)``): NumPy's index tuples (tuples of ints),
    each when it is asked for."""
    if kwargs:
        raise Unsupported("unsupported_call", "numpy.ndindex() with keyword arguments")
    shape = _constants("ndindex", *args)
    try:
        indices = np.ndindex(*shape)
    except Exception as e:  # noqa: BLE001 - NumPy's own error, raised natively too
        raise UserCodeRaises(f"ndindex() raises {type(e).__name__}: {e}", exc=e) from e

    def gen(tx):
        index = next(indices, None)
        return None if index is None else TupleVariable([ConstantVariable(i) for i in index])
    return _lazy(np.ndindex, gen)


ITERTOOLS_CLASSES = {
    itertools.chain: _chain, itertools.accumulate: _accumulate, itertools.product: _product,
    itertools.zip_longest: _zip_longest, itertools.islice: _islice, itertools.starmap: _starmap,
    itertools.repeat: _repeat, itertools.pairwise: _pairwise, itertools.groupby: _groupby,
    itertools.count: _count, itertools.cycle: _cycle,
    itertools.combinations: _combinatoric(itertools.combinations),
    itertools.permutations: _combinatoric(itertools.permutations),
    itertools.combinations_with_replacement: _combinatoric(itertools.combinations_with_replacement),
    itertools.compress: _compress, itertools.takewhile: _predicate_filter(itertools.takewhile),
    itertools.dropwhile: _predicate_filter(itertools.dropwhile),
    itertools.filterfalse: _predicate_filter(itertools.filterfalse),
    np.ndindex: _ndindex,
}
if hasattr(itertools, "batched"):   # Python 3.12+
    ITERTOOLS_CLASSES[itertools.batched] = _batched
ITERTOOLS_FUNCTIONS = {itertools.tee: _tee, itertools.chain.from_iterable: chain_from_iterable}


def make_itertools(tx, cls: type, args, kwargs) -> Variable | None:
    """The lazy iterator of ``cls(*args, **kwargs)`` for an ``itertools`` class
    (None: not one modelled here)."""
    make = ITERTOOLS_CLASSES.get(cls)
    return None if make is None else make(tx, list(args), dict(kwargs))


def itertools_function(fn):
    """The handler of an ``itertools`` function (``tee``, ``chain.from_iterable``) or None."""
    try:
        return ITERTOOLS_FUNCTIONS.get(fn)
    except TypeError:   # an unhashable callable
        return None
