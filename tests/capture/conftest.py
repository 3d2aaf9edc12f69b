"""Fixtures for the capture tests: fresh code caches per test, and a compile counter."""
from __future__ import annotations

import pytest

import capture

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
