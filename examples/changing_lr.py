"""A training loop whose learning rate changes at every step (cosine schedule).

The jitted step reads ``opt.lr``, a Python float that is different at every
call.  Its first translation treats it as a constant; the second call sees a
new value, and capture makes it an input of the graph (a 0-d float32 array,
the dtype a Python float takes next to float32 parameters), so from then on
every step is a cache hit: 0 recompiles after the second call
(docs/capture.md, "Dynamic scalars").

    python examples/changing_lr.py --steps 50 --backend cpu
    FRAME_LOG=recompiles python examples/changing_lr.py       # the one recompile, and why
    FRAME_DYNAMIC_SCALARS=0 python examples/changing_lr.py    # one recompile per step, up to the limit
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import frame
import frame.nn.functional as F


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="training steps")
    parser.add_argument("--lr", type=float, default=0.1, help="peak learning rate")
    parser.add_argument("--backend", default=None, help="cpu or openvino (default: frame's)")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    true_w = rng.standard_normal((8, 1)).astype(np.float32)
    x = frame.tensor(rng.standard_normal((64, 8)).astype(np.float32))
    y = frame.tensor(x.numpy() @ true_w + 0.5)

    frame.manual_seed(0)
    model = frame.nn.Linear(8, 1)
    opt = frame.optim.SGD(model.parameters(), lr=args.lr)

    @frame.jit(backend=args.backend)
    def train_step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    losses, recompiles = [], []
    for step in range(args.steps):
        opt.lr = 0.5 * args.lr * (1.0 + math.cos(math.pi * step / args.steps))  # cosine schedule
        losses.append(train_step(x, y).item())
        recompiles.append(frame.stats().recompiles)

    after_second = recompiles[-1] - recompiles[min(1, len(recompiles) - 1)]
    print(f"{args.steps} steps, learning rate {args.lr:g} -> {opt.lr:.2g} (cosine)")
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(f"recompiles: {recompiles[-1]} in all, {after_second} after the second call")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
