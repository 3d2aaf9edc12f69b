"""Boolean-mask selections that are reduced: ``x[x > 0].sum()``,
``np.mean(err[valid] ** 2)``, ``(y[m] == p[m]).mean()``,
``X[labels == k].mean(axis=0)``.

``x[mask]`` of a NumPy array with a bool mask computed in the function has a
shape that depends on the data, so it is no graph value.  But a selection
that is only reduced gives a static result.  So ``x[mask]`` (x an
ndarray of bool, integer or float values, the mask a bool ndarray of x's
shape, or of its leading axes with one axis left: a row mask) first becomes a
lazy ``MaskedSelectionVariable``: the full array and the mask (the values
they have at the getitem: later in-place writes do not show, as NumPy's copy
does not see them).  It supports

* elementwise operators (``+ - * / // % **``, comparisons, ``& | ^``,
  unary ``-`` and ``~``) and one- or two-argument NumPy ufuncs
  (``np.abs``, ``np.square``, ``np.maximum``...) between selections of the
  *same* mask (one graph value, or one computed by the same pure ops from the
  same values: ``y[p > 0] - p[p > 0]``) and scalars (Python or NumPy constants; 0-d
  graph values and dynamic Python scalars for ``+ - *`` and comparisons, and
  so arrays that broadcast against one selected row, ``X[m] - mu``):
  the ufunc runs on the full arrays, with a quiet value (the ``where=``
  candidates of ``numpy_calls._quiet_value``) put into the elements the
  mask does not select, so the elements NumPy never computes raise and warn
  nothing; the selected elements see their own operands, so their values
  are NumPy's (an elementwise op commutes with the compression);
* the reductions ``sum mean max min prod any all std var`` as methods and
  ``np.*`` functions (``axis`` None or 0; ``ddof`` of ``std``/``var``):
  op ``masked_reduce``, whose kernel is NumPy's reduction of ``x[mask]``
  itself (its pairwise summation over the selected elements only, or its
  row-by-row sums over axis 0 of a row selection, ``rows=True``: bit for
  bit).  Where NumPy warns or raises for the selection's size (no element
  for ``mean std var max min``, no more than ``ddof`` for ``std``/``var``),
  the graph outputs a run-time check (``Translation.run_checks``) on which
  the entry runs the plain function, which warns or raises as NumPy does.

A selection updated in place (``s *= 2``) takes the result as its values when
it keeps the selection's dtype, and a store ``a[mask] = value`` of a selection
of the same mask (``x[m] = np.sqrt(x[m])``, ``x[m] += 1``) or of an array that
broadcasts against a row (``X[m] = row``) is ``np.where`` written into ``a``
(``masked_store``).

A selection live at a later graph break is handed to the resume function as
NumPy's ``values[mask]``, computed by the entry from the graph's outputs
(``reconstruct``).

Any other use of a selection (returned, stored elsewhere, printed, sorted, indexed,
``len``, ``.size``, axis 1 of rows, an operand of another kind) raises the ``Unsupported``
the getitem itself raised, with the getitem's place in the top frame: the
translation breaks the graph at that ``x[mask]`` exactly as it did before
selections were modelled.  A translation that made selections and still
ends with the function running natively is done again without them
(``capture/jit.py``), so no frame runs natively where it used to break.
"""
from __future__ import annotations

import operator

import numpy as np

from frame.functions._core import apply1, as_array
from frame.ops.reduction import MASKED_REDUCTIONS, masked_reduce_needs
from frame.ops.registry import get_schema

from ..errors import Unsupported, UserCodeRaises
from .base import NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable
from .registry import HOOKS
from .scalars import ScalarVariable

__all__ = ["MaskedSelectionVariable", "masked_getitem", "masked_binary_op", "masked_unary_op",
           "masked_numpy_call", "masked_store"]

# operators -> the ufunc NumPy runs for them (to find quiet values)
_OPERATOR_UFUNCS = {
    operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
    operator.truediv: np.true_divide, operator.floordiv: np.floor_divide,
    operator.mod: np.remainder, operator.pow: np.power, operator.and_: np.bitwise_and,
    operator.or_: np.bitwise_or, operator.xor: np.bitwise_xor, operator.eq: np.equal,
    operator.ne: np.not_equal, operator.lt: np.less, operator.le: np.less_equal,
    operator.gt: np.greater, operator.ge: np.greater_equal, operator.neg: np.negative,
    operator.invert: np.invert,
}
# ops whose result on a quiet value (1) and any scalar raises nothing: the only ones
# taking a scalar known only at run time
_SAFE_WITH_RUNTIME_SCALAR = {np.add, np.subtract, np.multiply, np.equal, np.not_equal,
                             np.less, np.less_equal, np.greater, np.greater_equal}
