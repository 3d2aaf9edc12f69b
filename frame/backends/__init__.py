"""Backend registrations.  Factories are lazy: a backend's module (and its
heavy dependencies, such as openvino) load on first ``get_backend(name)``."""
from ..hal.backend import register_backend


def _cpu():
    from .cpu import CpuBackend
    return CpuBackend()


register_backend("cpu", _cpu)
