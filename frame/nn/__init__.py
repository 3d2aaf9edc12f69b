"""frame.nn: Module, Parameter, layers, initialisers and the functional API."""
from . import functional, init
from .module import Module, Parameter
from .layers import (Conv2d, Dropout, LayerNorm, Linear, ModuleDict, ModuleList, ReLU, Sequential,
                     Softmax)

__all__ = ["functional", "init", "Module", "Parameter", "Linear", "Conv2d", "ReLU", "Softmax",
           "Dropout", "Sequential", "ModuleList", "ModuleDict", "LayerNorm"]
