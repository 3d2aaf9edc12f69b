"""Whole-graph lowering: a frame Graph -> one ``ov.Model`` plus the plan the
executable needs to bind inputs and hand outputs back.

Boundary conversions (the only places float16 and int64 appear in a model):

- a float16 input is an f16 Parameter converted to f32; a float16 output is
  the f32 value converted to f16 (one rounding, where NumPy rounds too).
- a complex64 input or output is its float32 view, (real, imaginary) pairs on
  a trailing axis of 2.
- a large int64 input (``SHARE_BYTES`` and more) is bound *without a copy* as
  its int32 view: a Parameter of twice as many int32 words, little-endian
  (low, high) pairs.  The model keeps the low words and flags any high word
  that is not the low word's sign extension, i.e. any value outside int32; the
  executable then runs that call with the reference kernels.  A small one
  (labels, indices) is an int32 Parameter the executable converts into (it is
  copied into a bound tensor anyway) and checks on the host, before the
  model runs: the in-model check was 7 nodes, each with its own dispatch cost
  in the plugin, where NumPy checks 128 labels in ~2 us (``INPUT_INT64_COPY``).  An int64 output is the int32 value
  converted to i64 (it fits: ``support.py`` only admits such values).
- an int8/int16/uint8/uint16 input is a Parameter of its own element type
  converted to i32; such an output is the i32 value (within the dtype's range,
  see ``table.py``) converted back.

A large input read by more than one elementwise node is bound as one
Parameter per such reader, all to the same memory (``LoweredGraph.aliases``;
no copy: large inputs are bound where they lie).  The CPU plugin fuses a chain
of elementwise nodes into one kernel except where a node reads a tensor that an
earlier node of the chain read too: ``0.044715 * x * x * x`` inside tanh-GELU
compiled to five kernels, five passes over 4 MB at 1024x1024, and with
``x`` bound once per reader to two (measured, OpenVINO 2026.4: 0.70 against
0.95-1.1 ms a call; docs/performance.md).  The arithmetic is the same, so the
results are bit for bit those of the single binding.

The built model's float arithmetic is then rewritten where the CPU plugin's
own rewrites would change it (``exact_arith.keep_exact``: -0.0 through a
multiply by a scalar, negation, subtraction; division by a reciprocal).

Graph outputs that are graph inputs or constants never enter the model: the
executable returns fresh copies of them.  All run-time exactness checks
(``Lowerer.flags``) are or-ed into one extra boolean model output.
"""
from __future__ import annotations

import dataclasses
import sys

import numpy as np
import openvino as ov
import openvino.opset16 as ops

from ...dtypes import DType, float16, int64
from ...errors import ErrorCode, FrameError
from ...ir.graph import Graph, Node, Value
from . import rules_elementwise, rules_linalg, rules_nn, rules_reduction, rules_scan, rules_shape  # noqa: F401 (fill RULES)
from . import rules_stats  # noqa: F401 (nan_reduce: refused)
from . import rules_contract  # noqa: F401 (einsum, convolve, correlate)
from .exact_arith import keep_exact
from .table import RULES, Lowerer, Out, internal_shape, internal_type, out

__all__ = ["LoweredGraph", "lower_graph", "INPUT_DIRECT", "INPUT_INT64", "INPUT_INT64_COPY",
           "INPUT_COMPLEX",
           "OUT_MODEL", "OUT_INPUT", "OUT_CONST", "SHARE_BYTES"]

