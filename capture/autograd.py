"""Autograd under capture: what is capture-specific (docs/design.md §9).

Recording and differentiating are eager's: the tracer is a level of the
op-handler stack whose tape (``capture.tracer.CaptureTape``) is eager's
``Tape`` over meta arrays, so every op run with grad mode on and a tracked
operand leaves an eager ``Record``, and ``loss.backward()`` /
``frame.grad`` run ``frame.autograd.eager.backward`` / ``gradients`` on
those records with the tracer's kernels: the gradient nodes are appended to
the graph being captured.  Version checks, the summing over a leaf's
versions, and ``create_graph`` (recorded gradients) are that code.

What is left here: which tensors are tracked (input leaves that require
grad, guarded; ``frame.grad``'s fresh leaves -- the tape's stand-ins, by
meta array), the refusals where eager semantics cannot be reproduced (below),
the ``.grad`` reads and writes (``_PendingGrads``: a read is the pending
value, else the real ``p._grad`` -- guarded: None, or a tensor of a given
type, shape and dtype; a write, also ``p.grad = value``, is pending and
replayed after the graph runs), and the symbolic grad mode.  ``detach()`` and
``frame.tensor(t)`` get a fresh meta array for the same graph value, so they
are not tracked, and the gradient does not flow through the operand slots
they fill.

Grad mode: ``with frame.no_grad():`` / ``with frame.enable_grad():`` set the
translation's symbolic grad mode for the block (no graph break; the normal
path of the ``with`` only -- an exception inside it ends the trace anyway);
``frame.is_grad_enabled()`` reads it.  The caller's grad mode is read (and
guarded) only when the trace depends on it.

``frame.grad`` / ``frame.value_and_grad`` (the transforms, and functions they
made outside the jitted function) are traced: the function runs inlined with
the selected arguments as fresh leaves, then ``eager.gradients`` runs on the
record reachable from its result, as ``frame.autograd.functional`` does it
(see ``grad_call``); with ``create_graph`` the gradient nodes are recorded in
turn, so ``frame.grad(frame.grad(f))`` and a loss built from a gradient work.

What stays native (correctness first): an op, with grad mode on, on an input
tensor that requires grad but is not a leaf (its eager record cannot be
extended); in-place updates, with grad mode on, that involve a tensor that
requires grad (eager raises or rebases); a backward through a record that read
an untracked value overwritten in place since (eager reads the new memory; for
tracked values eager's version checks decide);
``backward(create_graph=True)`` and ``backward(gradient=...)`` with a gradient
that is not a Tensor of the root's dtype; tensors that require grad live at a
graph break when the function ran no backward (returned or stored ones leave
with the entry's compiled autograd record, ``plan_backward``; after a backward
also those live at a break);
``frame.grad`` with respect to a Python float (its gradient is a Python float
read from the graph), ``backward()`` and in-place updates of a ``frame.grad``
variable inside the differentiated function.
"""
from __future__ import annotations

import types
import weakref

import numpy as np

import frame
from frame.autograd import functional, tape
from frame.autograd.backward import build_backward_graph
from frame.autograd.compiled import CompiledBackward
from frame.autograd.eager import GradSlots, RecordedGraph, gradients, reachable
from frame.autograd.eager import backward as eager_backward
from frame.autograd.functional import _positions
from frame.autograd.registry import NonDifferentiableError
from frame.errors import FrameError
from frame.ops.registry import get_schema
from frame.dtypes import from_numpy
from frame.ir import GraphBuilder, TensorType
from frame.ir.verify import verify
from frame.tensor import Tensor

from .errors import Unsupported, UserCodeRaises
from .sources import AttrSource
from .variables.base import NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable
from .variables.containers import TupleVariable
from .variables.grad import GradFunctionVariable, GradTransformVariable, made_grad_function
from .variables.objects import ClassVariable
from .variables.registry import HOOKS, wrap_rule

