"""Backend registrations.  Factories are lazy: a backend's module (and its
heavy dependencies, such as openvino) load on first ``get_backend(name)``."""
import importlib.util
import os

from ..hal.backend import register_backend
from ..settings import config


def _cpu():
    # lazy (a documented factory): the backend's module loads on first get_backend("cpu")
    from .cpu import CpuBackend
    return CpuBackend()


def _openvino():
    # lazy (a documented factory): openvino is a heavy import, made on first
    # get_backend("openvino"); ``import frame`` never imports it (tests/test_layering.py)
    from .openvino import OpenVinoBackend
    return OpenVinoBackend()


register_backend("cpu", _cpu)
register_backend("openvino", _openvino)


def default_backend_name() -> str:
    """The jit's backend: ``frame.config.backend`` if set (FRAME_BACKEND at import,
    or assigned later), else ``FRAME_BACKEND`` if set now, else ``openvino`` when it
    is installed, else ``cpu``.  Cheap: finds the package without importing it."""
    chosen = config.backend or os.environ.get("FRAME_BACKEND")
    if chosen:
        return chosen
    return "openvino" if importlib.util.find_spec("openvino") is not None else "cpu"
