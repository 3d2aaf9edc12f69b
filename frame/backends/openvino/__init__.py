"""The openvino backend (imports openvino: load it through
``frame.backends``' lazy factory, i.e. ``get_backend("openvino")``)."""
from .backend import OpenVinoBackend, model_cache_dir

__all__ = ["OpenVinoBackend", "model_cache_dir"]
