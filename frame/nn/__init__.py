"""frame.nn: Module, Parameter, layers, losses, initialisers and the functional API."""
from . import functional, init
from .module import Module, Parameter
from .normalization import BatchNorm1d, BatchNorm2d
from .layers import (AvgPool2d, BCEWithLogitsLoss, Conv2d, CrossEntropyLoss, Dropout, Embedding,
                     Flatten, GELU, Identity, L1Loss, LayerNorm, LeakyReLU, Linear, LogSoftmax,
                     MaxPool2d, ModuleDict, ModuleList, MSELoss, NLLLoss, ReLU, Sequential, SiLU,
                     Sigmoid, Softmax, Tanh)

__all__ = ["functional", "init", "Module", "Parameter", "Linear", "Conv2d", "Embedding", "ReLU",
           "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "MaxPool2d",
           "AvgPool2d", "Flatten", "Identity", "Dropout", "Sequential", "ModuleList", "ModuleDict",
           "LayerNorm", "BatchNorm1d", "BatchNorm2d", "CrossEntropyLoss", "NLLLoss", "MSELoss",
           "L1Loss", "BCEWithLogitsLoss"]
