"""The random program generator of ``test_python_constructs_fuzz.py``: small Python
functions ``f(x, y, s, lst, d)`` composed from snippets of the constructs frame's capture
must reproduce exactly (closures and ``nonlocal``, nested functions, lambdas, defaults,
``*args``/``**kwargs``, keyword-only arguments, comprehensions, generators and
``yield from``, classes, properties, ``__getattr__``, dataclasses, NamedTuple,
``super()``, globals read and written, dict/list/set mutation, ``sorted(key=)``,
iteration builtins, string formatting of NumPy values, ``isinstance``/``type``,
exceptions raised, caught, re-raised and chained, ``try/finally``, ``assert``, walrus,
``match``, ``del``, unpacking, slicing, Python int/float/complex arithmetic, ``math``,
``operator``, ``functools.reduce``, ``itertools``, early returns, ``while``/``for-else``,
nested ``break``/``continue``) around NumPy arrays and scalars, with data-dependent
branches, prints, mutation of the arguments and of module globals, and raising paths.
Snippets may be wrapped (up to two deep) in loops, ``try``, nested functions,
generators, ``with`` blocks, data-dependent ``if``, ``match`` and comprehensions.

``make_program(seed)`` is the module's source (a fixed prelude of helper classes and
globals, then ``f``); ``make_inputs(seed, call)`` the arguments of the ``call``-th call
(calls 0 and 1 differ in values only: a cache hit; later calls change a shape, dtype,
length, scalar type or put NaN/inf/-0.0 in the arrays: guard failures, recompiles).
Deterministic for a seed on every Python version.
"""
import random
import textwrap

PRELUDE = '''\
import contextlib
import dataclasses
import functools
import itertools
import math
import operator
from typing import NamedTuple

import numpy as np

G_count = 0
G_list = []
G_scale = 1.5
G_arr = np.arange(3.0)


class MyErr(Exception):
    pass


class Box:
    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return self.v < other.v

    def __len__(self):
        return 2

    def __iter__(self):
        yield self.v
        yield -self.v

    def __call__(self, a):
        return a + self.v

    def __repr__(self):
        return f'Box({self.v!r})'


class NT(NamedTuple):
    a: object
    b: int = 3


@dataclasses.dataclass
class Pt:
    x: float
    y: float = 2.0

    def norm2(self):
        return self.x * self.x + self.y * self.y

    @property
    def swapped(self):
        return Pt(self.y, self.x)


class Base:
    def __init__(self, k):
        self.k = k

    def value(self, v):
        return v * self.k

    def __repr__(self):
        return f"Base({self.k})"


class Child(Base):
    def __init__(self, k):
        super().__init__(k + 1)
        self.extra = [k]

    def value(self, v):
        return super().value(v) + 1


class Dyn:
    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return name.upper()


@contextlib.contextmanager
def ctx(tag, log):
    log.append(("enter", tag))
    try:
        yield tag
    finally:
        log.append(("exit", tag))


def helper_kw(a, *, b=2, **kw):
    return a * b + len(kw)
'''

# Each snippet: a function (rng, i) -> lines (str, body-level indentation 0).
SNIPPETS = []


def snippet(weight=1):
    def deco(fn):
        SNIPPETS.extend([fn] * weight)
        return fn
    return deco


@snippet()
def closure_nonlocal(r, i):
    return f'''
c{i} = 0
def inc{i}(v):
    nonlocal c{i}
    c{i} += 1
    return v * 2
t{i} = inc{i}(x) + inc{i}(y)
out.append((t{i}, c{i}))
'''


@snippet()
def lambda_default(r, i):
    k = r.choice([2, 3, -1])
    return f'''
g{i} = lambda a, k={k}: a * k + 1
out.append(g{i}(x))
out.append(g{i}(s, k=2))
'''


@snippet()
def star_args(r, i):
    return f'''
def h{i}(*a, scale=2, **kw):
    return sum(a) * scale + len(kw)
out.append(h{i}(s, 1, 2, scale=3, z=1))
out.append(h{i}(*lst, **d))
out.append(helper_kw(s, b=3, q=1))
'''


@snippet()
def kwonly(r, i):
    return f'''
def k{i}(a, *, b=2):
    return a - b
out.append(k{i}(x.sum(), b=len(lst)))
'''