__all__ = ["GradModeVariable", "grad_mode_static", "read_grad", "write_grad", "backward",
           "check_inplace", "after_inplace", "escaping_tracked", "grad_call",
           "BackwardPlan", "plan_backward"]


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
        exit_var = GradModeExitVariable(tx.tr.grad_mode, self.enabled)
        tx.tr.grad_mode = self.enabled
        return exit_var

    def enter_context(self, tx):
        return self.enter(tx), ConstantVariable(None)

    def __repr__(self) -> str:
        return f"GradMode({'enable_grad' if self.enabled else 'no_grad'})"


class GradModeExitVariable(Variable):
    """The bound ``__exit__`` of a grad-mode block (normal exit: three Nones).
    Live at a graph break inside the block, it is a real block entered again
    by the entry (``reconstruct``)."""
    __slots__ = ("restore", "inside", "done")

    def __init__(self, restore: bool | None, inside: bool):
        super().__init__(None)
        self.restore = restore
        self.inside = inside      # the mode the block sets
        self.done = False

    def reconstruct(self, rb) -> str:
        """At a break inside the block: the bound ``__exit__`` of a real
        ``no_grad()``/``enable_grad()`` the entry enters (the native
        instruction runs in the block's mode; the resume function's block end
        restores the mode the caller had)."""
        if self.done:
            raise Unsupported("unsupported_object", "returning or storing the __exit__ of a "
                                                    "grad-mode block that has ended")
        return rb.reenter(self, f"{rb.const(reenter_grad_mode)}({self.inside!r})")

    def call(self, tx, args, kwargs):
        """Normal exit (three Nones) or an exception leaving the block
        (``WITH_EXCEPT_START``): the mode is restored, nothing suppressed."""
        if kwargs or len(args) != 3 or self.done or (
                not all(a.is_none() for a in args) and args[0].is_none()):
            raise Unsupported("unsupported_call", "leaving a grad-mode block other than normally")
        self.done = True
        tx.tr.grad_mode = self.restore
        return ConstantVariable(None)

    def __repr__(self) -> str:
        return "GradModeExit"


def reenter_grad_mode(enabled: bool):
    """Enter a real grad-mode block (an entry at a break inside one): its
    bound ``__exit__``."""
    manager = tape.enable_grad() if enabled else tape.no_grad()
    manager.__enter__()
    return manager.__exit__


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


@wrap_rule(74, static=True)
def _wrap_grad_mode(tr, value, source):
    """frame's autograd API (``grad_mode_static``), guarded by identity."""
    return grad_mode_static(value, source)


@wrap_rule(90)
def _refuse_grad_mode_state(tr, value, source):
    """frame's grad-mode state object: read through ``is_grad_enabled()``
    (symbolic), never directly."""
    if value is tape._mode:
        raise Unsupported("unsupported_object", "frame's grad-mode state object")
    return None


def grad_mode_static(value, source):
    """Variables for frame's autograd API: grad mode, ``frame.grad`` /
    ``frame.value_and_grad`` and the functions they return (None for anything
    else)."""
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
    return tx.tr.tracer.tape.is_tracked(v.meta)


def untrackable(tx, v: Variable) -> bool:
    """An input tensor that requires grad but is not a leaf: eager would extend
    its record, which capture cannot."""
    return isinstance(v, TensorVariable) and v.kind == TENSOR and v.requires_grad \
        and not is_tracked(tx, v)


@HOOKS.provide
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
    """``target``'s value was replaced (``target.meta`` is the new one).  An
    untracked value a recorded op read is now stale (``CaptureTape``); a
    tracked one is at the next version, as in eager, whose version checks
    then refuse a backward that reads the old value; a leaf stays a leaf that
    requires grad: its stand-in now holds the new value, so a backward sums
    the gradients of both versions."""
    tr = tx.tr
    tape = tr.tracer.tape
    if id(old_meta) in tape.read:
        tape.overwritten.add(id(old_meta))
    stand_in = tape.tensor(old_meta)
    if stand_in is None or stand_in._data is not old_meta:
        return
    stand_in._version.value += 1  # eager's bump_version: eager's version checks decide
    if tr.leaves.get(id(old_meta)) is target:
        stand_in._data = target.meta
        tape.tensors[id(target.meta)] = weakref.ref(stand_in)
        tr.leaves[id(target.meta)] = target


