"""Autograd under capture: the traced graph is the record (docs/design.md §9).

Tensors that require grad are graph values like any other.  Which of them
"require grad" is tracked as eager's tape tracks it: by the identity of the
meta arrays standing for them (``Tracer.tracked``).  Leaf inputs that require
grad are tracked; an op run with grad mode on and a tracked operand is
*recorded* (``Tracer.records``: the node and which operands were tracked) and
its floating outputs are tracked.  ``detach()`` and ``frame.tensor(t)`` get a
fresh meta array for the same graph value, so they are not tracked, and the
gradient does not flow through the operand slots they fill.

``loss.backward()`` appends the gradient nodes to the graph being captured
(``frame.autograd.backward.append_backward``: the same gradient rules as
``build_backward_graph``) and accumulates the gradients of the leaves into
their ``.grad`` -- a side effect on the tensor objects, replayed after the
graph runs.  ``p.grad`` reads the pending value, else the real ``p._grad``
(guarded: None, or a tensor of a given type, shape and dtype);
``p.grad = value`` is a pending write.

Grad mode: ``with frame.no_grad():`` / ``with frame.enable_grad():`` set the
translation's symbolic grad mode for the block (no graph break; the normal
path of the ``with`` only -- an exception inside it ends the trace anyway);
``frame.is_grad_enabled()`` reads it.  The caller's grad mode is read (and
guarded) only when the trace depends on it.

``frame.grad`` / ``frame.value_and_grad`` (the transforms, and functions they
made outside the jitted function) are traced: the function runs inlined with
the selected arguments as fresh leaves, then the gradient nodes come from
``build_backward_graph`` on the record reachable from its result, exactly as
``frame.autograd.functional`` and ``eager.gradients`` do it (see
``grad_call``); with ``create_graph`` the gradient nodes are recorded in turn,
so ``frame.grad(frame.grad(f))`` and a loss built from a gradient work.

What stays native (correctness first): an op, with grad mode on, on an input
tensor that requires grad but is not a leaf (its eager record cannot be
extended); in-place updates, with grad mode on, that involve a tensor that
requires grad (eager raises or rebases); a backward whose path reads a value
that was overwritten in place after it was recorded (eager's version checks);
``backward(gradient=...)``/``create_graph=True``; tensors that require grad
leaving the compiled code (returned, stored, live at a graph break) unless
the function ran a backward (they then leave detached, as plain tensors);
``frame.grad`` with respect to a Python float (its gradient is a Python float
read from the graph), ``backward()`` and in-place updates of a ``frame.grad``
variable inside the differentiated function.
"""
from __future__ import annotations

import types
import weakref

import numpy as np

from .errors import Unsupported, UserCodeRaises
from .sources import AttrSource
from .variables.base import NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable
from .variables.containers import TupleVariable
from .variables.grad import GradFunctionVariable, GradTransformVariable, made_grad_function
from .variables.objects import ClassVariable

__all__ = ["GradModeVariable", "grad_mode_static", "read_grad", "write_grad", "backward",
           "check_inplace", "after_inplace", "escaping_tracked", "grad_call"]


# --------------------------------------------------------------------------- grad mode

class GradModeVariable(Variable):
    """``frame.no_grad()`` / ``frame.enable_grad()``: a context manager whose
    ``with`` block sets the symbolic grad mode."""
    __slots__ = ("enabled",)

    def __init__(self, enabled: bool):
        super().__init__(None)
        self.enabled = enabled

    def enter(self, tx) -> Variable:
        """``BEFORE_WITH``: the ``__exit__`` to call, with the mode it restores."""
        exit_var = GradModeExitVariable(tx.tr.grad_mode)
        tx.tr.grad_mode = self.enabled
        return exit_var

    def __repr__(self) -> str:
        return f"GradMode({'enable_grad' if self.enabled else 'no_grad'})"


