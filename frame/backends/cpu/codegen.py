"""The cpu backend's compiled executable: one generated straight-line Python
function per graph, over buffers preallocated from the memory plan.

Generated once per graph, compiled with the builtin ``compile()``, kept on
the executable as ``.source`` (and in ``linecache``, so tracebacks show the
line that failed)::

    def run(inputs):                 # relu(x @ w + b) @ w, times that, tanh
        try:
            v0, v1, v2 = inputs
        except (TypeError, ValueError):
            raise bad_arity(inputs) from None
        try:
            w0, w1 = tls.arrays
        except AttributeError:  # the first run on this thread
            w0, w1 = tls.arrays = alloc()
        # %3 = matmul(%0, %1) : float32[64,64]
        np_matmul(v0, v1, w0)
        # %4 = fused(%2, %3) : float32[64,64] {  (body lines follow as comments)
        np_add(v2, w0, w1)
        np_maximum(w1, zero_float32, out=w1)
        # %5 = matmul(%4, %1) : float32[64,64]
        np_matmul(w1, v1, w0)              # %3's buffer, free again, reused
        # %6 = fused(%4, %5) : float32[64,64] {
        v6 = np_empty((64, 64), dt_float32)   # a graph output: a fresh array
        np_multiply(w1, w0, v6)
        np_tanh(v6, v6)
        return [v6]

Where values live.  ``v<n>`` is value ``%n`` (dump_text's numbering): graph
inputs, fresh arrays, kernel results and transposed views.  ``w<k>`` are
windows on the memory plan's buffers (a value the plan assigns a buffer is
written there with ``out=``), ``s<k>`` scratch arrays for the intermediates
of fused nodes, ``c<n>`` constants, all bound as globals of the generated
module, so a run does no lookup by name and no type check.

Transposes the plan made views (``plan.views``) cost no copy::

    v8 = v2.T if v2.strides == (3136, 4) else k_transpose([v2], attrs_transpose)[0]
    np_matmul(v0, v8, w0)          # BLAS reads W^T with its transpose flag
    v27 = w5.T                         # a buffer window: its strides are known

The reference transpose returns its copy laid out like that view (ops/shape.py),
so every kernel reading the view -- BLAS through ``np.matmul``, a reduction's
summation order -- does exactly what it does on the interpreter's copy.  That
holds when the viewed array has the strides ``np.empty`` gives its type:
known for plan windows and fresh arrays, checked at run time for inputs and
kernel results (else the kernel copies, as the interpreter does).  The kernel
also copies a view of a view (canonicalize leaves none), and a view whose
reader reads the same memory through another operand too: NumPy computes
``x @ x.T`` over one array with syrk, which can round unlike the gemm the
interpreter's separate copy gets.  (So bit-for-bit equality also assumes
that two graph inputs are not the same array.)

Rules that keep results equal to the reference interpreter, bit for bit:

* a node with an entry in ``lowerings`` writes into an array of exactly its
  inferred dtype and shape, which is what its reference kernel returns;
  every other node calls its reference kernel (0-d results wrapped in arrays
  of the node's dtype, as the interpreter does);
* a fused body runs node by node in body order.  An intermediate goes into
  the fused node's own output array when it has that array's dtype and shape
  and the array holds nothing still needed (an input dying at this node may
  be overwritten in place: elementwise, same shape); else into a scratch
  array of its exact type; a body node without a lowering runs its kernel.
  Bodies the fusion pass does not produce (several outputs, constants or
  nested fused nodes inside) are compiled as executables of their own.
  A region's matmul head is such a body node: it writes its product into the
  fused node's array (``out=``) and the epilogue runs in place on it;
* a ``cross_entropy`` and a ``softmax`` (axis 1) of the same logits run as one
  call of ``ops.nn.softmax_cross_entropy`` where the first of them stands
  (the shift and the exponentials computed once; the same bits as the two
  reference kernels); both results are fresh arrays.

Large elementwise bodies run in parallel (``fused_parallel``): when every
body node is elementwise with an ``out=`` lowering and the work is large
(``chunks.py``: ``PARALLEL_MIN_ELEMENTS``, ``PARALLEL_MIN_WORK``), the body is also
generated as a chunk function over a block of rows of the output, with the
leading axes collapsed as far as every input is either full or broadcast
along them (tanh-GELU on 1024x1024: 8 blocks of 131072 elements)::

    def blk5(i, x0, x1, x2, x3, x4, o):
        a = i * 131072
        b = a + 131072 if i < 7 else 1048576     # the last block takes the remainder
        x0 = x0[a:b]                            # broadcast operands stay whole
        o = o[a:b]
        try:
            s0, = tls_blk5.arrays               # chunk-sized scratch, per thread
        except AttributeError:
            s0, = tls_blk5.arrays = alloc_blk5()
        np_multiply(x0, x0, o)
        ...
    ...
        v5 = np_empty((1024, 1024), dt_float32)
        if par_size() > 1:
            par_run(blk5, (v0.reshape((1048576,)), c2, c1, c3, c4, v5.reshape((1048576,)),), 8)
        else:
            np_multiply(v0, v0, v5)         # the unchunked chain, as before
            ...

``par_run`` (``frame/hal/threadpool.py``) runs the blocks on the calling
thread and the pool's workers (NumPy releases the GIL inside each ufunc).
Each block applies the same ufuncs, with the same operand dtypes, to the
same elements as the unchunked chain, so every element gets the same bits;
blocks never hold a single element (NumPy would run a 1-element in-place
add as a reduction, see ``fused``).  A non-contiguous input is copied by
``reshape`` when the collapsed axes cannot be viewed.

Aliasing policy: a graph output is never written into a plan buffer -- the
plan leaves graph outputs out.  Each output the code writes has a pool of
``POOL_SIZE`` (2) arrays of its own, per thread, and takes the first one
nobody but the pool references (``sys.getrefcount``: the caller dropped it,
and no view, tensor or OpenVINO binding holds it); when the caller holds them
all, a fresh ``np.empty`` replaces the pool's first.  So a caller never sees
an array it holds change, and a caller that keeps each result for one call
(a training step's ``.grad``) costs no allocation::

    v33 = o5[0]
    if getrefcount(v33) != 3:            # still held by the caller
        v33 = o5[1]
        if getrefcount(v33) != 3:        # every one still held
            v33 = o5[0] = np_empty((256, 784), dt_float32)
    np_matmul(v32, v0, v33)

Only an output that *is* a graph input or a constant (or a fused body's
pass-through) is copied.  A transpose that is a graph output is no view (the
plan makes none): its kernel returns a fresh copy.  A value returned twice is
copied the second time, so no two outputs share memory.  A kernel's result is
taken as fresh: reference kernels never return views of their inputs (the
contract stated in ops/shape.py and ops/nn.py).

Input donation (``plan.donations``, from ``CompileOptions.donate``): a
donated output is written into its input array -- the caller gave up its
contents and would copy the output there -- when that array has the strides
``np.empty`` gives its type and is writeable (else into a fresh array), and
returned as that very array.  The node making it must read no view of the
input, and reads the input itself only if it is elementwise (a fused body of
elementwise nodes, whose other nodes then write scratch arrays) over more
than one element: writing in place is then position by position, the same
bits.  An optimizer step's update ``w - lr * g`` becomes::

    if v2.strides == (3136, 4) and v2.flags.writeable:  # donated
        v35 = v2
    else:
        v35 = np_empty((256, 784), dt_float32)
    np_multiply(v33, c34, s3)
    np_subtract(v2, s3, v35)

Threading: the buffers, scratch arrays and output pools belong to a thread
(``threading.local``): the first run on a thread allocates them, later runs
reuse them (a TLS lookup costs ~70 ns; allocating a 64x64 buffer ~200 ns).
Constants are shared and read-only.  Inputs are trusted to match
``input_types`` (the runtime and capture guards guarantee it); only their
number is checked.
"""
from __future__ import annotations

