"""Suite-wide defaults that keep tests hermetic.

The persistent compile cache (FRAME_CACHE) would let one test's compiles turn
into disk hits in later tests and later runs (changing compile counts);
tiered compilation (FRAME_TIERED) would compile in the background and make
counters and logs depend on timing.  Both are off here;
tests/runtime/test_persistent_cache.py and tests/runtime/test_tiered.py turn
them on explicitly.

Nothing is written under the user's home either: every cache directory
(frame's persistent entries, capture's stored translations, OpenVINO's own
model cache, which FRAME_CACHE=0 does not turn off) derives from
FRAME_CACHE_DIR, set here to a temporary directory of this test session
(removed at exit), and XDG_CACHE_HOME points into it too.  All of it is set
in the environment before frame is imported, so subprocesses started by
tests inherit it unless a test passes its own values
(tests/test_hermetic.py checks this).
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

SESSION_CACHE = tempfile.mkdtemp(prefix="frame-test-cache-")
atexit.register(shutil.rmtree, SESSION_CACHE, True)

os.environ["FRAME_CACHE"] = "0"
os.environ["FRAME_TIERED"] = "0"
os.environ["FRAME_CACHE_DIR"] = os.path.join(SESSION_CACHE, "frame")
os.environ["XDG_CACHE_HOME"] = os.path.join(SESSION_CACHE, "xdg")

import frame  # noqa: E402  (after the environment: frame.config reads it at import)

frame.config.cache = False
frame.config.tiered = False