class GradModeExitVariable(Variable):
    """The bound ``__exit__`` of a grad-mode block (normal exit: three Nones)."""
    __slots__ = ("restore", "done")

    def __init__(self, restore: bool | None):
        super().__init__(None)
        self.restore = restore
        self.done = False

    def call(self, tx, args, kwargs):
        if kwargs or len(args) != 3 or not all(isinstance(a, ConstantVariable) and a.value is None
                                               for a in args) or self.done:
            raise Unsupported("unsupported_call", "leaving a grad-mode block other than normally")
        self.done = True
        tx.tr.grad_mode = self.restore
        return ConstantVariable(None)

    def __repr__(self) -> str:
        return "GradModeExit"


class GradModeClassVariable(ClassVariable):
    """The classes ``no_grad`` / ``enable_grad`` (called with no arguments)."""
    __slots__ = ()

    def call(self, tx, args, kwargs):
        if args or kwargs:
            raise Unsupported("unsupported_call", f"{self.cls.__name__}(...) as a decorator")
        return GradModeVariable(self.cls._enabled)


class IsGradEnabledVariable(Variable):
    __slots__ = ()

    def call(self, tx, args, kwargs):
        if args or kwargs:
            raise UserCodeRaises("is_grad_enabled() takes no arguments")
        return ConstantVariable(tx.tr.grad_enabled())

    def __repr__(self) -> str:
        return "is_grad_enabled"


def grad_mode_static(value, source):
    """Variables for frame's autograd API: grad mode, ``frame.grad`` /
    ``frame.value_and_grad`` and the functions they return (None for anything
    else)."""
    from frame.autograd import functional, tape
    if value is tape.no_grad or value is tape.enable_grad:
        return GradModeClassVariable(value, source)
    if value is tape.is_grad_enabled:
        return IsGradEnabledVariable(source)
    if value is functional.grad or value is functional.value_and_grad:
        return GradTransformVariable(value, source)
    if isinstance(value, types.FunctionType):
        return made_grad_function(value, source)
    return None


# --------------------------------------------------------------------------- requires grad

def is_tracked(tx, v: TensorVariable) -> bool:
    return id(v.meta) in tx.tr.tracer.tracked


def untrackable(tx, v: Variable) -> bool:
    """An input tensor that requires grad but is not a leaf: eager would extend
    its record, which capture cannot."""
    return isinstance(v, TensorVariable) and v.kind == TENSOR and v.requires_grad \
        and not is_tracked(tx, v)


def check_inplace(tx, target: TensorVariable, operand: Variable) -> None:
    """Before ``target op= operand``: with grad mode on, an in-place update that
    involves a tensor that requires grad is eager's business (it raises for a
    leaf, and rebases a recorded result).  A ``frame.grad`` variable stays a
    leaf through an in-place update (eager sums the gradients of its versions),
    which is not modelled."""
    if id(target.meta) in _calls(tx.tr).active:
        raise Unsupported("unsupported_call", "an in-place update of a frame.grad variable")
    involved = target.requires_grad or (isinstance(operand, TensorVariable) and operand.requires_grad)
    if not involved or not tx.tr.grad_enabled():
        return
    if target.requires_grad and id(target.meta) in tx.tr.leaves:
        raise UserCodeRaises("an in-place update of a leaf tensor that requires grad "
                             "with grad mode on (AutogradError)")
    raise Unsupported("unsupported_call", "an in-place update recorded for autograd")


def after_inplace(tx, target: TensorVariable, old_meta) -> None:
    """``target``'s value was replaced (``target.meta`` is the new one).  A
    value a recorded op read is now stale; a leaf stays a leaf that requires
    grad (a new version of it)."""
    tr = tx.tr
    tracer = tr.tracer
    if id(old_meta) in tracer.recorded_operands:
        tracer.overwritten.add(id(old_meta))
    leaf = tr.leaves.get(id(old_meta))
    if leaf is target:
        tracer.tracked.add(id(target.meta))
        tr.leaves[id(target.meta)] = target


