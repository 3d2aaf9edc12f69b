"""frame.nn: Module, Parameter, layers and the functional API."""
from . import functional
from .module import Module, Parameter
from .layers import Conv2d, LayerNorm, Linear, ReLU, Sequential

__all__ = ["functional", "Module", "Parameter", "Linear", "Conv2d", "ReLU", "Sequential", "LayerNorm"]
