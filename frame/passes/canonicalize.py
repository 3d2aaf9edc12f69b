"""canonicalize: remove ops that do nothing, merge reshape and transpose chains,
and move transposes off matmul results.

Rules, each applied wherever it matches until none does (the pass is a
fixpoint, so running it twice changes nothing more):

* identity ops (a cast to the same dtype, a reshape/broadcast_to to the same
  shape, an identity transpose, expand_dims/squeeze/flip with no axes, a full
  slice, a zero pad, a one-input concat) are replaced by their input;
* a reshape of a reshape reads the innermost input directly, where no input
  layout can tell (``_merge_reshapes``: NumPy's reshape may copy);
* ``transpose(transpose(x, p1), p2)`` is ``transpose(x, p)`` with the composed
  permutation ``p[i] = p1[p2[i]]``, or ``x`` itself when ``p`` is the identity;
* ``transpose(matmul(a, b))``, when the transpose swaps only the last two axes,
  ``a`` and ``b`` both have rank >= 2, the transpose is the matmul result's
  only user (the result is no graph output), and the product is exact in any
  order (integer or bool operands) or both nodes are autograd's (``backward``),
  becomes
  ``matmul(transpose(b), transpose(a))`` with last-two-axes swaps, which the
  rule above cancels against transposes ``a`` or ``b`` came from.  Autograd
  writes weight gradients as ``transpose(matmul(transpose(x), g))``; after
  this rule they are ``matmul(transpose(g), x)``: no transposed copy of the
  (large) product, and a small transposed operand, which the cpu executable
  passes to BLAS as a view.

* ``matmul(transpose(x), x)`` or ``matmul(x, transpose(x))`` of floats, the
  transpose swapping the last two axes of one array ``x`` (the same value, or
  the same views of one: ``X[::2]`` written twice), is ``gram(x)`` (``x.T @ x``,
  ``np.cov``'s ``dot(X, X.T)``): NumPy multiplies an array by a view of itself
  with BLAS's syrk, which rounds unlike gemm.  Only the captured graph knows it
  is one array, and this pass runs before common_subexpression_elimination,
  while two arrays of equal value (``(x * 2).T @ (x * 2)``: a gemm in NumPy) are
  still two values.

The rewrites are exact for every value (NaN, -0.0) except the last one on
floating-point operands: ``(a @ b)^T`` and ``b^T @ a^T`` multiply the same
pairs and add them along the same axis, but BLAS may group the additions
differently for the two operand layouts, so results can differ in the last
bits.  That is why it leaves user code's floating-point ``(a @ b).T`` alone
(NumPy computes ``a @ b``): only gradients autograd wrote, which have no
NumPy counterpart to match, are rewritten.  Rewritten graphs are what the
backends and the reference interpreter both run, so they still agree.

Dead nodes a rewrite leaves behind (a reshape nobody reads any more) are
dead_node_elimination's job; the matmul and transpose the last rule replaces
are removed here, since their values are gone.
"""
from __future__ import annotations

from typing import Sequence

from ..ir.graph import Graph, Node, Value
from ..ops.layout import ALWAYS_VIEWS
from ..ops.registry import get_schema
from .base import Pass

__all__ = ["Canonicalize"]


def _is_identity(node: Node) -> bool:
    op, a = node.op, node.attrs
    if len(node.inputs) != 1 and op != "concat":
        return False
    if len(node.outputs) != 1:
        return False
    src, out = node.inputs[0].type, node.outputs[0].type
    if src != out:
        return False
    if op in ("cast", "reshape", "broadcast_to"):
        return True
    if op == "transpose":
        return a["perm"] == tuple(range(len(a["perm"])))
    if op in ("expand_dims", "squeeze", "flip"):
        return a["axes"] == ()
    if op == "pad":
        return all(p == 0 for p in a["pads"])
    if op == "slice":
        return all(st == 1 for st in a["steps"])  # same type and step 1: the whole axis
    if op == "concat":
        return len(node.inputs) == 1
    return False


def _merge_reshapes(inner: Node) -> bool:
    """May a reshape of ``inner``'s result (a reshape) read ``inner``'s input?
    Its values are the same, but NumPy's reshape of an array that is not
    C-contiguous may copy it into C order (``np.ravel(X_F)``), and a
    layout-sensitive reader (a float sum, a matmul) of the second reshape then
    sees C order where the merged reshape would be a strided view of ``X_F``:
    ``np.ravel(X).reshape(40, 60).sum(axis=1)`` of a Fortran-ordered ``X``
    differed in the last bit.  So the chain is merged only where no input
    layout can tell: ``inner`` only adds or drops axes of size 1 (always a
    view), its values are not floating-point (exact whatever the order), or
    it is autograd's (no NumPy counterpart to match)."""
    x, y = inner.inputs[0].type, inner.outputs[0].type
    if inner.backward or not (x.dtype.is_floating or x.dtype.is_complex):
        return True
    return [d for d in x.shape if d != 1] == [d for d in y.shape if d != 1]


