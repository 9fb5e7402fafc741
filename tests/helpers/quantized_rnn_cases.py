"""The integer and hybrid recurrent session cases of tests/interpreter/quant/test_quantized_rnn.py.

Shared with tests/interpreter/quant/test_quantized_svdf_bidirectional.py and the recurrent kernel tests
(tests/helpers/recurrent_cases.py).
"""

from __future__ import annotations

import zlib

import numpy as np

from workbench import load
from workbench.interpreter import Interpreter
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import (
    LSTMOptions,
    ModelBuilder,
    RNNOptions,
    SequenceRNNOptions,
    UnidirectionalSequenceLSTMOptions,
)
from workbench.versioning import update_versions

GATES = ("input", "forget", "cell", "output")


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, zp=0):
    return {"scale": [float(scale)], "zero_point": [int(zp)]}


CASES = {}


def int8_weights(b, rng, name, shape, scale):
    return b.constant(name, rng.integers(-127, 128, shape).astype(np.int8), quantization=q(scale))


def lstm_tensors(b, rng, prefix, n_input, n_cell, n_output, n_batch, kind, *, cifg=False, peephole=False,
                 projection=False, proj_bias=True, layer_norm=False, n_aux=0, in_scale=0.02, os_scale=0.01,
                 os_zp=0):
    """Tensor ids in LSTM slot order 1-17, (output_state, cell_state), 4 layer-norm ids, 4 aux ids.

    kind "hybrid": int8 weights (one scale each), float biases / layer norm / states;
    kind "integer": int8 weights, int32 biases, int16 peephole and layer-norm weights, int8 output
    state (scale os_scale, zero point os_zp), int16 cell state with scale 2^-11."""
    ids = []
    skip_input = cifg

    def wt(name, shape, scale=None):
        return int8_weights(b, rng, prefix + name, shape, scale or float(rng.uniform(0.002, 0.02)))

    for g in GATES:
        ids.append(-1 if (skip_input and g == "input") else wt(f"input_to_{g}", (n_cell, n_input)))
    for g in GATES:
        ids.append(-1 if (skip_input and g == "input") else wt(f"recurrent_to_{g}", (n_cell, n_output)))
    for g in ("input", "forget", "output"):
        if not peephole or (cifg and g == "input"):
            ids.append(-1)
        elif kind == "hybrid":
            ids.append(wt(f"cell_to_{g}", (n_cell,), 0.01))
        else:
            ids.append(b.constant(prefix + f"cell_to_{g}", rng.integers(-3000, 3000, n_cell).astype(np.int16),
                                  quantization=q(float(rng.uniform(1e-4, 4e-4)))))
    for g in GATES:
        if skip_input and g == "input":
            ids.append(-1)
        elif kind == "hybrid":
            ids.append(b.constant(prefix + f"{g}_bias", rng.uniform(-0.5, 0.5, n_cell).astype(np.float32)))
        else:
            ids.append(b.constant(prefix + f"{g}_bias", rng.integers(-3000, 3000, n_cell).astype(np.int32),
                                  quantization=q(1e-5)))
    ids.append(wt("projection_weights", (n_output, n_cell)) if projection else -1)
    if projection and proj_bias:
        if kind == "hybrid":
            ids.append(b.constant(prefix + "projection_bias", rng.uniform(-0.2, 0.2, n_output).astype(np.float32)))
        else:
            ids.append(b.constant(prefix + "projection_bias", rng.integers(-500, 500, n_output).astype(np.int32),
                                  quantization=q(1e-4)))
    else:
        ids.append(-1)
    if kind == "hybrid":
        states = (b.tensor(prefix + "output_state", (n_batch, n_output), is_variable=True),
                  b.tensor(prefix + "cell_state", (n_batch, n_cell), is_variable=True))
    else:
        states = (b.tensor(prefix + "output_state", (n_batch, n_output), np.int8, quantization=q(os_scale, os_zp),
                           is_variable=True),
                  b.tensor(prefix + "cell_state", (n_batch, n_cell), np.int16, quantization=q(2.0 ** -11),
                           is_variable=True))
    ln = []
    for g in GATES:
        if not layer_norm or (cifg and g == "input"):
            ln.append(-1)
        elif kind == "hybrid":
            ln.append(b.constant(prefix + f"{g}_ln", rng.uniform(0.5, 1.5, n_cell).astype(np.float32)))
        else:
            ln.append(b.constant(prefix + f"{g}_ln", rng.integers(8000, 25000, n_cell).astype(np.int16),
                                 quantization=q(float(rng.uniform(3e-5, 9e-5)))))
    aux = [(-1 if (cifg and g == "input") or not n_aux else wt(f"aux_to_{g}", (n_cell, n_aux))) for g in GATES]
    return ids, states, ln, aux


