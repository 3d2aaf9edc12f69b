"""Fixtures for the capture tests: fresh code caches per test, a compile
counter, and fresh statistics with frame's log quiet."""
from __future__ import annotations

import logging

import pytest

import capture
import frame

from .helpers import CompileCounter


@pytest.fixture(autouse=True)
def _fresh_code_caches():
    # parametrised tests share code objects: without this, earlier parameters'
    # entries would count against the recompile limit of later ones
    capture.reset_caches()
    yield
    capture.reset_caches()


@pytest.fixture
def compile_counter() -> CompileCounter:
    """Counters zeroed, code caches and the compilation cache emptied."""
    counter = CompileCounter()
    counter.reset()
    return counter


@pytest.fixture
def quiet_fresh_stats():
    """``frame.stats()`` zeroed, and frame's WARN lines (breaks, recompile
    limits) silenced for the test: tests that count recompiles."""
    logger = logging.getLogger("frame")
    level = logger.level
    logger.setLevel(logging.ERROR)
    frame.reset_stats()
    yield
    logger.setLevel(level)
