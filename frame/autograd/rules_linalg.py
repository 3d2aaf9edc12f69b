"""Gradient rules of the ``numpy.linalg`` ops (frame/ops/linalg.py).

With ``A^H`` the conjugate transpose of the last two axes (the transpose for
real values) and frame's complex convention (the gradient of a holomorphic
``f`` is ``conj(f') * g``, as for matmul):

- ``inv``: ``Y = inv(A)``, ``dY = -Y dA Y``, so ``gA = -Y^H g Y^H``.
- ``solve``: ``X = solve(A, B)``: ``gB = solve(A^H, g)``, ``gA = -gB X^H``
  (a 1-D ``b`` is a column; batches broadcast and are summed back).
- ``det``: ``d(det A) = det A * tr(inv(A) dA)``, so
  ``gA = g * conj(det A) * inv(A)^H``.
- ``slogdet``: ``logabsdet`` gives ``gl * inv(A)^H``; the sign is constant
  for real matrices, and for complex ones (``sign = exp(i * angle)``) adds
  ``i * Im(conj(sign) * gs) * inv(A)^H``.

The rules of det and slogdet invert ``A``: at a singular matrix the gradient
raises NumPy's LinAlgError (``inv``'s kernel) instead of giving the adjugate.
``eigh``, ``eigvalsh``, ``cholesky``, ``qr``, ``svd`` and ``pinv`` are
non-differentiable (schema trait): asking for their gradient raises.
"""
from __future__ import annotations

from .helpers import conj, differentiable, fit, unbroadcast
from .registry import gradient_rule

__all__: list[str] = []


def _h(b, v):
    """``v^H``: the conjugate transpose of the last two axes."""
    r = v.type.rank
    return b.op("transpose", conj(b, v), perm=tuple(range(r - 2)) + (r - 1, r - 2))


def _matrix_scale(b, s, m):
    """``s[..., None, None] * m``: a scalar per matrix times the matrices."""
    return b.op("mul", b.op("reshape", s, shape=s.type.shape + (1, 1)), m)


@gradient_rule("inv")
def _inv(b, inputs, outputs, grads, attrs):
    (a,), (y,), (g,) = inputs, outputs, grads
    if g is None or not differentiable(a):
        return [None]
    yh = _h(b, y)
    return [fit(b, b.op("neg", b.op("matmul", b.op("matmul", yh, g), yh)), a)]


@gradient_rule("solve")
def _solve(b, inputs, outputs, grads, attrs):
    (a, rhs), (x,), (g,) = inputs, outputs, grads
    if g is None or not (differentiable(a) or differentiable(rhs)):
        return [None, None]
    if rhs.type.rank == 1:  # one right-hand side: a column of each batch
        g = b.op("reshape", g, shape=g.type.shape + (1,))
        x = b.op("reshape", x, shape=x.type.shape + (1,))
    g_full = b.op("solve", _h(b, a), g)  # the gradient of b, on the broadcast batch
    ga = gb = None
    if differentiable(a):
        ga = unbroadcast(b, b.op("neg", b.op("matmul", g_full, _h(b, x))), a.type.shape)
    if differentiable(rhs):
        if rhs.type.rank == 1:
            gb = b.op("reshape", unbroadcast(b, g_full, rhs.type.shape + (1,)),
                      shape=rhs.type.shape)
        else:
            gb = unbroadcast(b, g_full, rhs.type.shape)
    return [fit(b, ga, a), fit(b, gb, rhs)]


@gradient_rule("vector_norm")
def _vector_norm(b, inputs, outputs, grads, attrs):
    (x,), (y,), (g,) = inputs, outputs, grads
    if g is None or not differentiable(x):
        return [None]
    return [b.op("mul", x, b.op("div", g, y))]   # d sqrt(sum x^2) = x / y


@gradient_rule("det")
def _det(b, inputs, outputs, grads, attrs):
    (a,), (d,), (g,) = inputs, outputs, grads
    if g is None or not differentiable(a):
        return [None]
    scale = b.op("mul", g, conj(b, d))
    return [fit(b, _matrix_scale(b, scale, _h(b, b.op("inv", a))), a)]


@gradient_rule("slogdet")
def _slogdet(b, inputs, outputs, grads, attrs):
    (a,), (sign, _), (gs, gl) = inputs, outputs, grads
    if not differentiable(a):
        return [None]
    scale = gl
    if gs is not None and a.type.dtype.kind == "c":
        # i * Im(conj(sign) * gs) = (conj(sign) * gs - sign * conj(gs)) / 2
        w = b.op("mul", conj(b, sign), gs)
        turn = b.op("mul", b.op("sub", w, conj(b, w)), b.scalar(0.5, like=w))
        scale = turn if scale is None else b.op("add", b.op("cast", scale, dtype=turn.type.dtype),
                                                turn)
    if scale is None:
        return [None]
    return [fit(b, _matrix_scale(b, scale, _h(b, b.op("inv", a))), a)]
