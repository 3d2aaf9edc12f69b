"""frame's IR: TensorType, Graph/Node/Value, builder, verify, text form, clone, memory plan."""
from .types import TensorType, DYNAMIC
from .graph import Graph, Node, Value
from .builder import GraphBuilder

__all__ = ["TensorType", "DYNAMIC", "Graph", "Node", "Value", "GraphBuilder"]