@snippet(2)
def comprehensions(r, i):
    c = r.choice([
        "[v * 2 for v in lst if v % 2]",
        "{k: v + 1 for k, v in sorted(d.items())}",
        "sorted({v % 3 for v in lst})",
        "sum(v * v for v in lst)",
        "[x * v for v in lst[:2]]",
        "[[a + b for a in range(2)] for b in lst[:3]]",
        "{str(k): float(x.sum()) * k for k in range(3)}",
        "any(v > 3 for v in lst)",
        "all(v >= 0 for v in lst)",
        "max((v for v in lst), default=-1)",
        "list(v for v in lst if v != len(d))",
    ])
    return f'''
out.append({c})
'''


@snippet()
def generator_fn(r, i):
    return f'''
def gen{i}(n):
    for j in range(n):
        if j > 4:
            return
        yield j
    yield from range(2)
    yield n * 10
out.append(list(gen{i}(len(lst))))
'''


@snippet()
def generator_arrays(r, i):
    return f'''
def agen{i}(a):
    yield a
    yield a * 2
acc{i} = 0
for item{i} in agen{i}(x):
    acc{i} = acc{i} + item{i}
out.append(acc{i})
'''


@snippet()
def dataclass_use(r, i):
    return f'''
p{i} = Pt(s, 2)
out.append(p{i}.norm2())
out.append(p{i}.swapped)
p{i}.x = p{i}.x + 1
out.append(dataclasses.astuple(p{i}))
'''


@snippet()
def namedtuple_use(r, i):
    return f'''
nt{i} = NT(x.sum(), len(lst))
out.append(nt{i}.a * nt{i}.b)
out.append(nt{i}._replace(b=4))
a{i}, b{i} = nt{i}
out.append(b{i})
'''


@snippet()
def inheritance(r, i):
    return f'''
ch{i} = Child(len(lst))
out.append(ch{i}.value(x))
out.append(repr(ch{i}))
out.append(isinstance(ch{i}, Base))
'''


@snippet()
def getattr_dyn(r, i):
    return f'''
out.append(Dyn().foo_bar)
out.append(getattr(Dyn(), "zz", None))
out.append(hasattr(Dyn(), "_hidden"))
'''


@snippet(2)
def globals_rw(r, i):
    return r.choice([f'''
G_count += 1
G_list.append(len(out))
out.append(G_count * x)
''', f'''
out.append(x * G_scale)
''', f'''
if G_count > 1:
    out.append(G_list[-1] if G_list else None)
G_count = G_count + len(lst)
'''])


@snippet(2)
def dict_mut(r, i):
    return r.choice([f'''
d['new{i}'] = len(d)
out.append(list(d))
''', f'''
first{i} = next(iter(d))
out.append(d.pop(first{i}))
d[first{i}] = -1
out.append(list(d.items()))
''', f'''
d.setdefault('sd{i}', 5)
d.update(u{i}=1)
out.append(d.get('missing', 0) + d['sd{i}'])
out.append(sorted(d, key=d.get))
'''])


@snippet(2)
def list_mut(r, i):
    return r.choice([f'''
lst.append(len(out))
lst.sort(reverse=True)
out.append(list(lst))
''', f'''
lst.insert(0, 7)
del lst[-1]
out.append(lst[::-1][:2])
''', f'''
lst.extend([3, 1])
out.append(lst.count(3))
out.append(lst.index(1))
''', f'''
lst[:] = [v + 1 for v in lst]
out.append(tuple(lst)[1:])
'''])


@snippet()
def sorting(r, i):
    return r.choice([f'''
out.append(sorted(lst, key=lambda v: (-v % 3, v)))
''', f'''
out.append(sorted(d.items(), key=lambda kv: kv[1], reverse=True))
''', f'''
out.append(min(lst, key=abs) if lst else 0)
'''])