def escaping_tracked(tr, tensors) -> TensorVariable | None:
    """A tensor computed in the function that requires grad among ``tensors``
    (which leave the compiled code), or None."""
    tracked = tr.tracer.tracked
    for tv in tensors:
        if tv.source is None and id(tv.meta) in tracked and id(tv.meta) not in tr.leaves:
            return tv
    return None


# --------------------------------------------------------------------------- .grad

def read_grad(tx, t: TensorVariable) -> Variable:
    se = tx.side_effects
    entry = se.grads.get(id(t))
    if entry is not None:
        return entry[1]
    obj = tx.tr.tensor_objects.get(id(t))
    if t.source is None or obj is None:
        return ConstantVariable(None)  # made in the function: no grad unless set
    value = obj._grad
    var = tx.wrap(value, AttrSource(t.source, "_grad"))
    if not (isinstance(var, ConstantVariable) and var.value is None) and \
            not (isinstance(var, TensorVariable) and var.kind == TENSOR):
        raise Unsupported("unsupported_object", f"a .grad that is a {type(value).__name__}")
    return var


def write_grad(tx, t: TensorVariable, value: Variable) -> None:
    if t.source is None or id(t) not in tx.tr.tensor_objects:
        raise Unsupported("side_effect", "setting .grad of a tensor made in the function")
    if isinstance(value, ConstantVariable) and value.value is None:
        tx.side_effects.grads[id(t)] = (t, value)
        return
    if not (isinstance(value, TensorVariable) and value.kind == TENSOR):
        raise UserCodeRaises("grad must be a Tensor or None (FrameTypeError)")
    if value.shape != t.shape:
        raise UserCodeRaises(f"grad shape {list(value.shape)} does not match tensor "
                             f"shape {list(t.shape)} (FrameValueError)")
    value.check_fresh()
    tx.side_effects.grads[id(t)] = (t, value)


# --------------------------------------------------------------------------- backward

def backward(tx, t: TensorVariable, args, kwargs) -> Variable:
    """``t.backward()``: gradient nodes appended to the graph, ``.grad`` of the
    leaves updated (accumulated as eager does)."""
    from frame.autograd.backward import append_backward
    from frame.autograd.registry import NonDifferentiableError
    from frame.hal.errors import FrameError

    names = ("gradient", "create_graph")
    if len(args) > 2 or set(kwargs) - set(names):
        raise UserCodeRaises("backward() got unexpected arguments")
    bound = dict(zip(names, args))
    bound.update(kwargs)
    for name, default in (("gradient", None), ("create_graph", False)):
        v = bound.get(name)
        if v is not None and not (v.is_constant() and v.as_constant() == default
                                  and type(v.as_constant()) is type(default)):
            raise Unsupported("unsupported_call", f"backward({name}=...) under capture")
    tr, tracer = tx.tr, tx.tr.tracer
    if _calls(tr).depth:
        raise Unsupported("unsupported_call", "backward() inside a function that frame.grad "
                                              "differentiates (it would set .grad of its variables)")
    t.check_fresh()
    if not t.requires_grad:
        raise UserCodeRaises("backward on a tensor that does not require grad "
                             "(AutogradError)")
    if not is_tracked(tx, t):
        raise Unsupported("unsupported_call", "backward through the autograd record of an input "
                                              "that is not a leaf")
    if t.meta.dtype.kind != "f":
        raise UserCodeRaises("backward of a tensor that is not floating-point")
    if t.meta.size != 1:
        raise UserCodeRaises(f"backward of a tensor of shape {list(t.shape)} without "
                             f"gradient (FrameValueError)")
    b = tracer.builder
    loss = tracer.values[id(t.meta)]
    seed = b.constant(np.ones(t.shape, dtype=t.meta.dtype))
    records = [(node, flags) for node, _, flags in tracer.records]
    # eager's version checks: a value a recorded op on the path read, overwritten since
    _check_not_overwritten(tx, loss)
    try:
        grads = append_backward(b, records, loss, seed)
    except NonDifferentiableError as e:
        raise UserCodeRaises(f"backward raises: {e}") from e
    except FrameError as e:
        raise UserCodeRaises(f"backward raises {type(e).__name__}: {e}") from e
    tr.backward_done = True

    # the leaves the loss was computed from, each once, in first-use order; the
    # gradient of each of its versions (values) is summed, as eager does
    leaf_values: dict[int, list] = {}
    leaf_order: list[TensorVariable] = []
    loss_leaf = tr.leaves.get(id(t.meta))
    if loss_leaf is not None:
        leaf_order.append(loss_leaf)
        leaf_values[id(loss_leaf)] = [loss]
    reached = _reached(tracer, loss)
    for node, ids, flags in tracer.records:
        if id(node) not in reached:
            continue
        for v, mid, f in zip(node.inputs, ids, flags):
            leaf = tr.leaves.get(mid) if f else None
            if leaf is None:
                continue
            if id(leaf) not in leaf_values:
                leaf_order.append(leaf)
                leaf_values[id(leaf)] = []
            if all(v is not w for w in leaf_values[id(leaf)]):
                leaf_values[id(leaf)].append(v)
    for leaf in leaf_order:
        g = None
        for v in leaf_values[id(leaf)]:
            gv = grads.get(id(v))
            if gv is not None:
                g = gv if g is None else b.op("add", g, gv)
        if g is None:
            g = b.constant(np.zeros(leaf.shape, dtype=leaf.meta.dtype))
        current = read_grad(tx, leaf)
        if isinstance(current, TensorVariable):
            current.check_fresh()
            if current.meta.dtype != leaf.meta.dtype or current.shape != leaf.shape:
                raise Unsupported("unsupported_call", "accumulating into a .grad of another dtype")
            g = b.op("add", tracer.values[id(current.meta)], g)
        tx.side_effects.grads[id(leaf)] = (leaf, TensorVariable(tracer.meta(g), TENSOR))
    return ConstantVariable(None)


