"""frame.nn: modules (with the autograd issue) and functional ops."""
from . import functional

__all__ = ["functional"]