def _plain(node: Node | None, op: str) -> bool:
    """Is ``node`` an ordinary ``op`` node (no payload, no body)?"""
    return node is not None and node.op == op and node.body is None and node.const is None


def _swap_last_two(rank: int) -> tuple[int, ...]:
    return tuple(range(rank - 2)) + (rank - 1, rank - 2)


def _new_node(op: str, inputs: Sequence[Value], attrs: dict, like: Node,
              backward: bool = False) -> Node:
    """A node derived from ``like``: its device and NumPy error state."""
    node = Node(op, inputs, attrs, device=like.device, errstate=like.errstate)
    node.backward = backward
    node.set_output_types(get_schema(op).infer([v.type for v in inputs], node.attrs))
    return node


def _unmarked(v: Value) -> Value:
    """``v``, or the operand an ``np.dot`` mark (``dot_operand``) stands for."""
    p = v.producer
    return p.inputs[0] if _plain(p, "dot_operand") else v


def _one_array(u: Value, v: Value) -> bool:
    """Are ``u`` and ``v`` one array in NumPy: the same value, or the same views
    of one array (``X[::2]`` written twice shares its memory)?"""
    if u is v:
        return True
    pu, pv = u.producer, v.producer
    return (pu is not None and pv is not None and pu.op == pv.op and pu.op in ALWAYS_VIEWS
            and _plain(pu, pu.op) and _plain(pv, pv.op) and pu.attrs == pv.attrs
            and u.type == v.type and _one_array(pu.inputs[0], pv.inputs[0]))


def _gram_operands(a: Value, b: Value) -> tuple[bool, Value] | None:
    """``(transposed_first, x)`` when ``a @ b`` is ``x.T @ x`` (True) or ``x @ x.T``
    (False) of one float array ``x`` (last two axes swapped), else None."""
    if a.type.rank < 2 or b.type.rank < 2 or a.type.dtype != b.type.dtype \
            or a.type.dtype.kind not in "fc":
        return None
    for first, t, x in ((True, a, b), (False, b, a)):
        p = t.producer
        if _plain(p, "transpose") and tuple(p.attrs["perm"]) == _swap_last_two(t.type.rank) \
                and _one_array(p.inputs[0], x):
            return first, x
    return None


def _exact_product(matmul: Node) -> bool:
    """Whether ``matmul``'s products and sums are exact in any order (integers, bool)."""
    return all(v.type.dtype.np.kind in "biu" for v in matmul.inputs + matmul.outputs)