# np.* functions -> reduction (the methods are named as the reductions, MASKED_REDUCTIONS)
_NUMPY_REDUCTIONS = {**{fn: name for name, fn in MASKED_REDUCTIONS.items()},
                     np.amax: "max", np.amin: "min"}


class _LazySelection(Variable):
    """What a selection and its bound reduction methods share: every use that
    is not modelled breaks the graph at the original getitem."""
    __slots__ = ()

    def broken(self):
        """Today's graph break at the original ``x[mask]``."""
        error = self.masked_selection().error
        raise error.again() from error.__cause__

    def python_type(self):
        self.broken()

    def truth(self, tx):
        self.broken()

    def write_back(self, rb):
        self.broken()

    def getattr(self, tx, name):
        self.broken()

    def setattr(self, tx, name, value):
        self.broken()

    def delattr(self, tx, name):
        self.broken()

    def call(self, tx, args, kwargs):
        self.broken()

    def enter_context(self, tx):
        self.broken()

    def getitem(self, tx, index):
        self.broken()

    def setitem(self, tx, index, value):
        self.broken()

    def delitem(self, tx, index):
        self.broken()

    def contains(self, tx, item):
        self.broken()

    def iterate(self, tx):
        self.broken()

    def get_iter(self, tx):
        self.broken()

    def next(self, tx):
        self.broken()

    def inplace_op(self, tx, fn, other):
        self.broken()

    def to_python(self, passed=None):
        self.broken()

    def to_numpy(self):
        self.broken()

    def reconstruct(self, rb):
        self.broken()


class MaskedSelectionVariable(_LazySelection):
    """``x[mask]`` not computed yet: ``values`` (x, or an elementwise function
    of selections of the same mask, of x's shape), ``mask`` and ``error``
    (the getitem's ``Unsupported``, raised by every use not modelled)."""
    __slots__ = ("values", "mask", "error")

    def __init__(self, values: TensorVariable, mask: TensorVariable, error: Unsupported):
        super().__init__(None)
        self.values = values
        self.mask = mask
        self.error = error

    def masked_selection(self) -> "MaskedSelectionVariable":
        return self

    @property
    def row_shape(self) -> tuple[int, ...]:
        """The shape of one selected row: ``x.shape[mask.ndim:]`` (``()`` for a
        mask of x's shape)."""
        return tuple(self.values.shape[len(self.mask.shape):])

    def getattr(self, tx, name):
        if name in MASKED_REDUCTIONS:
            return MaskedMethodVariable(self, name)
        self.broken()

    def rebuilt_from(self) -> list[Variable]:
        return [self.values, self.mask]

    def reconstruct(self, rb) -> str:
        """Live at a graph break (on the stack, in a local, in a container
        rebuilt there): the resume function gets NumPy's own ``x[mask]`` of
        the values and the mask the graph outputs (one array for every name
        of the selection).  Returned or stored by a finished trace, the use
        is not modelled: the break at the getitem, as before."""
        if not rb.at_break:
            self.broken()
        name = rb.named(self)
        if name is None:
            values, mask = rb.expr(self.values), rb.expr(self.mask)
            name = rb.new_name(self)
            rb.emit(f"{name} = {values}[{mask}]")
        return name

    def inplace_op(self, tx, fn, other):
        """``s op= other`` (``x[m] += 1``): NumPy updates the one selection array
        in place, so every name of it (each holds this variable) sees the new
        values.  A result of the selection's dtype is what NumPy's in-place loop
        computes; another one (cast back by NumPy, or refused) breaks."""
        result = masked_binary_op(tx, fn, self, other)
        if result.values.meta.dtype != self.values.meta.dtype:
            self.broken()
        self.values = result.values
        return self

    def __repr__(self) -> str:
        return f"<MaskedSelection {self.values.meta.dtype} of {list(self.mask.shape)}>"


class MaskedMethodVariable(_LazySelection):
    """``selection.sum`` (a reduction method) before it is called."""
    __slots__ = ("selection", "name")

    def __init__(self, selection: MaskedSelectionVariable, name: str):
        super().__init__(None)
        self.selection = selection
        self.name = name

    def masked_selection(self) -> MaskedSelectionVariable:
        return self.selection   # (as an operand or argument it breaks)

    def call(self, tx, args, kwargs):
        return _reduce_call(tx, self.selection, self.name, args, kwargs)

    def rebuilt_from(self) -> list[Variable]:
        return [self.selection]

    def reconstruct(self, rb) -> str:
        """Live at a graph break: the method of the real selection."""
        return f"{rb.expr(self.selection)}.{self.name}"

    def __repr__(self) -> str:
        return f"<MaskedSelection method {self.name}>"