@snippet(2)
def iter_tools(r, i):
    c = r.choice([
        "list(zip(lst, reversed(lst)))",
        "[j * v for j, v in enumerate(lst)]",
        "list(map(abs, [v - 3 for v in lst]))",
        "list(filter(None, [v % 2 for v in lst]))",
        "list(enumerate('ab', start=1))",
        "dict(zip('abc', lst))",
        "list(itertools.accumulate(lst))",
        "list(itertools.chain(lst, [1]))",
        "list(itertools.product(range(2), repeat=2))",
        "list(itertools.islice(itertools.count(s), 3))",
        "functools.reduce(operator.add, lst, 0)",
        "functools.reduce(lambda a, b: a * b + 1, lst, 1)",
        "list(map(lambda a, b: a + b, lst, lst[1:]))",
        "sum([x, y])",
        "list(itertools.pairwise(lst))",
        "[k for k, _ in itertools.groupby(sorted(lst))]",
    ])
    return f'''
out.append({c})
'''


@snippet(3)
def formatting(r, i):
    c = r.choice([
        'f"{s:.3f}|{len(lst):03d}"',
        'f"{float(x.max()):.4g}"',
        '"%.2f" % float(x.max())',
        '"%d items, %s" % (len(lst), type(s).__name__)',
        '"{}".format(np.float32(s))',
        '"{:.3e}".format(x.dtype.type(s))',
        'repr(x.max())',
        'repr(x)',
        'str(x * 2)',
        'f"{x}"',
        '"%s" % (x,)',
        'repr(x.astype(np.float16))',
        'np.array2string(x, precision=2)',
        'f"{x.sum():g}|{x.sum():e}|{x.max():+.1f}"',
        '"{:,}".format(2 ** 70 + len(lst))',
        'f"{x.sum():_>12.3f}"',
        'repr(complex(np.complex64(s)))',
        'str(np.complex128(s) * 1j)',
        'f"{np.float16(s)}"',
        '"%5.1f%%" % (float(x.max()) * 100)',
        '"%x %o %e" % (len(lst), len(lst) + 8, s)',
        'f"{len(lst)=}"',
        'repr([x.sum(), s])',
        'str((x.max(), y.min()))',
        'repr(dict(a=x.sum()))',
        'str(x.max())',
        'repr(x.shape)',
        'str(x.dtype)',
        'f"{x.max()!r}"',
        'f"{x.max()}"',
        'repr(np.float64(s) / 3)',
        'str(x[..., :1])',
        'repr(np.asarray(x).max(keepdims=True))',
        'f"{s!r:>10}"',
        'f"{x.shape}-{x.ndim}"',
        '"%r" % (x.dtype,)',
        'format(s, ".1%")',
        'str(float(s) / 7)',
        'repr(1e16 * s)',
        '"%s" % x.sum()',
    ])
    return f'''
out.append({c})
'''


@snippet(3)
def prints(r, i):
    c = r.choice([
        'print("step", {i}, x.shape, len(lst))',
        'print(f"max={{x.max()}}")',
        'print(x.max(), s, sep=";")',
        'print(x)',
        'print(d, end="!\\n")',
        'print(repr(x.sum()))',
        'print("%.3f" % float(x.sum()))',
        'print(type(x.sum()).__name__, x.dtype)',
    ])
    return f'''
{c.format(i=i)}
'''


@snippet(2)
def type_checks(r, i):
    return r.choice([f'''
if isinstance(s, int):
    out.append(s * 2)
else:
    out.append(s / 2)
''', f'''
out.append(type(x.sum()).__name__)
out.append(type(s) is float)
''', f'''
out.append(isinstance(x, np.ndarray) and x.ndim > 0)
out.append(isinstance(x.sum(), (np.floating, float)))
'''])


@snippet(2)
def exceptions(r, i):
    return r.choice([f'''
try:
    if x.sum() > 0:
        raise ValueError("pos %d" % len(lst))
    out.append(1)
except ValueError as e{i}:
    out.append(str(e{i}))
''', f'''
try:
    try:
        {{}}['missing{i}']
    except KeyError as e:
        raise RuntimeError("wrapped") from e
except RuntimeError as e2:
    out.append((str(e2), type(e2.__cause__).__name__, repr(e2.__cause__)))
''', f'''
try:
    out.append(x.mean())
finally:
    lst.append(99)
''', f'''
try:
    v{i} = lst[5]
except IndexError as e:
    v{i} = str(e)
else:
    v{i} = v{i} * 2
finally:
    out.append('fin')
out.append(v{i})
''', f'''
try:
    out.append(1 // (len(lst) - 3))
except ZeroDivisionError:
    out.append('zde')
''', f'''
try:
    raise KeyError(len(lst))
except (KeyError, IndexError) as e:
    out.append(e.args)
'''])


