"""docs/api.md is the generated reference (frame/apidoc.py) and stays true; the
names of the public contract (API.md) exist."""
from __future__ import annotations

import pathlib

import frame
from frame.apidoc import generate

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "api.md"

# The names API.md fixes (tests of others are written against them).
CONTRACT_FRAME = """tensor from_numpy zeros ones full arange eye manual_seed randn rand float16 float32
float64 int32 int64 bool_ add sub mul div neg pow exp log sqrt rsqrt tanh sigmoid relu gelu sin
cos abs sign maximum minimum where clip matmul sum mean max min argmax softmax log_softmax reshape
transpose concat stack broadcast_to expand_dims squeeze astype fft nn optim jit GraphBreakError
grad value_and_grad no_grad explain stats reset_stats report config Tensor""".split()
CONTRACT_TENSOR = """shape dtype ndim size T grad requires_grad numpy item tolist astype reshape
transpose sum mean max min argmax exp log sqrt tanh sigmoid relu abs clip backward detach zero_
softmax squeeze expand_dims __iadd__ __isub__ __imul__ __itruediv__ __add__ __sub__ __mul__
__truediv__ __floordiv__ __mod__ __pow__ __matmul__ __neg__ __lt__ __le__ __gt__ __ge__ __eq__
__ne__ __getitem__ __array__""".split()
CONTRACT_NN = "Module Parameter Linear Conv2d ReLU Sequential LayerNorm functional".split()
CONTRACT_NN_F = """relu gelu softmax log_softmax linear cross_entropy mse_loss conv2d max_pool2d
avg_pool2d layer_norm dropout""".split()
CONTRACT_MODULE = "parameters named_parameters train eval state_dict load_state_dict".split()


def test_api_doc_is_up_to_date():
    assert DOC.read_text() == generate(), \
        "docs/api.md is stale: regenerate it with `python -m frame.apidoc > docs/api.md`"


def test_contract_names_exist_and_are_documented():
    text = DOC.read_text()
    for name in CONTRACT_FRAME:
        assert hasattr(frame, name), name
        assert f"`frame.{name}" in text, name
    for name in CONTRACT_TENSOR:
        assert hasattr(frame.Tensor, name), name
    for name in CONTRACT_NN:
        assert hasattr(frame.nn, name), name
    for name in CONTRACT_NN_F:
        assert hasattr(frame.nn.functional, name), name
    for name in CONTRACT_MODULE:
        assert hasattr(frame.nn.Module, name), name
    assert hasattr(frame.optim, "SGD") and hasattr(frame.optim, "Adam")
    assert hasattr(frame.fft, "rfft") and hasattr(frame.fft, "irfft")


def test_every_public_name_is_documented():
    text = DOC.read_text()
    for name in frame.__all__:
        if name != "__version__":
            assert f"`frame.{name}" in text, name
    for name in ("__setitem__", "add_", "clamp_", "clone", "flatten", "nonzero", "to", "type"):
        assert name in text, name
    for name in frame.nn.init.__all__:
        assert f"`frame.nn.init.{name}" in text, name
