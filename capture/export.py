"""``frame.export(fn, *example_args, path=...)``: ``fn`` as an OpenVINO IR
(``.xml`` + ``.bin``) that plain OpenVINO runs, without frame.

    xml = frame.export(model, x, path="mlp.xml")
    # elsewhere, without frame:
    compiled = openvino.Core().compile_model("mlp.xml", "CPU")
    y = compiled({"x": x_array})["output"]

``fn`` is captured whole (as ``frame.jit(fn, full_graph=True)`` would) on the
example arguments, under ``frame.no_grad()`` (an exported model has no
autograd), and the graph goes through the standard pass pipeline for the
openvino backend and its lowering, as a compile does.  Then:

* inputs: every tensor argument (a ``frame.Tensor`` or NumPy array; the
  items of a ``*args`` parameter too) is a model input named after its
  parameter (``x``; ``args_0``, ``args_1`` for ``*args``), in signature
  order, with the example's shape and dtype (static shapes, as frame's
  graphs have);
* constants: every other tensor the function reads (a module's parameters,
  globals, closure cells, tensors inside container arguments) is stored as a
  constant with the value it has at export time; other arguments (Python
  numbers, flags) are specialised to their example values, as guards would;
* outputs: the returned tensors, named ``output`` (one tensor), ``output_0``,
  ``output_1``, ... (a tuple or list, nested ones as ``output_0_1``) or by
  their keys (a dict with string keys).

Refused, with an ``ExportError`` naming the cause: a graph break or anything
``full_graph=True`` refuses (the break's kind, reason and ``file:line``); an
op that has no OpenVINO lowering (the op and why); side effects (an exported
model cannot write its arguments or globals); a return value that is not made
of tensors; int64 or complex inputs (frame binds those as int32 pairs or
float views, which a plain OpenVINO caller would not) and ops whose lowering
needs frame's run-time exactness check.
"""
from __future__ import annotations

import importlib
import inspect
import os
import types

import numpy as np

import frame
from frame.dtypes import from_numpy
from frame.errors import ErrorCode, FrameError
from frame.hal.backend import get_backend
from frame.hal.options import CompileOptions
from frame.ir.graph import Node
from frame.tensor import Tensor

from .errors import BreakReason, GraphBreakError, Unsupported
from .variables.base import TensorVariable

__all__ = ["export", "ExportError"]


class ExportError(FrameError):
    """``frame.export`` cannot write this function as an OpenVINO IR."""

    def __init__(self, message: str, break_reason: BreakReason | None = None):
        super().__init__(ErrorCode.UNIMPLEMENTED, message)
        self.break_reason = break_reason


def _callable(fn):
    """(the Python function to capture, the arguments bound before the
    example's: ``self`` of a method or module)."""
    if not isinstance(fn, types.MethodType) and getattr(fn, "__frame_jit__", False):
        fn = fn.__wrapped__   # (a method's attributes are its function's: unwrapped below)
    if isinstance(fn, types.MethodType):
        func = fn.__func__
        func = getattr(func, "__wrapped__", func) if getattr(func, "__frame_jit__", False) else func
        return func, (fn.__self__,)
    if isinstance(fn, types.FunctionType):
        return fn, ()
    forward = getattr(type(fn), "forward", None)
    call = getattr(type(fn), "__call__", None)
    if getattr(call, "__module__", None) == "frame.nn.module" and isinstance(forward, types.FunctionType):
        return forward, (fn,)
    if isinstance(call, types.FunctionType):
        return call, (fn,)
    raise TypeError(f"frame.export expects a Python function, method or frame module, got "
                    f"{type(fn).__name__}")


def _is_tensor(value) -> bool:
    return isinstance(value, (Tensor, np.ndarray))


def _array_of(value) -> np.ndarray:
    return value._data if isinstance(value, Tensor) else value


def _input_names(func, bound: inspect.BoundArguments, skip: int) -> dict[int, tuple[str, np.ndarray]]:
    """id(array of a tensor argument) -> (its model input name, the array), in
    signature order."""
    names: dict[int, tuple[str, np.ndarray]] = {}
    params = list(inspect.signature(func).parameters.values())[skip:]
    for p in params:
        if p.name not in bound.arguments:
            continue
        value = bound.arguments[p.name]
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            for i, item in enumerate(value):
                if _is_tensor(item):
                    names.setdefault(id(_array_of(item)), (f"{p.name}_{i}", _array_of(item)))
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            for key, item in value.items():
                if _is_tensor(item):
                    names.setdefault(id(_array_of(item)), (key, _array_of(item)))
        elif _is_tensor(value):
            names.setdefault(id(_array_of(value)), (p.name, _array_of(value)))
    return names