@snippet(1)
def raising(r, i):
    return r.choice([f'''
out.append(lst[4])
''', f'''
out.append(d['k3'])
''', f'''
out.append(1 / (len(lst) - 3))
''', f'''
assert x.min() > -2.5, "too small: %s" % x.min()
''', f'''
assert len(lst) < 5
''', f'''
if x.sum() > 3:
    raise ValueError(f"sum {{x.sum():.2f}} too large")
''', f'''
out.append(x.reshape(len(lst) + 1))
''', f'''
out.append(int("3" if s > 0 else "x"))
''', f'''
try:
    out.append(lst[7])
except IndexError:
    raise
''', f'''
try:
    out.append(1 / (len(lst) - 4))
except ZeroDivisionError as e:
    raise ValueError("bad length") from e
'''])


@snippet()
def walrus(r, i):
    return f'''
if (n{i} := len(lst)) > 2:
    out.append(n{i})
out.append([y{i} for v in lst if (y{i} := v * 2) > 2])
'''


@snippet(2)
def match_stmt(r, i):
    return r.choice([f'''
match len(lst):
    case 0:
        out.append('empty')
    case 1 | 2:
        out.append('small')
    case n if n > 4:
        out.append(('big', n))
    case _:
        out.append('mid')
''', f'''
match lst:
    case [a, *rest]:
        out.append((a, len(rest)))
    case []:
        out.append('none')
''', f'''
match d:
    case {{'k0': v}}:
        out.append(v)
    case _:
        out.append('nok0')
''', f'''
match Pt(s, 1.0):
    case Pt(x=0):
        out.append('origin')
    case Pt(x=px, y=py):
        out.append(px + py)
''', f'''
match x.ndim:
    case 0:
        out.append(x + 1)
    case 1:
        out.append(x[::-1])
    case _:
        out.append(x.T)
''', f'''
match s:
    case int():
        out.append('int')
    case float(v) if v > 0:
        out.append('posfloat')
    case _:
        out.append('other')
'''])


@snippet()
def del_unpack(r, i):
    return r.choice([f'''
tmp{i} = x + 1
out.append(tmp{i}.sum())
del tmp{i}
''', f'''
a{i}, *b{i} = lst + [0]
out.append((a{i}, b{i}))
''', f'''
*a{i}, b{i} = (x, y, s)
out.append(len(a{i}))
out.append(b{i})
''', f'''
(a{i}, b{i}), c{i} = (s, len(lst)), x
out.append(a{i} + b{i} + c{i})
'''])


@snippet()
def slicing(r, i):
    c = r.choice([
        "lst[::-1][:2]",
        '"abcdef"[1:-1:2]',
        "tuple(lst)[1:]",
        "lst[-2:]",
        '"fuzz"[len(lst) % 4:]',
        "(1, 2, 3)[::2]",
    ])
    return f'''
out.append({c})
'''


@snippet(3)
def py_arith(r, i):
    c = r.choice([
        "(len(lst) - 7) // 3",
        "(-7) % (len(lst) + 1)",
        "-(len(lst) + 7) // 2",
        "2 ** 70 + len(lst)",
        "-(2 ** 65) // (len(lst) + 3)",
        "(2 ** 64 + len(lst)) % 1000003",
        "s / 3.0",
        "s // 0.7",
        "s % -0.7",
        "-s % 3",
        "divmod(s, 4)",
        "divmod(-len(lst), 3)",
        "complex(s, 1) * 2j",
        "abs(complex(s, len(lst)))",
        "round(s * 1.2345, 2)",
        "round(s)",
        "int(s * 2.5)",
        "float(len(lst)) ** 0.5",
        "pow(len(lst) + 1, 3, 5)",
        "(len(lst) + 2) ** -1",
        "1 << len(lst)",
        "~len(lst) ^ 5",
        "s * 1e308 * 10",
        "True + len(lst)",
        "max(s, len(lst), 2.5)",
        "hash(len(lst))",
        "float('inf') > s",
        "s == len(lst)",
        "0.1 + 0.2",
    ])
    return f'''
out.append({c})
'''


