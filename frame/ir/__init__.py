"""frame's IR: TensorType, Graph/Node/Value, builder, verify, text form, clone, memory plan."""
from .types import TensorType, DYNAMIC
from .graph import Graph, Node, Value
from .builder import GraphBuilder
from .verify import verify, IRVerifyError
from .text import dump_text, parse_text, graph_constants, IRParseError
from .clone import clone_graph, clone_graph_with_map
from .memplan import plan_memory, MemoryPlan

__all__ = ["TensorType", "DYNAMIC", "Graph", "Node", "Value", "GraphBuilder", "verify",
           "IRVerifyError", "dump_text", "parse_text", "graph_constants", "IRParseError",
           "clone_graph", "clone_graph_with_map", "plan_memory", "MemoryPlan"]