import hashlib
import itertools
import linecache
import logging
import sys
import threading
import weakref
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ...hal import threadpool as pool
from ...hal.backend import Executable
from ...hal.fp_errors import GraphErrorStates, StateSwitch, reset_state, serial_requested
from ...errors import ErrorCode, FrameError, FrameValueError
from ...ir.clone import clone_graph
from ...ir.graph import Graph, Node, Value
from ...ir.memplan import Lifetime, MemoryPlan, is_view_node, plan_memory, standard_strides
from ...ir.text import dump_lines_with_sites
from ...ir.types import TensorType
from ...ops.interpreter import evaluate
from ...ops.layout import pinned_inputs
from ...ops.nn import _cross_entropy_kernel, _softmax_kernel, softmax_cross_entropy
from ...ops.shape import scatter_into
from ...ops.registry import get_schema, lookup
from ...passes.fusion import OperatorFusion
from ...passes.layout import MARKED_GRAPH, LayoutAssignment, without_fused, without_relayouts
from .chunks import Split, chunk_allocator, parallel_split
from .lowerings import REREADS_ARGUMENTS, Namespace, elementwise_out, out_lowering, slice_index

__all__ = ["CpuExecutable", "build_executable", "check_plan"]

_INDENT = "    "
_log = logging.getLogger("frame.backends.cpu")
_sources = itertools.count()


class _Window(NamedTuple):
    """A plan buffer seen as one (dtype, shape): ``raw[:size].reshape(shape)``;
    with an axis ``order`` (outermost first), ``raw[:size]`` reshaped to the axes
    in that order and transposed back: the strides a ``relayout`` reading the
    value asks for (``_Codegen.relayout_view``)."""
    buffer: int
    type: TensorType
    order: tuple[int, ...] | None = None


class _Scratch(NamedTuple):
    type: TensorType


class _Pool(NamedTuple):
    """The arrays a graph output is written into, reused once the caller lets
    go of them (a list of ``POOL_SIZE``)."""
    type: TensorType


# Arrays a graph output takes turns in.  Two: a caller that keeps the previous
# run's result until this run returns (a training step's ``.grad``) finds
# the one before it free again.
POOL_SIZE = 2


def region_threads() -> int:
    """Threads a parallel elementwise region runs on now: the pool's size, or 1
    (the unchunked code, one ufunc call per op, as NumPy) while NumPy would
    raise on a floating-point error or show each of its warnings
    (``fp_errors.serial_requested``): every block would warn on its own."""
    return 1 if serial_requested() else pool.size()


def _region_threads_for(states: tuple) -> Callable[[], int]:
    """``region_threads`` for a region whose ops run under the error states
    ``states`` (``Graph.errstates``), each over the caller's."""
    checker = GraphErrorStates(states)

    def threads() -> int:
        return 1 if checker.serial_requested() else pool.size()
    return threads


def _free_refcount() -> int:
    """``sys.getrefcount(v)`` in generated code, where ``v = pool[i]`` is a
    local holding an array that only the pool list references besides it
    (measured with the same code shape, so it holds for this interpreter)."""
    namespace = {"getrefcount": sys.getrefcount}
    exec("def probe(pool):\n    v = pool[0]\n    return getrefcount(v)\n", namespace)
    return namespace["probe"]([np.empty(1)])


FREE_REFCOUNT = _free_refcount()


class CpuExecutable(Executable):
    """A graph compiled to one generated function (see the module docstring).

    ``source`` is the generated code; ``plan`` the memory plan it follows.
    """

    def __init__(self, fn: Callable[[Sequence[np.ndarray]], list[np.ndarray]], source: str,
                 input_types: Sequence[TensorType], output_types: Sequence[TensorType],
                 plan: MemoryPlan):
        self.input_types = tuple(input_types)
        self.output_types = tuple(output_types)
        self.source = source
        self.plan = plan
        self._fn = fn
        # The instance attribute shadows the method: exe.run(...) calls the
        # generated function directly, with no wrapper frame per run.
        self.run = fn  # type: ignore[method-assign]

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self._fn(inputs)

    def __repr__(self) -> str:
        return (f"<CpuExecutable ({', '.join(map(str, self.input_types))}) -> "
                f"({', '.join(map(str, self.output_types))})>")


# --------------------------------------------------------------------------- plan

def check_plan(graph: Graph, plan: MemoryPlan) -> None:
    """Raise FrameError(INTERNAL) unless ``plan`` is a valid plan for ``graph``:
    planned values exist with the recorded types, are neither graph inputs,
    graph outputs nor constants, fit their buffer, and no two values sharing
    a buffer are alive at once (a buffer is free only after the node that
    last reads its value, or a view of it, has completed); views are outputs
    of nodes ``memplan.is_view_node`` accepts that are not graph outputs, have
    no buffer, and name the node's input as the value they view."""
    def bad(why: str) -> FrameError:
        return FrameError(ErrorCode.INTERNAL, f"cpu compile: the memory plan does not match the "
                                              f"graph: {why}")
    values = graph.values()
    n_inputs = len(graph.inputs)
    outputs = {id(v) for v in graph.outputs}
    number = {id(v): i for i, v in enumerate(values)}
    position: dict[int, int] = {}
    for pos, node in enumerate(graph.nodes):
        for v in node.outputs:
            position[id(v)] = pos
    last_read = dict(position)
    input_last_read: dict[int, int] = {}   # input number -> last node reading it
    for pos, node in enumerate(graph.nodes):
        for v in node.inputs:
            if id(v) in last_read:
                last_read[id(v)] = pos
            elif number[id(v)] < n_inputs:
                input_last_read[number[id(v)]] = pos
    for view, source in plan.views.items():
        if not n_inputs <= view < len(values):
            raise bad(f"view %{view} is not a node output")
        v = values[view]
        node = v.producer
        if not is_view_node(node) or id(v) in outputs:
            raise bad(f"view %{view} is not a node the executable can read as a view "
                      f"({node.op}), or is a graph output")
        if number[id(node.inputs[0])] != source:
            raise bad(f"view %{view} reads %{number[id(node.inputs[0])]}, the plan says %{source}")
        if view in plan.assignment:
            raise bad(f"view %{view} is also assigned a buffer")
    for view in plan.views:   # the memory a view shows lives as long as the view is read
        root = view
        while root in plan.views:
            root = plan.views[root]
        if root >= n_inputs:
            rid, vid = id(values[root]), id(values[view])
            last_read[rid] = max(last_read[rid], last_read[vid])
    output_count: dict[int, int] = {}
    for v in graph.outputs:
        output_count[id(v)] = output_count.get(id(v), 0) + 1
    for out, source in plan.donations.items():
        if not n_inputs <= out < len(values) or output_count.get(id(values[out])) != 1:
            raise bad(f"donated %{out} is not a node output listed once among the graph outputs")
        if not 0 <= source < n_inputs or id(values[source]) in output_count:
            raise bad(f"%{out} is donated input %{source}, which is no input or is an output")
        if values[out].type != values[source].type:
            raise bad(f"donated %{out} is {values[out].type}, input %{source} "
                      f"is {values[source].type}")
        if values[out].producer.op == "constant" or values[out].producer.const is not None:
            raise bad(f"donated %{out} is a constant")
        reads = [last_read[id(v)] for v in values[n_inputs:] if id(v) in last_read
                 and number[id(v)] in plan.views and _view_root(plan, number[id(v)]) == source]
        if max([*reads, input_last_read.get(source, -1)]) > position[id(values[out])]:
            raise bad(f"input %{source} is read after %{out}, which is donated its memory")
    by_buffer: dict[int, list[tuple[Lifetime, int]]] = {}
    for number, index in plan.assignment.items():
        if not 0 <= number < len(values) or number < n_inputs:
            raise bad(f"%{number} is not a node output")
        v = values[number]
        if id(v) in outputs or v.producer.const is not None or v.producer.op == "constant":
            raise bad(f"%{number} is a graph output or a constant and cannot live in a buffer")
        if plan.types.get(number) != v.type:
            raise bad(f"%{number} is {v.type}, the plan says {plan.types.get(number)}")
        if not 0 <= index < len(plan.buffers):
            raise bad(f"%{number} is assigned to buffer {index}, which does not exist")
        buf = plan.buffers[index]
        if buf.dtype is not v.type.dtype or buf.size < v.type.size:
            raise bad(f"%{number} ({v.type}) does not fit buffer {index} ({buf.dtype.name} x {buf.size})")
        by_buffer.setdefault(index, []).append((Lifetime(position[id(v)], last_read[id(v)]), number))
    for index, held in by_buffer.items():
        held.sort()
        for (a, na), (b, nb) in zip(held, held[1:]):
            if a.overlaps(b):
                raise bad(f"%{na} and %{nb} share buffer {index} while both are alive")


