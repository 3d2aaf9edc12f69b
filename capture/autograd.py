"""Autograd under capture: the traced graph is the record (DESIGN.md §9).

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

What stays native (correctness first): an op, with grad mode on, on an input
tensor that requires grad but is not a leaf (its eager record cannot be
extended); in-place updates, with grad mode on, that involve a tensor that
requires grad (eager raises or rebases); a backward whose path reads a value
that was overwritten in place after it was recorded (eager's version checks);
``backward(gradient=...)``/``create_graph=True``; tensors that require grad
leaving the compiled code (returned, stored, live at a graph break) unless
the function ran a backward (they then leave detached, as plain tensors).
"""
from __future__ import annotations

import numpy as np

from .errors import Unsupported
from .sources import AttrSource
from .variables.base import TENSOR, ConstantVariable, TensorVariable, Variable
from .variables.objects import ClassVariable

__all__ = ["GradModeVariable", "grad_mode_static", "read_grad", "write_grad", "backward",
           "check_inplace", "after_inplace", "escaping_tracked"]


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
            raise Unsupported("exception", "is_grad_enabled() takes no arguments")
        return ConstantVariable(tx.tr.grad_enabled())

    def __repr__(self) -> str:
        return "is_grad_enabled"


def grad_mode_static(value, source):
    """Variables for frame's grad-mode API (None for anything else)."""
    from frame.autograd import tape
    if value is tape.no_grad or value is tape.enable_grad:
        return GradModeClassVariable(value, source)
    if value is tape.is_grad_enabled:
        return IsGradEnabledVariable(source)
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
    leaf, and rebases a recorded result)."""
    involved = target.requires_grad or (isinstance(operand, TensorVariable) and operand.requires_grad)
    if not involved or not tx.tr.grad_enabled():
        return
    if target.requires_grad and id(target.meta) in tx.tr.leaves:
        raise Unsupported("exception", "an in-place update of a leaf tensor that requires grad "
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
        raise Unsupported("exception", "grad must be a Tensor or None (FrameTypeError)")
    if value.shape != t.shape:
        raise Unsupported("exception", f"grad shape {list(value.shape)} does not match tensor "
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
        raise Unsupported("exception", "backward() got unexpected arguments")
    bound = dict(zip(names, args))
    bound.update(kwargs)
    for name, default in (("gradient", None), ("create_graph", False)):
        v = bound.get(name)
        if v is not None and not (v.is_constant() and v.as_constant() == default
                                  and type(v.as_constant()) is type(default)):
            raise Unsupported("unsupported_call", f"backward({name}=...) under capture")
    tr, tracer = tx.tr, tx.tr.tracer
    t.check_fresh()
    if not t.requires_grad:
        raise Unsupported("exception", "backward on a tensor that does not require grad "
                                       "(AutogradError)")
    if not is_tracked(tx, t):
        raise Unsupported("unsupported_call", "backward through the autograd record of an input "
                                              "that is not a leaf")
    if t.meta.dtype.kind != "f":
        raise Unsupported("exception", "backward of a tensor that is not floating-point")
    if t.meta.size != 1:
        raise Unsupported("exception", f"backward of a tensor of shape {list(t.shape)} without "
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
        raise Unsupported("exception", f"backward raises: {e}") from e
    except FrameError as e:
        raise Unsupported("exception", f"backward raises {type(e).__name__}: {e}") from e
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