@snippet(2)
def math_calls(r, i):
    c = r.choice([
        "math.floor(s * 1.5)",
        "math.ceil(s - 0.5)",
        "math.sqrt(abs(s))",
        "math.isclose(s, 2.0)",
        "math.fsum([s, 1e16, -1e16])",
        "math.prod(lst)",
        "math.gcd(len(lst), 6)",
        "math.log(abs(s) + 1)",
        "math.exp(float(x.max()))",
        "math.hypot(s, 1)",
        "math.trunc(-s)",
        "operator.mul(s, 3)",
        "operator.itemgetter(0)(lst) if lst else None",
        "math.isfinite(float(x.sum()))",
        "math.copysign(1.0, s)",
        "math.factorial(len(lst))",
        "math.comb(len(lst) + 2, 2)",
    ])
    return f'''
out.append({c})
'''


@snippet(2)
def loops(r, i):
    return r.choice([f'''
k{i} = 0
while k{i} < len(lst):
    if lst[k{i}] > 3:
        break
    k{i} += 1
else:
    out.append('nobreak')
out.append(k{i})
''', f'''
for a{i} in range(3):
    for b{i} in range(3):
        if b{i} == a{i}:
            continue
        if a{i} + b{i} > 2:
            break
    else:
        out.append(('inner-else', a{i}))
        continue
    out.append((a{i}, b{i}))
''', f'''
tot{i} = x * 0
for v in lst:
    if v % 2:
        continue
    tot{i} = tot{i} + v
out.append(tot{i})
''', f'''
z{i} = x
for _ in range(len(lst)):
    z{i} = z{i} * 0.5 + y
out.append(z{i})
''', f'''
n{i} = 0
while True:
    n{i} += 1
    if n{i} * n{i} > len(lst) * 3:
        break
out.append(n{i})
'''])


@snippet(3)
def data_branch(r, i):
    return r.choice([f'''
if x.max() > 0.5:
    z{i} = x * 2
else:
    z{i} = x - 1
out.append(z{i})
''', f'''
if float(x.sum()) > s:
    out.append(np.tanh(x) + y)
elif x.size > 3:
    out.append(x.mean())
else:
    out.append(-x)
''', f'''
out.append(x if (x > 0).any() else y)
''', f'''
m{i} = x.mean()
out.append('hi' if m{i} > 0 else 'lo')
''', f'''
for j in range(2):
    if x.sum() > j:
        out.append(j)
        break
'''])


@snippet(3)
def numpy_ops(r, i):
    c = r.choice([
        "np.tanh(x) + y",
        "(x * s).astype(np.float64)",
        "x.sum(axis=-1) if x.ndim else x",
        "np.maximum(x, y) - x.min()",
        "np.where(x > 0, x, y * 2)",
        "x // 2 if x.dtype.kind == 'i' else np.floor(x)",
        "x % 3",
        "np.float32(s) * x.dtype.type(2)",
        "x.max() * s",
        "x.sum() + len(lst)",
        "np.sqrt(np.abs(x))",
        "x.reshape(-1)[:2]",
        "np.concatenate([x.reshape(-1), y.reshape(-1)])",
        "x.mean() / (x.std() + 1)",
        "np.cumsum(x)",
        "x.astype(np.int32) * 3",
        "float(x.sum()) * G_scale",
        "x.tolist()",
        "x.shape[0] if x.ndim else -1",
        "np.clip(x, -1, 1)",
        "x @ y.T if x.ndim == 2 else x * y",
        "(x > y).sum()",
        "np.argmax(x)",
        "x.item(0) if x.size else 0",
        "np.array(lst, dtype=x.dtype)",
        "np.arange(len(lst)) * s",
    ])
    return f'''
out.append({c})
'''


@snippet(2)
def arg_mutation(r, i):
    return r.choice([f'''
x += 1
''', f'''
x[...] = x * 2
''', f'''
if x.ndim:
    x[0] = s
''', f'''
y *= len(lst)
''', f'''
x = x + y
''', f'''
np.add(x, 1, out=x)
'''])


@snippet()
def early_return(r, i):
    return r.choice([f'''
if x.sum() > {r.choice([0, 1, -1])}:
    return ('early', x * 2, list(out))
''', f'''
if len(lst) > 4:
    return out
''', f'''
if not lst:
    return None
'''])