def int8_variables_at_zero_point(it: Interpreter, model) -> None:
    """litert's ResetVariableTensor fills an int8 variable tensor with its zero point (the real value 0),
    not with byte 0 -- at allocate_tensors and at reset_all_variables; ours must do the same by itself
    (it matters for an integer LSTM whose output state has a non-zero zero point)."""
    variables = {k for k, t in enumerate(model.subgraphs[0].tensors) if t.is_variable}
    for d in it.get_tensor_details():
        if d["dtype"] == np.int8 and d["index"] in variables:
            zps = d["quantization_parameters"]["zero_points"]
            want = zps[0] if len(zps) else 0
            assert (it.get_tensor(d["index"]) == want).all(), (d["name"], want)


def ours(model, calls, reference=False):
    if isinstance(model, bytes):
        model = load(model)
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    int8_variables_at_zero_point(it, model)
    out = []
    for call in calls:
        if call[0] == "invoke":
            for d, v in zip(it.get_input_details(), call[1]):
                it.set_tensor(d["index"], np.asarray(v))
            it.invoke()
            out.append([np.array(it.get_tensor(d["index"])) for d in it.get_output_details()])
        else:
            it.reset_all_variables()
            int8_variables_at_zero_point(it, model)
            out.append(None)
    return out


def assert_bitwise(a_calls, b_calls, what):
    for k, (a, b) in enumerate(zip(a_calls, b_calls)):
        if a is None:
            assert b is None
            continue
        assert len(a) == len(b)
        for j, (x, y) in enumerate(zip(a, b)):
            assert x.shape == y.shape and x.dtype == y.dtype, f"{what} call {k} output {j}: {x.dtype}{x.shape} vs " \
                                                              f"{y.dtype}{y.shape}"
            same = x.view(np.uint8) == y.view(np.uint8)
            assert same.all(), (f"{what} call {k} output {j}: {int((~same).sum())} bytes differ; max |diff| "
                                f"{float(np.max(np.abs(x.astype(np.float64) - y)))}")


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn
    return register


def intermediates(b, layer_norm, hidden_scale=0.004, hidden_zp=-3):
    """The 5 intermediates of an integer LSTM: gate scales (used with layer norm) and the hidden state."""
    out = []
    for g in GATES:
        if layer_norm:
            out.append(b.tensor(f"{g}_intermediate", (0,), np.int16, quantization=q(2.0 ** -10 * 1.3)))
        else:
            out.append(b.tensor(f"{g}_intermediate", (0,)))
    out.append(b.tensor("effective_hidden", (0,), np.int8, quantization=q(hidden_scale, hidden_zp)))
    return out


def hybrid_inputs(rng, shape, n=2, scale=1.5, zero_row=False):
    feeds = [rng.uniform(-scale, scale, shape).astype(np.float32) for _ in range(n)]
    if zero_row:
        feeds[1].reshape(-1, shape[-1])[0] = 0.0
    return feeds


def int8_inputs(rng, shape, n=2):
    return [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(n)]


def uni_lstm(name, kind, T=5, n_batch=2, n_input=3, n_cell=4, n_output=None, time_major=False, cell_clip=0.0,
             proj_clip=0.0, asymmetric=False, out_scale=0.01, out_zp=0, hidden=(0.004, -3), **kw):
    @case(name)
    def build():
        rng = rng_for(name)
        n_out = n_output or n_cell
        b = ModelBuilder()
        shape = (T, n_batch, n_input) if time_major else (n_batch, T, n_input)
        if kind == "hybrid":
            x = b.input("x", shape)
        else:
            x = b.input("x", shape, np.int8, quantization=q(0.02, 3))
        ids, states, ln, _ = lstm_tensors(b, rng, "", n_input, n_cell, n_out, n_batch, kind,
                                          os_scale=out_scale, os_zp=out_zp, **kw)
        ins = [x] + ids + list(states) + ln
        if kind == "hybrid":
            y = b.tensor("y", shape[:2] + (n_out,))
        else:
            y = b.tensor("y", shape[:2] + (n_out,), np.int8, quantization=q(out_scale, out_zp))
        inter = intermediates(b, kw.get("layer_norm", False), *hidden) if kind == "integer" else None
        b.op(B.UNIDIRECTIONAL_SEQUENCE_LSTM, ins, [y], UnidirectionalSequenceLSTMOptions(
            fused_activation_function=Act.TANH, cell_clip=cell_clip, proj_clip=proj_clip, time_major=time_major,
            asymmetric_quantize_inputs=asymmetric), intermediates=inter)
        b.output(y)
        feeds = hybrid_inputs(rng, shape, zero_row=True) if kind == "hybrid" else int8_inputs(rng, shape)
        return b, feeds