def escaping_tracked(tr, tensors) -> TensorVariable | None:
    """A tensor computed in the function that requires grad among ``tensors``
    (which leave the compiled code), or None."""
    tape = tr.tracer.tape
    for tv in tensors:
        if tv.source is None and tape.is_tracked(tv.meta) and id(tv.meta) not in tr.leaves:
            return tv
    return None


def escaping_roots(tr, tensors) -> list[TensorVariable]:
    """The tensors computed in the function that require grad among ``tensors``
    (which leave the compiled code), once each: the results of the entry's
    autograd record (``plan_backward``)."""
    tape = tr.tracer.tape
    roots, metas = [], {}
    for tv in tensors:
        if tv.source is None and tape.is_tracked(tv.meta) and id(tv.meta) not in tr.leaves:
            if tv.kind != TENSOR or tv.base is not None or id(tv.meta) in metas:
                raise Unsupported("unsupported_object", "a tensor that requires grad (computed in "
                                                        "the function) leaves the compiled code "
                                                        "as a view or under two names")
            metas[id(tv.meta)] = tv
            roots.append(tv)
    return roots


# --------------------------------------------------------------------------- .grad

@HOOKS.provide
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
    if not var.is_none() and var.tensor_kind() != TENSOR:
        raise Unsupported("unsupported_object", f"a .grad that is a {type(value).__name__}")
    return var


@HOOKS.provide
def write_grad(tx, t: TensorVariable, value: Variable) -> None:
    if t.source is None or id(t) not in tx.tr.tensor_objects:
        raise Unsupported("side_effect", "setting .grad of a tensor made in the function")
    if value.is_none():
        tx.side_effects.grads[id(t)] = (t, value)
        return
    if value.tensor_kind() != TENSOR:
        raise UserCodeRaises("grad must be a Tensor or None (FrameTypeError)")
    if value.shape != t.shape:
        raise UserCodeRaises(f"grad shape {list(value.shape)} does not match tensor "
                             f"shape {list(t.shape)} (FrameValueError)")
    value.check_fresh()
    tx.side_effects.grads[id(t)] = (t, value)


# --------------------------------------------------------------------------- backward

class _PendingGrads(GradSlots):
    """``backward``'s ``.grad`` slots under capture: the leaves are the stand-ins
    of input variables; a read is the pending value or the real ``._grad``
    (guarded), a write is pending (replayed after the graph runs)."""

    def __init__(self, tx):
        self.tx = tx

    def _variable(self, leaf: Tensor) -> TensorVariable:
        return self.tx.tr.leaves[id(leaf._data)]

    def read(self, leaf: Tensor) -> Tensor | None:
        var = self._variable(leaf)
        current = read_grad(self.tx, var)
        if not isinstance(current, TensorVariable):
            return None
        current.check_fresh()
        if current.meta.dtype != var.meta.dtype or current.shape != var.shape:
            raise Unsupported("unsupported_call", "accumulating into a .grad of another dtype")
        return Tensor._wrap(current.meta)

    def write(self, leaf: Tensor, grad: Tensor) -> None:
        var = self._variable(leaf)
        meta = _meta(self.tx.tr.tracer, grad._data)
        self.tx.side_effects.grads[id(var)] = (var, TensorVariable(meta, TENSOR))