# --------------------------------------------------------------------------- codegen

def _multiplies_matrices(node: Node) -> bool:
    """A matmul, or a fused node whose body holds one."""
    if node.op == "matmul":
        return True
    return node.body is not None and any(_multiplies_matrices(n) for n in node.body.nodes)


def _view_root(plan: MemoryPlan, number: int) -> int:
    while number in plan.views:
        number = plan.views[number]
    return number


def _simple_body(body: Graph) -> bool:
    """Is this the shape of body operator_fusion builds (one output made by the
    last node; single-output nodes; no constants, no nested bodies)?"""
    if len(body.outputs) != 1 or not body.nodes:
        return False
    if body.outputs[0].producer is not body.nodes[-1]:
        return False
    return all(n.body is None and n.const is None and n.op != "constant" and len(n.outputs) == 1
               for n in body.nodes)


class _Codegen:
    def __init__(self, graph: Graph, plan: MemoryPlan,
                 input_strides: dict[int, tuple[int, ...]] | None = None,
                 variants: "_LayoutVariants | None" = None):
        self.graph = graph
        self.plan = plan
        # the strides (bytes) the graph's relayouts were made for, by input
        # position (others: C order), and who runs the other input layouts
        self.input_strides = input_strides or {}
        self.variants = variants
        self.ns = Namespace()
        self.lines: list[str] = []
        self.number = {id(v): i for i, v in enumerate(graph.values())}
        self.expr: dict[int, str] = {}
        self.owned: dict[int, bool] = {}   # a fresh array of this run, referenced nowhere else
        self.arrays: list[_Window | _Scratch | _Pool] = []   # unpacked from the thread's array tuple
        self.array_names: list[str] = []
        self.window_names: dict[_Window, str] = {}
        self.scratch_names: list[tuple[TensorType, str]] = []
        self.pool_count = 0
        self.temps = itertools.count()
        self.ir_lines, self.ir_sites = dump_lines_with_sites(graph)
        # array expressions known to have the strides np.empty gives their type
        # (plan buffer windows and fresh arrays; not inputs or kernel results)
        self.standard: set[str] = set()
        self.stride_checks: dict[tuple[str, tuple], str] = {}   # (array, strides) -> its check
        self.users = graph.users() if plan.views else {}
        # id(value) -> the axis order of its plan window: an elementwise result a
        # relayout reads is written in the relayout's strides, which then copies nothing
        self.prefer: dict[int, tuple[int, ...]] = {}
        for n in graph.nodes:
            if n.op == "relayout" and self.number[id(n.outputs[0])] in plan.views:
                src = n.inputs[0]
                order = _dense_order(src.type, n.attrs["strides"])
                if order is not None and src.producer is not None and _writes_elementwise(src.producer):
                    self.prefer.setdefault(id(src), order)
        self.softmax_xent = _softmax_xent_pairs(graph)   # id(node) -> (cross_entropy, softmax)
        self.done: set[int] = set()   # nodes computed with their pair's
        self.defs: list[str] = []     # module-level functions before run (chunk functions)
        self.donated_exprs: dict[str, str] = {}   # output array -> the input it may be
        # for writes in place (scatter_in_place): node positions, the last node
        # reading each value (id) and each view root (number), the graph outputs
        self.by_expr: dict[str, list[int]] = {}
        self.position = {id(n): i for i, n in enumerate(graph.nodes)}
        self.last_read: dict[int, int] = {}
        self.last_root_read: dict[int, int] = {}
        for i, n in enumerate(graph.nodes):
            for u in n.inputs:
                self.last_read[id(u)] = i
                self.last_root_read[self.root(u)] = i
        self.output_ids = {id(v) for v in graph.outputs}

    # -- names -----------------------------------------------------------------
    def dtype(self, t: TensorType) -> str:
        return self.ns.bind(t.dtype.np, f"dt_{t.dtype.name}", key=("dtype", t.dtype.name))

    def window(self, buffer: int, t: TensorType, order: tuple[int, ...] | None = None) -> str:
        key = _Window(buffer, t, order)
        name = self.window_names.get(key)
        if name is None:
            name = self.window_names[key] = f"w{len(self.window_names)}"
            self.arrays.append(key)
            self.array_names.append(name)
        return name

    def new_scratch(self, t: TensorType) -> str:
        name = f"s{len(self.scratch_names)}"
        self.scratch_names.append((t, name))
        self.arrays.append(_Scratch(t))
        self.array_names.append(name)
        return name

    def fresh(self, name: str, t: TensorType) -> str:
        empty = self.ns.bind(np.empty, "np_empty")
        self.lines.append(f"{name} = {empty}({t.shape!r}, {self.dtype(t)})")
        return name

    def pooled(self, name: str, t: TensorType) -> str:
        """A graph output's array: one of its pool's that the caller no longer
        holds (reference count), else a fresh one that replaces the pool's first."""
        pool = f"o{self.pool_count}"
        self.pool_count += 1
        self.arrays.append(_Pool(t))
        self.array_names.append(pool)
        refs = self.ns.bind(sys.getrefcount, "getrefcount")
        empty = self.ns.bind(np.empty, "np_empty")
        # nested: each later array is looked at only when the earlier one is held
        lines, pad = [f"{name} = {pool}[0]"], ""
        for k in range(1, POOL_SIZE):
            lines += [f"{pad}if {refs}({name}) != {FREE_REFCOUNT}:", f"{pad}    {name} = {pool}[{k}]"]
            pad += "    "
        lines += [f"{pad}if {refs}({name}) != {FREE_REFCOUNT}:  # every one still held",
                  f"{pad}    {name} = {pool}[0] = {empty}({t.shape!r}, {self.dtype(t)})"]
        out = lines
        self.lines.extend(out)
        return name

    def donated(self, v: Value) -> bool:
        """May ``v`` be written into a donated input (its array is then written
        only by the last node of its body)?"""
        return self.number[id(v)] in self.plan.donations

    def donor(self, v: Value) -> str | None:
        """The input array ``v`` may be written into (``plan.donations``), when
        the node making ``v`` can write there: it reads no view of that input,
        and when it reads the input itself it is elementwise (a fused body of
        elementwise nodes) over more than one element, so writing in place is
        position by position (NumPy runs a one-element in-place op as a
        reduction, whose NaN choice can differ)."""
        source = self.plan.donations.get(self.number[id(v)])
        if source is None:
            return None
        node, src = v.producer, self.graph.inputs[source]
        for u in node.inputs:
            if u is not src and self.root(u) == source:
                return None
        if any(u is src for u in node.inputs):
            ops = [n.op for n in node.body.nodes] if node.body is not None else [node.op]
            if v.type.size <= 1 or not all(lookup(op) is not None and lookup(op).has("elementwise")
                                           for op in ops):
                return None
            # the node writing the output (a body's last) must not read the input
            # again after writing: ``where``'s bit select reads its third argument
            # after its first write, and sees the donated array under another name
            last = node.body.nodes[-1] if node.body is not None else node
            if out_lowering(last) in REREADS_ARGUMENTS:
                return None
        return self.expr[id(src)]

    def args(self, node: Node) -> list[str]:
        return [self.expr[id(v)] for v in node.inputs]

    def comment(self, node: Node) -> None:
        at = self.ir_sites.get(id(node))
        if at is None:
            return
        first = self.ir_lines[at]
        self.lines.append("# " + first)
        if node.body is not None:  # the body's lines, up to the closing brace
            indent = len(first) - len(first.lstrip())
            for line in self.ir_lines[at + 1:]:
                self.lines.append("# " + line)
                if line.strip() == "}" and len(line) - len(line.lstrip()) == indent:
                    break

    # -- values ----------------------------------------------------------------
    def set(self, v: Value, expr: str, owned: bool) -> None:
        self.expr[id(v)] = expr
        self.owned[id(v)] = owned
        self.by_expr.setdefault(expr, []).append(id(v))

    def destination(self, v: Value) -> tuple[str, bool]:
        """Where ``v`` is written: its plan buffer; for a graph output the input
        array donated to it when it has the standard strides (else a fresh
        array), or an array of its pool.  Returns (expression, owned)."""
        number = self.number[id(v)]
        index = self.plan.assignment.get(number)
        donor = self.donor(v) if index is None else None
        if index is not None:
            order = self.prefer.get(id(v))
            expr, owned = self.window(index, v.type, order), False
            if order is not None:
                return expr, owned   # not the strides np.empty gives (no self.standard)
        elif donor is not None:
            expr, owned = f"v{number}", True
            empty = self.ns.bind(np.empty, "np_empty")
            self.lines += [f"if {donor}.strides == {_standard_strides(v.type)!r} and "
                           f"{donor}.flags.writeable:  # donated",
                           f"    {expr} = {donor}",
                           "else:",
                           f"    {expr} = {empty}({v.type.shape!r}, {self.dtype(v.type)})"]
            self.donated_exprs[expr] = donor
        else:
            expr, owned = self.pooled(f"v{number}", v.type), True
        self.standard.add(expr)
        return expr, owned

    def kernel_expr(self, node: Node, args: list[str]) -> str:
        """``reference([args], attrs)``: the call of ``node``'s reference kernel."""
        schema = get_schema(node.op)
        kernel = self.ns.bind(schema.reference, f"k_{node.op}")
        # nodes with equal attrs share one dict; repr keeps -0.0 and 0.0 apart
        key = ("attrs", node.op, tuple((k, type(a).__name__, repr(a)) for k, a in node.attrs.items()))
        attrs = self.ns.bind(dict(node.attrs), f"attrs_{node.op}", key=key)
        return f"{kernel}([{', '.join(args)}], {attrs})"

    def kernel_call(self, node: Node, args: list[str], names: list[str]) -> None:
        """``names = reference(args, attrs)``: what the interpreter does, 0-d
        results made arrays of the node's dtype."""
        call = self.kernel_expr(node, args)
        if not names:
            self.lines.append(call)
        elif len(names) == 1:
            self.lines.append(f"{names[0]} = {call}[0]")
        else:
            self.lines.append(f"{', '.join(names)} = {call}")
        asarray = self.ns.bind(np.asarray, "np_asarray")
        for name, v in zip(names, node.outputs):
            if v.type.shape == ():
                self.lines.append(f"{name} = {asarray}({name}, {self.dtype(v.type)})")

    # -- nodes -----------------------------------------------------------------
    def node(self, node: Node) -> None:
        self.comment(node)
        if id(node) in self.done:
            self.lines.append("# (computed above, with its cross_entropy/softmax pair)")
            return
        pair = self.softmax_xent.get(id(node))
        if pair is not None:
            self.softmax_cross_entropy(*pair)
            return
        if node.op == "constant" or node.const is not None:
            payload = np.array(node.const, dtype=node.outputs[0].type.dtype.np, copy=True)
            payload.setflags(write=False)
            name = self.ns.bind(payload, f"c{self.number[id(node.outputs[0])]}")
            if payload.strides == _standard_strides(node.outputs[0].type):
                self.standard.add(name)
            self.set(node.outputs[0], name, owned=False)
        elif self.number[id(node.outputs[0])] in self.plan.views:
            if node.op == "transpose":
                self.transpose_view(node)
            elif node.op == "relayout":
                self.relayout_view(node)
            else:
                self.layout_view(node)
        elif node.body is not None:
            if _simple_body(node.body):
                self.fused(node)
            else:
                self.fused_as_subgraph(node)
        elif node.op == "scatter" and self.scatter_in_place(node):
            pass
        else:
            emit = out_lowering(node)
            if emit is not None:
                out, owned = self.destination(node.outputs[0])
                self.lines.extend(emit(node, self.args(node), out, self.ns))
                self.set(node.outputs[0], out, owned)
            else:
                names = [f"v{self.number[id(v)]}" for v in node.outputs]
                self.kernel_call(node, self.args(node), names)
                for name, v in zip(names, node.outputs):
                    self.set(v, name, owned=True)  # reference kernels return fresh arrays

    def scatter_in_place(self, node: Node) -> bool:
        """``scatter(x, positions, updates)`` written into ``x`` itself, when
        ``x`` is an array this run made (a kernel's fresh result) that nothing
        reads afterwards, no graph output is, and the other operands are not:
        a chain of item assignments (``out[i] = ...`` in a loop) then costs one
        copy and an in-place write per assignment, not a copy of the whole
        array per assignment.  Returns False (nothing emitted) otherwise."""
        x, idx, upd = node.inputs
        expr = self.expr[id(x)]
        if not self.owned[id(x)] or self.number[id(x)] in self.plan.views:
            return False
        root = self.root(x)
        if self.root(idx) == root or self.root(upd) == root or \
                self.expr[id(idx)] == expr or self.expr[id(upd)] == expr:
            return False
        here = self.position[id(node)]
        for other in self.by_expr[expr]:
            if self.last_read.get(other, -1) > here or other in self.output_ids:
                return False
        if self.last_root_read.get(root, -1) > here:
            return False
        put = self.ns.bind(scatter_into, "scatter_into")
        const = idx.producer.const if idx.producer is not None else None
        if const is not None and const.size and const.min() >= 0 and const.max() < x.type.size:
            put = self.ns.bind(np.put, "np_put")  # constant positions, checked here
        self.lines.append(f"{put}({expr}, {self.expr[id(idx)]}, {self.expr[id(upd)]})")
        self.set(node.outputs[0], expr, owned=True)
        return True

    def softmax_cross_entropy(self, ce: Node, sm: Node) -> None:
        """``cross_entropy(x, y)`` and ``softmax(x, axis=1)`` of one ``x``, both
        computed where the first of them stands, by one call sharing the shift
        and the exponentials (``ops.nn.softmax_cross_entropy``, bit for bit the
        two reference kernels).  Both results are fresh arrays."""
        shared = self.ns.bind(softmax_cross_entropy, "k_softmax_cross_entropy")
        loss, probs = (f"v{self.number[id(n.outputs[0])]}" for n in (ce, sm))
        x, y = self.args(ce)
        self.lines.append(f"{loss}, {probs} = {shared}({x}, {y}, {ce.attrs['reduction']!r})")
        self.set(ce.outputs[0], loss, owned=True)
        self.set(sm.outputs[0], probs, owned=True)
        self.done.update((id(ce), id(sm)))

    def transpose_view(self, node: Node) -> None:
        """A transpose the plan made a view: ``x.T`` / ``x.transpose(perm)``.

        The view has the strides of the reference kernel's result when ``x``
        has the strides ``np.empty`` gives its type (see ``_transpose_kernel``
        in ops/shape.py): every kernel reading it then does what it does in the
        interpreter.  Statically known for plan buffers and fresh arrays; for
        inputs and kernel results the code checks ``x.strides`` and else calls
        the kernel.  The kernel (a fresh copy) is also called for a view of a
        view, and when a reader of the view reads its memory through another
        operand too (NumPy turns ``x @ x.T`` into syrk, which rounds unlike
        the gemm the interpreter's copy gets)."""
        out, src = node.outputs[0], node.inputs[0]
        name = f"v{self.number[id(out)]}"
        arg = self.expr[id(src)]
        if self.number[id(src)] in self.plan.views or self.shares_memory_in_a_reader(out):
            self.kernel_call(node, [arg], [name])
            self.set(out, name, owned=True)
            return
        perm = tuple(node.attrs["perm"])
        view = f"{arg}.T" if perm == (1, 0) else f"{arg}.transpose({perm!r})"
        if arg in self.standard:
            self.lines.append(f"{name} = {view}")
        else:
            strides = _standard_strides(src.type)
            self.lines.append(f"{name} = {view} if {arg}.strides == {strides!r} else "
                              f"{self.kernel_expr(node, [arg])}[0]")
        self.set(out, name, owned=False)

    def copied_for_a_product(self, node: Node, name: str, arg: str) -> bool:
        """Give a view node's result the kernel's copy when a matrix product
        reading it reads the same memory through another operand too (NumPy
        would pick another BLAS routine for the aliased operands)."""
        out = node.outputs[0]
        if not self.shares_memory_in_a_reader(out, products_only=True):
            return False
        self.kernel_call(node, [arg], [name])
        self.set(out, name, owned=True)
        return True

    def relayout_view(self, node: Node) -> None:
        """A relayout the plan made a view: its input itself when that already has
        the strides asked for (an elementwise result written in them, see
        ``prefer``), else the kernel's copy."""
        out, src = node.outputs[0], node.inputs[0]
        name, arg = f"v{self.number[id(out)]}", self.expr[id(src)]
        if self.copied_for_a_product(node, name, arg):
            return
        strides = tuple(s * src.type.dtype.itemsize for s in node.attrs["strides"])
        self.lines.append(f"{name} = {arg} if {arg}.strides == {strides!r} else "
                          f"{self.kernel_expr(node, [arg])}[0]")
        self.set(out, name, owned=False)

    def layout_view(self, node: Node) -> None:
        """A squeeze, expand_dims, reshape or C-ordered slice the plan made a
        view: ``x.reshape(shape)`` / ``x[index]``.  Over an ``x`` with the
        strides ``np.empty`` gives its type the view has the strides of the
        reference kernel's C-ordered copy (``memplan.is_view_node``), so every
        kernel reading it does what it does on the copy; known for plan
        buffers, fresh arrays and such views, checked at run time otherwise
        (else the kernel copies).  As for transposes, a reader that reads the
        same memory through another operand gets the kernel's copy."""
        out, src = node.outputs[0], node.inputs[0]
        name, arg = f"v{self.number[id(out)]}", self.expr[id(src)]
        if self.copied_for_a_product(node, name, arg):
            return
        if node.op == "slice":
            view = f"{arg}[{slice_index(node, self.ns)}]"
        else:
            view = f"{arg}.reshape({out.type.shape!r})"
        if arg in self.standard:
            self.lines.append(f"{name} = {view}")
        else:  # checked once per run and array (a loop's a[i] reads one input many times)
            strides = _standard_strides(src.type)
            check = self.stride_checks.get((arg, strides))
            if check is None:
                check = self.stride_checks[(arg, strides)] = f"std{len(self.stride_checks)}"
                self.lines.append(f"{check} = {arg}.strides == {strides!r}")
            self.lines.append(f"{name} = {view} if {check} else "
                              f"{self.kernel_expr(node, [arg])}[0]")
        self.standard.add(name)   # the view, or the kernel's C-ordered copy
        self.set(out, name, owned=False)

    def root(self, v: Value) -> int:
        """The number of the value whose memory ``v`` shows (itself unless a view)."""
        number = self.number[id(v)]
        while number in self.plan.views:
            number = self.plan.views[number]
        return number

    def shares_memory_in_a_reader(self, view: Value, products_only: bool = False) -> bool:
        """Does a reader of ``view`` read its memory through another operand too?
        With ``products_only``, only readers that multiply matrices count (a
        matmul, or a fused region holding one): BLAS is where NumPy picks
        another algorithm for operands sharing memory (syrk for ``x @ x.T``);
        elementwise kernels compute each element alike whatever aliases."""
        root = self.root(view)
        for reader in self.users.get(id(view), ()):
            if products_only and not _multiplies_matrices(reader):
                continue
            if any(u is not view and self.root(u) == root for u in reader.inputs):
                return True
        return False

    def fused(self, node: Node) -> None:
        """A body of one output made by its last node, as in-place NumPy calls;
        a large elementwise body also as chunks run on the pool's threads
        (``fused_parallel``)."""
        split = parallel_split(node)
        if split is not None:
            self.fused_parallel(node, split)
            return
        result = node.outputs[0]
        expr: dict[int, str] = {id(bv): self.expr[id(ov)] for bv, ov in zip(node.body.inputs, node.inputs)}
        dest: list[Any] = [None, False]   # [expression, owned]

        def dest_expr() -> str:
            if dest[0] is None:
                dest[0], dest[1] = self.destination(result)
            return dest[0]
        target, from_kernel = self.body_lines(node, expr, dest_expr, self.scratch_names,
                                              self.new_scratch, self.donated(result))
        self.set(result, target, owned=True if from_kernel else dest[1])

    def body_lines(self, node: Node, expr: dict[int, str], dest_expr: Callable[[], str],
                   scratch_names: list[tuple[TensorType, str]],
                   new_scratch: Callable[[TensorType], str],
                   donated: bool = False) -> tuple[str, bool]:
        """Append the lines computing ``node``'s body (one output, made by its
        last node) to ``self.lines``.  ``expr`` maps the body's inputs to
        expressions; ``dest_expr()`` names the node's output array (called the
        first time something is written there); intermediates go there or
        into scratch arrays, reused from ``scratch_names`` when free, else made
        by ``new_scratch``.  Returns the result's expression and whether it is
        a kernel's fresh result rather than the output array."""
        body = node.body
        result = node.outputs[0]
        expr = dict(expr)
        last_use: dict[int, int] = {}
        for i, n in enumerate(body.nodes):
            for v in n.inputs:
                last_use[id(v)] = i
        holder: dict[str, int | None] = {}   # array name -> id of the body value in it
        dest: list[str | None] = [None]

        def out_array() -> str:
            if dest[0] is None:
                dest[0] = dest_expr()
                holder[dest[0]] = None
                if donated:
                    # the array may be the donated input, which this body may still
                    # read (elementwise, see donor()): only the last node writes it,
                    # so the caller's array never holds a partial result
                    holder[dest[0]] = -1
            return dest[0]

        def place(v: Value) -> str:
            if v.type == result.type and result.type.size > 1:
                name = out_array()
                if holder[name] is None:
                    holder[name] = id(v)
                    return name
            for t, name in scratch_names:
                if t == v.type and holder.get(name) is None:
                    holder[name] = id(v)
                    return name
            name = new_scratch(v.type)
            holder[name] = id(v)
            return name

        last = len(body.nodes) - 1
        target, from_kernel = "", False
        # a region of ops of several error states (operator_fusion): each run of
        # ops of one state in it (the node itself carries one shared by all)
        state, start = None, len(self.lines)
        for i, n in enumerate(body.nodes):
            own = n.errstate if node.errstate is None else None
            if own != state:
                self.errstate_block(state, start)
                state, start = own, len(self.lines)
            out_v = n.outputs[0]
            args = [expr[id(v)] for v in n.inputs]
            dying = [expr[id(v)] for v in n.inputs
                     if last_use[id(v)] == i and holder.get(expr[id(v)]) == id(v)]
            # Writing the output over a same-shaped input that dies here is the
            # in-place elementwise case, except for one element: NumPy runs a
            # 1-element ``add(a, b, out=a)`` as a reduction, which can return b's
            # NaN where the reference returns a's, so tiny values never alias.
            in_place = out_v.type.size > 1
            if in_place:
                for name in dying:
                    holder[name] = None
            emit = out_lowering(n)
            if emit is None:
                name = f"t{next(self.temps)}"
                self.kernel_call(n, args, [name])
                expr[id(out_v)] = name
                if i == last:
                    target, from_kernel = name, True
            else:
                out = out_array() if i == last else place(out_v)
                self.lines.extend(emit(n, args, out, self.ns))
                expr[id(out_v)] = out
                if i == last:
                    target = out
                elif id(out_v) not in last_use:  # computed but never read
                    holder[out] = None
            for name in dying:
                if holder.get(name) is not None and holder[name] != id(out_v):
                    holder[name] = None
        self.errstate_block(state, start)
        return target, from_kernel

    def fused_parallel(self, node: Node, split: Split) -> None:
        """A large elementwise body (``chunks.parallel_split``): its output array is
        cut into ``split.chunks`` row blocks along the collapsed leading axes,
        and a generated chunk function runs the body's ufuncs on one block
        (the operands' matching rows, broadcast operands whole) into that
        block of the output and the thread's own chunk-sized scratch arrays.
        ``pool.run`` calls it for every block on this thread and the pool's
        workers.  The ufuncs, their operand dtypes and each element's inputs
        are the ones the unchunked code has, so every element gets the same
        bits.  With one thread (``region_threads()``: ``pool.size()``, or 1 while
        NumPy would raise on a floating-point error or show each warning) the
        unchunked code runs."""
        result = node.outputs[0]
        number = self.number[id(result)]
        dest, owned = self.destination(result)
        # the chunk function: blk<n>(i, x0, x1, ..., o), a def of the generated module
        # (the name is reserved in the namespace; the def replaces the placeholder)
        name = self.ns.bind(object(), f"blk{number}", key=("chunk", number))
        params = [f"x{j}" for j in range(len(node.inputs))]
        scratch: list[tuple[TensorType, str]] = []

        def chunk_scratch(t: TensorType) -> str:
            s = f"s{len(scratch)}"
            scratch.append((t, s))
            return s
        saved, self.lines = self.lines, []
        expr = {id(bv): p for bv, p in zip(node.body.inputs, params)}
        self.body_lines(node, expr, lambda: "o", scratch, chunk_scratch, self.donated(result))
        body, self.lines = self.lines, saved
        rows, last_rows = split.rows_per_chunk, split.rows_per_chunk + split.rows % split.rows_per_chunk
        head = [f"def {name}(i, {', '.join(params)}, o):",
                f"{_INDENT}a = i * {rows}",
                f"{_INDENT}b = a + {rows} if i < {split.chunks - 1} else {split.rows}"]
        head += [f"{_INDENT}{p} = {p}[a:b]" for p, full in zip(params, split.sliced) if full]
        head.append(f"{_INDENT}o = o[a:b]")
        if scratch:
            tls = self.ns.bind(threading.local(), f"tls_{name}")
            shapes = [(last_rows,) + split.row_shape for _ in scratch]
            alloc = self.ns.bind(chunk_allocator([(t.dtype.np, s) for (t, _), s in zip(scratch, shapes)]),
                                 f"alloc_{name}")
            names = _targets([s for _, s in scratch])
            head += [f"{_INDENT}try:",
                     f"{_INDENT * 2}{names} = {tls}.arrays",
                     f"{_INDENT}except AttributeError:  # the first chunk on this thread",
                     f"{_INDENT * 2}{names} = {tls}.arrays = {alloc}()"]
            if split.rows % split.rows_per_chunk:
                head += [f"{_INDENT}{s} = {s}[:b - a]" for _, s in scratch]
        self.defs.append("\n".join(head + [_INDENT + line for line in body]) + "\n")
        # the call: operands viewed with the leading axes collapsed
        states = node.body.errstates()
        if node.errstate is None and states not in ((), (None,)):
            # ops of several states (operator_fusion): unchunked when one of them asks
            size = self.ns.bind(_region_threads_for(states), "par_size_states",
                                key=("par_size", states))
        else:
            size = self.ns.bind(region_threads, "par_size")
        run = self.ns.bind(pool.run, "par_run")
        args = []
        for v, full in zip(node.inputs, split.sliced):
            shape = split.operand_shape(v.type.shape, full)
            e = self.expr[id(v)]
            args.append(e if shape == v.type.shape else f"{e}.reshape({shape!r})")
        out_shape = (split.rows,) + split.row_shape
        args.append(dest if out_shape == result.type.shape else f"{dest}.reshape({out_shape!r})")
        self.lines.append(f"if {size}() > 1:")
        self.lines.append(f"{_INDENT}{run}({name}, ({', '.join(args)},), {split.chunks})")
        self.lines.append("else:")
        saved, self.lines = self.lines, []
        expr = {id(bv): self.expr[id(ov)] for bv, ov in zip(node.body.inputs, node.inputs)}
        self.body_lines(node, expr, lambda: dest, self.scratch_names, self.new_scratch)
        inline, self.lines = self.lines, saved
        self.lines.extend(_INDENT + line for line in inline)
        self.set(result, dest, owned)

    def fused_as_subgraph(self, node: Node) -> None:
        """Any other body is compiled the same way, as an executable of its own
        (its outputs are fresh arrays: it copies pass-throughs and constants)."""
        sub = build_executable(node.body, plan_memory(node.body))
        number = self.number[id(node.outputs[0])] if node.outputs else len(self.number)
        run_body = self.ns.bind(sub.run, f"body{number}")
        names = [f"v{self.number[id(v)]}" for v in node.outputs]
        call = f"{run_body}([{', '.join(self.args(node))}])"
        self.lines.append(f"{_targets(names)} = {call}" if names else call)
        for name, v in zip(names, node.outputs):
            self.set(v, name, owned=True)

    def nodes_by_errstate(self, nodes: Sequence[Node]) -> None:
        """The lines of ``nodes``; each run of consecutive nodes with one NumPy
        error state of their own (``Node.errstate``, a ``with np.errstate``
        block of the traced code) in that state set over the caller's
        (``errstate_block``) for their ufuncs and the pool's threads, which run
        in a copy of this context.  Constants compute nothing and never end a
        run."""
        state, start = None, len(self.lines)
        for node in nodes:
            if node.op != "constant" and node.errstate != state:
                self.errstate_block(state, start)
                state, start = node.errstate, len(self.lines)
            self.node(node)
        self.errstate_block(state, start)

    def errstate_block(self, state: tuple | None, start: int) -> None:
        """Run ``self.lines[start:]`` in NumPy's error state ``state`` set over
        the caller's: ``fp_errors.StateSwitch`` sets it and a ``finally`` puts
        the caller's back (what ``with np.errstate(...)`` does, 1 us cheaper),
        or ``with np.errstate(...):`` where NumPy's state is not reachable."""
        inner = self.lines[start:]
        if state is None or all(line.startswith("#") for line in inner):
            return
        indented = [_INDENT + line for line in inner]
        if reset_state is None:
            errstate = self.ns.bind(np.errstate, "np_errstate")
            kwargs = ", ".join(f"{category}={mode!r}" for category, mode in state)
            self.lines[start:] = [f"with {errstate}({kwargs}):"] + indented
            return
        switch = self.ns.bind(StateSwitch(state), "errstate", key=("errstate", state))
        reset = self.ns.bind(reset_state, "errstate_reset")
        token = f"es{next(self.temps)}"
        self.lines[start:] = ([f"{token} = {switch}()", "try:"] + indented
                              + ["finally:", f"{_INDENT}{reset}({token})"])

    # -- the function ------------------------------------------------------------
    def generate(self) -> str:
        graph = self.graph
        ins = [f"v{self.number[id(v)]}" for v in graph.inputs]
        for v, name in zip(graph.inputs, ins):
            self.set(v, name, owned=False)  # the caller's arrays
        self.nodes_by_errstate(graph.nodes)
        copy = self.ns.bind(np.array, "np_array")
        results, seen = [], set()
        for v in graph.outputs:
            expr = self.expr[id(v)]
            # a value returned twice (CSE can merge outputs) is copied the second
            # time, so no two outputs of one run share memory
            fresh = self.owned[id(v)] and id(v) not in seen
            results.append(expr if fresh else f"{copy}({expr})")
            seen.add(id(v))

        head = ["def run(inputs):"]
        arity = self.ns.bind(_arity_error(graph), "bad_arity")
        if ins:
            head += [f"{_INDENT}try:",
                     f"{_INDENT * 2}{_targets(ins)} = inputs",
                     f"{_INDENT}except (TypeError, ValueError):",
                     f"{_INDENT * 2}raise {arity}(inputs) from None"]
        else:
            head += [f"{_INDENT}if len(inputs):", f"{_INDENT * 2}raise {arity}(inputs)"]
        pinned = pinned_inputs(graph)
        marked = graph.meta.get(MARKED_GRAPH)
        if marked is not None:   # np.dot's operands: the marks layout_assignment removed
            pinned = sorted(set(pinned) | set(pinned_inputs(marked)))
        if pinned:
            # the relayouts were made for these input layouts (layout_assignment);
            # other layouts run an executable compiled for them (_LayoutVariants)
            variants = self.variants or _LayoutVariants(graph, pinned)
            other = self.ns.bind(variants, "run_other_layout")
            checks = " or ".join(
                f"{ins[i]}.strides != "
                f"{self.input_strides.get(i, _standard_strides(graph.inputs[i].type))!r}"
                for i in pinned)
            head += [f"{_INDENT}if {checks}:  # NumPy's layouts differ: another executable's",
                     f"{_INDENT * 2}return {other}(inputs)"]
        if self.arrays:
            tls = self.ns.bind(threading.local(), "tls")
            alloc = self.ns.bind(_allocator(self.plan, self.arrays), "alloc")
            names = _targets(self.array_names)
            head += [f"{_INDENT}try:",
                     f"{_INDENT * 2}{names} = {tls}.arrays",
                     f"{_INDENT}except AttributeError:  # the first run on this thread",
                     f"{_INDENT * 2}{names} = {tls}.arrays = {alloc}()"]
        body = [_INDENT + line for line in self.lines]
        tail = [f"{_INDENT}return [{', '.join(results)}]"]
        return "".join(d + "\n" for d in self.defs) + "\n".join(head + body + tail) + "\n"