# integer (8x8_16)
uni_lstm("int_basic", "integer")
uni_lstm("int_time_major", "integer", time_major=True, n_batch=3)
uni_lstm("int_cifg", "integer", cifg=True)
uni_lstm("int_peephole", "integer", peephole=True, n_cell=5)
uni_lstm("int_cifg_peephole_clip", "integer", cifg=True, peephole=True, cell_clip=0.25)
uni_lstm("int_projection", "integer", n_cell=6, n_output=3, projection=True, proj_clip=0.6, out_scale=0.008,
         out_zp=5)
uni_lstm("int_projection_no_bias", "integer", n_cell=5, n_output=2, projection=True, proj_bias=False)
uni_lstm("int_layer_norm", "integer", layer_norm=True, n_cell=8)
uni_lstm("int_layer_norm_everything", "integer", layer_norm=True, cifg=True, peephole=True, n_cell=4,
         time_major=True, cell_clip=0.5)
uni_lstm("int_long", "integer", T=12, n_batch=1, n_input=10, n_cell=16, hidden=(0.0078, -1), out_scale=0.0078,
         out_zp=-1)
# hybrid (dynamic range)
uni_lstm("hyb_basic", "hybrid")
uni_lstm("hyb_asymmetric", "hybrid", asymmetric=True, n_input=9)
uni_lstm("hyb_time_major", "hybrid", time_major=True, n_batch=3, n_cell=5)
uni_lstm("hyb_time_major_asym", "hybrid", time_major=True, asymmetric=True, n_cell=6)
uni_lstm("hyb_cifg", "hybrid", cifg=True)
uni_lstm("hyb_peephole_clip", "hybrid", peephole=True, cell_clip=0.7)
uni_lstm("hyb_projection", "hybrid", n_cell=6, n_output=3, projection=True, proj_clip=0.3, asymmetric=True)
uni_lstm("hyb_projection_no_bias", "hybrid", n_cell=5, n_output=2, projection=True, proj_bias=False)
uni_lstm("hyb_layer_norm", "hybrid", layer_norm=True, n_cell=7)
uni_lstm("hyb_layer_norm_everything", "hybrid", layer_norm=True, cifg=True, peephole=True, projection=True,
         n_output=3, time_major=True, cell_clip=1.0, asymmetric=True)
uni_lstm("hyb_long", "hybrid", T=10, n_batch=1, n_input=20, n_cell=12)


def lstm_step(name, kind, n_batch=3, n_input=4, n_cell=5, n_output=None, cell_clip=0.0, proj_clip=0.0,
              asymmetric=False, **kw):
    @case(name)
    def build():
        rng = rng_for(name)
        n_out = n_output or n_cell
        b = ModelBuilder()
        if kind == "hybrid":
            x = b.input("x", (n_batch, n_input))
            y = b.tensor("y", (n_batch, n_out))
        else:
            x = b.input("x", (n_batch, n_input), np.int8, quantization=q(0.03, -5))
            y = b.tensor("y", (n_batch, n_out), np.int8, quantization=q(0.01, 0))
        ids, states, ln, _ = lstm_tensors(b, rng, "", n_input, n_cell, n_out, n_batch, kind, **kw)
        inter = intermediates(b, kw.get("layer_norm", False)) if kind == "integer" else None
        b.op(B.LSTM, [x] + ids + list(states) + ln, [y], LSTMOptions(
            fused_activation_function=Act.TANH, cell_clip=cell_clip, proj_clip=proj_clip,
            asymmetric_quantize_inputs=asymmetric), intermediates=inter)
        b.output(y)
        feeds = hybrid_inputs(rng, (n_batch, n_input), zero_row=True) if kind == "hybrid" else \
            int8_inputs(rng, (n_batch, n_input))
        return b, feeds