@HOOKS.provide
def backward(tx, t: TensorVariable, args, kwargs) -> Variable:
    """``t.backward()``: eager's ``backward`` on the tape's record, its gradient
    nodes issued through the tracer's level (so they are appended to the graph),
    the ``.grad`` of the leaves updated as pending writes."""
    names = ("gradient", "create_graph")
    if len(args) > 2 or set(kwargs) - set(names):
        raise UserCodeRaises("backward() got unexpected arguments")
    bound = dict(zip(names, args))
    bound.update(kwargs)
    v = bound.get("create_graph")
    if v is not None and not (v.is_constant() and v.as_constant() is False):
        # the .grad written would require grad, with a record the replay cannot give it
        raise Unsupported("unsupported_call", "backward(create_graph=...) under capture")
    gradient = _backward_gradient(t, bound.get("gradient"))
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
    if gradient is None and t.meta.size != 1:
        raise UserCodeRaises(f"backward of a tensor of shape {list(t.shape)} without "
                             f"gradient (FrameValueError)")
    root = tracer.tape.tensor(t.meta)
    _check_not_overwritten(tracer.tape, root, "backward")
    with tracer.active():
        _differentiate(eager_backward, "backward", root, gradient, slots=_PendingGrads(tx))
    tr.backward_done = True
    return ConstantVariable(None)


def _backward_gradient(t: TensorVariable, v: Variable | None) -> Tensor | None:
    """``backward``'s ``gradient`` argument as eager's ``backward`` takes it: None,
    or a tensor standing for the graph value (eager weights the root with it).
    A gradient of another dtype (eager casts it), or not a frame Tensor, runs
    natively."""
    if v is None or v.is_none():
        return None
    if v.tensor_kind() != TENSOR:
        raise Unsupported("unsupported_call", "backward(gradient=...) that is not a frame Tensor "
                                              "under capture")
    v.check_fresh()
    if v.meta.dtype != t.meta.dtype:
        raise Unsupported("unsupported_call", "backward(gradient=...) of another dtype than the "
                                              "tensor under capture")
    return Tensor._wrap(v.meta)


def _differentiate(fn, label: str, *args, **kwargs):
    """Run eager's ``fn`` (backward, gradients) in the trace: its errors are the
    user's code raising."""
    try:
        return fn(*args, **kwargs)
    except NonDifferentiableError as e:
        raise UserCodeRaises(f"{label} raises: {e}") from e
    except FrameError as e:
        raise UserCodeRaises(f"{label} raises {type(e).__name__}: {e}") from e


def _check_not_overwritten(tape, root: Tensor, what: str) -> None:
    """A backward through a record that read an untracked value updated in
    place since is refused: eager reads the overwritten memory (tracked values
    have versions: eager's checks decide)."""
    if not tape.overwritten:
        return
    for rec in reachable([root]):
        if any(id(a) in tape.overwritten for a in rec.inputs):
            raise Unsupported("unsupported_call", f"{what} through a value that was updated in "
                                                  f"place after an op recorded for autograd read it")


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