def _selectable(t: TensorVariable, index: Variable) -> bool:
    """A bool ndarray mask of ``t``'s shape, or of its leading axes with one
    axis left (``X[labels == k]`` of a 2-D X): the selection is C-contiguous
    whatever ``t``'s layout (NumPy keeps the layout of two or more axes left,
    which the graph's values need not share)."""
    if not (t.kind == NDARRAY and isinstance(index, TensorVariable) and index.kind == NDARRAY
            and index.meta.dtype == np.bool_ and t.meta.dtype.kind in "biuf"):
        return False
    k = len(index.shape)
    return 1 <= k and len(t.shape) - k in (0, 1) and tuple(index.shape) == tuple(t.shape[:k])


def masked_getitem(tx, t: TensorVariable, index: Variable,
                   error: Unsupported) -> MaskedSelectionVariable | None:
    """``t[index]`` as a lazy selection, given the ``Unsupported`` capture
    raises for it (None: not a selection this models; ``error`` stands)."""
    if isinstance(error, UserCodeRaises) or not tx.tr.lazy_values or not _selectable(t, index):
        return None
    t.check_fresh()
    index.check_fresh()
    tx.break_site(error)   # where the getitem is: what ``_fail`` records for it
    tx.tr.masked_selections += 1
    # the values now (NumPy's copy): a later in-place write gives the array a new meta
    return MaskedSelectionVariable(TensorVariable(t.meta, NDARRAY),
                                   TensorVariable(index.meta, NDARRAY), error)


def masked_store(tx, a: TensorVariable, index: Variable, value: Variable) -> bool:
    """``a[mask] = value`` where ``value`` is a selection of the same mask
    (``x[m] = np.sqrt(x[m])``, and so ``x[m] += 1``: the selection updated in
    place, then stored) or an ndarray that broadcasts against one selected row
    (``X[m] = row``): ``a`` takes ``value``'s elements where the mask is true
    (``np.where(m, value, a)``, written into ``a`` as the scalar store
    ``a[m] = 0`` is).  The unselected elements of a selection's full array are
    never read, so they raise nothing.  Only values that cast to ``a``'s dtype
    exactly (NumPy's ``safe`` rule) are stored; other selections break at their
    getitem.  False: not a store this models (``a[mask] = value`` as before)."""
    s = value.masked_selection()
    if s is None:
        if not (isinstance(value, TensorVariable) and value.kind == NDARRAY and value.shape
                and value.meta.dtype.kind in "biuf" and _selectable(a, index)):
            return False
        row_shape = tuple(a.shape[len(index.shape):])
        if not fits_rows(tuple(value.shape), row_shape) or \
                not np.can_cast(value.meta.dtype, a.meta.dtype, casting="safe"):
            return False
        values = value
    else:
        if s is not value or not _selectable(a, index) or \
                tuple(s.values.shape) != tuple(a.shape) or not _same_mask(tx, index, s.mask) or \
                not np.can_cast(s.values.meta.dtype, a.meta.dtype, casting="safe"):
            s.broken()
        values, row_shape = s.values, s.row_shape
    a.check_fresh()
    index.check_fresh()
    HOOKS.check_inplace(tx, a, values)
    # (before the write: the value may be a view of a, X[m] = X[0])
    stored = tx.wrap_static(np.where).call(tx, [expanded_mask(tx, index, row_shape), values, a], {})
    tx.tr.item_written(a)
    tx.write_in_place(a, stored)   # (a safe cast: the result is of a's dtype)
    return True


def _earliest(selections: list[MaskedSelectionVariable]) -> MaskedSelectionVariable:
    return min(selections, key=lambda s: s.error.top_step)


def _operand(v: Variable):
    """('selection', s), ('constant', value), ('runtime', v) (a 0-d value),
    ('array', v) (an ndarray of rank >= 1) or None."""
    s = v.masked_selection()
    if s is not None:
        return ("selection", s) if s is v else None   # (a bound method: no operand)
    if isinstance(v, ScalarVariable) and v.dynamic:
        return "runtime", v
    if isinstance(v, TensorVariable):
        if v.kind == TENSOR or v.meta.dtype.kind not in "biuf":
            return None
        return ("array", v) if v.shape else ("runtime", v)
    if v.is_constant():
        c = v.as_constant()
        if type(c) in (bool, int, float) or (isinstance(c, np.generic)
                                             and np.dtype(type(c)).kind in "biuf"):
            return "constant", c
    return None