def _outputs(result, name: str, out: list) -> None:
    """Flatten the traced return value into ``out`` as (name, TensorVariable):
    a tensor, or a tuple, list or dict (string keys) of them, nested."""
    if isinstance(result, TensorVariable):
        out.append((name, result))
        return
    try:
        kind = result.python_type()
    except Exception:  # noqa: BLE001 - a Variable that cannot say: not a container of tensors
        kind = type(None)
    if issubclass(kind, (tuple, list)):
        for i, item in enumerate(result.children()):
            _outputs(item, f"{name}_{i}", out)
    elif issubclass(kind, dict):
        for key, item in result.items.items():
            key_value = getattr(key, "value", key)
            if not isinstance(key_value, str):
                raise ExportError(f"frame.export: the returned dict has a key {key_value!r} that is "
                                  f"not a string; outputs are named by string keys")
            _outputs(item, key_value, out)
    else:
        raise ExportError(f"frame.export: the function returns a {kind.__name__} (at output "
                          f"{name!r}); an exported model's outputs are tensors (return tensors, "
                          f"or tuples, lists or dicts of tensors)")


def export(fn, *example_args, path: str | os.PathLike) -> str:
    """Capture ``fn`` on ``example_args`` and write it as an OpenVINO IR at
    ``path`` (``.xml``; the weights go to the ``.bin`` beside it).  Returns
    the ``.xml`` path.  See the module docstring (docs/deployment.md)."""
    jit_module = importlib.import_module("capture.jit")
    func, bound_first = _callable(fn)
    name = getattr(func, "__qualname__", "model")
    xml = os.fspath(path)
    if not xml.endswith(".xml"):
        xml += ".xml"
    try:
        bound = inspect.signature(func).bind(*bound_first, *example_args)
    except TypeError as err:
        raise TypeError(f"frame.export({name}): the example arguments do not fit its signature: "
                        f"{err}") from None
    bound.apply_defaults()
    names = _input_names(func, bound, len(bound_first))

    with frame.no_grad():  # an exported model has no autograd
        tr, tx = jit_module._start(func, bound.arguments)
        try:
            if tx is None:
                raise tr.failure
            result = tx.run()
        except Unsupported as e:
            reason = BreakReason(e.kind, e.reason, e.location or jit_module._where(func), e.detail,
                                 e.hint)
            raise ExportError(f"frame.export({name}): {GraphBreakError(reason).message}",
                              reason) from None
    se = tr.side_effects
    written = [what for what, table in (("tensors in place", se.tensors), ("containers", se.containers),
                                        ("attributes", se.attrs), ("globals", se.globals),
                                        ("gradients", se.grads), ("closure cells", se.cells))
               if table]
    if written:
        raise ExportError(f"frame.export({name}): the function writes {', '.join(written)}; an "
                          f"exported model computes its outputs from its inputs and cannot have "
                          f"side effects")
    outputs: list = []
    _outputs(result, "output", outputs)
    if len(outputs) == 1 and outputs[0][0] == "output_0":
        outputs = [("output", outputs[0][1])]
    if not outputs:
        raise ExportError(f"frame.export({name}): the function returns no tensor")
    graph = tr.tracer.graph
    values = []
    for out_name, tv in outputs:
        value = tr.tracer.values.get(id(tv.meta))
        if value is None:
            raise ExportError(f"frame.export({name}): output {out_name!r} is not computed by the "
                              f"graph (a view capture rebuilds at run time)")
        values.append(value)
    graph.set_outputs(values)
    inputs = _bake_constants(graph, tr, names)

    backend = get_backend("openvino")
    try:
        # lazy: the compiler (frame.passes, frame.runtime.compile) loads on the first compile
        from frame.passes import PassManager, standard_pipeline
        work = PassManager(standard_pipeline(backend, CompileOptions())).run(graph)
    except FrameError as err:
        if err.code is ErrorCode.UNIMPLEMENTED and getattr(err, "unsupported", None):
            raise ExportError(f"frame.export({name}): {_unsupported(err.unsupported)}") from None
        raise
    model = _model(work, inputs, [n for n, _ in outputs], name)
    # lazy: openvino is imported only when an OpenVINO export is asked for
    import openvino as ov
    os.makedirs(os.path.dirname(os.path.abspath(xml)), exist_ok=True)
    ov.save_model(model, xml, compress_to_fp16=False)
    return xml


def _bake_constants(graph, tr, names: dict[int, str]) -> list[tuple[str, object]]:
    """Graph inputs that are tensor arguments stay inputs (named); every other
    input becomes a constant node holding its value now.  Returns the model's
    inputs in signature order: (name, the graph input Value, or the argument's
    array when the graph does not read it)."""
    kept: dict[str, object] = {}
    constants = []
    for v in list(graph.inputs):
        tv = tr.input_by_value.get(id(v))
        if tv is None and tr.tracer.draw_index(v) is not None:
            raise ExportError("frame.export: the function draws random numbers (frame.rand, "
                              "frame.randn, dropout in training mode); an exported model has "
                              "no random generator: export it in eval mode")
        array = tr.input_arrays.get(id(tv)) if tv is not None else None
        if array is None:
            raise ExportError("frame.export: a graph input whose value is unknown (a bug of capture)")
        input_name = names.get(id(array), (None,))[0]
        if input_name is not None and input_name not in kept:
            kept[input_name] = v
            continue
        node = Node("constant", (), {"dtype": v.type.dtype, "shape": tuple(v.type.shape)},
                    const=np.array(array, dtype=v.type.dtype.np, copy=True))
        node.set_output_types([v.type])
        constants.append(node)
        graph.replace_all_uses(v, node.output)
    graph.nodes[:0] = constants
    ordered = [(input_name, kept.get(input_name, array)) for input_name, array in names.values()]
    graph.inputs = [v for _, v in ordered if v is not None]
    for i, v in enumerate(graph.inputs):
        v.index = i
    return ordered


