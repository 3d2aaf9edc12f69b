"""verify: the IR's numbered invariants, checked after every pass.

    V1 SSA: every value used or output is defined exactly once (a graph input
       or one node output), and its ``producer``/``index`` say where.
    V2 acyclic: every use comes after its definition in node order.
    V3 every op is registered.
    V4 arity and attrs match the op's schema (a fused node: its body's inputs).
    V5 every type is known and static (a TensorType of a frame dtype with int
       dims >= 0; dynamic dims are rejected), output types are what the schema
       infers (or what the fused body produces), a payload matches its type.
    V6 one device per graph: every node's device is None or the graph's, and
       a fused body runs on its graph's device.
    V7 attrs are in the closed set (``attr_value_ok``), named by identifiers;
       a node's ``errstate`` is None or NumPy's sorted (category, mode) pairs.

Per node the checks run in the order V1, V2, V3, V7, V4, V5, V6 (V7 before V4
so a foreign attr value is reported as such, not as a schema mismatch); graph
inputs are checked before the nodes and graph outputs after.  Fused bodies
are verified recursively.  The error names the invariant first (``V3: ...``)
and shows the IR around the offending line, marked ``>>``.

Cost: one dict insertion per value, one schema lookup and one ``infer`` call
per node; ``dump_text`` runs only when something is wrong.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..dtypes import DType, all_dtypes
from ..errors import ErrorCode, FrameError
from .graph import Graph, Node, Value, errstate_ok
from .schemas import attr_value_ok, lookup_schema
from .text import dump_lines_with_sites
from .types import DYNAMIC, TensorType

__all__ = ["verify", "IRVerifyError"]

_CONTEXT = 3  # lines shown before and after the offending line
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FRAME_DTYPES = frozenset(id(d) for d in all_dtypes)


class IRVerifyError(FrameError):
    """An IR invariant does not hold: a bug in whoever built or rewrote the graph.

    The message starts with the invariant (``V1:`` ... ``V7:``)."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.INTERNAL, message)

    @property
    def invariant(self) -> str:
        """``"V1"`` ... ``"V7"`` (read from the message, so it survives pickling)."""
        m = re.search(r"\bV[1-7](?=: )", self.message)
        return m.group(0) if m else ""


def verify(graph: Graph) -> None:
    """Raise IRVerifyError unless ``graph`` satisfies every invariant V1-V7.

        >>> from frame.ir import GraphBuilder
        >>> b = GraphBuilder(); x = b.input("float32", (2,))
        >>> verify(b.build(b.op("exp", x)))   # fine: returns None
    """
    _Verifier(graph, lookup_schema, attr_value_ok).graph(graph)