def fits_rows(shape: tuple[int, ...], row_shape: tuple[int, ...]) -> bool:
    """Does an array of ``shape`` broadcast against a selection of rows of
    ``row_shape`` (``(count, *row_shape)``) without changing its shape,
    whatever the count (``X[m] - mu`` with ``mu`` of shape ``(d,)`` or
    ``(1, d)``)?  Then it broadcasts against the full array the same way."""
    if len(shape) > len(row_shape) + 1:
        return False
    padded = (1,) * (len(row_shape) + 1 - len(shape)) + tuple(shape)
    return padded[0] == 1 and all(n in (1, m) for n, m in zip(padded[1:], row_shape))


def expanded_mask(tx, mask: TensorVariable, row_shape: tuple[int, ...]) -> TensorVariable:
    """The mask with an axis of 1 for each axis of a row, so that it broadcasts
    against the full array (``m[:, None]`` for ``X[m]`` of a 2-D X)."""
    if not row_shape:
        return mask
    shape = tuple(mask.shape) + (1,) * len(row_shape)
    return tx.wrap_static(np.reshape).call(tx, [mask, tx.wrap_static(shape)], {})


def _elementwise(tx, ufunc: np.ufunc, operands: list[Variable], compute) -> Variable:
    """``compute(tx, operands)`` of selections of one mask, scalars and arrays
    that broadcast against a row, on the full arrays with quiet values in the
    elements the mask does not select."""
    kinds = [_operand(v) for v in operands]
    selections = [v.masked_selection() for v in operands if v.masked_selection() is not None]
    first = _earliest(selections)
    if any(k is None for k in kinds) or not all(_same_mask(tx, s.mask, first.mask)
                                                for s in selections):
        first.broken()   # other operands, or other masks: NumPy broadcasts by the counts
    if any(s.values.shape != first.values.shape for s in selections) or \
            any(kind == "array" and not fits_rows(tuple(v.shape), first.row_shape)
                for kind, v in kinds):
        first.broken()   # NumPy broadcasts the rows, or by the count
    # (an array's elements are all computed with the selected rows: only ops quiet for any)
    runtime = any(k[0] in ("runtime", "array") for k in kinds)
    if runtime and ufunc not in _SAFE_WITH_RUNTIME_SCALAR:
        first.broken()
    probe_args, probe_values = [], []
    for kind, v in kinds:
        if kind == "constant":
            probe_args.append(ConstantVariable(v))
            probe_values.append(v)
        else:   # an array slot (a run-time scalar too: see _SAFE_WITH_RUNTIME_SCALAR)
            dtype = v.values.meta.dtype if kind == "selection" else _runtime_dtype(v)
            probe_args.append(TensorVariable(np.zeros((), dtype), NDARRAY))
            probe_values.append(dtype)
    from .numpy_calls import _quiet_value   # lazy: numpy_calls imports callables, which imports this
    quiet = _quiet_value(ufunc, probe_args, probe_values)
    if quiet is None:
        first.broken()   # NumPy raises or warns for every value: only on selected elements
    try:
        args = []
        mask = expanded_mask(tx, first.mask, first.row_shape)
        for (kind, v), original in zip(kinds, operands):
            if kind != "selection":
                args.append(original)
                continue
            fill = tx.wrap_result(v.values.meta.dtype.type(quiet))
            args.append(tx.wrap_static(np.where).call(tx, [mask, v.values, fill], {}))
        result = compute(tx, args)
    except Unsupported:
        first.broken()
    if not isinstance(result, TensorVariable) or result.kind != NDARRAY or \
            tuple(result.shape) != tuple(first.values.shape) or \
            result.meta.dtype.kind not in "biuf":
        first.broken()
    return MaskedSelectionVariable(result, first.mask, first.error)


def _same_mask(tx, a: TensorVariable, b: TensorVariable) -> bool:
    """Are the two masks one value: one graph value, or computed by the same
    pure ops from the same values (``y[p > 0] - p[p > 0]``)?"""
    values = tx.tr.tracer.values
    x, y = values.get(id(a.meta)), values.get(id(b.meta))
    return x is not None and y is not None and _same_value(x, y, 8)


def _same_value(x, y, depth: int) -> bool:
    if x is y:
        return True
    n, m = x.producer, y.producer
    if depth == 0 or n is None or m is None or n.op != m.op or x.index != y.index or \
            n.body is not None or m.body is not None or len(n.inputs) != len(m.inputs) or \
            get_schema(n.op).has("has_side_effect"):
        return False
    if n.const is not None or m.const is not None:
        return n.const is not None and m.const is not None and n.const.dtype == m.const.dtype \
            and n.const.shape == m.const.shape and n.const.tobytes() == m.const.tobytes()
    try:
        if n.attrs != m.attrs:
            return False
    except (TypeError, ValueError):   # (an attr compares as an array)
        return False
    return all(_same_value(i, j, depth - 1) for i, j in zip(n.inputs, m.inputs))