def _reached(tracer, loss) -> set[int]:
    """ids of the recorded nodes on a recorded path to ``loss``."""
    needed = {id(loss)}
    reached: set[int] = set()
    for node, _, flags in reversed(tracer.records):
        if any(id(v) in needed for v in node.outputs):
            reached.add(id(node))
            needed.update(id(v) for v, f in zip(node.inputs, flags) if f)
    return reached


def _check_not_overwritten(tx, loss) -> None:
    tracer = tx.tr.tracer
    if not tracer.overwritten:
        return
    reached = _reached(tracer, loss)
    for node, ids, _ in tracer.records:
        if id(node) in reached and any(i in tracer.overwritten for i in ids):
            raise Unsupported("unsupported_call", "backward through a value that was updated in "
                                                  "place after an op recorded for autograd read it")


# --------------------------------------------------------------------------- frame.grad

class _GradCalls:
    """Per translation: the leaf metas of ``frame.grad`` calls (``leaves``: all
    made so far, ``active``: those of calls being traced, which are tracked) and
    how many calls are being traced (``depth``)."""
    __slots__ = ("leaves", "active", "depth")

    def __init__(self):
        self.leaves: set[int] = set()
        self.active: set[int] = set()
        self.depth = 0


_CALLS: "weakref.WeakKeyDictionary[object, _GradCalls]" = weakref.WeakKeyDictionary()


def _calls(tr) -> _GradCalls:
    state = _CALLS.get(tr)
    if state is None:
        state = _CALLS[tr] = _GradCalls()
    return state