@snippet()
def sets_and_strings(r, i):
    c = r.choice([
        "sorted(set(lst) | {1, 9})",
        "sorted(set(lst) & set(range(4)))",
        "len(set(lst) - {3})",
        "'-'.join(str(v) for v in lst)",
        "'abc'.upper() + str(len(lst))",
        "' x '.strip().center(5, '*')",
        "'a,b,,c'.split(',')",
        "str(lst)",
        "repr(d)",
        "frozenset(lst) == frozenset(lst[::-1])",
        "'%s-%s' % tuple(lst[:2]) if len(lst) > 1 else ''",
    ])
    return f'''
out.append({c})
'''


@snippet()
def partial_use(r, i):
    return f'''
pf{i} = functools.partial(helper_kw, b=len(lst))
out.append(pf{i}(x))
out.append(pf{i}(s, q=2))
'''


@snippet()
def method_class(r, i):
    return f'''
class Local{i}:
    scale = {r.choice([2, 3])}

    def __init__(self, v):
        self.v = v

    def apply(self, a):
        return a * self.scale + self.v

    @staticmethod
    def twice(a):
        return a * 2

out.append(Local{i}(s).apply(x))
out.append(Local{i}.twice(len(lst)))
'''



@snippet(2)
def closure_state(r, i):
    return r.choice([f"""
def mk{i}():
    acc = []
    def push(v):
        acc.append(v)
        return len(acc)
    return push, acc
push{i}, acc{i} = mk{i}()
push{i}(x.sum())
push{i}(s)
out.append(acc{i})
""", f"""
fs{i} = [lambda k=k: k * x for k in range(3)]
out.append([fn() for fn in fs{i}][-1])
gs{i} = [lambda: k for k in range(3)]
out.append([fn() for fn in gs{i}])
""", f"""
def outer{i}(a):
    def mid():
        def inner():
            return a * 2 + s
        return inner()
    return mid()
out.append(outer{i}(x))
"""])


@snippet(3)
def caught_numpy_errors(r, i):
    c = r.choice([
        "x.reshape(len(lst) + 5)",
        "x + np.ones(7)",
        "np.ones(7) @ x",
        "x[10]",
        "x[0, 0, 0]",
        "len(x)",
        "x.astype(np.int64) // np.zeros((), np.int64)",
        "int(x)",
        "float(x.reshape(-1)[:2])",
        "np.concatenate([x, x[None]])",
        "x.sum(axis=3)",
        "np.dot(x, np.ones(5))",
        "x.transpose(1, 0, 2)",
        "bool(x)",
        "x.item()",
        "np.float32('abc')",
        "x.T.reshape(5)",
    ])
    return f"""
try:
    out.append({c})
except (ValueError, IndexError, TypeError, ZeroDivisionError, np.exceptions.AxisError) as e{i}:
    out.append((type(e{i}).__name__, str(e{i})))
"""


@snippet(3)
def numpy_scalars(r, i):
    c = r.choice([
        "np.float32(2.5) * 3.1",
        "x.sum() + 1.5",
        "x.max() ** 2",
        "int(x.max())",
        "round(x.sum(), 2)",
        "round(x.max())",
        "abs(x.min())",
        "x.sum() // 2",
        "divmod(x.sum(), 2)",
        "math.floor(x.sum())",
        "np.int64(-7) // 2",
        "np.int64(-7) % 3",
        "np.float32(-7.5) // 2",
        "x // -2",
        "x % -1.5",
        "np.float64(s) == s",
        "sorted([x.sum(), y.sum(), s])",
        "max(x.sum(), y.sum())",
        "min([x.max(), y.max()], key=abs)",
        "x.sum() > y.sum() and x.max() or y.min()",
        "x.dtype.type(s) * len(lst)",
        "np.int64(2 ** 40) * (len(lst) + 1)",
        "x.max().item()",
        "type(x.sum() * s).__name__",
        "(x.sum() * 1j).imag",
        "complex(x.sum())",
        "x.sum() / 0.0 if x.dtype.kind == 'f' else 0",
        "np.float64(x.sum()).hex() if x.dtype.kind == 'f' else 0",
        "float(x.sum()).is_integer()",
        "x.size and x.sum() / x.size",
        "bool(x.size) or s",
        "-x.max()",
        "+x",
        "~(x > 0)",
        "x.sum() == x.sum()",
        "hash(np.float64(s))",
    ])
    return f"""
out.append({c})
"""


