"""The openvino backend's tests are about OpenVINO compiling a graph: tiered
compilation, which would run the graph on the cpu tier first and compile for
OpenVINO in the background (FRAME_TEST_SETTING=default, tests/conftest.py), is
pinned off for them."""
from __future__ import annotations

import pytest

import frame


@pytest.fixture(autouse=True)
def _untiered():
    with frame.config.override(tiered=False):
        yield