def grad_call(tx, gv: GradFunctionVariable, args: list, kwargs: dict) -> Variable:
    """A call of what ``frame.grad`` / ``frame.value_and_grad`` returned, traced
    as ``frame.autograd.functional.value_and_grad`` runs it eagerly:

    1. each selected argument becomes a fresh leaf (a new meta array for its
       value, tracked) -- or, for a Tensor that requires grad, a recorded
       identity ``reshape`` of it -- and the function runs inlined with grad
       mode on;
    2. its result must be a floating 0-d tensor (or a constant: zeros);
    3. the records reachable from it become a Graph (``_RecordedGraph``, as
       eager's ``RecordedGraph``), ``build_backward_graph`` differentiates it,
       and its gradient nodes are issued through the tracer, recorded when
       eager would record them (``create_graph``);
    4. the fresh leaves stop requiring grad: untracked, and the edges recorded
       into them are cut, so a later backward treats them as constants.

    What comes back has eager's types: the gradient for a Tensor is a Tensor,
    for an ndarray an ndarray, for a NumPy scalar a NumPy scalar; the value is
    the result (``create_graph``) or a detached view of it when a Tensor was
    differentiated, else a NumPy scalar."""
    from frame.autograd.functional import _positions
    from frame.hal.errors import FrameError
    tr, tracer = tx.tr, tx.tr.tracer
    try:
        where = _positions(gv.positions, len(args), gv.real_fn)
    except FrameError as e:
        raise UserCodeRaises(f"frame.grad raises {type(e).__name__}: {e}") from e
    fn = gv.callee(tx)
    calls = _calls(tr)
    saved_mode, start = tr.grad_mode, len(tracer.records)
    fresh: list[TensorVariable] = []
    call_args = list(args)
    calls.depth += 1
    try:
        tr.grad_mode = True  # a transform: the function records even inside no_grad
        variables = []
        for i in where:
            v, is_fresh = _grad_variable(tx, args[i], i)
            if is_fresh:
                fresh.append(v)
            call_args[i] = v
            variables.append(v)
        out = tx.call(fn, call_args, kwargs)
        loss, value = _scalar_output(tx, out)
        tensor_kind = any(isinstance(args[i], TensorVariable) and args[i].kind == TENSOR
                          for i in where)
        create = False
        if loss is not None:
            rg = _RecordedGraph(tx, loss)
            tr.grad_mode = saved_mode
            fresh_ids = {id(v.meta) for v in fresh}
            create = tensor_kind and rg.has_leaf_other_than(fresh_ids) and tr.grad_enabled()
            tr.grad_mode = create  # eager records the gradient nodes only with create_graph
            grads = rg.gradients([v.meta for v in variables], create)
        else:
            grads = [tracer.meta(tracer.builder.constant(np.zeros(v.shape, dtype=v.meta.dtype)))
                     for v in variables]
    finally:
        tr.grad_mode = saved_mode
        calls.depth -= 1
        _release(tracer, calls, fresh, start)
    if tensor_kind:
        if create:
            value_var = out
        elif isinstance(value, TensorVariable) and value.kind == NDARRAY:
            raise Unsupported("unsupported_call", "frame.grad of a function returning an ndarray: "
                                                  "the value is a Tensor sharing its memory")
        elif isinstance(value, TensorVariable) and value.kind == TENSOR:
            from frame.tensor import Tensor
            value_var = tr.mark_view(TensorVariable(tracer.meta(_value(tracer, value)), TENSOR),
                                     value, Tensor.detach)
        elif isinstance(value, ConstantVariable):  # Tensor._wrap(np.asarray(out))
            value_var = TensorVariable(tracer.meta(tracer.builder.constant(np.asarray(value.value))),
                                       TENSOR)
        else:
            value_var = TensorVariable(tracer.meta(_value(tracer, value)), TENSOR)
    elif isinstance(value, ConstantVariable):
        value_var = ConstantVariable(np.asarray(value.value)[()])
    else:
        value_var = TensorVariable(tracer.meta(_value(tracer, value)), NPSCALAR)
    results = [_like(tx, args[i], g) for i, g in zip(where, grads)]
    grad_var = results[0] if gv.single else TupleVariable(results)
    return TupleVariable([value_var, grad_var]) if gv.with_value else grad_var


def _value(tracer, v: TensorVariable):
    return tracer.values[id(v.meta)]