@snippet(2)
def iterate_arrays(r, i):
    return r.choice([f"""
for row{i} in np.atleast_1d(x):
    out.append(row{i} * 2)
""", f"""
out.append([j + float(v.sum()) for j, v in enumerate(np.atleast_2d(x))])
""", f"""
out.append(list(np.atleast_1d(x)))
""", f"""
out.append(x.tolist() == list(x.tolist()))
""", f"""
out.append(str(x.tolist()))
"""])


@snippet(2)
def aliasing(r, i):
    return r.choice([f"""
z{i} = x
z{i} += 1
out.append(z{i} is x)
""", f"""
if x.ndim:
    v{i} = x[:1]
    v{i}[...] = 5
    out.append(x.copy())
""", f"""
G_arr += len(lst)
out.append(G_arr.sum())
""", f"""
G_arr[0] = s
out.append(G_arr * x.sum())
""", f"""
lst2{i} = lst
lst2{i}.append(s)
out.append(lst is lst2{i})
""", f"""
d2{i} = dict(d)
d2{i}['extra'] = x
out.append(len(d2{i}) - len(d))
"""])


@snippet(2)
def exc_more(r, i):
    return r.choice([f"""
try:
    raise MyErr(x.sum())
except MyErr as e{i}:
    out.append(str(e{i}))
    out.append(repr(e{i}))
""", f"""
try:
    try:
        raise KeyError('a')
    except KeyError:
        raise TypeError('during')
except TypeError as e{i}:
    out.append((type(e{i}.__context__).__name__, e{i}.__suppress_context__))
""", f"""
def fin{i}():
    try:
        return 1
    finally:
        out.append('finally-ran')
out.append(fin{i}())
""", f"""
def fin{i}():
    for k in range(3):
        try:
            if k == 1:
                continue
            out.append(k)
        finally:
            out.append(-k)
    return 'done'
out.append(fin{i}())
""", f"""
try:
    raise ValueError('x', len(lst))
except ValueError as e{i}:
    out.append(e{i}.args)
""", f"""
def boom{i}(v):
    if v > 1:
        raise MyErr('boom %d' % v)
    return v
try:
    out.append([boom{i}(v) for v in lst])
except MyErr as e:
    out.append(str(e))
""", f"""
err{i} = None
try:
    x.reshape(11)
except ValueError as e:
    err{i} = e
out.append(type(err{i}).__name__)
""", f"""
try:
    assert x.sum() < -100, f"sum was {{x.sum()}}"
except AssertionError as e{i}:
    out.append(str(e{i}))
"""])


@snippet(2)
def user_protocols(r, i):
    return r.choice([f"""
bx{i} = [Box(3), Box(s), Box(1)]
out.append(sorted(bx{i}))
out.append(max(bx{i}).v)
""", f"""
b{i} = Box(s)
out.append(len(b{i}))
out.append(list(b{i}))
out.append(b{i}(x))
""", f"""
q{i}, w{i} = Box(len(lst))
out.append(q{i} + w{i})
"""])


@snippet()
def more_dict_list(r, i):
    return r.choice([f"""
d |= {{'or{i}': 1}}
out.append(list(d.keys()))
""", f"""
out.append(dict.fromkeys(lst, 0))
""", f"""
if len(lst) > 2:
    del lst[1:3]
out.append(lst)
""", f"""
if 'k0' in d:
    del d['k0']
out.append(d)
""", f"""
out.append({{**d, 'z': s}})
out.append([*lst, *range(2)])
""", f"""
c{i} = collections_counter = {{}}
for v in lst:
    c{i}[v] = c{i}.get(v, 0) + 1
out.append(sorted(c{i}.items()))
"""])



def _ind(lines):
    return textwrap.indent(lines, "    ")