def _dense_order(t: TensorType, strides: Sequence[int]) -> tuple[int, ...] | None:
    """The axis order (outermost first) whose C-ordered array, transposed back,
    has exactly the element ``strides`` of a relayout to type ``t``; None when
    no such order gives them (gaps, negative or zero strides)."""
    if t.size <= 1 or len(strides) != t.rank:
        return None
    order = tuple(sorted(range(t.rank), key=lambda a: (-strides[a], a)))
    dense = standard_strides([t.shape[a] for a in order], 1)
    made = [0] * t.rank
    for a, s in zip(order, dense):
        made[a] = s
    return order if tuple(made) == tuple(strides) and order != tuple(range(t.rank)) else None


def _writes_elementwise(node: Node) -> bool:
    """Does the codegen write ``node``'s one result with elementwise ufuncs into
    the array ``destination`` gives it (so that any strides of that array give
    the same values): an op with an ``out=`` lowering and the elementwise trait,
    or a fused body of such nodes that runs unchunked?"""
    if len(node.outputs) != 1 or node.const is not None or node.op == "constant":
        return False
    if node.body is not None:
        return (_simple_body(node.body) and parallel_split(node) is None
                and all(elementwise_out(n) for n in node.body.nodes))
    return elementwise_out(node)


def _softmax_xent_pairs(graph: Graph) -> dict[int, tuple[Node, Node]]:
    """Each ``cross_entropy`` whose logits also feed a ``softmax`` along axis 1
    (autograd's cross-entropy gradient reads one), both with their reference
    kernels registered, paired with it: id of the earlier of the two ->
    (cross_entropy, softmax)."""
    ce_schema, sm_schema = lookup("cross_entropy"), lookup("softmax")
    if (ce_schema is None or sm_schema is None or ce_schema.reference is not _cross_entropy_kernel
            or sm_schema.reference is not _softmax_kernel):
        return {}
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    softmaxes: dict[int, Node] = {}
    for n in graph.nodes:
        if (n.op == "softmax" and n.body is None and n.const is None
                and n.attrs.get("axis") == 1 and n.inputs[0].type.rank == 2):
            softmaxes.setdefault(id(n.inputs[0]), n)
    pairs: dict[int, tuple[Node, Node]] = {}
    for n in graph.nodes:
        if n.op != "cross_entropy" or n.body is not None or n.const is not None:
            continue
        sm = softmaxes.pop(id(n.inputs[0]), None)
        if sm is not None and sm.device == n.device:
            first = n if position[id(n)] < position[id(sm)] else sm
            pairs[id(first)] = (n, sm)
    return pairs