def _grad_variable(tx, arg: Variable, i: int) -> tuple[TensorVariable, bool]:
    """``(the tensor the function gets for argument i, whether it is a fresh
    leaf)`` (functional._variable): a fresh leaf sharing the argument's memory,
    or a recorded identity of a Tensor that requires grad."""
    from frame.tensor import Tensor
    tr, tracer = tx.tr, tx.tr.tracer
    if isinstance(arg, ConstantVariable):
        value = arg.value
        if isinstance(value, float) and not isinstance(value, bool):
            raise Unsupported("data_dependent", "frame.grad with respect to a Python float: the "
                                                "gradient is a Python float read from the graph")
        if isinstance(value, np.generic) and np.asarray(value).dtype.kind == "f":
            base = tx.wrap_result(np.asarray(value))  # a graph constant, guarded by value
        else:
            raise UserCodeRaises(f"frame.grad: argument {i} is a "
                                 f"{type(value).__name__} (FrameTypeError)")
    elif isinstance(arg, TensorVariable):
        arg.check_fresh()
        base = arg
    else:
        raise UserCodeRaises(f"frame.grad: argument {i} is {arg!r} (FrameTypeError)")
    if base.meta.dtype.kind != "f":
        raise UserCodeRaises(f"frame.grad: argument {i} has dtype {base.meta.dtype} "
                             f"(FrameTypeError)")
    if base.kind == TENSOR and base.requires_grad:
        # a recorded identity: a distinct value that still depends on the tensor
        # (an input that requires grad but is not a leaf: call_real refuses it)
        import frame
        identity = tx.call_real(frame.reshape, [base, ConstantVariable(tuple(base.shape))], {})
        if not is_tracked(tx, identity):
            raise Unsupported("capture_error", "frame.grad: the identity of a tensor that requires "
                                               "grad was not recorded")
        return identity, False
    leaf = TensorVariable(tracer.meta(_value(tracer, base)), TENSOR, requires_grad=True)
    if base.kind == TENSOR:
        tr.mark_view(leaf, base, Tensor.detach)  # eager's leaf is a view of the data
    elif base.kind == NDARRAY:
        tr.mark_view(leaf, base)
    tracer.tracked.add(id(leaf.meta))
    calls = _calls(tr)
    calls.leaves.add(id(leaf.meta))
    calls.active.add(id(leaf.meta))
    return leaf, True


def _scalar_output(tx, out: Variable):
    """functional._scalar_output: ``(the loss tensor or None when nothing is
    recorded, the variable standing for the result)``."""
    if isinstance(out, TensorVariable):
        out.check_fresh()
        dtype, shape = out.meta.dtype, out.shape
    elif isinstance(out, ConstantVariable) and isinstance(out.value, (np.generic, float, int)) \
            and not isinstance(out.value, bool):
        dtype, shape = np.asarray(out.value).dtype, ()
    else:
        raise UserCodeRaises(f"frame.grad: the function must return a scalar tensor, "
                             f"got {out!r} (FrameTypeError)")
    if shape != ():
        raise UserCodeRaises(f"frame.grad: the function must return a scalar (0-d) "
                             f"tensor, got shape {list(shape)} (FrameValueError)")
    if dtype.kind != "f":
        raise UserCodeRaises(f"frame.grad: the function must return a floating-point "
                             f"scalar, got {dtype} (FrameTypeError)")
    if not (isinstance(out, TensorVariable) and out.kind == TENSOR):
        return None, out  # a constant as eager sees it: every gradient is zero
    if untrackable(tx, out):
        raise Unsupported("unsupported_call", "frame.grad of a function returning an input that "
                                              "requires grad but is not a leaf")
    return (out if is_tracked(tx, out) else None), out


def _like(tx, arg: Variable, g: np.ndarray) -> TensorVariable:
    """functional._like: the gradient in the argument's kind.  An ndarray or
    NumPy scalar is a new, untracked array (eager drops the Tensor around it)."""
    tracer = tx.tr.tracer
    if isinstance(arg, TensorVariable) and arg.kind == TENSOR:
        return TensorVariable(g, TENSOR, requires_grad=id(g) in tracer.tracked)
    fresh = tracer.meta(tracer.values[id(g)])
    if isinstance(arg, TensorVariable) and arg.kind == NDARRAY:
        return TensorVariable(fresh, NDARRAY)
    return TensorVariable(fresh, NPSCALAR)


