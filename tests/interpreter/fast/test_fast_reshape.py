"""RESHAPE and SQUEEZE of the speed layer (fast/reshape.py: ``FlatCopy``, the kernel library's ``copy``):
the teaching layer's values, any element type; the node joins a run of library calls (a classifier's
logits RESHAPE between its last layer and the SOFTMAX); STRING tensors and arrays the library does not
take get numpy's copy; ``copy`` itself refuses what it cannot copy as bytes."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.interpreter import Interpreter, fused
from workbench.interpreter.fast import reshape as fast_reshape
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import Conv2DOptions, ModelBuilder, Padding, ReshapeOptions, SoftmaxOptions, SqueezeOptions

needs_library = pytest.mark.skipif(fast_reshape.copy_function() is None or fused.run_calls_function() is None,
                                   reason="no kernel library here (make kernels builds it)")


def classifier(op):
    """conv 1x1 -> RESHAPE (or SQUEEZE) of the logits to [1, 40] -> SOFTMAX."""
    rng = np.random.default_rng(4)
    b = ModelBuilder()
    x = b.input("x", (1, 1, 1, 24))
    w = b.constant("w", rng.standard_normal((40, 1, 1, 24)).astype(np.float32))
    y = b.tensor("logits", (1, 1, 1, 40))
    b.op(B.CONV_2D, [x, w, b.constant("b", rng.standard_normal(40).astype(np.float32))], [y],
         Conv2DOptions(padding=Padding.VALID, stride_h=1, stride_w=1, fused_activation_function=Act.NONE))
    flat = b.tensor("flat", (1, 40))
    if op == "RESHAPE":
        shape = b.constant("shape", np.array([1, 40], np.int32))
        b.op(B.RESHAPE, [y, shape], [flat], ReshapeOptions(new_shape=(1, 40)))
    else:
        b.op(B.SQUEEZE, [y], [flat], SqueezeOptions(squeeze_dims=(1, 2)))
    probs = b.tensor("probs", (1, 40))
    b.op(B.SOFTMAX, [flat], [probs], SoftmaxOptions(beta=1.0))
    b.output(probs)
    return b.build(), rng.uniform(-1, 1, (1, 1, 1, 24)).astype(np.float32)


def run(model, x, node_by_node=False, **kw):
    it = Interpreter(model=model, **kw)
    it.allocate_tensors()
    if node_by_node:
        it._sg().runs = list(it._sg().plan)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it, it.get_tensor(it.get_output_details()[0]["index"])


@needs_library
@pytest.mark.parametrize("op", ["RESHAPE", "SQUEEZE"])
def test_a_reshape_between_the_last_layer_and_the_softmax_joins_the_run(op):
    model, x = classifier(op)
    it, got = run(model, x)
    assert type(it._sg().fast[1]) is fast_reshape.FlatCopy
    (entry,) = it._sg().runs
    assert isinstance(entry[0], fused.NativeRun) and len(entry[0].entries) == 3
    assert got.tobytes() == run(model, x, node_by_node=True)[1].tobytes()
    np.testing.assert_allclose(got, run(model, x, reference=True)[1], rtol=1e-5, atol=1e-7)


@needs_library
def test_copy_moves_bytes_of_one_type_and_size_and_refuses_the_rest():
    copy = fast_reshape.copy_function()
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    out = np.zeros((6, 4), np.int16)
    assert copy(x, out) == 0 and np.array_equal(out.reshape(-1), x.reshape(-1))
    assert copy(out, out) == 0                                                        # in place: nothing to do
    keep = np.full((6, 4), 7, np.int16)
    assert copy(x, keep.astype(np.uint16)) == -1                                      # another type
    assert copy(x, np.zeros(23, np.int16)) == -1                                      # another size
    assert copy(x[:, :, ::2].copy().repeat(2, axis=2)[:, :, ::2], keep) == -1         # not C-contiguous
    read_only = np.zeros(24, np.int16)
    read_only.flags.writeable = False
    assert copy(x, read_only) == -1
    strings = np.array([b"a", b"bc"], object)
    assert copy(strings, np.empty(2, object)) == -1                                   # references: numpy's copy
    assert copy(x, None) == -1 and (keep == 7).all() and not read_only.any()
    with pytest.raises(TypeError):
        copy(x)


def test_string_tensors_take_numpys_copy():
    b = ModelBuilder()
    x = b.input("x", (2, 1), dtype=np.object_)
    y = b.tensor("y", (2,), dtype=np.object_)
    b.op(B.SQUEEZE, [x], [y], SqueezeOptions(squeeze_dims=(1,)))
    b.output(y)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.array([[b"ab"], [b""]], object))
    it.invoke()
    assert it.get_tensor(it.get_output_details()[0]["index"]).tolist() == [b"ab", b""]
