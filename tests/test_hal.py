"""HAL: backend registry, errors, options, kernel registry."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from frame.hal import (Backend, CompileOptions, ErrorCode, FrameError, KernelInvocation,
                       get_backend, kernel_registry, register_backend)
from frame.hal.backend import backend_names


def test_unknown_backend_is_not_found():
    with pytest.raises(FrameError) as info:
        get_backend("no-such-backend")
    assert info.value.code is ErrorCode.NOT_FOUND
    assert "no-such-backend" in str(info.value) and "cpu" in str(info.value)


def test_cpu_backend_is_registered_and_cached():
    assert "cpu" in backend_names()
    assert get_backend("cpu") is get_backend("cpu")
    assert get_backend("cpu").name == "cpu"


def test_cpu_launch_runs_reference_kernel():
    a = np.arange(4, dtype=np.float32)
    (out,) = get_backend("cpu").launch(KernelInvocation("add", [a, a], {}))
    np.testing.assert_array_equal(out, a + a)


def test_launch_of_unknown_op_is_unimplemented():
    with pytest.raises(FrameError) as info:
        get_backend("cpu").launch(KernelInvocation("no_such_op", [], {}))
    assert info.value.code is ErrorCode.UNIMPLEMENTED
    assert "no_such_op" in str(info.value)


def test_base_backend_compile_is_unimplemented():
    class Tiny(Backend):
        name = "tiny-test"
    register_backend("tiny-test", Tiny)
    with pytest.raises(FrameError) as info:
        get_backend("tiny-test").compile(None, CompileOptions())
    assert info.value.code is ErrorCode.UNIMPLEMENTED


def test_kernel_registry_prefers_explicit_kernels():
    calls = []

    def kernel(ins, attrs):
        calls.append(1)
        return (ins[0] * 0,)
    kernel_registry.register("neg", "tiny-test-2", kernel)
    assert kernel_registry.get("neg", "tiny-test-2") is kernel
    assert kernel_registry.get("neg", "nobody") is None
    assert "neg" in kernel_registry.ops_for("tiny-test-2")


def test_options_fingerprint_is_stable_and_discriminating():
    a, b = CompileOptions(), CompileOptions()
    assert a.fingerprint() == b.fingerprint()
    assert CompileOptions(device="GPU").fingerprint() != a.fingerprint()
    assert CompileOptions(precision="f16").fingerprint() != a.fingerprint()
    assert CompileOptions(extra=(("x", "1"),)).fingerprint() != a.fingerprint()
    # diagnostics do not change the artifact
    assert CompileOptions(dump_ir_after="canonicalize").fingerprint() == a.fingerprint()


def test_error_classes_are_python_exceptions_too():
    assert issubclass(frame.FrameValueError, ValueError)
    assert issubclass(frame.FrameTypeError, TypeError)
    assert issubclass(frame.FrameAxisError, IndexError) and issubclass(frame.FrameAxisError, ValueError)
    err = frame.FrameValueError("bad")
    assert err.code is ErrorCode.INVALID_ARGUMENT and str(err) == "bad"


def test_errors_pickle():
    import pickle
    err = pickle.loads(pickle.dumps(frame.FrameValueError("bad shape")))
    assert isinstance(err, frame.FrameValueError) and str(err) == "bad shape"