class _LayoutVariants:
    """Executables of one graph for the input layouts its entry check refuses
    (``pinned_inputs`` with other strides than the graph's relayouts were made
    for: a Fortran-ordered array, a transposed or sliced view as an argument).

    Each layout seen gets its own executable, compiled once: the graph without
    its relayouts and with its fused bodies inlined, ``layout_assignment`` again
    for the arrays' own strides, ``operator_fusion``, a memory plan (no input
    donation: the caller copies updates back) and the code.  Past ``MAX_VARIANTS`` layouts the reference interpreter runs the
    graph (it follows NumPy's layouts for any arrays, slower)."""

    MAX_VARIANTS = 4

    def __init__(self, graph: Graph, pinned: Sequence[int]):
        self.graph = graph
        self.pinned = tuple(pinned)
        self.executables: dict[tuple, CpuExecutable] = {}
        self.lock = threading.Lock()

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        key = tuple(inputs[i].strides for i in self.pinned)
        exe = self.executables.get(key)
        if exe is None:
            exe = self._compile(inputs, key)
            if exe is None:
                _log.debug("cpu executable: more than %d input layouts; running the "
                           "reference interpreter, which follows NumPy's layouts",
                           self.MAX_VARIANTS)
                graph = self.graph.meta.get(MARKED_GRAPH, self.graph)
                return [np.array(r, copy=True) for r in evaluate(graph, list(inputs))]
        return exe.run(inputs)

    def _compile(self, inputs: Sequence[np.ndarray], key: tuple) -> CpuExecutable | None:
        with self.lock:
            exe = self.executables.get(key)
            if exe is not None or len(self.executables) >= self.MAX_VARIANTS:
                return exe
            # the nodes before fusion and layouts (a fused body's intermediates have
            # layouts of their own), laid out for these arrays, fused again; np.dot's
            # operand marks, which the first layout_assignment removed, from its copy
            marked = self.graph.meta.get(MARKED_GRAPH)
            graph = clone_graph(marked) if marked is not None else \
                without_relayouts(without_fused(clone_graph(self.graph)))
            arrays = [np.asarray(a) for a in inputs]
            graph = OperatorFusion().run(LayoutAssignment(insert=True, inputs=arrays).run(graph))
            # every input's strides: the new executable checks whatever inputs it pins
            # against the layouts it was made for, so it never hands these back here
            strides = {i: a.strides for i, a in enumerate(arrays)}
            exe = build_executable(graph, plan_memory(graph), input_strides=strides,
                                   variants=self)
            _log.debug("cpu executable: compiled for the input layouts %s", key)
            self.executables[key] = exe
            return exe


