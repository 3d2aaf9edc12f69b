"""Suite-wide defaults that keep tests hermetic.

The persistent compile cache (FRAME_CACHE) would let one test's compiles turn
into disk hits in later tests and later runs (changing compile counts), and
would write to the user's cache folder; tiered compilation (FRAME_TIERED)
would compile in the background and make counters and logs depend on timing.
Both are off here; tests/runtime/test_persistent_cache.py and
tests/runtime/test_tiered.py turn them on explicitly.  Set in the
environment as well, so subprocesses started by tests inherit them unless a
test passes its own values.
"""
from __future__ import annotations

import os

os.environ["FRAME_CACHE"] = "0"
os.environ["FRAME_TIERED"] = "0"

import frame  # noqa: E402  (after the environment: frame.config reads it at import)

frame.config.cache = False
frame.config.tiered = False