class _Rewriter:
    """One sweep over the graph's nodes.  Use counts (node input slots plus
    graph output slots) are counted when a rule first needs them and kept
    current from then on, so that "only user" is exact while earlier
    rewrites of the same sweep move uses around."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self._uses: dict[int, int] | None = None
        # id -> node; holding the dropped nodes keeps their ids (and their
        # values' ids, the keys of ``_uses``) from being reused by new objects
        self.dead: dict[int, Node] = {}
        self.changed = False

    def uses(self, v: Value) -> int:
        if self._uses is None:
            self._uses = {}
            for node in self.graph.nodes:
                if id(node) not in self.dead:
                    self._count(node, +1)
            for out in self.graph.outputs:
                self._uses[id(out)] = self._uses.get(id(out), 0) + 1
        return self._uses.get(id(v), 0)

    def _count(self, node: Node, delta: int) -> None:
        if self._uses is not None:
            for v in node.inputs:
                self._uses[id(v)] = self._uses.get(id(v), 0) + delta

    def set_inputs(self, node: Node, inputs: tuple[Value, ...]) -> None:
        self._count(node, -1)
        node.inputs = inputs
        self._count(node, +1)
        self.changed = True

    def replace(self, node: Node, new: Value) -> None:
        """Every use of ``node``'s output reads ``new``; ``node`` is dropped."""
        old = node.outputs[0]
        self.graph.replace_all_uses(old, new)
        if self._uses is not None:
            self._uses[id(new)] = self._uses.get(id(new), 0) + self._uses.pop(id(old), 0)
        self.drop(node)

    def drop(self, node: Node) -> None:
        self._count(node, -1)
        self.dead[id(node)] = node
        self.changed = True

    def transposed(self, v: Value, perm: tuple[int, ...], like: Node,
                   added: list[Node], backward: bool = False) -> Value:
        """``transpose(v, perm)`` with the chain and identity rules applied: an
        existing value when they cancel, else a new node appended to ``added``."""
        src = v.producer
        if _plain(src, "transpose") and len(src.outputs) == 1:
            v, perm = src.inputs[0], tuple(src.attrs["perm"][p] for p in perm)
        if perm == tuple(range(len(perm))):
            return v
        node = _new_node("transpose", [v], {"perm": perm}, like, backward)
        self._count(node, +1)
        added.append(node)
        return node.outputs[0]

    # -- rules -------------------------------------------------------------------
    def visit(self, node: Node) -> list[Node] | None:
        """Apply the rules to ``node``.  None keeps it; a list replaces it in the
        node list (``[]`` when it was dropped, ``[node]`` to visit it again)."""
        if _is_identity(node):
            self.replace(node, node.inputs[0])
            return []
        if node.op == "reshape":
            src = node.inputs[0].producer
            if src is not None and src.op == "reshape" and _merge_reshapes(src):
                self.set_inputs(node, (src.inputs[0],))
            return None
        if _plain(node, "transpose"):
            return self.transpose(node)
        if _plain(node, "matmul"):
            return self.gram(node)
        return None

    def gram(self, node: Node) -> list[Node] | None:
        """``matmul(transpose(x), x)`` / ``matmul(x, transpose(x))`` of one float
        array ``x`` is ``gram(x)`` (module doc); ``np.dot``'s (both operands
        marked) is ``gram(x, dot=True)``, whose kernel is np.dot itself: it copies
        an operand that is not contiguous, and two copies are a gemm."""
        a, b = node.inputs
        dot = _unmarked(a) is not a
        if dot != (_unmarked(b) is not b):
            return None
        pair = _gram_operands(_unmarked(a), _unmarked(b))
        if pair is not None:
            first, x = pair
            new = _new_node("gram", [x], {"transposed_first": first, "dot": dot}, node,
                            node.backward)
            if new.outputs[0].type != node.outputs[0].type:
                return None
            self._count(new, +1)
            self.replace(node, new.outputs[0])
            return [new]
        return None

    def transpose(self, node: Node) -> list[Node] | None:
        perm = tuple(node.attrs["perm"])
        src = node.inputs[0].producer
        if _plain(src, "transpose"):
            inner = tuple(src.attrs["perm"])
            composed = tuple(inner[p] for p in perm)
            if composed == tuple(range(len(composed))):
                self.replace(node, src.inputs[0])
                return []
            self.set_inputs(node, (src.inputs[0],))
            node.attrs = {**node.attrs, "perm": composed}
            return [node]   # visited again: it may now transpose a matmul
        if not _plain(src, "matmul") or perm != _swap_last_two(len(perm)):
            return None
        a, b = src.inputs
        if a.type.rank < 2 or b.type.rank < 2 or self.uses(node.inputs[0]) != 1:
            return None
        if not (_exact_product(src) or (src.backward and node.backward)):
            return None   # user code's (a @ b).T: NumPy's bits are those of a @ b
        added: list[Node] = []
        phase = src.backward or node.backward
        bt = self.transposed(b, _swap_last_two(b.type.rank), src, added, phase)
        at = self.transposed(a, _swap_last_two(a.type.rank), src, added, phase)
        product = _new_node("matmul", [bt, at], dict(src.attrs), src, phase)
        if product.outputs[0].type != node.outputs[0].type:  # (never, with NumPy's dtype rules)
            for n in added:
                self._count(n, -1)
            return None
        self._count(product, +1)
        self.drop(src)
        self.replace(node, product.outputs[0])
        return added + [product]


class Canonicalize(Pass):
    name = "canonicalize"

    def run(self, graph: Graph) -> Graph:
        while self._sweep(graph):
            pass
        return graph

    @staticmethod
    def _sweep(graph: Graph) -> bool:
        """One pass over the nodes in order; True if anything was rewritten.

        The nodes that replace a node are visited next, so chains resolve in
        one sweep; one more sweep confirms the fixpoint."""
        rw = _Rewriter(graph)
        nodes = graph.nodes   # edited in place: replace_all_uses sees new nodes too
        i = 0
        while i < len(nodes):
            node = nodes[i]
            replacement = None if id(node) in rw.dead else rw.visit(node)
            if replacement is None:
                i += 1
            else:
                nodes[i:i + 1] = replacement
        graph.nodes = [n for n in nodes if id(n) not in rw.dead]
        return rw.changed
