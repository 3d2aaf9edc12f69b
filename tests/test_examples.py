"""The training example (examples/mnist_mlp.py), ``python -m frame demo`` and
examples/jit_model_autograd.py.

Each runs in a subprocess, as a user would start it.  The accuracy test trains
for the demo's default epochs on scikit-learn's digits and is skipped without
scikit-learn.
"""
from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HAVE_SKLEARN = importlib.util.find_spec("sklearn") is not None
ACCURACY = re.compile(r"^test accuracy \((?P<run>[^)]*\)?)\): (?P<pct>\d+\.\d+)% "
                      r"\(train \d+\.\d+%\) on (?P<data>.+)$", re.M)


def _run(*args: str, cwd: pathlib.Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="120")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout)


def _accuracies(stdout: str) -> dict[str, tuple[float, str]]:
    return {m["run"]: (float(m["pct"]), m["data"]) for m in ACCURACY.finditer(stdout)}


def test_example_quick_prints_accuracy_for_both_runs():
    done = _run(str(ROOT / "examples" / "mnist_mlp.py"), "--quick", "--backend", "cpu")
    assert done.returncode == 0, done.stderr
    acc = _accuracies(done.stdout)
    assert set(acc) == {"frame eager", "frame.jit (cpu)"}, done.stdout
    for pct, data in acc.values():
        assert 0.0 <= pct <= 100.0
        assert data == ("handwritten digits" if HAVE_SKLEARN else "SYNTHETIC data")
    assert "2 epochs x 4 steps (--quick)" in done.stdout
    # same initial parameters and data order: the jitted run trains to the same model
    assert re.search(r"final parameters of the two runs differ by at most (\S+)", done.stdout)
    diff = float(re.search(r"differ by at most (\S+)", done.stdout)[1])
    assert diff < 1e-4, done.stdout
    assert "ms / step" in done.stdout


@pytest.mark.parametrize("backend", ["cpu", None])
def test_jit_model_autograd_example(backend):
    """Inference with jit(model) under grad mode is one graph whose backward is not
    compiled; training through jit(model) with an eager backward ends where eager
    training ends."""
    args = ["--steps", "12"] + (["--backend", backend] if backend else [])
    done = _run(str(ROOT / "examples" / "jit_model_autograd.py"), *args, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "inference under grad mode: graphs 1, graph breaks 0, backward graphs 1" in out, out
    assert "result requires grad: True; compiled backwards so far: 0" in out, out
    diff = float(re.search(r"eager training differ by at most (\S+)", out)[1])
    assert diff < 1e-4, out
    assert "compiled backward runs: 12" in out, out


def test_example_synthetic_data_is_labelled_as_such():
    done = _run(str(ROOT / "examples" / "mnist_mlp.py"), "--quick", "--data", "synthetic",
                "--no-jit")
    assert done.returncode == 0, done.stderr
    assert "SYNTHETIC data" in done.stdout
    assert "handwritten" not in done.stdout
    acc = _accuracies(done.stdout)
    assert list(acc) == ["frame eager"]
    assert acc["frame eager"][1] == "SYNTHETIC data"


def test_without_sklearn_auto_falls_back_to_labelled_synthetic_data():
    code = ("import sys; sys.modules['sklearn'] = None\n"  # import sklearn -> ImportError
            "from frame.demo import main\n"
            "sys.exit(main(['--quick', '--no-jit']))")
    done = _run("-c", code)
    assert done.returncode == 0, done.stderr
    assert "data: SYNTHETIC data (scikit-learn is not installed" in done.stdout
    assert _accuracies(done.stdout)["frame eager"][1] == "SYNTHETIC data"


def test_demo_runs_from_another_directory(tmp_path):
    """``python -m frame demo`` needs nothing from the source tree's examples/."""
    done = _run("-m", "frame", "demo", "--quick", "--no-eager", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "jit backend:" in done.stdout
    acc = _accuracies(done.stdout)
    assert len(acc) == 1 and next(iter(acc)).startswith("frame.jit ("), done.stdout


def test_demo_rejects_contradictory_flags():
    done = _run("-m", "frame", "demo", "--no-eager", "--no-jit")
    assert done.returncode != 0
    assert "nothing to run" in done.stderr


def test_bilinear_upsampling_keeps_constant_images_and_mean():
    from frame.demo import upsample
    const = np.full((2, 8, 8), 3.0)
    np.testing.assert_allclose(upsample(const, 28), 3.0)
    rng = np.random.default_rng(0)
    img = rng.random((1, 8, 8))
    up = upsample(img, 28)
    assert up.shape == (1, 28, 28)
    assert up.min() >= img.min() - 1e-12 and up.max() <= img.max() + 1e-12
    assert abs(up.mean() - img.mean()) < 0.05


def test_batch_order_is_fixed_by_seed_and_uses_full_batches():
    from frame.demo import BATCH, batch_order
    a = batch_order(1000, 2, seed=3, steps_per_epoch=None)
    b = batch_order(1000, 2, seed=3, steps_per_epoch=None)
    assert len(a) == 2 and len(a[0]) == 1000 // BATCH
    assert all(len(idx) == BATCH for epoch in a for idx in epoch)
    assert all(np.array_equal(x, y) for ea, eb in zip(a, b) for x, y in zip(ea, eb))
    assert len(np.unique(np.concatenate(a[0]))) == BATCH * (1000 // BATCH)
    c = batch_order(1000, 1, seed=4, steps_per_epoch=None)
    assert not np.array_equal(a[0][0], c[0][0])


@pytest.mark.skipif(not HAVE_SKLEARN, reason="scikit-learn is not installed (pip install -e "
                    "'.[examples]'): the digits data set comes with it")
def test_demo_reaches_95_percent_on_digits():
    """The demo's default settings (epochs, lr, seed) train the MLP to >= 95% test
    accuracy on the digits, eagerly and jitted (cpu backend: the same numbers)."""
    done = _run("-m", "frame", "demo", "--backend", "cpu", timeout=300)
    assert done.returncode == 0, done.stderr
    assert "handwritten digits (scikit-learn load_digits" in done.stdout
    acc = _accuracies(done.stdout)
    assert set(acc) == {"frame eager", "frame.jit (cpu)"}, done.stdout
    for run, (pct, data) in acc.items():
        assert data == "handwritten digits"
        assert pct >= 95.0, f"{run}: {pct}% test accuracy\n{done.stdout}"


def test_numpy_only_example_is_one_graph_and_matches_numpy():
    src = (ROOT / "examples" / "numpy_only.py").read_text()
    body = src[src.index("def kmeans_step"):src.index("def make_data")]
    assert "frame" not in body  # the jitted function is NumPy only
    done = _run(str(ROOT / "examples" / "numpy_only.py"), "--iterations", "3", "--backend", "cpu")
    assert done.returncode == 0, done.stderr
    assert "kmeans_step captured as 1 graph(s), 0 graph break(s)" in done.stdout, done.stdout
    assert "plain NumPy and frame.jit (cpu) agree" in done.stdout, done.stdout
    assert done.stdout.count("iteration ") == 3


def test_changing_lr_example_recompiles_only_at_the_second_call():
    done = _run(str(ROOT / "examples" / "changing_lr.py"), "--steps", "12", "--backend", "cpu")
    assert done.returncode == 0, done.stderr
    assert "recompiles: 1 in all, 0 after the second call" in done.stdout, done.stdout
    first, last = map(float, re.search(r"loss (\S+) -> (\S+)", done.stdout).groups())
    assert last < first