lstm_step("lstm_int_basic", "integer")
lstm_step("lstm_int_layer_norm_projection", "integer", layer_norm=True, projection=True, n_output=3, proj_clip=0.5)
lstm_step("lstm_hyb_basic", "hybrid")
lstm_step("lstm_hyb_asym_peephole_projection", "hybrid", asymmetric=True, peephole=True, projection=True,
          n_output=3, cell_clip=0.5)
lstm_step("lstm_hyb_layer_norm_cifg", "hybrid", layer_norm=True, cifg=True, n_cell=9)


def rnn_cell(b, rng, prefix, n_input, units, n_batch):
    return [int8_weights(b, rng, prefix + "weights", (units, n_input), 0.011),
            int8_weights(b, rng, prefix + "recurrent", (units, units), 0.007),
            b.constant(prefix + "bias", rng.uniform(-0.5, 0.5, units).astype(np.float32)),
            b.tensor(prefix + "hidden", (n_batch, units), is_variable=True)]


def rnn_step(name, act=Act.TANH, n_batch=2, n_input=10, units=6, asymmetric=False):
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", (n_batch, n_input))
        y = b.tensor("y", (n_batch, units))
        b.op(B.RNN, [x] + rnn_cell(b, rng, "", n_input, units, n_batch), [y],
             RNNOptions(fused_activation_function=act, asymmetric_quantize_inputs=asymmetric))
        b.output(y)
        return b, hybrid_inputs(rng, (n_batch, n_input), zero_row=True)


def uni_rnn(name, time_major=False, act=Act.TANH, T=6, n_batch=2, n_input=9, units=5, asymmetric=False):
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        shape = (T, n_batch, n_input) if time_major else (n_batch, T, n_input)
        x = b.input("x", shape)
        y = b.tensor("y", shape[:2] + (units,))
        b.op(B.UNIDIRECTIONAL_SEQUENCE_RNN, [x] + rnn_cell(b, rng, "", n_input, units, n_batch), [y],
             SequenceRNNOptions(time_major=time_major, fused_activation_function=act,
                                asymmetric_quantize_inputs=asymmetric))
        b.output(y)
        return b, hybrid_inputs(rng, shape, zero_row=True)


rnn_step("rnn_hyb_tanh")
rnn_step("rnn_hyb_relu_asym", act=Act.RELU, asymmetric=True)
rnn_step("rnn_hyb_none", act=Act.NONE, n_batch=1)
uni_rnn("usrnn_hyb_batch_major")
uni_rnn("usrnn_hyb_time_major_relu6_asym", time_major=True, act=Act.RELU6, asymmetric=True)
uni_rnn("usrnn_hyb_relu_n1_to_1", act=Act.RELU_N1_TO_1, units=8, n_input=17)


def embedding(name, dtype, shape=(7, 3, 4), scale=0.0123):
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        ids = b.input("ids", (5,), np.int32)
        info = np.iinfo(dtype)
        table = b.constant("table", rng.integers(info.min, info.max + 1, shape).astype(dtype), quantization=q(scale))
        y = b.tensor("y", (5,) + shape[1:])
        b.op(B.EMBEDDING_LOOKUP, [ids, table], [y])
        b.output(y)
        return b, [np.array([0, 6, 3, 3, 1], np.int32), np.array([6, 5, 4, 2, 0], np.int32)]


embedding("embedding_hyb_int8", np.int8)
embedding("embedding_hyb_uint8_read_as_int8", np.uint8, shape=(7, 9))


def build_case(name):
    builder, feeds = CASES[name]()
    feeds = [f if isinstance(f, list) else [f] for f in feeds]
    return update_versions(builder.build()), feeds


def _int_lstm_model(n_intermediates=5, cell_scale=2.0 ** -11, act=Act.TANH):
    rng = rng_for("bad")
    b = ModelBuilder()
    x = b.input("x", (1, 2, 3), np.int8, quantization=q(0.02))
    ids, states, ln, _ = lstm_tensors(b, rng, "", 3, 4, 4, 1, "integer")
    cs = b.tensor("cs", (1, 4), np.int16, quantization=q(cell_scale), is_variable=True)
    y = b.tensor("y", (1, 2, 4), np.int8, quantization=q(0.01))
    inter = intermediates(b, False)
    inter = (inter + inter + inter)[:n_intermediates]
    b.op(B.UNIDIRECTIONAL_SEQUENCE_LSTM, [x] + ids + [states[0], cs], [y],
         UnidirectionalSequenceLSTMOptions(fused_activation_function=act), intermediates=inter)
    b.output(y)
    return update_versions(b.build())
