"""Coverage corpus, Python scalars that change between calls (issue 15, item 9),
in the style of TorchDynamo's test_unspec / dynamic-shapes tests: learning-rate
schedules, temperatures, ``random.random()`` passed in, ``t.item()`` fed
back, counters on objects, momentum and decay factors.

Each case is called several times with different scalar values (``calls=``),
every call compared with the plain function; ``recompiles=`` counts the
calls that translated again: a scalar used only in arithmetic becomes a graph
input at the second call (1 recompile), one that decides a shape, a loop
count or a branch keeps its value guard (docs/capture.md, "Dynamic scalars").
``graphs=`` is what ``frame.explain`` shows for the first call."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

import frame

from .corpus import Corpus
from .helpers import array, tensor

case = Corpus()

_rng = random.Random(15)
RANDOMS = [_rng.random() for _ in range(5)]


def _each(values, make):
    return lambda: [make(v) for v in values]


LRS = (0.1, 0.05, 0.025, 0.0125, 3e-4)


# -- learning rates and schedules -----------------------------------------------------------------

@case(calls=_each(LRS, lambda lr: (tensor(), tensor(seed=1), lr)), graphs=1, recompiles=1)
def sgd_update(w, g, lr):
    return w - lr * g


@case(calls=_each(range(5), lambda e: (tensor(), tensor(seed=1), e)), graphs=1, recompiles=1)
def step_decay(w, g, epoch):
    lr = 0.1 * 0.5 ** (epoch // 2)
    return w - lr * g


@case(calls=_each(range(0, 100, 20), lambda s: (tensor(), s, 100)), graphs=1, recompiles=1)
def cosine_annealing(x, step, total):
    lr = 0.5 * 0.1 * (1.0 + math.cos(math.pi * step / total))
    return x * lr


@case(calls=_each((0, 3, 6, 12, 20), lambda s: (tensor(), s)), graphs=1, recompiles=1)
def linear_warmup(x, step):
    scale = min(1.0, (step + 1) / 10)
    return x * scale


@case(calls=_each(range(1, 6), lambda s: (tensor(), 0.1, 0.9, s)), graphs=1, recompiles=1)
def exponential_decay(x, lr, gamma, step):
    return x * (lr * gamma ** step)


@case(calls=_each((0, 10, 50, 90), lambda s: (tensor(), s)), graphs=1, recompiles=1)
def polynomial_decay(x, step):
    lr = 0.01 * (1 - step / 100) ** 2.0
    return x * lr


@case(calls=_each(LRS, lambda lr: (tensor(), tensor(seed=1), lr, 1e-2)), graphs=1, recompiles=1)
def sgd_weight_decay(w, g, lr, wd):
    g = g + wd * w
    return w - lr * g


@case(calls=_each(LRS, lambda lr: (tensor(), tensor(seed=1), tensor(seed=2), lr)), graphs=1,
      recompiles=1)
def momentum_step(w, g, buf, lr, momentum=0.9):
    buf = buf * momentum + g
    return w - lr * buf, buf


@case(calls=_each(range(1, 6), lambda s: (tensor(), tensor(seed=1), tensor(positive=True), s)),
      graphs=1, recompiles=1)
def adam_bias_correction(w, m, v, step, lr=1e-3, beta1=0.9, beta2=0.999):
    m_hat = m / (1 - beta1 ** step)
    v_hat = v / (1 - beta2 ** step)
    return w - lr * m_hat / (frame.sqrt(v_hat) + 1e-8)


@case(calls=_each(LRS, lambda lr: (array(), array(seed=1), lr)), graphs=1, recompiles=1)
def numpy_sgd(w, g, lr):
    return w - lr * g


@case(calls=_each(LRS, lambda lr: (tensor(dtype="float16"), lr)), graphs=1, recompiles=1)
def half_precision_scale(x, lr):
    return x * lr


# -- temperatures, random values, values read back -----------------------------------------------

@case(calls=_each((1.0, 0.5, 2.0, 0.7), lambda t: (tensor((4, 5)), t)), graphs=1, recompiles=1)
def softmax_temperature(logits, temperature):
    return frame.softmax(logits / temperature, axis=-1)


@case(calls=_each((1.0, 0.5, 2.0, 0.7), lambda t: (array((4, 5)), t)), graphs=1, recompiles=1)
def numpy_softmax_temperature(logits, temperature):
    z = logits / temperature
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@case(calls=_each(RANDOMS, lambda r: (tensor(), r)), graphs=1, recompiles=1)
def random_mix(x, r):
    return x * r + (1.0 - r)


@case(calls=_each(RANDOMS, lambda s: (tensor(), tensor(seed=3), s)), graphs=1, recompiles=1)
def noise_injection(x, noise, sigma):
    return x + sigma * noise


@case(calls=_each((1.0, 0.8, 1.7, 0.3), lambda p: (tensor(), p)), graphs=1, recompiles=1)
def item_fed_back(x, prev_loss):
    loss = ((x * prev_loss) ** 2).mean()
    return loss, x - 0.1 * loss


@case(calls=_each((0.1, 0.2, 0.5), lambda p: (tensor(), p)), graphs=1, recompiles=1)
def inverted_dropout_scale(x, p):
    return x * (1.0 / (1.0 - p))


@case(calls=_each((0.0, 0.1, 0.2), lambda e: (tensor((3, 4)), e)), graphs=1, recompiles=1)
def label_smoothing(y, eps):
    k = y.shape[-1]
    return y * (1 - eps) + eps / k


@case(calls=_each((0.01, 0.1, 0.2), lambda s: (tensor(), s)), graphs=1, recompiles=1)
def leaky_relu_slope(x, slope):
    return frame.where(x > 0, x, x * slope)


@case(calls=_each((0.5, -1.0, 1.5), lambda t: (tensor(), t)), graphs=1, recompiles=1)
def threshold_mask(x, threshold):
    return x * (x > threshold)


@case(calls=_each((0.5, 1.0, 2.0), lambda d: (tensor(), tensor(seed=1), d)), graphs=1,
      recompiles=1)
def huber_delta(pred, target, delta):
    d = pred - target
    quadratic = 0.5 * d * d
    linear = delta * (abs(d) - 0.5 * delta)
    return frame.where(abs(d) < delta, quadratic, linear).mean()


@case(calls=_each((0.999, 0.99, 0.9), lambda d: (tensor(), tensor(seed=1), d)), graphs=1,
      recompiles=1)
def ema_update(shadow, param, decay):
    return shadow * decay + (1.0 - decay) * param


@case(calls=_each((0.1, 0.5, 1.0), lambda a: (tensor(), a)), graphs=1, recompiles=1)
def scaled_residual(x, alpha):
    return x + alpha * frame.relu(x)


@case(calls=_each((1.0, 5.0, 0.5), lambda m: (tensor(), m)), graphs=1, recompiles=1)
def clip_grad_norm_factor(g, max_norm):
    norm = frame.sqrt((g * g).sum())
    return g * frame.minimum(max_norm / (norm + 1e-6), 1.0)


@case(calls=_each(((1.0, 0.0), (2.0, 0.5), (0.5, -1.0)), lambda ab: (tensor(), *ab)), graphs=1,
      recompiles=1)
def affine_two_scalars(x, a, b):
    return x * a + b


# -- integers and counters ------------------------------------------------------------------------

@case(calls=_each(range(1, 5), lambda n: (tensor(), n)), graphs=1, recompiles=1)
def int_multiplier(x, n):
    return x * n


@case(calls=_each(range(1, 5), lambda k: (tensor(dtype="int64"), k)), graphs=1, recompiles=1)
def int_tensor_offset(x, k):
    return x + k


@case(calls=_each(range(1, 5), lambda s: (tensor(dtype="int32"), s / 4)), graphs=1, recompiles=1)
def int_tensor_times_float(x, s):
    return x * s


@case(calls=_each(range(1, 6), lambda s: (tensor(), s)), graphs=1, recompiles=1)
def rounded_step(x, step):
    return x * round(step / 3) + float(step)


class _Counter:
    def __init__(self, calls):
        self.calls = calls
        self.scale = 1.0

    def forward(self, x):
        self.calls += 1
        self.scale = self.scale * 0.5 + self.calls
        return x * self.scale


@case(calls=_each(range(4), lambda n: (_Counter(n), tensor())), graphs=1, recompiles=1)
def counter_on_object(model, x):
    return model.forward(x)


class _Opt:
    def __init__(self, lr):
        self.param_groups = [{"lr": lr, "momentum": 0.0}]


@case(calls=_each(LRS, lambda lr: (tensor(), tensor(seed=1), _Opt(lr))), graphs=1, recompiles=1)
def param_group_lr(w, g, opt):
    group = opt.param_groups[0]
    return w - group["lr"] * g


@case(calls=_each(LRS, lambda lr: (tensor(), lr)), graphs=1, recompiles=1)
def scalar_results_returned(x, lr):
    new_lr = lr * 0.5
    return x * new_lr, new_lr, {"lr": new_lr, "doubled": lr * 2}


# -- values that decide shapes, loops and branches keep their value guard ---------------------------

@case(calls=_each((1, 2, 3, 4), lambda n: (tensor((4, 6)), n)), graphs=1, recompiles=3)
def reshape_by_int(x, n):
    return x.reshape(n, -1) * n


@case(calls=_each((1, 2, 3), lambda n: (tensor(), n)), graphs=1, recompiles=2)
def loop_count(x, n):
    for _ in range(n):
        x = x * 0.5
    return x


@case(calls=_each((0, 1, 2, 0), lambda i: ([tensor(seed=s) for s in range(3)], i)), graphs=1,
      recompiles=2)
def index_a_list(xs, i):
    return xs[i] * 2


# the branch guards `step % 2 == 0` (its outcome), not step: one entry per outcome
@case(calls=_each(range(5), lambda s: (tensor(), s, 0.1)), graphs=1, recompiles=1)
def even_odd_branch(x, step, lr):
    if step % 2 == 0:
        return x * lr
    return x * -lr


@case(calls=_each(range(6), lambda s: (tensor(), s)), graphs=1, recompiles=2)
def warmup_branch(x, step, warmup=3):
    if step < warmup:
        return x * ((step + 1) / warmup)
    return x


@case(calls=_each(LRS[:3], lambda lr: (tensor(), lr)), graphs=2, breaks=("print",),
      recompiles=1)
def print_lr(x, lr):
    y = x * lr
    print("lr", lr)
    return y + 1


@case(calls=_each(LRS[:3], lambda lr: (tensor(), lr)), graphs=1, recompiles=2)
def lr_formatted(x, lr):
    return x * lr, f"lr={lr:.4f}"


def test_enough_cases():
    assert len(case.cases) >= 30


@pytest.mark.parametrize("c", case.params())
def test_coverage_scalars(c):
    c.check()
