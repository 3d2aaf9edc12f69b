"""Suite-wide settings: which backend setting the tests run under, and defaults
that keep tests hermetic.

``FRAME_TEST_SETTING`` picks the backend setting (issue 12: no wrong result under
any of them; ``.ci/run`` runs the whole suite under the first two and the capture
and runtime tests under the third):

    FRAME_TEST_SETTING=default    (the default when unset) frame's own defaults, what a
                                  user gets: openvino when installed, tiered compilation
                                  on (the cpu tier runs a graph at once; from its second
                                  call the OpenVINO executable is compiled in the
                                  background and swapped in)
    FRAME_TEST_SETTING=untiered   FRAME_TIERED=0: the jit's default backend (openvino
                                  when installed) compiles every graph from its first
                                  call, so every graph a test runs goes through OpenVINO
    FRAME_TEST_SETTING=cpu        FRAME_BACKEND=cpu: the NumPy codegen backend (tiered
                                  compilation stays on, as by default: it only concerns
                                  graphs compiled for openvino)

Tests that do not pin a backend (``frame.jit(fn)``, and
``tests/capture/helpers.py::assert_same_as_eager``) run on the setting's backend;
tests whose point is one backend, or one compile mode, pin it themselves.  The
setting is available to tests as ``SETTING`` here (``tests.conftest.SETTING``).

The persistent compile cache (FRAME_CACHE) is off under every setting: it would
let one test's compiles turn into disk hits in later tests and later runs
(changing compile counts); tests/runtime/test_persistent_cache.py turns it on
explicitly.

Nothing is written under the user's home either: every cache directory
(frame's persistent entries, capture's stored translations, OpenVINO's own
model cache; FRAME_CACHE=0 turns all three off) derives from
FRAME_CACHE_DIR, set here to a temporary directory of this test session
(removed at exit), and XDG_CACHE_HOME points into it too.  All of it is set
in the environment before frame is imported, so subprocesses started by
tests inherit it unless a test passes its own values
(tests/test_hermetic.py checks this).  Under tiered compilation no background
compile runs into the next test: when a test ends, those not started yet are
dropped and a running one is waited for (``_background_compiles_end_with_their_test``).

When the environment turns bytecode caching off (PYTHONDONTWRITEBYTECODE),
bytecode is written under ``.pytest_cache/pycache`` in the checkout instead
(PYTHONPYCACHEPREFIX, inherited by subprocesses; nothing beside the sources;
ignored by git like the rest of ``.pytest_cache``): otherwise every
subprocess a test starts (examples, a second process on a cache, mpiexec
ranks) compiles frame's sources again, about 0.3 s each, and every pytest
process rewrites every test module's assertions again, 4-5 s of CPU each.
It outlives the session (a prefix is all or nothing: the first process on
an empty one compiles the standard library, NumPy and OpenVINO's Python
code too, ~2 s); Python checks each file's source stamp, so it is never stale.
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

import pytest

SESSION_CACHE = tempfile.mkdtemp(prefix="frame-test-cache-")
atexit.register(shutil.rmtree, SESSION_CACHE, True)

SETTINGS = {
    "untiered": {"FRAME_TIERED": "0"},
    "default": {},
    "cpu": {"FRAME_BACKEND": "cpu"},
}
SETTING = os.environ.get("FRAME_TEST_SETTING") or "default"
if SETTING not in SETTINGS:
    raise ValueError(f"FRAME_TEST_SETTING={SETTING!r}: expected one of {', '.join(SETTINGS)}")

os.environ["FRAME_CACHE"] = "0"
for _name in ("FRAME_BACKEND", "FRAME_TIERED"):  # the setting's values, nothing inherited
    os.environ.pop(_name, None)
os.environ.update(SETTINGS[SETTING])
os.environ["FRAME_CACHE_DIR"] = os.path.join(SESSION_CACHE, "frame")
os.environ["XDG_CACHE_HOME"] = os.path.join(SESSION_CACHE, "xdg")
if sys.dont_write_bytecode:
    _ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(
        _ROOT, ".pytest_cache", "pycache")
    # (the bytecode of scripts tests write under the temporary directory is not kept)
    atexit.register(shutil.rmtree, sys.pycache_prefix + os.path.abspath(tempfile.gettempdir()),
                    True)
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import frame  # noqa: E402  (after the environment: frame.config reads it at import)

frame.config.cache = False
frame.config.tiered = SETTING != "untiered"
frame.config.backend = SETTINGS[SETTING].get("FRAME_BACKEND")


@pytest.fixture(autouse=True)
def _background_compiles_end_with_their_test():
    """Under tiered compilation, no background compile a test started runs into
    the next test (it would count in its statistics): those not started yet are
    dropped (as at process exit: nothing the test checked depended on them), a
    running one is waited for."""
    yield
    tiered = sys.modules.get("frame.runtime.tiered")
    if tiered is not None:
        tiered.scheduler.drop_queued()
        assert tiered.scheduler.idle(120), "background compiles still running 120 s after the test"


def pytest_report_header(config):
    from frame.backends import default_backend_name
    return (f"frame test setting: {SETTING} (FRAME_TEST_SETTING; jit default backend "
            f"{default_backend_name()}, tiered {'on' if frame.config.tiered else 'off'})")
