"""The openvino backend (imports openvino: load it through
``frame.backends``' lazy factory, i.e. ``get_backend("openvino")``).

OpenVINO's telemetry.  ``import openvino`` imports its model converter, which
initialises ``openvino_telemetry``; unless the user opted out, that sends a
usage event by forking a process from a helper thread.  A fork while another
thread is inside a multithreaded OpenBLAS call deadlocks the process
(OpenBLAS's fork handler waits for its workers): reproduced on this machine
with nothing but ``import openvino`` followed by a loop of NumPy matmuls (it
hung on the first try; never with ``OPENBLAS_NUM_THREADS=1``), and it hung
frame's demo, whose eager run does NumPy work while the background tier
imports openvino.  So when frame is the one importing openvino, it does so with
``CI=true`` in the environment for the duration of the import: the
telemetry's own opt-out for CI jobs, read once when it initialises (its
consent is then off for the process).  A program that imports openvino
before frame keeps OpenVINO's default.
"""
import os
import sys


def _import_openvino() -> None:
    if "openvino" in sys.modules:
        return
    saved = os.environ.get("CI")
    os.environ["CI"] = "true"
    try:
        import openvino  # noqa: F401
    finally:
        if saved is None:
            os.environ.pop("CI", None)
        else:
            os.environ["CI"] = saved


_import_openvino()

from .backend import OpenVinoBackend, model_cache_dir  # noqa: E402

__all__ = ["OpenVinoBackend", "model_cache_dir"]