@HOOKS.provide
def grad_call(tx, gv: GradFunctionVariable, args: list, kwargs: dict) -> Variable:
    """A call of what ``frame.grad`` / ``frame.value_and_grad`` returned, traced
    as ``frame.autograd.functional.value_and_grad`` runs it eagerly:

    1. each selected argument becomes a fresh leaf (a new meta array for its
       value, tracked) -- or, for a Tensor that requires grad, a recorded
       identity ``reshape`` of it -- and the function runs inlined with grad
       mode on;
    2. its result must be a floating 0-d tensor (or a constant: zeros);
    3. eager's ``gradients`` runs on the records reachable from it, its
       gradient nodes issued through the tracer's level, recorded when eager
       would record them (``create_graph``);
    4. the fresh leaves stop requiring grad (untracked), so a later backward
       reads what was recorded from them as constants.

    What comes back has eager's types: the gradient for a Tensor is a Tensor,
    for an ndarray an ndarray, for a NumPy scalar a NumPy scalar; the value is
    the result (``create_graph``) or a detached view of it when a Tensor was
    differentiated, else a NumPy scalar."""
    tr, tracer = tx.tr, tx.tr.tracer
    try:
        where = _positions(gv.positions, len(args), gv.real_fn)
    except FrameError as e:
        raise UserCodeRaises(f"frame.grad raises {type(e).__name__}: {e}") from e
    fn = gv.callee(tx)
    calls = _calls(tr)
    saved_mode = tr.grad_mode
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
        tensor_kind = any(args[i].tensor_kind() == TENSOR for i in where)
        create = False
        if loss is not None:
            tape = tracer.tape
            root = tape.tensor(loss.meta)
            _check_not_overwritten(tape, root, "frame.grad")
            rg = RecordedGraph([root])
            tr.grad_mode = saved_mode
            fresh_ids = {id(tape.tensor(v.meta)) for v in fresh}
            create = tensor_kind and rg.has_leaf_other_than(fresh_ids) and tr.grad_enabled()
            tr.grad_mode = create  # eager records the gradient nodes only with create_graph
            with tracer.active():
                grads = _differentiate(gradients, "frame.grad", root,
                                       [tape.tensor(v.meta) for v in variables],
                                       create_graph=create, graph=rg, what="frame.grad")
            grads = [_meta(tracer, g._data) for g in grads]
        else:
            grads = [tracer.meta(tracer.builder.constant(np.zeros(v.shape, dtype=v.meta.dtype)))
                     for v in variables]
    finally:
        tr.grad_mode = saved_mode
        calls.depth -= 1
        _release(tracer, calls, fresh)
    if tensor_kind:
        if create:
            value_var = out
        elif value.tensor_kind() == NDARRAY:
            raise Unsupported("unsupported_call", "frame.grad of a function returning an ndarray: "
                                                  "the value is a Tensor sharing its memory")
        elif value.tensor_kind() == TENSOR:
            value_var = tr.mark_view(TensorVariable(tracer.meta(_value(tracer, value)), TENSOR),
                                     value, Tensor.detach)
        elif value.is_constant():  # Tensor._wrap(np.asarray(out))
            value_var = TensorVariable(
                tracer.meta(tracer.builder.constant(np.asarray(value.as_constant()))), TENSOR)
        else:
            value_var = TensorVariable(tracer.meta(_value(tracer, value)), TENSOR)
    elif value.is_constant():
        value_var = ConstantVariable(np.asarray(value.as_constant())[()])
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
    tr, tracer = tx.tr, tx.tr.tracer
    if arg.tensor_kind() is None and arg.is_constant():
        value = arg.as_constant()
        if isinstance(value, float) and not isinstance(value, bool):
            raise Unsupported("data_dependent", "frame.grad with respect to a Python float: the "
                                                "gradient is a Python float read from the graph")
        if isinstance(value, np.generic) and np.asarray(value).dtype.kind == "f":
            base = tx.wrap_result(np.asarray(value))  # a graph constant, guarded by value
        else:
            raise UserCodeRaises(f"frame.grad: argument {i} is a "
                                 f"{type(value).__name__} (FrameTypeError)")
    elif arg.tensor_kind() is not None:
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
    tracer.tape.leaf(leaf.meta)
    calls = _calls(tr)
    calls.leaves.add(id(leaf.meta))
    calls.active.add(id(leaf.meta))
    return leaf, True


def _scalar_output(tx, out: Variable):
    """functional._scalar_output: ``(the loss tensor or None when nothing is
    recorded, the variable standing for the result)``."""
    if out.tensor_kind() is not None:
        out.check_fresh()
        dtype, shape = out.meta.dtype, out.shape
    elif out.is_constant() and isinstance(out.as_constant(), (np.generic, float, int)) \
            and not isinstance(out.as_constant(), bool):
        dtype, shape = np.asarray(out.as_constant()).dtype, ()
    else:
        raise UserCodeRaises(f"frame.grad: the function must return a scalar tensor, "
                             f"got {out!r} (FrameTypeError)")
    if shape != ():
        raise UserCodeRaises(f"frame.grad: the function must return a scalar (0-d) "
                             f"tensor, got shape {list(shape)} (FrameValueError)")
    if dtype.kind != "f":
        raise UserCodeRaises(f"frame.grad: the function must return a floating-point "
                             f"scalar, got {dtype} (FrameTypeError)")
    if out.tensor_kind() != TENSOR:
        return None, out  # a constant as eager sees it: every gradient is zero
    if untrackable(tx, out):
        raise Unsupported("unsupported_call", "frame.grad of a function returning an input that "
                                              "requires grad but is not a leaf")
    return (out if is_tracked(tx, out) else None), out


