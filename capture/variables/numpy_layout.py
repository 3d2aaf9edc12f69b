"""``np.ascontiguousarray`` on traced arrays: NumPy hands back the array itself
when it is C-contiguous (and already of the dtype asked for), a C-contiguous
copy otherwise, so the result's identity depends on the memory layout.

An input array that is C-contiguous is the result itself, under a guard that it
is (a later non-contiguous input traces again); a ``dtype=`` other than the
array's is ``astype`` (NumPy copies whatever the layout).  A non-contiguous
input, an array computed in the function (capture does not model the layout
NumPy would give it), a view, or a 0-d array (NumPy returns a 1-d view) is a
graph break: NumPy runs the call.

``np.asfortranarray`` is modelled where C and Fortran order are the same
memory: an array with at most one dimension longer than 1 (a vector, a row,
a column) that is C-contiguous (an input, under a guard; an array computed
in the function that is not a view) is handed back itself, as NumPy does.
Other shapes would need Fortran-ordered results (the graph's arrays are
C-ordered): a graph break.

``np.broadcast_arrays`` of traced NumPy arrays: when every shape is the
broadcast shape NumPy hands back the arrays themselves; otherwise each
result is a writeable view of its array (NumPy's warn-on-write flag set),
remade at run time by ``broadcast_view`` from the array (``mark_view``).

``a.view(dtype)`` of an input array reinterprets its bytes: the entry makes
the view itself from the input (``ViewSource``) and hands it to the graph as
an input of its own (its bytes are the input's, read bit for bit), a view of
``a`` for the trace (an in-place update of ``a`` makes it stale, a write
through it is refused).  A view of an array computed in the function (its
bytes exist only in the graph) is a graph break.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from ..sources import DerivedSource, Source
from .base import NDARRAY, ConstantVariable, TensorVariable, Variable
from .numpy_inplace import bind_call
from .registry import HOOKS

__all__ = ["numpy_ascontiguousarray", "numpy_asfortranarray", "numpy_broadcast_arrays",
           "broadcast_view", "ndarray_view", "ViewSource"]


def _ascontiguousarray_signature(a, dtype=None, *, like=None): ...


def numpy_ascontiguousarray(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    bound = bind_call(_ascontiguousarray_signature, "ascontiguousarray", args, kwargs)
    a = bound["a"]
    options = {k: v for k, v in bound.items() if k != "a"}
    if not isinstance(a, TensorVariable) or a.kind != NDARRAY or \
            not all(isinstance(v, Variable) and v.is_constant() for v in options.values()
                    if v is not None) or \
            (isinstance(options["like"], Variable) and options["like"].as_constant() is not None):
        raise Unsupported("unsupported_call", "numpy.ascontiguousarray with these arguments")
    if not a.shape:
        raise Unsupported("unsupported_call", "numpy.ascontiguousarray of a 0-d array (NumPy "
                                              "returns a 1-d view of it)")
    dtype = options["dtype"].as_constant() if isinstance(options["dtype"], Variable) else None
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except TypeError as e:
            raise UserCodeRaises(f"ascontiguousarray(): {e}") from e
        if dtype != a.meta.dtype:  # a new array of that dtype, whatever the layout
            return HOOKS.tensor_getattr(tx, a, "astype").call(tx, [ConstantVariable(dtype)], {})
    data = tx.tr.input_arrays.get(id(a))
    if data is None or a.base is not None or a.source is None:
        raise Unsupported("unsupported_call", "numpy.ascontiguousarray of an array computed in "
                                              "the function (whether NumPy copies it depends on "
                                              "its memory layout)")
    if not data.flags.c_contiguous:
        raise Unsupported("unsupported_call", "numpy.ascontiguousarray of a non-contiguous "
                                              "input array (NumPy copies it)")
    a.check_fresh()
    tx.tr.guards.c_contiguous(a.array_source())
    return a  # NumPy hands the array itself back


def _asfortranarray_signature(a, dtype=None, *, like=None): ...


def numpy_asfortranarray(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    bound = bind_call(_asfortranarray_signature, "asfortranarray", args, kwargs)
    a = bound["a"]
    options = [v for k, v in bound.items() if k != "a" and v is not None]
    if not isinstance(a, TensorVariable) or a.kind != NDARRAY or \
            not all(isinstance(v, Variable) and v.is_constant() and v.as_constant() is None
                    for v in options):
        raise Unsupported("unsupported_call", "numpy.asfortranarray with these arguments")
    if not a.shape:
        raise Unsupported("unsupported_call", "numpy.asfortranarray of a 0-d array (NumPy "
                                              "returns a 1-d view of it)")
    if sum(1 for n in a.shape if n > 1) > 1:
        raise Unsupported("unsupported_call", "numpy.asfortranarray of an array with two "
                                              "dimensions longer than 1 (a Fortran-ordered "
                                              "copy: the graph's arrays are C-ordered)")
    if a.base is not None:
        raise Unsupported("unsupported_call", "numpy.asfortranarray of a view (whether NumPy "
                                              "copies it depends on its strides)")
    a.check_fresh()
    data = tx.tr.input_arrays.get(id(a))
    if data is not None:
        if not data.flags.c_contiguous:
            raise Unsupported("unsupported_call", "numpy.asfortranarray of a non-contiguous "
                                                  "input array (NumPy copies it)")
        tx.tr.guards.c_contiguous(a.array_source())
    elif a.source is not None:
        raise Unsupported("unsupported_call", "numpy.asfortranarray of an array capture does "
                                              "not know the layout of")
    return a  # C-contiguous with one long dimension: Fortran-contiguous too, NumPy hands it back


def broadcast_view(array: np.ndarray, shape: tuple) -> np.ndarray:
    """The item of ``np.broadcast_arrays`` for ``array`` when the shapes differ:
    a view of ``array`` of ``shape`` (NumPy's own call, with a 0-d operand so
    the shapes are never all equal)."""
    return np.broadcast_arrays(array, np.broadcast_to(np.False_, shape), np.False_)[0]


def numpy_broadcast_arrays(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    subok = kwargs.get("subok")
    if set(kwargs) - {"subok"} or (subok is not None and not (
            subok.is_constant() and subok.as_constant() is False)) or not args or \
            not all(isinstance(a, TensorVariable) and a.kind == NDARRAY for a in args):
        raise Unsupported("unsupported_call", "numpy.broadcast_arrays with these arguments")
    try:
        shape = np.broadcast_shapes(*(tuple(a.shape) for a in args))
    except ValueError as e:
        raise UserCodeRaises(f"broadcast_arrays(): {e}", exc=e) from e
    if all(tuple(a.shape) == shape for a in args):
        return _tuple(list(args))
    items = []
    for a in args:
        a.check_fresh()
        view = HOOKS.numpy_call(tx, np.broadcast_to, [a, ConstantVariable(shape)], {})
        tx.tr.mark_view(view, a, broadcast_view, [ConstantVariable(shape)], {})
        items.append(view)
    return _tuple(items)


def _tuple(items):
    from .containers import TupleVariable   # lazy: containers imports callables, which imports this
    return TupleVariable(items)


class ViewSource(DerivedSource):
    """``base.view(dtype)`` (``dtype`` pooled as ``name``): a new view of the
    array at ``base`` with its bytes read as ``dtype``."""
    __slots__ = ("name", "dtype")

    def __init__(self, base: Source, name: str, dtype: np.dtype):
        self.base = base
        self.name = name
        self.dtype = dtype

    def expr(self) -> str:
        return f"{self.base.expr()}.view({self.name})"

    def text(self) -> str:
        return f"{self.base.text()}.view({self.dtype})"

    def _key(self):
        return (self.base, self.name)


def ndarray_view(tx, a: TensorVariable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """``a.view(dtype)`` (see the module doc)."""
    given = args[0] if len(args) == 1 and not kwargs else kwargs.get("dtype") if \
        set(kwargs) == {"dtype"} and not args else None
    if given is None or not given.is_constant():
        raise Unsupported("unsupported_call", "ndarray.view() with these arguments")
    try:
        dtype = np.dtype(given.as_constant())
    except TypeError as e:
        raise Unsupported("unsupported_call", f"ndarray.view() of {given!r}: {e}") from e
    data = tx.tr.input_arrays.get(id(a))
    if a.kind != NDARRAY or data is None or a.source is None or a.base is not None:
        raise Unsupported("unsupported_call", "ndarray.view() of an array computed in the "
                                              "function (its bytes exist only in the graph)")
    a.check_fresh()
    try:
        real = data.view(dtype)
    except (ValueError, TypeError) as e:
        raise UserCodeRaises(f"view(): {e}", exc=e) from e
    if dtype.itemsize != data.dtype.itemsize:   # (the last axis must be contiguous: guarded)
        tx.tr.guards.c_contiguous(a.array_source())
    view = tx.tr.wrap(real, ViewSource(a.source, tx.tr.guards.const(dtype), dtype))
    if id(a) in tx.tr.side_effects.tensors:
        raise Unsupported("side_effect", "ndarray.view() of an array the function updated in "
                                         "place (the view reads the bytes before the graph)")
    root = a.base if a.base is not None else a
    view.base = root
    tx.tr.views.setdefault(id(root), []).append(view)
    return view