def _standard_strides(t: TensorType) -> tuple[int, ...]:
    """The strides ``np.empty`` gives an array of type ``t`` (computed, so a
    large type costs no allocation; an empty one asks NumPy, whose choice
    for zero-length axes has changed between versions)."""
    if t.size == 0:
        return np.empty(t.shape, t.dtype.np).strides
    return standard_strides(t.shape, t.dtype.itemsize)


def _targets(names: Sequence[str]) -> str:
    """An unpacking target list: ``a, b`` (``a,`` for one name)."""
    return names[0] + "," if len(names) == 1 else ", ".join(names)


def _arity_error(graph: Graph) -> Callable[[Any], FrameValueError]:
    expected = ", ".join(str(v.type) for v in graph.inputs) or "none"

    def bad_arity(inputs: Any) -> FrameValueError:
        try:
            got = f"{len(inputs)}"
        except TypeError:
            got = f"a {type(inputs).__name__}"
        return FrameValueError(f"cpu executable: expected {len(graph.inputs)} input array(s) "
                               f"({expected}), got {got}")
    return bad_arity


def _allocator(plan: MemoryPlan, arrays: list[_Window | _Scratch | _Pool]) -> Callable[[], tuple]:
    """A function allocating one thread's arrays: each used plan buffer once,
    its windows, the scratch arrays and the output pools, in unpack order."""
    specs = list(arrays)

    def alloc() -> tuple[np.ndarray, ...]:
        raw: dict[int, np.ndarray] = {}
        out = []
        for spec in specs:
            if isinstance(spec, _Window):
                if spec.buffer not in raw:
                    buf = plan.buffers[spec.buffer]
                    raw[spec.buffer] = np.empty(buf.size, buf.dtype.np)
                window = raw[spec.buffer][:spec.type.size]
                if spec.order is None:
                    out.append(window.reshape(spec.type.shape))
                else:
                    shape = spec.type.shape
                    out.append(window.reshape([shape[a] for a in spec.order])
                               .transpose(np.argsort(spec.order)))
            elif isinstance(spec, _Pool):
                out.append([np.empty(spec.type.shape, spec.type.dtype.np)
                            for _ in range(POOL_SIZE)])
            else:
                out.append(np.empty(spec.type.shape, spec.type.dtype.np))
        return tuple(out)
    return alloc


def build_executable(graph: Graph, plan: MemoryPlan, *,
                     input_strides: dict[int, tuple[int, ...]] | None = None,
                     variants: _LayoutVariants | None = None) -> CpuExecutable:
    """Generate, compile and wrap the function for ``graph`` (planned by ``plan``).
    ``input_strides``: the strides (bytes) of the inputs whose layout the graph's
    relayouts were made for, when not C order (a ``_LayoutVariants`` executable)."""
    check_plan(graph, plan)
    gen = _Codegen(graph, plan, input_strides, variants)
    source = gen.generate()
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    filename = f"<frame cpu executable {next(_sources)} {digest}>"
    # tracebacks through the generated function show its source lines
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(gen.ns.values)
    exec(compile(source, filename, "exec"), namespace)
    exe = CpuExecutable(namespace["run"], source, [v.type for v in graph.inputs],
                        [v.type for v in graph.outputs], plan)
    weakref.finalize(exe, linecache.cache.pop, filename, None)  # no source left behind
    return exe