WRAPPERS = [
    lambda i, b: f"for it{i} in range(2):\n{_ind(b)}\n",
    lambda i, b: f"it{i} = 0\nwhile it{i} < 2:\n    it{i} += 1\n{_ind(b)}\n",
    lambda i, b: (f"try:\n{_ind(b)}\nexcept (ValueError, KeyError, IndexError) as e{i}:\n"
                  f"    out.append(('caught', type(e{i}).__name__, str(e{i})))\n"
                  f"finally:\n    out.append('finally{i}')\n"),
    lambda i, b: (f"def nf{i}():\n    global G_count, G_list\n{_ind(b)}\n    return len(out)\n"
                  f"out.append(nf{i}())\n"),
    lambda i, b: (f"def gw{i}():\n    global G_count, G_list\n    yield 1\n{_ind(b)}\n    yield 2\n"
                  f"out.append(list(gw{i}()))\n"),
    lambda i, b: f"with ctx({i}, out) as t{i}:\n{_ind(b)}\n",
    lambda i, b: f"if x.sum() > 0:\n{_ind(b)}\nelse:\n    out.append('neg{i}')\n",
    lambda i, b: f"match len(lst) % 2:\n    case 0:\n{_ind(_ind(b))}\n    case _:\n        out.append('odd{i}')\n",
    lambda i, b: (f"def cf{i}(v):\n    global G_count, G_list\n{_ind(b)}\n    return v\n"
                  f"out.append([cf{i}(v) for v in range(2)])\n"),
]


def make_block(r, counter, depth):
    if depth < 2 and r.random() < 0.3:
        w = r.choice(WRAPPERS)
        k = counter[0]
        counter[0] += 1
        inner = "\n".join(make_block(r, counter, depth + 1) for _ in range(r.randint(1, 2)))
        return w(k, inner).rstrip("\n")
    k = counter[0]
    counter[0] += 1
    return textwrap.dedent(r.choice(SNIPPETS)(r, k)).strip("\n")


RETURNS = [
    "return out",
    "return tuple(out)",
    "return out[-1] if out else None",
    "return {'n': len(out), 'last': out[-1] if out else None, 'x': x}",
    "return x, out",
    "return len(out), s",
]


def make_program(seed: int) -> str:
    r = random.Random(seed)
    n = r.randint(2, 7)
    body = []
    counter = [0]
    for i in range(n):
        body.append(make_block(r, counter, 0))
    body.append(r.choice(RETURNS))
    text = "\n".join(body)
    fn = ("def f(x, y, s, lst, d):\n"
          "    global G_count, G_list\n"
          "    out = []\n" + textwrap.indent(text, "    ") + "\n")
    return PRELUDE + "\n\n" + fn


def make_inputs(seed: int, call: int):
    """Argument tuples; call 0 and 1 differ in values only (a cache hit), later calls
    change shapes, lengths, scalar types, dtypes (guard failures, recompiles)."""
    import numpy as np
    r = random.Random(seed * 1000 + 7)
    dtype = r.choice(["float32", "float64", "int64", "float32", "float64", "int32"])
    shape = r.choice([(), (3,), (2, 3), (3,), (1, 2)])
    S = [2, 2.5, -1, 0.5, np.float32(1.5), np.int64(3), 2 ** 70, True, -0.0, float("nan"),
         np.float64(-2.25), 7, 1e300]
    s = r.choice(S)
    special = r.random() < 0.2
    lst = [r.randint(0, 6) for _ in range(r.randint(0, 5))]
    if r.random() < 0.15:
        lst = [r.choice([1.5, -2, 0, 3]) for _ in range(r.randint(0, 4))]
    rc = random.Random(seed * 1000 + call)
    if call >= 2:
        kind = rc.choice(["shape", "dtype", "lst", "s", "d", "special"])
        if kind == "shape":
            shape = rc.choice([(), (3,), (2, 3), (4,)])
        elif kind == "dtype":
            dtype = rc.choice(["float32", "float64", "int64"])
        elif kind == "lst":
            lst = [rc.randint(0, 6) for _ in range(rc.randint(0, 6))]
        elif kind == "s":
            s = rc.choice(S)
        elif kind == "special":
            special = True
    vals = np.random.default_rng(seed * 100 + call)
    def arr():
        a = vals.uniform(-2, 2, size=shape)
        if dtype.startswith("int"):
            a = np.round(a * 2)
        a = np.asarray(a).astype(dtype)
        if special and a.dtype.kind == "f" and a.size:
            flat = a.reshape(-1)
            flat[vals.integers(a.size)] = vals.choice([np.nan, np.inf, -np.inf, -0.0, 1e30])
        return a
    x, y = arr(), arr()
    d = {f"k{j}": v for j, v in enumerate(lst[:4])}
    return x, y, s, list(lst), d
