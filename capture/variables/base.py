"""Variables: what the symbolic stack and locals hold.

Each Variable knows its source (``None`` when computed during the trace).
Behaviour lives on the classes, never in ``isinstance`` chains elsewhere
(``tests/capture/test_variable_protocol.py`` checks it); ``tx`` is the
instruction translator (it owns the tracer, the guards and the side-effect
log).  The protocol, with the refusing defaults of ``Variable``:

* what it is: ``python_type()``, ``is_constant()``/``as_constant()`` (the
  Python constant, or ``Unsupported``), ``truth(tx)``, ``describe()``;
* what it holds: ``children()`` (the items of a container, as a call receives
  them) and ``rebuilt_from()`` (what ``reconstruct`` reads: their tensors
  become graph outputs when the value leaves the graph);
* operations the opcode handlers delegate: ``getattr``, ``setattr``, ``call``,
  ``getitem``, ``setitem``, ``delitem``, ``contains``, ``iterate``,
  ``get_iter``, ``next``, ``inplace_op``;
* crossing into real Python: ``to_python(passed)`` (the object a frame
  function run on meta arrays receives) and ``to_numpy()`` (what NumPy
  receives when asked whether a call raises);
* code generation: ``reconstruct(rb)`` returns an expression of the entry
  (``codegen._Rebuilder``) that rebuilds the value after the graph ran.

``docs/capture.md`` ("How to add a Variable") walks through a new kind.
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from frame.dtypes import DType, from_numpy
from frame.tensor import Tensor

from ..errors import Unsupported, UserCodeRaises
from ..rebuild import iter_at, tensor_rows
from ..sources import DataSource, Source
from ..tracer import TracedTensor
from .registry import HOOKS, wrap_rule

__all__ = ["Variable", "ConstantVariable", "NullVariable", "NULL", "TensorVariable",
           "CONSTANT_TYPES", "TensorKind", "TENSOR", "NDARRAY", "NPSCALAR", "refuse_tensor_index",
           "plain_tensor_subclass"]

CONSTANT_TYPES = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis),
                  type(NotImplemented), range, slice)



class TensorKind(enum.Enum):
    """What a ``TensorVariable`` is at run time."""
    TENSOR = "tensor"        # a frame.Tensor
    NDARRAY = "ndarray"      # a numpy.ndarray
    NPSCALAR = "npscalar"    # a NumPy scalar (``np.float32(1.5)``): a 0-d value

    def __str__(self) -> str:
        return self.value


TENSOR, NDARRAY, NPSCALAR = TensorKind.TENSOR, TensorKind.NDARRAY, TensorKind.NPSCALAR


class Variable:
    __slots__ = ("source",)

    def __init__(self, source: Source | None = None):
        self.source = source

    # -- what it is --------------------------------------------------------------------
    def python_type(self) -> type:
        raise Unsupported("unsupported_object", f"type of {self!r}")

    def is_constant(self) -> bool:
        return False

    def as_constant(self) -> Any:
        raise Unsupported("unsupported_object", f"{self!r} is not a Python constant")

    def is_none(self) -> bool:
        """The constant ``None``."""
        return False

    def tensor_kind(self) -> TensorKind | None:
        """The kind of graph value this stands for (a frame Tensor, an ndarray, a
        NumPy scalar), or None when it is not a graph value."""
        return None

    def truth(self, tx) -> bool:
        raise Unsupported("unsupported_object", f"truth value of {self!r}")

    def describe(self) -> str:
        """How messages show the value (``raise`` of it)."""
        return repr(self)

    # -- what it holds -----------------------------------------------------------------
    def children(self) -> list["Variable"] | tuple:
        """The items of a container (a dict's values), as a call receives them."""
        return ()

    def rebuilt_from(self) -> list["Variable"] | tuple:
        """The Variables ``reconstruct`` reads (a container's items, an
        iterator's list, a bound method's object): their tensors are graph
        outputs when this value leaves the graph."""
        return self.children()

    def value_needed(self) -> None:
        """An operation needs this value's Python value (Python arithmetic, a
        comparison, formatting): a lazy number read from a tensor
        (``variables/lazy_scalars.py``) raises the graph break of the call that
        made it; other values have nothing to do."""

    def masked_selection(self) -> "Variable | None":
        """The lazy ``x[mask]`` this is or is a reduction method of
        (``variables/masked.py``), else None."""
        return None

    def has_frame_tensor(self) -> bool:
        """Is a frame Tensor among this tuple's or list's items (or is it one)?
        Without one, operators and NumPy functions follow NumPy's semantics."""
        return False

    def is_mutable(self) -> bool:
        """Can the trace mutate it (a list, a dict, an object's attributes)?
        Mutations of one of the frame's are replayed into it after the graph."""
        return False

    def write_back(self, rb) -> list[str]:
        """Lines of the entry writing a mutated container's final state into the
        real object (``rb``: ``codegen._Rebuilder``)."""
        raise Unsupported("side_effect", f"mutating {self!r}")

    # -- operations --------------------------------------------------------------------
    def getattr(self, tx, name: str) -> "Variable":
        raise Unsupported("unsupported_object", f"attribute {name!r} of {self!r}")

    def setattr(self, tx, name: str, value: "Variable") -> None:
        raise Unsupported("side_effect", f"setting attribute {name!r} on {self!r}")

    def delattr(self, tx, name: str) -> None:
        """``del self.name`` (``DELETE_ATTR``)."""
        raise Unsupported("side_effect", f"del of attribute {name!r} of {self!r}")

    def call(self, tx, args: list["Variable"], kwargs: dict[str, "Variable"]) -> "Variable":
        raise Unsupported("unsupported_call", f"calling {self!r}")

    def enter_context(self, tx) -> "tuple[Variable, Variable]":
        """``with self:`` (``BEFORE_WITH``): the ``__exit__`` to call when the
        block ends (a callable Variable taking type, value, traceback) and
        what ``__enter__`` returned."""
        raise Unsupported("unsupported_object", f"with on {self.describe()}: its __enter__ and "
                                                f"__exit__ are not modelled")

    def user_function(self) -> "tuple[Variable, Variable | None] | None":
        """(function, bound self or None) when calling this calls a Python
        function of the program (not one made by the trace): at a graph break
        such a call runs as its own intercepted frame (``breaks.py``)."""
        return None

    def getitem(self, tx, index: "Variable") -> "Variable":
        """``self[index]``."""
        refuse_tensor_index(index)
        if self.is_constant() and index.is_constant():
            try:
                return tx.wrap_result(self.as_constant()[index.as_constant()])
            except Exception as e:
                raise UserCodeRaises(f"{type(e).__name__}: {e}") from e
        raise Unsupported("unsupported_object", f"subscript of {self!r}")

    def setitem(self, tx, index: "Variable", value: "Variable") -> None:
        """``self[index] = value``."""
        raise Unsupported("side_effect", f"item assignment on {self!r}")

    def delitem(self, tx, index: "Variable") -> None:
        """``del self[index]``."""
        raise Unsupported("side_effect", f"del on {self!r}")

    def contains(self, tx, item: "Variable") -> bool:
        """``item in self``."""
        if self.is_constant() and item.is_constant():
            try:
                return item.as_constant() in self.as_constant()
            except TypeError as e:
                raise UserCodeRaises(str(e)) from e
        raise Unsupported("unsupported_object", f"'in' on {self!r}")

    def iterate(self, tx) -> list["Variable"]:
        raise Unsupported("unsupported_object", f"iterating over {self!r}")

    def get_iter(self, tx) -> "Variable":
        """``iter(self)``: an IteratorVariable."""
        return HOOKS.IteratorVariable(self.iterate(tx))

    def next(self, tx) -> "Variable | None":
        """``next(self)`` of an iterator (FOR_ITER): the item, or None when exhausted."""
        raise Unsupported("unsupported_object", f"iterating {self!r}")

    def inplace_op(self, tx, fn, other: "Variable") -> "Variable":
        """``self op= other`` (``fn`` is the binary operator): rebinds, unless
        the kind updates itself in place."""
        return tx.binary_op(fn, self, other)

    # -- crossing into real Python and generated code ---------------------------------
    def to_python(self, passed: dict | None = None):
        """The Python object a frame function run for real on meta arrays
        receives for this value; ``passed`` (when given) maps the id of each
        tensor object made to its Variable."""
        raise Unsupported("unsupported_object", f"{self!r} cannot be passed to a frame function")

    def to_numpy(self):
        """What NumPy receives for this value when capture asks it whether a
        call raises (meta arrays: real zero-filled arrays of the right types)."""
        return self.to_python()

    def reconstruct(self, rb) -> str:
        """An expression of the entry rebuilding this value after the graph
        ran (``rb``: ``codegen._Rebuilder``).  A value of the frame is read
        through its source; one made by the trace needs its own way."""
        if self.source is not None:
            return rb.source(self)
        raise Unsupported("unsupported_object", f"returning or storing {self!r}")

    def __repr__(self) -> str:
        src = f" from {self.source}" if self.source is not None else ""
        return f"<{type(self).__name__}{src}>"


class ConstantVariable(Variable):
    """An immutable Python value known at trace time (specialised and guarded)."""
    __slots__ = ("value",)

    def __init__(self, value, source: Source | None = None):
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return type(self.value)

    def is_constant(self) -> bool:
        return True

    def is_none(self) -> bool:
        return self.value is None

    def as_constant(self):
        return self.value

    def truth(self, tx) -> bool:
        return bool(self.value)

    def getattr(self, tx, name: str) -> Variable:
        return HOOKS.wrap_constant_attr(tx, self, name)

    def iterate(self, tx) -> list[Variable]:
        if isinstance(self.value, (str, bytes, range, tuple, frozenset)):
            return [ConstantVariable(v) for v in self.value]
        return super().iterate(tx)

    def get_iter(self, tx) -> "Variable":
        if type(self.value) is range:   # rebuilt at a break as a range_iterator
            value = self.value
            return HOOKS.IteratorVariable(
                self.iterate(tx), lambda rb, pos: f"{rb.const(iter_at)}({rb.const(value)}, {pos})")
        return super().get_iter(tx)

    def to_python(self, passed: dict | None = None):
        return self.value

    def reconstruct(self, rb) -> str:
        return rb.constant(self.value)

    def __repr__(self) -> str:
        return f"Constant({self.value!r})"


@wrap_rule(20)
def _wrap_constant(tr, value, source: Source) -> Variable | None:
    """NumPy scalars and Python scalars (guarded by value), ranges, slices,
    Ellipsis and NotImplemented (guarded equal to a pooled copy)."""
    t = type(value)
    if isinstance(value, np.generic) or t in (int, float, bool, str, bytes, complex, type(None)):
        tr.guards.constant(source, value)
        return ConstantVariable(value, source)
    if t in (range, slice, type(Ellipsis), type(NotImplemented)):
        tr.guards.pooled_equal(source, value)
        return ConstantVariable(value, source)
    return None


@wrap_rule(72, static=True)
def _wrap_frame_dtype(tr, value, source: Source | None) -> Variable | None:
    """``frame.float32`` and the other DTypes (guarded by identity)."""
    return ConstantVariable(value, source) if isinstance(value, DType) else None


@wrap_rule(86, static=True)
def _wrap_numpy_dtype(tr, value, source: Source | None) -> Variable | None:
    """A ``numpy.dtype`` object (guarded by identity)."""
    return ConstantVariable(value, source) if isinstance(value, np.dtype) else None


class NullVariable(Variable):
    """The NULL marker CPython pushes below (or above) a callable."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL"


NULL = NullVariable()


class TensorVariable(Variable):
    """A graph value.  ``meta`` is the tracer's meta array for it; ``kind`` is
    the Python type plain code would have produced: a frame Tensor, an ndarray,
    or a NumPy scalar (0-d NumPy results).

    ``base`` is the variable whose memory this one may share (a NumPy view,
    ``frame.from_numpy``), else None; ``stale`` is set when that memory was
    written in place after the view was taken: the view's meta no longer holds
    its value, so any later use of it is unsupported."""
    __slots__ = ("meta", "kind", "requires_grad", "base", "stale", "recipe", "pytype")

    def __init__(self, meta: np.ndarray, kind: TensorKind, source: Source | None = None,
                 requires_grad: bool = False):
        super().__init__(source)
        self.meta = meta
        self.kind = kind
        self.requires_grad = requires_grad
        self.base: TensorVariable | None = None
        self.stale = False
        # for a view: (parent variable, fn, args, kwargs) with fn(parent, *args, **kwargs)
        # remaking it from its parent at run time (so it shares memory as NumPy's does)
        self.recipe: tuple | None = None
        self.pytype: type | None = None  # a Tensor subclass (frame.nn.Parameter) of an input

    def tensor_kind(self) -> TensorKind:
        return self.kind

    def check_fresh(self) -> None:
        """Refuse to use a view whose memory was overwritten in place."""
        if self.stale:
            raise Unsupported("side_effect", "a NumPy view used after its base array was updated "
                                             "in place")

    @property
    def shape(self) -> tuple[int, ...]:
        return self.meta.shape

    @property
    def dtype(self):
        return from_numpy(self.meta.dtype)

    def python_type(self) -> type:
        if self.kind == TENSOR:
            return self.pytype or Tensor
        if self.kind == NDARRAY:
            return np.ndarray
        return self.meta.dtype.type

    def array_source(self) -> Source:
        """The source of the NumPy array holding this (sourced) value's data."""
        return DataSource(self.source) if self.kind == TENSOR else self.source

    def as_python(self):
        """The object frame's API functions should see for this value."""
        if self.kind == TENSOR:
            return Tensor._wrap(self.meta)
        return self.meta

    def truth(self, tx) -> bool:
        raise Unsupported("data_dependent", "the truth value of a tensor depends on its data")

    def has_frame_tensor(self) -> bool:
        return self.kind == TENSOR

    def getattr(self, tx, name: str) -> Variable:
        return HOOKS.tensor_getattr(tx, self, name)

    def setattr(self, tx, name: str, value: Variable) -> None:
        if self.kind == TENSOR and name == "grad":
            HOOKS.write_grad(tx, self, value)
            return
        super().setattr(tx, name, value)

    def getitem(self, tx, index: Variable) -> Variable:
        return HOOKS.tensor_getitem(tx, self, index)

    def setitem(self, tx, index: Variable, value: Variable) -> None:
        if scalar_tensor_entries(index):
            raise Unsupported("data_dependent", "item assignment at a position given by an integer "
                                                "tensor or NumPy integer computed in the function")
        if self.kind == TENSOR:  # frame's functional setitem (a scatter), written back
            HOOKS.tensor_write(tx, self, Tensor.__setitem__.__frame_inplace_of__, [index, value], {})
            return
        if self.kind == NDARRAY:
            HOOKS.ndarray_setitem(tx, self, index, value)
            return
        raise Unsupported("side_effect", "item assignment into a NumPy scalar")

    def inplace_op(self, tx, fn, other: Variable) -> Variable:
        """Tensors and ndarrays are updated in place (NumPy's same_kind
        casting, fixed shape); a NumPy scalar rebinds."""
        if self.kind in (TENSOR, NDARRAY):
            HOOKS.check_inplace(tx, self, other)
            return tx.write_in_place(self, tx.binary_op(fn, self, other))
        return super().inplace_op(tx, fn, other)

    def to_python(self, passed: dict | None = None):
        self.check_fresh()
        obj = TracedTensor._wrap(self.meta)
        if passed is not None:
            passed[id(obj)] = self
        return obj

    def to_numpy(self):
        return self.meta if self.kind == NDARRAY else self.meta[()]

    def reconstruct(self, rb) -> str:
        self.check_fresh()
        return rb.tensor(self)

    def iterate(self, tx) -> list[Variable]:
        return self.get_iter(tx).iterate(tx)

    def get_iter(self, tx) -> Variable:
        """Rows are read when the loop asks for them (``Tensor.__iter__`` and
        NumPy iterate lazily: an in-place update in the loop body shows)."""
        if not self.shape:
            raise UserCodeRaises("TypeError: iteration over a 0-d tensor")
        position = [0]
        length = self.shape[0]

        def row(tx):
            if position[0] >= length:
                return None
            position[0] += 1
            return HOOKS.tensor_getitem(tx, self, ConstantVariable(position[0] - 1))

        def remake(rb):
            # the real iterator at the same row: NumPy's (its rows are views of
            # the array), or the rest of a Tensor's generator over its rows
            if self.kind == TENSOR:
                return f"{rb.const(tensor_rows)}({rb.expr(self)}, {position[0]}, {length})"
            return f"{rb.const(iter_at)}({rb.expr(self)}, {position[0]})"
        return HOOKS.LazyIteratorVariable(row, type(iter(())), remake, [self])

    def __repr__(self) -> str:
        return f"Tensor({self.kind} {self.meta.dtype}{list(self.shape)})"


@wrap_rule(10)
def _wrap_tensor(tr, value, source: Source) -> Variable | None:
    """A frame Tensor (or a plain subclass: ``frame.nn.Parameter``) or an
    ndarray of the frame: a graph input, guarded by type, shape and dtype."""
    t = type(value)
    if not (t is Tensor or t is np.ndarray or plain_tensor_subclass(t)):
        return None
    is_tensor = t is not np.ndarray
    data = value._data if is_tensor else value
    try:
        from_numpy(data.dtype)
    except TypeError as e:
        raise Unsupported("unsupported_object", str(e)) from e
    tr.guards.tensor(source, value)
    meta = tr.tracer.input_for(data, source.text())
    var = TensorVariable(meta, TENSOR if is_tensor else NDARRAY, source,
                         requires_grad=value._requires_grad if is_tensor else False)
    tr.input_arrays[id(var)] = data
    if is_tensor:
        tr.tensor_objects[id(var)] = value
        if value._rg and value._grad_fn is None:  # a leaf: ops on it are recorded
            tr.tracer.tape.leaf(meta)
            tr.leaves[id(meta)] = var
    if t is not Tensor and is_tensor:
        var.pytype = t
    tr.input_by_value[id(tr.tracer.values[id(meta)])] = var
    return var


# what a Tensor subclass may define and still behave as a Tensor under capture
_PLAIN_SUBCLASS_NAMES = {"__module__", "__qualname__", "__doc__", "__slots__", "__init__", "__repr__",
                         "__str__", "__reduce__", "__reduce_ex__", "__deepcopy__", "__copy__",
                         "__annotations__", "__firstlineno__", "__static_attributes__", "__dict__",
                         "__weakref__"}


def plain_tensor_subclass(t: type) -> bool:
    """A Tensor subclass that changes no operator or method (``frame.nn.Parameter``):
    ops on it are the Tensor's ops."""
    if not (isinstance(t, type) and issubclass(t, Tensor)) or t is Tensor:
        return False
    for klass in t.__mro__[:t.__mro__.index(Tensor)]:
        if set(vars(klass)) - _PLAIN_SUBCLASS_NAMES:
            return False
    return True


def scalar_tensor_entries(index: Variable) -> list[int]:
    """Positions of the entries of ``index`` (a tuple's items, or ``index``
    itself at 0) that are 0-d integer tensors: a NumPy integer computed in the
    function (``x[indices[k]]``).  NumPy indexes with such a value as an int;
    frame's indexing reads it as one (``int()`` of its data), which under
    capture is a meta array's made-up value (``tensor_ops.tensor_getitem``)."""
    try:
        is_tuple = issubclass(index.python_type(), tuple)
    except Unsupported:
        is_tuple = False
    items = getattr(index, "items", None)   # a TupleVariable's (a constant tuple has none)
    entries = list(items) if is_tuple and isinstance(items, (list, tuple)) else [index]
    return [i for i, e in enumerate(entries)
            if isinstance(e, TensorVariable) and e.meta.ndim == 0 and e.meta.dtype.kind in "iu"]


def refuse_tensor_index(index: Variable) -> None:
    """Indexing a Python container with a tensor depends on the tensor's data."""
    if isinstance(index, TensorVariable):
        raise Unsupported("data_dependent", "indexing a Python container with a tensor")


def broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Does an array of ``shape`` broadcast to ``target`` unchanged (an in-place
    write, ``out=`` or ``where=`` of that shape into an array of ``target``)?"""
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False