INPUT_DIRECT, INPUT_INT64, INPUT_COMPLEX = "direct", "int64", "complex64"
INPUT_INT64_COPY = "int64_copy"  # converted to int32 and range-checked by the executable
OUT_MODEL, OUT_INPUT, OUT_CONST = "model", "input", "const"
# At and above this size an input or output is bound without copying (the
# executable's crossover, measured), and an input read by several elementwise
# nodes gets one Parameter per reader (module docstring).
SHARE_BYTES = 1 << 17
# Rewrite the float arithmetic the CPU plugin would not compute as IEEE does
# (signed zeros, division: exact_arith.py); a switch for measuring its cost only
EXACT_ARITH = True
# OpenVINO node types the CPU plugin runs as (fusable) Eltwise kernels
_ELEMENTWISE = frozenset({
    "Abs", "Add", "Clamp", "Divide", "Elu", "Erf", "Exp", "Floor", "FloorMod", "Gelu",
    "HSigmoid", "HSwish", "Log", "Maximum", "Minimum", "Mish", "Mod", "Multiply",
    "Negative", "Power", "PRelu", "Relu", "Round", "Select", "Sigmoid", "Sign",
    "SoftPlus", "Sqrt", "SquaredDifference", "Subtract", "Swish", "Tanh",
    "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual",
    "LogicalAnd", "LogicalOr", "LogicalXor", "LogicalNot", "Ceiling"})

if sys.byteorder != "little":  # the int64 -> int32 pair view assumes it
    raise ImportError("the openvino backend needs a little-endian host")


@dataclasses.dataclass
class LoweredGraph:
    """``model`` is None when every output is an input or a constant.

    ``inputs[i]`` is ``(param_index, mode)`` for graph input i, or None when the
    graph does not read it.  ``outputs[j]`` is ``(OUT_MODEL, model_output)``,
    ``(OUT_INPUT, graph_input)`` or ``(OUT_CONST, array)``.  ``flag_output`` is
    the index of the run-time check output, or None.  ``aliases`` lists
    ``(graph_input, param_index)`` for the further Parameters a large direct
    input is also bound to (module docstring).  ``host_checks`` lists
    ``(graph_input, low, high)``: the executable runs the call with the
    reference kernels unless every value of that input is in [low, high)
    (``rules_shape.checked_index``).  ``errstates`` are NumPy's error states
    the graph's ops run under (``Graph.errstates``).
    """

    model: ov.Model | None
    inputs: list[tuple[int, str] | None]
    outputs: list[tuple[str, object]]
    flag_output: int | None
    aliases: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    host_checks: list[tuple[int, int, int]] = dataclasses.field(default_factory=list)
    # NumPy's error states the graph's ops run under (Graph.errstates): the run asks
    # whether any would raise now (executable.py, fp_errors.GraphErrorStates)
    errstates: tuple = (None,)


def _internal_error(node: Node, what: str) -> FrameError:
    return FrameError(ErrorCode.INTERNAL, f"openvino lowering of '{node.op}' {what} "
                                          f"(a bug in frame/backends/openvino)")


# the small integers cross the model's boundary in their own element type
_SMALL_BOUNDARY = {"int8": ov.Type.i8, "int16": ov.Type.i16, "uint8": ov.Type.u8,
                   "uint16": ov.Type.u16}


def _boundary_type(dtype: DType) -> ov.Type:
    if dtype is float16:
        return ov.Type.f16
    return _SMALL_BOUNDARY.get(dtype.name) or internal_type(dtype)