def _runtime_dtype(v: Variable) -> np.dtype:
    if isinstance(v, TensorVariable):
        return v.meta.dtype
    return np.dtype(np.float64 if isinstance(v.concrete, float) else np.int64)


def masked_binary_op(tx, fn, a: Variable, b: Variable) -> Variable:
    """``a op b`` where an operand is a selection."""
    ufunc = _OPERATOR_UFUNCS.get(fn)
    if ufunc is None or ufunc.nin != 2:
        (a.masked_selection() or b.masked_selection()).broken()
    return _elementwise(tx, ufunc, [a, b], lambda tx, args: tx.binary_op(fn, *args))


def masked_unary_op(tx, fn, a: Variable) -> Variable:
    """``-a``, ``~a`` of a selection."""
    ufunc = _OPERATOR_UFUNCS.get(fn)
    if ufunc is None or ufunc.nin != 1:
        a.masked_selection().broken()
    return _elementwise(tx, ufunc, [a], lambda tx, args: tx.binary_or_unary(fn, *args))


def masked_numpy_call(tx, fn, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """``np.<fn>(...)`` with a selection among the arguments."""
    selections = [s for s in (v.masked_selection() for v in [*args, *kwargs.values()])
                  if s is not None]
    first = _earliest(selections)
    if fn in _NUMPY_REDUCTIONS and args and args[0].masked_selection() is args[0] and \
            all(v.masked_selection() is None for v in [*args[1:], *kwargs.values()]):
        return _reduce_call(tx, args[0], _NUMPY_REDUCTIONS[fn], args[1:], kwargs)
    if isinstance(fn, np.ufunc) and fn.nout == 1 and fn.nin == len(args) and not kwargs:
        function = tx.wrap_static(fn)
        return _elementwise(tx, fn, list(args), lambda tx, a: function.call(tx, a, {}))
    first.broken()


def _masked_reduce(x, mask, reduction, ddof, rows):
    """Op ``masked_reduce``: ``np.<reduction>(x[mask], ddof=)`` (``axis=0`` with ``rows``)."""
    return apply1("masked_reduce", (as_array(x), as_array(mask)),
                  {"reduction": reduction, "ddof": ddof, "rows": rows})


def _reduce_call(tx, s: MaskedSelectionVariable, name: str, args: list[Variable],
                 kwargs: dict[str, Variable]) -> Variable:
    """``s.<name>(...)`` or ``np.<name>(s, ...)``: positional ``axis`` (and
    ``ddof`` by keyword for std/var), each a constant; ``axis`` None (every
    selected element) or 0 (over the selected rows: an array of a row's shape,
    the count-by-row reduction of ``X[labels == k].mean(axis=0)``); anything
    else breaks."""
    if len(args) > 1:
        s.broken()
    options = dict(kwargs)
    if args:
        options["axis"] = args[0]
    ddof, rows = 0, False
    for key, value in options.items():
        if not value.is_constant():
            s.broken()
        c = value.as_constant()
        if key == "axis" and (c is None or (type(c) is int and c in (0, -1 - len(s.row_shape)))):
            rows = c is not None and bool(s.row_shape)
            continue
        if key == "ddof" and name in ("std", "var") and type(c) is int and c >= 0:
            ddof = c
            continue
        s.broken()
    # NumPy warns (or raises) for fewer rows (elements) than this: the plain function runs
    needs = masked_reduce_needs(name, ddof)
    row_size = 1 if rows else int(np.prod(s.row_shape, dtype=np.int64))
    if needs and row_size == 0:
        s.broken()   # (no element whatever the count)
    try:
        out = tx.call_real(_masked_reduce, [s.values, s.mask, ConstantVariable(name),
                                            ConstantVariable(ddof), ConstantVariable(rows)], {})
        if needs:
            count = tx.wrap_static(np.sum).call(tx, [s.mask], {})
            fewest = -(-needs // row_size)   # rows holding ``needs`` elements
            tx.tr.run_checks.append(tx.binary_op(operator.lt, count, ConstantVariable(fewest)))
    except Unsupported:
        s.broken()
    # NumPy's reductions give NumPy scalars, over the rows arrays
    return TensorVariable(out.meta, NDARRAY if rows else NPSCALAR)
