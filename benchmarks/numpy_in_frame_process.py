"""Is hand NumPy slower in a process that uses frame?  (docs/performance.md,
"NumPy in frame's process")

    for r in 1 2 3 4; do for m in plain ov frame frame_ran; do
        python benchmarks/numpy_in_frame_process.py $m; done; done | sort

Each run is one process that times the hand-written NumPy MLP step
(``_mlp_numpy.numpy_step``, NumPy's own BLAS pool) after: nothing (``plain``),
``import openvino`` (``ov``), ``import frame`` (``frame``), or 30 calls of the
jitted frame step on the default backend with the BLAS pool then restored to
two threads (``frame_ran``).  It prints the mode, the fastest and the median of
seven 200-step blocks (ms per step), each block after a 0.2 s pause.
"""
import sys, time, statistics, os
mode = sys.argv[1]
sys.path.insert(0, '/work/main/benchmarks')
import numpy as np
if mode == 'ov':
    import openvino
if mode in ('frame', 'frame_ran'):
    import frame
from _mlp_numpy import make_data, numpy_step, SIZES
rng = np.random.default_rng(1)
params = []
for i, o in zip(SIZES[:-1], SIZES[1:]):
    params += [(rng.standard_normal((o, i)) * 0.05).astype(np.float32), np.zeros(o, np.float32)]
x, y = make_data()
if mode == 'frame_ran':
    from _mlp_numpy import frame_train_step
    import frame
    model, ts = frame_train_step()
    j = frame.jit(ts)
    fx, fy = frame.tensor(x), frame.tensor(y)
    for _ in range(30): j(fx, fy)
    from threadpoolctl import threadpool_info
    print(mode, [ (d['internal_api'], d['num_threads']) for d in threadpool_info()], file=sys.stderr)
    from threadpoolctl import threadpool_limits
    ctx = threadpool_limits(limits=2, user_api='blas'); 
step = numpy_step(x, y, params)
for _ in range(50): step()
meds = []
for r in range(7):
    time.sleep(0.2)
    t = time.perf_counter()
    for _ in range(200): step()
    meds.append((time.perf_counter() - t) / 200 * 1e3)
print(mode, round(min(meds), 4), round(statistics.median(meds), 4))