class _Builder:
    def __init__(self):
        self.cx = Lowerer()
        self.env: dict[int, Out] = {}

    def parameter(self, v: Value, graph_index: int) -> tuple[ops.parameter, str]:
        t = v.type
        if t.dtype is int64 and t.size * 8 < SHARE_BYTES:
            param = ops.parameter(list(t.shape), ov.Type.i32)
            self.env[id(v)] = param.output(0)
            self.cx.host_inputs[param.get_name()] = graph_index
            return param, INPUT_INT64_COPY
        if t.dtype is int64:
            param = ops.parameter([2 * t.size], ov.Type.i32)
            pairs = out(ops.reshape(param, self.cx.ints([t.size, 2]), False))
            low = out(ops.gather(pairs, self.cx.i32(0), self.cx.i32(1)))
            high = out(ops.gather(pairs, self.cx.i32(1), self.cx.i32(1)))
            # In range iff the high word is the low word's sign extension, -1 or 0.
            # The plugin compares i32 in float32, which is exact here: a sign test,
            # and equality with -1 or 0, which no other int32 rounds to.  (Not
            # BitwiseRightShift + BitwiseXor: the plugin runs those as reference
            # kernels, ~4% of the MLP training step's time in its nodes.)
            extension = out(ops.select(out(ops.less(low, self.cx.i32(0))), self.cx.i32(-1),
                                       self.cx.i32(0)))
            self.cx.flag(out(ops.not_equal(high, extension)))
            self.env[id(v)] = out(ops.reshape(low, self.cx.ints(t.shape), False))
            return param, INPUT_INT64
        if t.dtype.is_complex:  # bound as its float32 view: (real, imaginary) pairs
            param = ops.parameter(list(t.shape) + [2], ov.Type.f32)
            self.env[id(v)] = param.output(0)
            return param, INPUT_COMPLEX
        param = ops.parameter(list(t.shape), _boundary_type(t.dtype))
        value = param.output(0)
        if t.dtype is float16:
            value = out(ops.convert(value, ov.Type.f32))
        elif t.dtype.name in _SMALL_BOUNDARY:
            value = out(ops.convert(value, ov.Type.i32))
        elif t.dtype.kind == "i" and t.size * t.dtype.np.itemsize < SHARE_BYTES:
            self.cx.host_inputs[param.get_name()] = graph_index  # copied in: checkable
        self.env[id(v)] = value
        return param, INPUT_DIRECT

    def lower_nodes(self, nodes) -> None:
        for node in nodes:
            ins = [self.env[id(v)] for v in node.inputs]
            if node.body is not None:
                results = self._lower_body(node, ins)
            else:
                rule = RULES.get(node.op)
                if rule is None:
                    raise _internal_error(node, "was asked for but has no rule")
                results = list(rule.build(self.cx, node, ins))
            if len(results) != len(node.outputs):
                raise _internal_error(node, f"built {len(results)} outputs, expected "
                                            f"{len(node.outputs)}")
            for v, r in zip(node.outputs, results):
                self._check(node, v, r)
                self.env[id(v)] = r

    def _lower_body(self, node: Node, ins: list[Out]) -> list[Out]:
        body = node.body
        for inner, value in zip(body.inputs, ins):
            self.env[id(inner)] = value
        self.lower_nodes(body.nodes)
        return [self.env[id(v)] for v in body.outputs]

    @staticmethod
    def _check(node: Node, v: Value, r: Out) -> None:
        # a rule that builds the wrong type or shape is a bug: say so here, not as a
        # wrong number later
        want = internal_type(v.type.dtype)
        if r.get_element_type() != want:
            raise _internal_error(node, f"built {r.get_element_type()}, expected {want} for {v.type}")
        shape = r.get_partial_shape()
        want_shape = internal_shape(v.type.dtype, v.type.shape)
        if not shape.is_static or tuple(shape.to_shape()) != want_shape:
            raise _internal_error(node, f"built shape {shape}, expected {list(want_shape)}")

    def result(self, v: Value) -> Out:
        value = self.env[id(v)]
        dtype = v.type.dtype
        if dtype is float16 or dtype is int64 or dtype.name in _SMALL_BOUNDARY:
            # (a small integer value is within its dtype's range: Convert is exact)
            value = out(ops.convert(value, ov.Type.i64 if dtype is int64 else _boundary_type(dtype)))
        return value


