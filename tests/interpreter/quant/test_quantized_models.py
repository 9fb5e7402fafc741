"""Whole int8 models, bit-exact with ai-edge-litert's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES).

The MobileNets live outside the repository, in ``<repo root>/../shared/models``; the tests that need
them are skipped with a reason when that directory is absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import litert_runner
from helpers.shared_models import ROOT, SHARED_MODELS
from workbench.interpreter import Interpreter

SAMPLES = ROOT / "sample_models"

MOBILENETS = ("mobilenet_v1_a10_224_int8", "mobilenet_v1_a025_128_int8", "mobilenet_v2_a035_96_int8")


def compare(path: Path, tmp_path: Path, seed: int = 0) -> tuple[int, int]:
    """(equal elements, total elements) of every output, ours vs litert builtin, on seeded inputs."""
    result = litert_runner.run(path, tmp_path / "in.npz", tmp_path / "out.npz", seed=seed)
    assert result.ok, result.describe()
    it = Interpreter(model_path=path)
    it.allocate_tensors()
    with np.load(tmp_path / "in.npz") as z:
        for k, d in enumerate(it.get_input_details()):
            it.set_tensor(d["index"], z[f"input_{k}"])
    it.invoke()
    equal = total = 0
    for k, d in enumerate(it.get_output_details()):
        ours, theirs = it.get_tensor(d["index"]), result.outputs[f"output_{k}"]
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        equal += int((ours == theirs).sum())
        total += ours.size
    return equal, total


@pytest.mark.parametrize("name", ["int8_cnn", "int8_float_io"])
def test_int8_sample_models_bit_exact_with_litert(name, tmp_path):
    """The project's own int8 models: CONV/DEPTHWISE/ADD/LOGISTIC/MUL/pools/CONCATENATION/PAD/
    RESIZE_BILINEAR/MEAN/FC/SOFTMAX, and QUANTIZE → FC → TRANSPOSE → TANH → DEQUANTIZE."""
    for seed in (0, 1, 2):
        equal, total = compare(SAMPLES / f"{name}.tflite", tmp_path, seed)
        assert equal == total, f"{name} seed {seed}: {equal}/{total} output elements equal"


@pytest.mark.parametrize("name", sorted(MOBILENETS))
def test_mobilenet_int8_bit_exact_with_litert(name, tmp_path):
    path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared model directory is not on this machine)")
    for seed in (0, 1):
        equal, total = compare(path, tmp_path, seed)
        assert equal == total, f"{name} seed {seed}: {equal}/{total} output elements equal"


def test_mobilenet_v2_every_int8_tensor_is_bit_exact(tmp_path):
    """Every int8 tensor equals litert's, node by node (keep_intermediates / preserve_all_tensors)."""
    path = SHARED_MODELS / "mobilenet_v2_a035_96_int8.tflite"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared model directory is not on this machine)")
    import subprocess
    import sys
    script = tmp_path / "dump.py"
    script.write_text(
        "import sys, numpy as np\n"
        "from ai_edge_litert.interpreter import Interpreter, OpResolverType\n"
        "it = Interpreter(model_path=sys.argv[1], experimental_op_resolver_type="
        "OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES, experimental_preserve_all_tensors=True)\n"
        "it.allocate_tensors(); d = it.get_input_details()[0]\n"
        "x = np.random.default_rng(0).integers(-128, 128, d['shape']).astype(np.int8)\n"
        "it.set_tensor(d['index'], x); it.invoke()\n"
        "np.savez(sys.argv[2], x=x, **{f't{t[\"index\"]}': it.get_tensor(t['index']) "
        "for t in it.get_tensor_details() if t['dtype'] == np.int8})\n")
    out = tmp_path / "tensors.npz"
    proc = subprocess.run([sys.executable, str(script), str(path), str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    z = np.load(out)
    it = Interpreter(model_path=path, keep_intermediates=True)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], z["x"])
    it.invoke()
    checked = 0
    for node, _, _, folded in it.prepared():
        for t in node.outputs:
            if f"t{t}" in z.files:
                assert np.array_equal(it.get_tensor(t), z[f"t{t}"]), f"node {node.index} {node.op_name}"
                checked += 1
    assert checked > 50


@pytest.mark.parametrize("name", ["int8_cnn", "int8_float_io", "mobilenet_v1_a025_128_int8"])
def test_reference_kernels_equal_fast_kernels_on_whole_models(name):
    path = SAMPLES / f"{name}.tflite"
    if not path.exists():
        path = SHARED_MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared model directory is not on this machine)")
    outs = []
    for reference in (False, True):
        it = Interpreter(model_path=path, reference=reference)
        it.allocate_tensors()
        rng = np.random.default_rng(5)
        for d in it.get_input_details():
            it.set_tensor(d["index"], litert_runner.make_input(rng, d["dtype"], d["shape"]))
        it.invoke()
        outs.append([it.get_tensor(d["index"]) for d in it.get_output_details()])
    for a, b in zip(*outs):
        assert np.array_equal(a, b)