def _like(tx, arg: Variable, g: np.ndarray) -> TensorVariable:
    """functional._like: the gradient in the argument's kind.  An ndarray or
    NumPy scalar is a new, untracked array (eager drops the Tensor around it)."""
    tracer = tx.tr.tracer
    if arg.tensor_kind() == TENSOR:
        return TensorVariable(g, TENSOR, requires_grad=tracer.tape.is_tracked(g))
    fresh = tracer.fresh(g)
    if arg.tensor_kind() == NDARRAY:
        return TensorVariable(fresh, NDARRAY)
    return TensorVariable(fresh, NPSCALAR)


def _meta(tracer, array: np.ndarray) -> np.ndarray:
    """``array`` as a meta array: a computed value's own, or a constant's."""
    return array if tracer.is_meta(array) else tracer.fresh(array)


def _release(tracer, calls: _GradCalls, fresh: list[TensorVariable]) -> None:
    """The fresh leaves stop requiring grad (``set_requires_grad(v, False)``):
    untracked, so a later backward reads what was recorded from them as
    constants, as eager's does."""
    for v in fresh:
        v.requires_grad = False
        tracer.tape.untrack(tracer.tape.tensor(v.meta))
        calls.active.discard(id(v.meta))


# --------------------------------------------------------------------------- across the jit boundary

class BackwardPlan:
    """The autograd record a cache entry gives the tensors it hands out that
    require grad (docs/compiler.md, "Compiled autograd across the jit
    boundary"): ``roots`` (the result variables, one per graph value), the
    ``leaves`` they depend on (input variables), the forward values saved for
    the backward (``saved``: graph Values the entry hands to ``attach``, in
    order) and the ``CompiledBackward`` of the entry.  A leaf variable is
    listed once per version the record read (``offsets``: that version minus
    the one it has when the function returns, 0 unless it was updated in place
    after the use)."""

    def __init__(self, roots, leaves, saved, backward: CompiledBackward, offsets=()):
        self.roots = roots
        self.leaves = leaves
        self.offsets = tuple(offsets) or (0,) * len(leaves)
        self.saved = saved
        self.backward = backward


