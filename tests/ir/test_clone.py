"""clone_graph: equal text and structure, no shared mutable objects."""
from __future__ import annotations

import pytest

import frame
from frame.ir import TensorType, Value, clone_graph, clone_graph_with_map, dump_text, verify

from .graphs import GRAPHS, VERIFIABLE, assert_same_graph


def _objects(graph) -> tuple[set[int], set[int], set[int]]:
    """ids of every Graph, Node and Value reachable from ``graph`` (bodies included)."""
    graphs, nodes, values = {id(graph)}, set(), {id(v) for v in graph.inputs}
    for node in graph.nodes:
        nodes.add(id(node))
        values.update(id(v) for v in node.outputs)
        if node.body is not None:
            g, n, v = _objects(node.body)
            graphs |= g
            nodes |= n
            values |= v
    return graphs, nodes, values


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_clone_is_equal_and_disjoint(name):
    g = GRAPHS[name]()
    c = clone_graph(g)
    assert dump_text(c) == dump_text(g)
    assert_same_graph(g, c)
    for old, new in zip(_objects(g), _objects(c)):
        assert not old & new
    for a, b in zip(g.nodes, c.nodes):
        assert a.attrs is not b.attrs
        assert a.const is b.const  # payloads are immutable: shared on purpose
    if name in VERIFIABLE:
        verify(c)


def test_value_map_covers_every_value():
    g = GRAPHS["broadcast"]()
    c, vmap = clone_graph_with_map(g)
    assert list(vmap) == g.values()
    assert [vmap[v] for v in g.values()] == c.values()
    for old, new in vmap.items():
        assert old.type == new.type and old.name == new.name
    assert [vmap[v] for v in g.outputs] == c.outputs


def test_rewriting_the_clone_leaves_the_original_alone():
    g = GRAPHS["chain"]()
    before = dump_text(g)
    c = clone_graph(g)
    c.replace_all_uses(c.nodes[1].output, c.nodes[0].output)
    c.remove_nodes([c.nodes[1]])
    c.nodes[0].attrs["x"] = 1
    c.inputs[0].type = TensorType(frame.float64, (4, 3))
    assert dump_text(g) == before
    assert dump_text(c) != before


def test_fused_bodies_are_cloned_not_shared():
    g = GRAPHS["fused"]()
    c = clone_graph(g)
    c.nodes[0].body.nodes[0].op = "sub"
    assert g.nodes[0].body.nodes[0].op == "add"


def test_input_names_and_meta_are_kept():
    g = GRAPHS["chain"]()
    g.inputs[0].name = "L['x']"
    g.meta["memory_plan"] = "plan"
    c = clone_graph(g)
    assert c.inputs[0].name == "L['x']"
    assert c.meta == {"memory_plan": "plan"} and c.meta is not g.meta


def test_clone_rejects_undefined_values():
    g = GRAPHS["chain"]()
    g.nodes[2].inputs = (Value(TensorType(frame.float32, (4, 3))),)
    with pytest.raises(ValueError, match="'exp' uses"):
        clone_graph(g)
    g = GRAPHS["chain"]()
    g.outputs = [Value(TensorType(frame.float32, (4, 3)))]
    with pytest.raises(ValueError, match="graph output"):
        clone_graph(g)
