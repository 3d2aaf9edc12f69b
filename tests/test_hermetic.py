"""The test suite writes nothing under the user's real cache directory
(tests/conftest.py points every cache at a session temporary directory)."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import frame
from tests.conftest import SESSION_CACHE

ROOT = str(pathlib.Path(__file__).resolve().parents[1])


def _inside(path: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(SESSION_CACHE)]) \
        == os.path.realpath(SESSION_CACHE)


def test_every_cache_directory_resolves_into_the_session_directory():
    assert _inside(os.environ["FRAME_CACHE_DIR"])
    assert _inside(frame.config.cache_dir)
    assert _inside(frame.settings.Config.from_env().cache_dir)
    with frame.config.override(cache=True):
        from frame.runtime.persistent import active_store
        assert _inside(active_store().root)
    try:
        from frame.backends.openvino import model_cache_dir
    except ImportError:
        return
    assert _inside(model_cache_dir())


_SCRIPT = r"""
import importlib.util, numpy as np, frame
backends = ["cpu"] + (["openvino"] if importlib.util.find_spec("openvino") else [])
def f(x):
    return (x * 2.0 + 1.0).relu().sum()
for b in backends:
    x = frame.tensor(np.arange(5, dtype=np.float32))
    assert float(frame.jit(f, backend=b)(x).numpy()) == float(f(x).numpy())
print(frame.stats().extra.get("persistent_writes", 0))
"""


def test_a_subprocess_with_the_cache_on_writes_nothing_under_home(tmp_path):
    """A child inherits the suite's environment (with the persistent cache turned
    on): its HOME stays empty, its entries land in the session directory."""
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), FRAME_CACHE="1", PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) >= 1  # it did persist something, somewhere
    assert not list(home.rglob("*")), [str(p) for p in home.rglob("*")]
    assert any(pathlib.Path(os.environ["FRAME_CACHE_DIR"]).rglob("*.fce"))