def plan_backward(tr, roots: list[TensorVariable], compile, origin: str) -> BackwardPlan:
    """The backward of ``roots`` (tensors computed in the function that require
    grad and leave it), built from the tape's records as eager's backward
    would build it: the ``RecordedGraph`` of the roots, weighted by one
    cotangent per root, differentiated with ``build_backward_graph`` with
    respect to its leaves.  What the gradient nodes read from the forward
    becomes the saved values; the gradient nodes alone are the backward graph
    (``compile`` makes its Executable on the first backward).  The whole
    differentiated graph is kept as well, for ``create_graph``
    (``CompiledRecord.recorded_gradients``).  Raises ``Unsupported`` where the
    eager record cannot be reproduced."""
    tracer, tape = tr.tracer, tr.tracer.tape
    stand_ins = [tape.tensor(tv.meta) for tv in roots]
    if any(tv.meta.dtype.kind != "f" for tv in roots):
        raise Unsupported("unsupported_object", "a complex tensor that requires grad leaves the "
                                                "compiled code")
    widest = from_numpy(np.result_type(*(tv.meta.dtype for tv in roots)))
    for t in stand_ins:
        _check_not_overwritten(tape, t, "a backward of the function's result")
    rg = RecordedGraph(stand_ins)
    # one leaf of the record per (leaf, version) the graph read, as eager's inputs:
    # a leaf updated in place in the function (an optimizer step after a traced
    # backward) is read at the version it had when used, eager's version checks
    # deciding at backward time (``offsets``: that version minus the final one)
    leaves, leaf_refs, offsets, leaf_inputs = [], [], [], {}
    for k, (_, leaf, version) in enumerate(rg.inputs):
        if leaf is None:
            continue
        var = tr.leaves.get(id(leaf._data))
        if var is None:
            raise Unsupported("unsupported_call", "a tensor that requires grad leaves the compiled "
                                                  "code and depends on a leaf that is not an input")
        leaf_inputs[k] = len(leaves)
        leaves.append(var)
        leaf_refs.append((-1, k))
        offsets.append(version - leaf._version.value)
    # the loss: sum_j sum(root_j * cotangent_j), the cotangents inputs of their own (a
    # gradient's dtype is its value's: a float32 result's cotangent is float32)
    cotangents = [np.zeros(tv.shape, tv.meta.dtype) for tv in roots]
    loss = None
    for t, cot in zip(stand_ins, cotangents):
        term = (rg.add_node("mul", {}, [rg.root_ref(t), rg.const_input(cot)]), 0)
        if t.ndim:
            attrs = get_schema("sum").normalize_attrs(
                {"axes": tuple(range(t.ndim)), "keepdims": False})
            term = (rg.add_node("sum", attrs, [term]), 0)
        if t._data.dtype != widest.np:  # results of several dtypes: one loss of the widest
            attrs = get_schema("cast").normalize_attrs({"dtype": widest})
            term = (rg.add_node("cast", attrs, [term]), 0)
        loss = term if loss is None else (rg.add_node("add", {}, [loss, term]), 0)
    graph, targets = rg.to_graph(loss, leaf_refs)
    try:
        joint = build_backward_graph(graph, 0, targets)
    except FrameError as e:  # eager's backward would raise it: the call runs natively
        raise Unsupported("unsupported_call", f"the backward of the function's result cannot be "
                                              f"built: {e}") from e
    return _partition(tr, rg, joint, roots, leaves, leaf_inputs, offsets, cotangents, compile,
                      origin)


# Forward ops the backward graph computes again from their inputs rather than
# have the forward save their results (AOTAutograd's partitioner does the
# same with cheap ops), when those inputs are forward values themselves:
# relu's result is one pass over the input the relu gradient reads anyway.
# Saved values are extra outputs of every forward call, kept alive with the
# result; recomputing happens only on a backward through the record (rare for
# a training step, whose backward ran in the call).  Never from a leaf or an
# input: eager saved its value at the call (``W.T`` is a copy), and a later
# in-place update (the step's own ``opt.step()``) must not change what a
# second backward computes.
RECOMPUTE = frozenset({"transpose", "reshape", "expand_dims", "squeeze", "relu"})