def _unsupported(nodes) -> str:
    """The ops without an OpenVINO lowering, each with why (fused nodes opened;
    constants are data, not ops)."""
    # lazy: frame.backends.openvino imports openvino
    from frame.backends.openvino.support import first_unsupported

    flat = []
    for n in nodes:
        flat.extend(n.body.nodes if n.body is not None else [n])
    flat = [n for n in flat if n.op != "constant"]
    bad = first_unsupported(flat) or [(n, f"op '{n.op}' has no lowering") for n in flat]
    whys: dict[str, str] = {}
    for node, why in bad:
        whys.setdefault(node.op, why)
    listed = ", ".join(f"'{op}'" for op in whys)
    return (f"op{'s' if len(whys) > 1 else ''} {listed} ha{'ve' if len(whys) > 1 else 's'} no "
            f"OpenVINO lowering ({'; '.join(whys.values())}); an exported model runs on "
            f"OpenVINO alone")


def _model(graph, inputs: list[tuple[str, object]], output_names: list[str], name: str):
    """The ``ov.Model`` of the lowered ``graph``: named parameters and results."""
    # lazy: openvino is imported only when an OpenVINO export is asked for
    import openvino as ov
    # lazy: openvino is imported only when an OpenVINO export is asked for
    import openvino.opset16 as ops
    # lazy: frame.backends.openvino imports openvino
    from frame.backends.openvino.lower import (INPUT_DIRECT, OUT_CONST, OUT_INPUT, OUT_MODEL,
                                               lower_graph)

    lowered = lower_graph(graph, name, alias_inputs=False)
    if lowered.flag_output is not None or lowered.host_checks:
        raise ExportError(f"frame.export({name}): the graph needs frame's run-time exactness "
                          f"check (an index that may be out of range, int64 values that may not "
                          f"fit int32), which a plain OpenVINO model cannot make")
    params = lowered.model.get_parameters() if lowered.model is not None else []
    model_results = lowered.model.get_results() if lowered.model is not None else []
    by_input: dict[int, object] = {}
    ordered_params = []
    graph_index = {id(v): i for i, v in enumerate(graph.inputs)}
    for input_name, value in inputs:
        if isinstance(value, np.ndarray):  # an argument the graph does not read: still an input
            param = ops.parameter(list(value.shape), _ov_type(from_numpy(value.dtype)))
        elif lowered.inputs[graph_index[id(value)]] is not None:
            param_index, mode = lowered.inputs[graph_index[id(value)]]
            if mode != INPUT_DIRECT:
                raise ExportError(f"frame.export({name}): input {input_name!r} is {value.type}; "
                                  f"frame binds {mode} inputs in a form of its own: pass float32, "
                                  f"float16, int32 or bool inputs")
            param = params[param_index]
        else:  # a graph input that only feeds outputs (handed back as it is)
            param = ops.parameter(list(value.type.shape), _ov_type(value.type.dtype))
        if not isinstance(value, np.ndarray):
            by_input[graph_index[id(value)]] = param
        param.set_friendly_name(input_name)
        param.output(0).get_tensor().set_names({input_name})
        ordered_params.append(param)
    results, used = [], set()
    for (kind, where), out_name in zip(lowered.outputs, output_names):
        if kind == OUT_MODEL:
            source = model_results[where].input_value(0)
        elif kind == OUT_INPUT:
            source = by_input[where].output(0)
        elif kind == OUT_CONST:
            source = ops.constant(np.ascontiguousarray(where)).output(0)
        else:
            raise ExportError(f"frame.export({name}): unknown output kind {kind!r}")
        # a tensor has one set of names: an output that is an input, or another
        # output, gets a tensor of its own (an identity Convert)
        key = (source.get_node().get_friendly_name(), source.get_index())
        if kind == OUT_INPUT or key in used:
            source = ops.convert(source, source.get_element_type()).output(0)
        used.add(key)
        result = ops.result(source)
        result.set_friendly_name(out_name)
        results.append(result)
    model = ov.Model(results, ordered_params, name.replace("<", "").replace(">", ""))
    for out_name, output in zip(output_names, model.outputs):
        output.get_tensor().set_names({out_name})
    return model


def _ov_type(dtype):
    # lazy: frame.backends.openvino imports openvino
    from frame.backends.openvino.lower import _boundary_type
    return _boundary_type(dtype)