def _release(tracer, calls: _GradCalls, fresh: list[TensorVariable], start: int) -> None:
    """The fresh leaves stop requiring grad (``set_requires_grad(v, False)``):
    untracked, and the edges recorded into them since the call began are cut,
    as a later eager backward sees them as constants."""
    ids = {id(v.meta) for v in fresh}
    for v in fresh:
        v.requires_grad = False
        tracer.tracked.discard(id(v.meta))
        calls.active.discard(id(v.meta))
    if not ids:
        return
    records = tracer.records
    for k in range(start, len(records)):
        node, operands, flags = records[k]
        if any(f and m in ids for m, f in zip(operands, flags)):
            records[k] = (node, operands, tuple(f and m not in ids for m, f in zip(operands, flags)))


class _RecordedGraph:
    """Eager's ``RecordedGraph`` for capture's record: the records reachable
    from ``loss`` through tracked operand slots become a Graph whose inputs
    are the leaves that require grad (one per meta array: each version is its
    own) and the untracked operands, and whose nodes are the recorded ops.

    Leaves are the input leaves (``Translation.leaves``) and the variables of
    ``frame.grad`` calls; any other tracked meta array is a recorded op's
    output.  A ``frame.grad`` variable that no longer requires grad is a
    constant input (its edges were cut when its call ended)."""

    def __init__(self, tx, loss: TensorVariable):
        tr, tracer = tx.tr, tx.tr.tracer
        self.tracer = tracer
        # every operand of a recorded op, by id: meta arrays and constants
        self.arrays = {id(a): a for a in tracer._alive}
        self.leaf_metas = set(tr.leaves) | _calls(tr).leaves
        self.index = {id(node): k for k, (node, _, _) in enumerate(tracer.records)}
        self.root = id(loss.meta)
        found: set[int] = set()
        stack = [] if self._is_leaf(self.root) else [self._producer(self.root)]
        while stack:
            k = stack.pop()
            if k in found:
                continue
            found.add(k)
            _, ids, flags = tracer.records[k]
            stack.extend(self._producer(m) for m, f in zip(ids, flags)
                         if f and not self._is_leaf(m))
        self.order = sorted(found)
        for k in self.order:
            if any(m in tracer.overwritten for m in tracer.records[k][1]):
                # eager's version checks (AutogradError), or a value it reads as changed
                raise Unsupported("unsupported_call", "frame.grad through a value that was updated "
                                                      "in place after an op recorded for autograd "
                                                      "read it")
        self._build()

    def _is_leaf(self, meta_id: int) -> bool:
        return meta_id in self.leaf_metas

    def _producer(self, meta_id: int) -> int:
        node = self.tracer.values[meta_id].producer
        k = self.index.get(id(node)) if node is not None else None
        if k is None:
            raise Unsupported("capture_error", "a tracked value whose op was not recorded")
        return k

    def _build(self) -> None:
        from frame.ir.graph import Graph, Node
        tracer = self.tracer
        g = Graph()
        self.graph = g
        self.input_metas: list[int] = []       # per graph input: the meta array's id
        self.is_leaf_input: list[bool] = []
        inputs: dict[int, object] = {}          # meta id -> graph input
        nodes: dict[int, object] = {}           # record index -> Node

        def operand(meta_id: int, flagged: bool):
            if flagged and not self._is_leaf(meta_id):
                return nodes[self._producer(meta_id)].outputs[tracer.values[meta_id].index]
            v = inputs.get(meta_id)
            if v is None:
                v = inputs[meta_id] = g.add_input(tracer.value_of(self.arrays[meta_id]).type)
                self.input_metas.append(meta_id)
                self.is_leaf_input.append(flagged and meta_id in tracer.tracked)
            return v

        for k in self.order:
            node, ids, flags = tracer.records[k]
            copy = Node(node.op, [operand(m, f) for m, f in zip(ids, flags)], node.attrs)
            copy.set_output_types([v.type for v in node.outputs])
            g.append(copy)
            nodes[k] = copy
        self.nodes = nodes
        self.inputs = inputs
        self.n_record_inputs = len(self.input_metas)
        g.set_outputs([operand(self.root, True)])

    def has_leaf_other_than(self, excluded: set[int]) -> bool:
        """Does a recorded op read a leaf not in ``excluded``?  (A root that is a
        leaf and read by no op does not count, as in eager.)"""
        n = self.n_record_inputs
        return any(leaf and m not in excluded
                   for m, leaf in zip(self.input_metas[:n], self.is_leaf_input[:n]))

    def _ref(self, meta_id: int):
        """The graph value standing for a variable's meta array (None: unused)."""
        if self._is_leaf(meta_id):
            return self.inputs.get(meta_id)
        k = self._producer(meta_id)
        node = self.nodes.get(k)
        return None if node is None else node.outputs[self.tracer.values[meta_id].index]

    def gradients(self, wrt: list[np.ndarray], create: bool) -> list[np.ndarray]:
        """``eager.gradients``: ``build_backward_graph`` of this graph, its
        gradient nodes issued through the tracer (recorded when ``create`` and
        an operand is tracked, as ``record_call`` does; the translation's grad
        mode is ``create`` meanwhile).  Returns one meta array per ``wrt``."""
        from frame.autograd.backward import build_backward_graph
        from frame.autograd.registry import NonDifferentiableError
        from frame.hal.errors import FrameError
        tracer = self.tracer
        refs = [self._ref(id(w)) for w in wrt]
        try:
            bw = build_backward_graph(self.graph, 0, [r for r in refs if r is not None])
        except NonDifferentiableError as e:
            raise UserCodeRaises(f"frame.grad raises: {e}") from e
        except FrameError as e:
            raise UserCodeRaises(f"frame.grad raises {type(e).__name__}: {e}") from e
        arrays = self.arrays
        env: dict[int, np.ndarray] = {}
        for v, m in zip(bw.inputs, self.input_metas):
            env[id(v)] = arrays[m]
        outputs = self._output_metas(arrays, create)
        for node, k in zip(bw.nodes, self.order):
            for v, meta in zip(node.outputs, outputs[k]):
                env[id(v)] = meta
        computed: set[int] = set()
        for node in bw.nodes[len(self.order):]:
            if node.op == "constant":
                env[id(node.outputs[0])] = node.const
                continue
            metas = tracer.handle(node.op, [env[id(v)] for v in node.inputs], node.attrs)
            for v, meta in zip(node.outputs, metas):
                env[id(v)] = meta
                computed.add(id(v))
        found = iter(bw.outputs[1:])
        results = []
        for w, ref in zip(wrt, refs):
            if ref is None:
                zeros = np.zeros(w.shape, dtype=w.dtype)
                results.append(tracer.meta(tracer.builder.constant(zeros)))
                continue
            v = next(found)
            meta = env[id(v)]
            if id(v) not in computed:  # a recorded value or a constant: a new, untracked tensor
                meta = tracer.meta(tracer.value_of(meta))
            results.append(meta)
        return results

    def _output_metas(self, arrays: dict, create: bool) -> dict[int, list]:
        """Per record: the meta arrays of its outputs (eager's stand-ins).  A
        floating output's is the tracked one the op made; the others get a
        fresh meta array, tracked when ``create`` (eager's stand-ins all
        require grad)."""
        tracer = self.tracer
        made: dict[int, int] = {}
        for m in tracer.tracked:
            if m not in self.leaf_metas:
                made[id(tracer.values[m])] = m
        out: dict[int, list] = {}
        for k in self.order:
            metas = []
            for v in tracer.records[k][0].outputs:
                m = made.get(id(v))
                if m is not None:
                    metas.append(arrays[m])
                    continue
                meta = tracer.meta(v)
                if create:
                    tracer.tracked.add(id(meta))
                metas.append(meta)
            out[k] = metas
        return out