def _partition(tr, rg: RecordedGraph, joint, roots, leaves, leaf_inputs, offsets, cotangents,
               compile, origin: str) -> BackwardPlan:
    """Cut ``joint`` (recorded forward nodes, the weighting, gradient nodes)
    into the backward graph: the nodes after the recorded ones that the
    gradients need, reading saved values where they read the forward, or
    computing them again (``RECOMPUTE``)."""
    tracer = tr.tracer
    n_known = len(rg.known)
    cot_of = {id(c): j for j, c in enumerate(cotangents)}
    root_of = {id(tracer.values[id(tv.meta)]): j for j, tv in enumerate(roots)}
    saved: list = []
    saved_index: dict[int, int] = {}

    def forward(fv):
        """Where the value of forward graph value ``fv`` comes from at run time."""
        if fv.producer is not None and fv.producer.op == "constant":
            return ("const", fv.producer.const)
        j = root_of.get(id(fv))
        if j is not None:
            return ("result", j)
        s = saved_index.get(id(fv))
        if s is None:
            s = saved_index[id(fv)] = len(saved)
            saved.append(fv)
        return ("saved", s)

    def source(k: int) -> tuple:
        """Where input ``k`` of the recorded graph comes from."""
        array, leaf, _ = rg.inputs[k]
        if leaf is not None:
            return ("leaf", leaf_inputs[k])
        if id(array) in cot_of:
            return ("cotangent", cot_of[id(array)])
        if tracer.is_meta(array):
            return forward(tracer.values[id(array)])
        return ("const", array)

    origin_of_value: dict[int, tuple] = {}
    for k, v in enumerate(joint.inputs):
        origin_of_value[id(v)] = ("input", k)
    for n, node in enumerate(joint.nodes[:n_known]):
        for j, v in enumerate(node.outputs):
            origin_of_value[id(v)] = ("known", n, j)
    live = {id(v) for v in joint.outputs[1:]}
    kept = []
    for node in reversed(joint.nodes[n_known:]):
        if any(id(v) in live for v in node.outputs):
            kept.append(node)
            live.update(id(v) for v in node.inputs)
    kept.reverse()
    produced = {id(v) for node in kept for v in node.outputs}

    def where(v) -> tuple:
        at = origin_of_value[id(v)]
        if at[0] == "input":
            return source(at[1])
        return forward(tracer.values[id(rg.known[at[1]][at[2]][0])])

    outside = [v for node in kept for v in node.inputs if id(v) not in produced]
    outside += [v for v in joint.outputs[1:] if id(v) not in produced]
    b = GraphBuilder(device=tracer.graph.device)
    env: dict[int, object] = {}
    layout: list[tuple] = []          # where each saved input of the backward comes from
    inputs: dict[tuple, object] = {}  # kind -> input Value of the backward graph
    cot_of_root: dict[int, int] = {}  # id(joint value) -> root index

    def recomputable(v):
        """The ``RECOMPUTE`` node of the forward that made ``v`` from forward
        values (not leaves or inputs), unless ``v`` is a result (which comes
        back as it is); else None."""
        at = origin_of_value[id(v)]
        if at[0] != "known":
            return None
        node = joint.nodes[at[1]]
        if (node.op not in RECOMPUTE or len(node.outputs) != 1
                or id(tracer.values[id(rg.known[at[1]][at[2]][0])]) in root_of
                or any(origin_of_value[id(u)][0] != "known" for u in node.inputs)):
            return None
        return node

    def read(v) -> None:
        """Make ``env[id(v)]`` (or the root's cotangent slot) for a forward value:
        computed again in the backward graph when ``recomputable``, else read."""
        if id(v) in env or id(v) in cot_of_root:
            return
        node = recomputable(v)
        if node is not None:
            for u in node.inputs:
                read(u)
            env[id(v)] = b.op_multi(node.op, [env[id(u)] for u in node.inputs], node.attrs)[0]
            env[id(v)].producer.errstate = node.errstate
            return
        kind = where(v)
        if kind[0] == "const":
            env[id(v)] = b.constant(kind[1])
        elif kind[0] == "cotangent":
            cot_of_root[id(v)] = kind[1]
        else:
            if kind not in inputs:
                inputs[kind] = b.graph.add_input(v.type)
                layout.append(kind)
            env[id(v)] = inputs[kind]

    for v in outside:
        read(v)
    cot_inputs = [b.graph.add_input(TensorType(from_numpy(tv.meta.dtype), tuple(tv.shape)))
                  for tv in roots]
    for key, j in cot_of_root.items():
        env[key] = cot_inputs[j]
    for node in kept:
        if node.op == "constant":
            out = [b.constant(node.const)]
        else:
            out = b.op_multi(node.op, [env[id(v)] for v in node.inputs], node.attrs)
            out[0].producer.errstate = node.errstate
        for v, o in zip(node.outputs, out):
            o.producer.backward = True
            env[id(v)] = o
    b.graph.set_outputs([env[id(v)] for v in joint.outputs[1:]])
    verify(b.graph)
    # what the whole differentiated graph reads, for create_graph
    joint_layout = [source(k) for k in range(len(rg.inputs))]
    result_types = [(tv.meta.dtype, tuple(tv.shape)) for tv in roots]
    backward = CompiledBackward(b.graph, layout, result_types, compile, joint=joint,
                                joint_layout=joint_layout, origin=origin)
    return BackwardPlan(roots, leaves, saved, backward, offsets)