def lower_graph(graph: Graph, name: str = "frame", *, alias_inputs: bool = True) -> LoweredGraph:
    """Build the model for ``graph`` (every node must be supported: ``support.py``).
    ``alias_inputs=False``: one Parameter per input (a model for other programs
    to run, ``frame.export``), not one per elementwise reader of a large one."""
    b = _Builder()
    used = {id(v) for n in graph.nodes for v in n.inputs}
    used |= {id(v) for v in graph.outputs if v.producer is not None}
    params = []
    inputs: list[tuple[int, str] | None] = []
    for v in graph.inputs:
        if id(v) not in used:
            inputs.append(None)
            continue
        param, mode = b.parameter(v, len(inputs))
        inputs.append((len(params), mode))
        params.append(param)
    b.lower_nodes(graph.nodes)

    input_index = {id(v): i for i, v in enumerate(graph.inputs)}
    # A Result fed straight by a Parameter comes back as garbage when both
    # tensors are bound by the caller (measured, OpenVINO 2026.4 CPU): such an
    # output (an identity lowering: floor of ints, abs of bools, a sum over no
    # axes) is the input itself, so it is handed back as a copy of the input.
    # (An int32 Parameter of a small int64 input, range-checked by the executable,
    # counts too: the output is the input cast to the output's type.)
    param_input = {params[entry[0]].get_name(): i for i, entry in enumerate(inputs)
                   if entry is not None and entry[1] in (INPUT_DIRECT, INPUT_INT64_COPY)}
    results: list[Out] = []
    model_index: dict[int, int] = {}
    outputs: list[tuple[str, object]] = []
    for v in graph.outputs:
        if id(v) in input_index:
            outputs.append((OUT_INPUT, input_index[id(v)]))
        elif v.producer is not None and v.producer.op == "constant":
            outputs.append((OUT_CONST, np.array(v.producer.const, dtype=v.type.dtype.np)))
        else:
            value = b.result(v)
            source = value.get_node()
            if source.get_type_name() == "Parameter" and source.get_name() in param_input:
                outputs.append((OUT_INPUT, param_input[source.get_name()]))
                continue
            if id(v) not in model_index:
                model_index[id(v)] = len(results)
                results.append(value)
            outputs.append((OUT_MODEL, model_index[id(v)]))

    flag_output = None
    if b.cx.flags and results:
        flag = b.cx.flags[0]
        for more in b.cx.flags[1:]:
            flag = out(ops.logical_or(flag, more))
        flag_output = len(results)
        results.append(flag)
    if not results:
        return LoweredGraph(None, [None] * len(graph.inputs), outputs, None,
                            errstates=graph.errstates())
    host_checks = list(dict.fromkeys(b.cx.host_checks))
    model = ov.Model([ops.result(r) for r in results], params, name)
    if EXACT_ARITH:
        keep_exact(model)
    aliases = _alias_parameters(graph, model, params, inputs) if alias_inputs else []
    return LoweredGraph(model, inputs, outputs, flag_output, aliases, host_checks,
                        graph.errstates())


def _alias_parameters(graph: Graph, model: ov.Model, params: list,
                      inputs: list[tuple[int, str] | None]) -> list[tuple[int, int]]:
    """Give every elementwise reader of a large direct input but the first its
    own Parameter (module docstring); returns ``(graph_input, param_index)`` of
    the new ones, which are added to ``model``."""
    large = {}   # Parameter name -> (graph input, its Parameter)
    for i, entry in enumerate(inputs):
        t = graph.inputs[i].type
        if (entry is not None and entry[1] == INPUT_DIRECT
                and t.size * t.dtype.np.itemsize >= SHARE_BYTES):
            large[params[entry[0]].get_name()] = (i, params[entry[0]])
    if not large:
        return []
    readers: dict[str, list] = {}   # Parameter name -> its elementwise readers, in model order
    for op in model.get_ordered_ops():
        if op.get_type_name() not in _ELEMENTWISE:
            continue
        for port in op.inputs():
            source = port.get_source_output().get_node()
            if source.get_type_name() == "Parameter" and source.get_name() in large:
                readers.setdefault(source.get_name(), []).append(port)
    aliases: list[tuple[int, int]] = []
    added = []
    for name, ports in readers.items():
        graph_input, original = large[name]
        for port in ports[1:]:
            twin = ops.parameter(original.get_partial_shape(), original.get_element_type())
            port.replace_source_output(twin.output(0))
            aliases.append((graph_input, len(params) + len(added)))
            added.append(twin)
    if added:
        model.add_parameters(added)
        model.validate_nodes_and_infer_types()
    return aliases