class _Verifier:
    def __init__(self, root: Graph, lookup: Any, attr_value_ok: Any):
        self.root = root
        self.lookup = lookup
        self.attr_value_ok = attr_value_ok

    # -- reporting ---------------------------------------------------------------
    def fail(self, invariant: str, message: str, site: Any) -> IRVerifyError:
        return IRVerifyError(f"{invariant}: {message}\n{self.context(site)}")

    def context(self, site: Any) -> str:
        """The root graph's text around ``site`` (a key of dump_lines_with_sites)."""
        try:
            lines, sites = dump_lines_with_sites(self.root)
        except Exception as err:  # a graph too broken to print: say so, keep the error
            return f"    (IR could not be printed: {type(err).__name__}: {err})"
        at = sites.get(site)
        if at is None:
            return "\n".join("   " + ln for ln in lines[: 2 * _CONTEXT + 1])
        lo, hi = max(0, at - _CONTEXT), min(len(lines), at + _CONTEXT + 1)
        shown = [(">> " if i == at else "   ") + lines[i] for i in range(lo, hi)]
        if lo > 0:
            shown.insert(0, "   ...")
        if hi < len(lines):
            shown.append("   ...")
        return "\n".join(shown)

    # -- the checks ----------------------------------------------------------------
    def graph(self, g: Graph) -> None:
        # Definition position of every value: -1 for inputs, else the node index.
        # The first definition wins; a second one is reported (V1) where it occurs.
        defined_at: dict[int, int] = {}
        for i, v in enumerate(g.inputs):
            site = ("input", id(g), i)
            if not isinstance(v, Value):
                raise self.fail("V1", f"graph input {i} is not a Value: {v!r}", site)
            if id(v) in defined_at:
                raise self.fail("V1", f"graph input {i} is defined more than once", site)
            if v.producer is not None or v.index != i:
                raise self.fail("V1", f"graph input {i} says it comes from "
                                f"{_where(v)}; expected producer None and index {i}", site)
            defined_at[id(v)] = -1
        for i, v in enumerate(g.inputs):
            self.check_type(v.type, f"graph input {i}", ("input", id(g), i))
        for pos, node in enumerate(g.nodes):
            for v in node.outputs:
                if isinstance(v, Value) and id(v) not in defined_at:
                    defined_at[id(v)] = pos
        definers: dict[int, Node] = {}
        for pos, node in enumerate(g.nodes):
            self.node(g, pos, node, defined_at, definers)
        for i, v in enumerate(g.outputs):
            if not isinstance(v, Value) or id(v) not in defined_at:
                raise self.fail("V1", f"graph output {i} is not defined in this graph "
                                "(neither a graph input nor a node output)", ("outputs", id(g)))

    def node(self, g: Graph, pos: int, node: Node, defined_at: dict[int, int],
             definers: dict[int, Node]) -> None:
        site = id(node)
        op = node.op
        # V1: outputs defined once, pointing back at this node; inputs defined somewhere.
        for j, v in enumerate(node.outputs):
            if not isinstance(v, Value):
                raise self.fail("V1", f"output {j} of '{op}' is not a Value: {v!r}", site)
            if defined_at[id(v)] != pos or id(v) in definers:
                raise self.fail("V1", f"output {j} of '{op}' is already defined earlier "
                                "(a value must have exactly one definition)", site)
            definers[id(v)] = node
            if v.producer is not node or v.index != j:
                raise self.fail("V1", f"output {j} of '{op}' says it comes from {_where(v)}; "
                                f"expected this node, index {j}", site)
        for j, v in enumerate(node.inputs):
            if not isinstance(v, Value) or id(v) not in defined_at:
                raise self.fail("V1", f"input {j} of '{op}' is not defined in this graph "
                                "(neither a graph input nor a node output)", site)
        # V2: every use after its definition (a node reading its own or a later
        # node's output is a cycle in the node order).
        for j, v in enumerate(node.inputs):
            if defined_at[id(v)] >= pos:
                when = "by this node" if defined_at[id(v)] == pos else "by a later node"
                raise self.fail("V2", f"input {j} of '{op}' is used before it is defined "
                                f"(it is defined {when})", site)
        # V3
        schema = self.lookup(op) if type(op) is str else None
        if schema is None:
            raise self.fail("V3", f"op {op!r} is not registered", site)
        # V7
        if not isinstance(node.attrs, dict):
            raise self.fail("V7", f"'{op}' attrs must be a dict, got {type(node.attrs).__name__}", site)
        for name, value in node.attrs.items():
            if type(name) is not str or not _NAME_RE.fullmatch(name):
                raise self.fail("V7", f"'{op}' has an attribute named {name!r}; names are identifiers", site)
            if not self.attr_value_ok(value):
                raise self.fail("V7", f"'{op}' attribute '{name}' = {value!r} ({type(value).__name__}) "
                                "is not in the closed set (int, float, str, bool, tuple of int, "
                                "tuple of float, dtype)", site)
        if not errstate_ok(getattr(node, "errstate", None)):
            raise self.fail("V7", f"'{op}' has the error state {node.errstate!r}: not sorted "
                            "(category, mode) pairs of NumPy's (Node.errstate)", site)
        # V4
        if not schema.arity_ok(len(node.inputs)):
            raise self.fail("V4", f"'{op}' expects {schema.arity_text()} inputs, got {len(node.inputs)}", site)
        why = schema.attrs_match_spec(node.attrs)
        if why is not None:
            raise self.fail("V4", f"'{op}' attrs do not match its schema: {why}", site)
        body = node.body
        if body is not None and (len(node.inputs) != len(body.inputs)
                                 or len(node.outputs) != len(body.outputs)):
            raise self.fail("V4", f"fused '{op}' has {len(node.inputs)} inputs and "
                            f"{len(node.outputs)} outputs but its body has {len(body.inputs)} "
                            f"and {len(body.outputs)}", site)
        # V5
        for j, v in enumerate(node.outputs):
            self.check_type(v.type, f"output {j} of '{op}'", site)
        self.check_payload(node, site)
        self.check_inferred(node, schema, site)
        # V6
        if node.device is not None and node.device != g.device:
            raise self.fail("V6", f"'{op}' is placed on {node.device!r} but the graph runs on "
                            f"{g.device!r} (one device per graph)", site)
        if body is not None:
            if body.device != g.device:
                raise self.fail("V6", f"the body of '{op}' runs on {body.device!r} but its graph "
                                f"on {g.device!r}", site)
            self.graph(body)

    def check_type(self, t: Any, what: str, site: Any) -> None:
        """V5: a TensorType of a frame dtype with static int dims."""
        if type(t) is not TensorType:
            raise self.fail("V5", f"{what} has no known type (got {t!r})", site)
        if not isinstance(t.dtype, DType) or id(t.dtype) not in _FRAME_DTYPES:
            raise self.fail("V5", f"{what} has dtype {t.dtype!r}, not a frame dtype", site)
        for d in t.shape:
            if type(d) is int and d == DYNAMIC:
                raise self.fail("V5", f"{what} has type {t} with a dynamic dim: dynamic dims are "
                                "not supported (v0 is static-shape only; capture specializes "
                                "shapes through guards)", site)
            if type(d) is not int or d < 0:
                raise self.fail("V5", f"{what} has type {t} with dim {d!r}; dims are ints >= 0", site)

    def check_payload(self, node: Node, site: Any) -> None:
        """V5: a constant carries a payload equal in dtype and shape to its type."""
        const = node.const
        if const is None:
            if node.op == "constant":
                raise self.fail("V5", "constant node without a payload (Node.const is None)", site)
            return
        if not isinstance(const, np.ndarray):
            raise self.fail("V5", f"'{node.op}' payload is a {type(const).__name__}, not an ndarray", site)
        if len(node.outputs) != 1:
            raise self.fail("V5", f"'{node.op}' carries a payload but has {len(node.outputs)} outputs", site)
        t = node.outputs[0].type
        if const.dtype != t.dtype.np or const.shape != t.shape:
            raise self.fail("V5", f"'{node.op}' payload is {const.dtype}{list(const.shape)} but its "
                            f"type is {t}", site)

    def check_inferred(self, node: Node, schema: Any, site: Any) -> None:
        """V5: output types are what the schema infers (or what the body produces)."""
        got = [v.type for v in node.outputs]
        if node.body is not None:
            body = node.body
            ins = [v.type for v in node.inputs]
            want_ins = [getattr(v, "type", None) for v in body.inputs]
            if ins != want_ins:
                raise self.fail("V5", f"fused '{node.op}' input types {_types(ins)} differ from "
                                f"its body's {_types(want_ins)}", site)
            want = [getattr(v, "type", None) for v in body.outputs]
        else:
            try:
                want = list(schema.infer([v.type for v in node.inputs], node.attrs))
            except Exception as err:  # infer rejects these inputs: the node is ill-typed
                raise self.fail("V5", f"'{node.op}' does not accept its inputs: "
                                f"{type(err).__name__}: {err}", site) from None
        if got != want:
            raise self.fail("V5", f"'{node.op}' outputs are typed {_types(got)} but the "
                            f"{'body produces' if node.body is not None else 'schema infers'} "
                            f"{_types(want)}", site)


def _where(v: Value) -> str:
    p = v.producer
    return "a graph input" if p is None else f"'{p.op}' output {v.index}"


def _types(types: list) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"
