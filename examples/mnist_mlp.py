"""Train an MLP 784 -> 256 -> 128 -> 10 on handwritten digits with frame, eagerly
and with ``frame.jit``, and compare time per step and test accuracy.

    python examples/mnist_mlp.py                      # 10 epochs, digits if scikit-learn is installed
    python examples/mnist_mlp.py --quick              # a few steps (smoke test)
    python examples/mnist_mlp.py --backend cpu --no-eager
    python -m frame demo                              # the same program

The data are scikit-learn's bundled 8x8 digits upsampled to 28x28
(``pip install -e ".[examples]"``), or a clearly labelled synthetic set without
scikit-learn.  The training loop is the usual one::

    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    opt = frame.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    @frame.jit
    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

The code lives in ``frame/demo.py`` (inside the package, so ``python -m frame
demo`` works after ``pip install`` from any directory); this file is its
command-line entry point.
"""
from __future__ import annotations

import sys

from frame.demo import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog="examples/mnist_mlp.py"))
