"""plan_memory: buffer lifetimes and reuse for a graph's intermediates.

The memory_planning pass computes a MemoryPlan and the cpu executable
allocates its buffers once, then writes every intermediate into its buffer
(``out=``) on each run.

What is planned: the outputs of the top-level nodes that are neither graph
outputs (they leave the executable, so they cannot be overwritten by the next
run) nor constants (the payload is the storage).  Graph inputs belong to the
caller.  A fused node's body is one kernel: its inner values are not planned.

Values are keyed by their definition number, the ``%N`` of ``dump_text``
(graph inputs first, then node outputs in node order; ``graph.values()``
gives the same order), so a plan stays valid for a clone of the graph.

Views.  A node whose output is not a graph output and that NumPy can give
as a view of its input gets no buffer: the executable reads it as a view
(``is_view_node``): a ``transpose`` (``np.transpose(x, perm)``, no copy), a
``squeeze``, ``expand_dims`` or ``reshape`` (``x.reshape(shape)``), and a
``slice`` whose view of a C-ordered input is itself C-ordered (``x[2:5]``,
``x[i:i+1, :]``: restricted leading axes, full trailing ones), so that it has
exactly the strides of the reference kernel's C-ordered copy.  Empty results
are never views.  ``views`` maps the view's value number
to the number of the value it views (the transpose's input, itself possibly a
view).  A view is not planned (no buffer, not in ``assignment``, ``lifetimes``
or ``types``); instead the value it views *through any chain of views* (its
root) must stay intact while the view is read, so the root's lifetime ends no
earlier than the last node that reads the view.  Roots that are not planned
(graph inputs, graph outputs, constants) need nothing: they are never
overwritten during a run.  (A backend may still copy a planned view; it then
holds a fresh array of its own and the longer lifetime is merely cautious.)

Donations.  ``plan_memory(graph, donate)`` takes ``(output index, input
index)`` pairs (``CompileOptions.donate``: the caller gives up the input's
contents, which it would overwrite with that output).  A pair is kept in
``donations`` (output value number -> input value number) when the output
may be written into the input's memory without any reader seeing the
difference: both have the same type; the output is made by a node (not an
input or a constant) and listed once among the graph outputs; the input is no
graph output, donated once, and neither it nor any view of it is read after
the node making the output (that node itself may read it: whether it can
write in place over its own operand is the backend's call).  Other pairs are
dropped: donation is a permission.

Lifetimes are node indexes: a value lives from the node that defines it to
the last node that reads it, or that reads a view of it (its own node when
nobody reads either).

Reuse rule (greedy, in node order, deterministic):

* A buffer is a flat array of one dtype.  A value may use a buffer of its own
  dtype only; it uses the first ``size`` elements, reshaped to its shape (that
  reshaped slice is fixed for the plan's life, so an executable makes it once).
* A buffer becomes free only after the node that last reads its value (or a
  view of it) has completed, so an output never shares a buffer with an input
  of the same node (no in-place aliasing), nor with another output of the
  same node, nor with a value some live view still shows.
* A value takes the smallest free buffer of its dtype that is large enough
  (lowest index on ties); if none is, the largest free buffer of its dtype
  grows to fit it; if there is no free buffer of its dtype, a new buffer is
  made.  A buffer's size is the largest value it ever holds.

So ``peak_bytes`` (the sum of the buffers, all allocated for the whole run)
is never more than ``naive_bytes`` (one buffer per planned value), and never
less than ``max_live_bytes`` (the most bytes alive after any single node).
Views weigh nothing in any of the three.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, NamedTuple, Sequence

from ..dtypes import DType
from .graph import Graph, Node
from .types import TensorType

__all__ = ["plan_memory", "MemoryPlan", "Buffer", "Lifetime", "is_view_node", "standard_strides"]


class Buffer(NamedTuple):
    """One allocation: ``size`` elements of ``dtype``."""

    dtype: DType
    size: int

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize


class Lifetime(NamedTuple):
    """Node index that defines the value and the last node index that reads it
    (or reads a view of it)."""

    start: int
    end: int

    def overlaps(self, other: "Lifetime") -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class MemoryPlan:
    """The result of ``plan_memory`` (immutable: tuples and read-only mappings).

    ``assignment`` and ``lifetimes`` and ``types`` are keyed by the numbers of
    the planned values; ``views`` maps each view's number to the number of the
    value it views; ``donations`` each donated output's number to the number
    of the input whose memory it may take (see the module docstring).
    """

    buffers: tuple[Buffer, ...]
    assignment: Mapping[int, int]
    lifetimes: Mapping[int, Lifetime]
    types: Mapping[int, TensorType]
    peak_bytes: int
    naive_bytes: int
    max_live_bytes: int
    views: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))
    donations: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))

    def buffer_of(self, number: int) -> Buffer | None:
        """The buffer value ``%number`` lives in, or None if it is not planned."""
        index = self.assignment.get(number)
        return None if index is None else self.buffers[index]

    def __str__(self) -> str:
        lines = [f"memory plan: {len(self.buffers)} buffers for {len(self.assignment)} values, "
                 f"peak {self.peak_bytes} B, naive {self.naive_bytes} B, "
                 f"max live {self.max_live_bytes} B"]
        users: dict[int, list[int]] = {}
        for number, index in sorted(self.assignment.items()):
            users.setdefault(index, []).append(number)
        for index, buf in enumerate(self.buffers):
            held = ", ".join(f"%{n} {self.types[n]} [{self.lifetimes[n].start},{self.lifetimes[n].end}]"
                             for n in users.get(index, []))
            lines.append(f"  buf{index}: {buf.dtype.name} x {buf.size} ({buf.nbytes} B) <- {held}")
        for view, source in sorted(self.views.items()):
            lines.append(f"  view %{view} of %{source}")
        for out, source in sorted(self.donations.items()):
            lines.append(f"  %{out} may be written into input %{source}")
        return "\n".join(lines)


def plan_memory(graph: Graph, donate: Sequence[tuple[int, int]] = ()) -> MemoryPlan:
    """Lifetimes and buffer assignment for ``graph``'s intermediates (a verified
    graph), and the ``donate`` pairs that hold (module docstring).

        >>> from frame.ir import GraphBuilder
        >>> b = GraphBuilder(); x = b.input("float32", (4,))
        >>> y = b.op("exp", b.op("exp", b.op("exp", b.op("exp", x))))
        >>> plan = plan_memory(b.build(y))   # %1, %2, %3 planned; %3 reuses %1's buffer
        >>> len(plan.buffers), plan.peak_bytes, plan.naive_bytes
        (2, 32, 48)
    """
    number: dict[int, int] = {}
    for v in graph.inputs:
        number[id(v)] = len(number)
    for node in graph.nodes:
        for v in node.outputs:
            number[id(v)] = len(number)

    outputs = {id(v) for v in graph.outputs}
    views: dict[int, int] = {}
    lifetimes: dict[int, Lifetime] = {}
    types: dict[int, TensorType] = {}
    planned_by_node: list[list[int]] = []
    for pos, node in enumerate(graph.nodes):
        mine = []
        if _is_view(node, outputs):
            views[number[id(node.outputs[0])]] = number[id(node.inputs[0])]
        elif node.op != "constant" and node.const is None:
            for v in node.outputs:
                if id(v) not in outputs:
                    n = number[id(v)]
                    lifetimes[n] = Lifetime(pos, pos)
                    types[n] = v.type
                    mine.append(n)
        planned_by_node.append(mine)
    last_read: dict[int, int] = {}
    for pos, node in enumerate(graph.nodes):
        for v in node.inputs:
            last_read[number[id(v)]] = pos
    for n, life in lifetimes.items():
        lifetimes[n] = Lifetime(life.start, max(life.end, last_read.get(n, life.end)))
    for n in views:
        root = _root(views, n)
        if root in lifetimes and n in last_read and lifetimes[root].end < last_read[n]:
            lifetimes[root] = Lifetime(lifetimes[root].start, last_read[n])

    dying_after: dict[int, list[int]] = {}
    for n, life in lifetimes.items():
        dying_after.setdefault(life.end, []).append(n)

    sizes: list[int] = []          # current element count of each buffer
    dtypes: list[DType] = []
    free: dict[DType, list[int]] = {}   # dtype -> free buffer indexes
    assignment: dict[int, int] = {}
    live = max_live = 0
    for pos, mine in enumerate(planned_by_node):
        for n in mine:
            t = types[n]
            index = _take_free(free.get(t.dtype, []), sizes, t.size)
            if index is None:
                index = len(sizes)
                sizes.append(t.size)
                dtypes.append(t.dtype)
            else:
                sizes[index] = max(sizes[index], t.size)
            assignment[n] = index
            live += t.nbytes
        max_live = max(max_live, live)
        # Released only now, after node `pos` completed: never aliased with its outputs.
        for n in dying_after.get(pos, ()):
            free.setdefault(types[n].dtype, []).append(assignment[n])
            live -= types[n].nbytes

    buffers = tuple(Buffer(d, s) for d, s in zip(dtypes, sizes))
    donations = _donations(graph, donate, number, views, last_read) if donate else {}
    return MemoryPlan(
        buffers=buffers,
        assignment=MappingProxyType(assignment),
        lifetimes=MappingProxyType(lifetimes),
        types=MappingProxyType(types),
        peak_bytes=sum(b.nbytes for b in buffers),
        naive_bytes=sum(t.nbytes for t in types.values()),
        max_live_bytes=max_live,
        views=MappingProxyType(views),
        donations=MappingProxyType(donations),
    )


def _donations(graph: Graph, donate: Sequence[tuple[int, int]], number: dict[int, int],
               views: Mapping[int, int], last_read: Mapping[int, int]) -> dict[int, int]:
    """The ``donate`` pairs that hold (module docstring), as output value number
    -> input value number."""
    position = {id(v): pos for pos, node in enumerate(graph.nodes) for v in node.outputs}
    inputs = {id(v) for v in graph.inputs}
    listed: dict[int, int] = {}
    for v in graph.outputs:
        listed[id(v)] = listed.get(id(v), 0) + 1
    read_until = dict(last_read)   # an input is read until its views are
    for n in views:
        root = _root(views, n)
        if root < len(graph.inputs) and n in last_read:
            read_until[root] = max(read_until.get(root, -1), last_read[n])
    kept: dict[int, int] = {}
    used_inputs: set[int] = set()
    for out_index, in_index in donate:
        if not (0 <= out_index < len(graph.outputs) and 0 <= in_index < len(graph.inputs)):
            continue
        out, inp = graph.outputs[out_index], graph.inputs[in_index]
        node = out.producer
        if (id(out) in inputs or node is None or node.op == "constant" or node.const is not None
                or listed[id(out)] != 1 or id(inp) in listed or out.type != inp.type
                or in_index in used_inputs or number[id(out)] in kept):
            continue
        if read_until.get(in_index, -1) > position[id(out)]:
            continue   # read after the output is written
        kept[number[id(out)]] = in_index
        used_inputs.add(in_index)
    return kept


RESHAPING_VIEWS = frozenset({"squeeze", "expand_dims", "reshape"})


def is_view_node(node: Node) -> bool:
    """Can the executable read ``node``'s output as a view of its input (when
    it is not a graph output)?  A transpose; a relayout (ops/layout.py) of an
    array that already has its strides; a squeeze, expand_dims or reshape
    (of a C-ordered array: the same elements in the same order); a slice whose
    view of a C-ordered input has the C-ordered strides of its result.  Never
    an empty result (NumPy gives empty arrays odd strides)."""
    if node.body is not None or node.const is not None or len(node.outputs) != 1:
        return False
    if node.op == "transpose":
        return True
    out = node.outputs[0].type
    if out.size == 0:
        return False
    if node.op == "relayout":
        # the input itself when it has the strides asked for (the cpu executable
        # checks), else a copy: its memory must live as long as the result is read
        return True
    if node.op in RESHAPING_VIEWS:
        return True
    return node.op == "slice" and slice_is_c_ordered(node)


def standard_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """The strides ``np.empty(shape)`` gives an array of ``itemsize``-byte items."""
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def slice_is_c_ordered(node: Node) -> bool:
    """Is the view ``x[index]`` of a ``slice`` node, over a C-ordered ``x``,
    laid out exactly as its C-ordered copy (the same strides)?"""
    src, out = node.inputs[0].type, node.outputs[0].type
    item = src.dtype.itemsize
    parent = standard_strides(src.shape, item)
    view = tuple(s * k for s, k in zip(parent, node.attrs["steps"]))
    return view == standard_strides(out.shape, item)


def _is_view(node: Node, outputs: set[int]) -> bool:
    return is_view_node(node) and id(node.outputs[0]) not in outputs


def _root(views: Mapping[int, int], number: int) -> int:
    """The value a view reads through its chain of views."""
    while number in views:
        number = views[number]
    return number


def _take_free(candidates: list[int], sizes: list[int], need: int) -> int | None:
    """Remove and return the free buffer to use for ``need`` elements (see the
    module docstring), or None when there is no free buffer of this dtype."""
    if not candidates:
        return None
    fitting = [i for i in candidates if sizes[i] >= need]
    if fitting:
        best = min(fitting, key=lambda i: (sizes[i], i))
    else:
        best = max(candidates, key=lambda i: (sizes[i], -i))
    candidates.remove(best)
    return best
