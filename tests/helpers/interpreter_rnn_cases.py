"""The float32 and int8 SVDF session cases of tests/interpreter/test_interpreter_rnn.py.

Shared with the recurrent kernel tests (tests/helpers/recurrent_cases.py).
"""

from __future__ import annotations

import zlib

import numpy as np

from workbench.schema import ActivationFunctionType as Act
from workbench.schema import (
    BidirectionalSequenceLSTMOptions,
    BidirectionalSequenceRNNOptions,
    LSTMOptions,
    ModelBuilder,
    RNNOptions,
    SequenceRNNOptions,
    SVDFOptions,
    UnidirectionalSequenceLSTMOptions,
)
from workbench.schema import BuiltinOperator as B
from workbench.versioning import update_versions

CASES = {}


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def w(b, rng, name, shape, scale=0.5):
    return b.constant(name, rng.uniform(-scale, scale, shape).astype(np.float32))


def lstm_direction(b, rng, prefix, n_input, n_cell, n_output, n_batch, *, cifg=False, peephole=False,
                   projection=False, proj_bias=True, layer_norm=False, diagonal=False, n_aux=0):
    """Tensor ids in LSTM slot order 1-17, the two state tensors, 4 layer-norm and 4 aux-weight ids."""
    gates = ("input", "forget", "cell", "output")
    ids = []
    for g in gates:
        ids.append(-1 if (cifg and g == "input") else w(b, rng, f"{prefix}input_to_{g}", (n_cell, n_input)))
    for g in gates:
        shape = (n_cell,) if diagonal else (n_cell, n_output)
        ids.append(-1 if (cifg and g == "input") else w(b, rng, f"{prefix}recurrent_to_{g}", shape))
    for g in ("input", "forget", "output"):
        ids.append(w(b, rng, f"{prefix}cell_to_{g}", (n_cell,)) if peephole and not (cifg and g == "input") else -1)
    for g in gates:
        ids.append(-1 if (cifg and g == "input") else w(b, rng, f"{prefix}{g}_bias", (n_cell,), 1.0))
    ids.append(w(b, rng, f"{prefix}projection_weights", (n_output, n_cell)) if projection else -1)
    ids.append(w(b, rng, f"{prefix}projection_bias", (n_output,)) if projection and proj_bias else -1)
    states = (b.tensor(f"{prefix}output_state", (n_batch, n_output), is_variable=True),
              b.tensor(f"{prefix}cell_state", (n_batch, n_cell), is_variable=True))
    ln = [(-1 if (cifg and g == "input") or not layer_norm else w(b, rng, f"{prefix}{g}_ln", (n_cell,), 1.5))
          for g in gates]
    aux = [(-1 if (cifg and g == "input") or not n_aux else w(b, rng, f"{prefix}aux_to_{g}", (n_cell, n_aux)))
           for g in gates]
    return ids, states, ln, aux


def seq_inputs(rng, shape, n=2, scale=1.5):
    return [rng.uniform(-scale, scale, shape).astype(np.float32) for _ in range(n)]


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn
    return register


def uni_lstm(name, T=5, n_batch=2, n_input=3, n_cell=4, n_output=None, time_major=False, act=Act.TANH,
             cell_clip=0.0, proj_clip=0.0, inputs24=None, **kw):
    @case(name)
    def build():
        rng = rng_for(name)
        n_out = n_output or n_cell
        b = ModelBuilder()
        shape = (T, n_batch, n_input) if time_major else (n_batch, T, n_input)
        x = b.input("x", shape)
        ids, states, ln, _ = lstm_direction(b, rng, "", n_input, n_cell, n_out, n_batch, **kw)
        ins = [x] + ids + list(states)
        if kw.get("layer_norm") or inputs24:
            ins += ln
        y = b.tensor("y", shape[:2] + (n_out,))
        b.op(B.UNIDIRECTIONAL_SEQUENCE_LSTM, ins, [y], UnidirectionalSequenceLSTMOptions(
            fused_activation_function=act, cell_clip=cell_clip, proj_clip=proj_clip, time_major=time_major,
            diagonal_recurrent_tensors=bool(kw.get("diagonal"))))
        b.output(y)
        return b, seq_inputs(rng, shape)


uni_lstm("uslstm_basic")
uni_lstm("uslstm_time_major", time_major=True)
uni_lstm("uslstm_cifg", cifg=True)
uni_lstm("uslstm_peephole", peephole=True)
uni_lstm("uslstm_cifg_peephole", cifg=True, peephole=True)
uni_lstm("uslstm_projection_clip", n_output=3, projection=True, proj_clip=0.3, cell_clip=0.8)
uni_lstm("uslstm_projection_no_bias", n_cell=5, n_output=2, projection=True, proj_bias=False)
uni_lstm("uslstm_layer_norm", layer_norm=True)
uni_lstm("uslstm_layer_norm_everything", layer_norm=True, cifg=True, peephole=True, projection=True, n_output=3,
         time_major=True, cell_clip=1.0)
uni_lstm("uslstm_24_inputs_without_layer_norm", inputs24=True)
uni_lstm("uslstm_relu", act=Act.RELU, cell_clip=2.0)
uni_lstm("uslstm_relu6", act=Act.RELU6)
uni_lstm("uslstm_diagonal_v4", diagonal=True, n_cell=5)
uni_lstm("uslstm_long_batch1", T=16, n_batch=1, n_input=6, n_cell=8)


def lstm_step(name, n_batch=3, n_input=4, n_cell=5, n_output=None, act=Act.TANH, cell_clip=0.0, proj_clip=0.0,
              **kw):
    @case(name)
    def build():
        rng = rng_for(name)
        n_out = n_output or n_cell
        b = ModelBuilder()
        x = b.input("x", (n_batch, n_input))
        ids, states, ln, _ = lstm_direction(b, rng, "", n_input, n_cell, n_out, n_batch, **kw)
        ins = [x] + ids + list(states) + (ln if kw.get("layer_norm") else [])
        y = b.tensor("y", (n_batch, n_out))
        b.op(B.LSTM, ins, [y], LSTMOptions(fused_activation_function=act, cell_clip=cell_clip, proj_clip=proj_clip))
        b.output(y)
        return b, seq_inputs(rng, (n_batch, n_input))


lstm_step("lstm_basic")
lstm_step("lstm_layer_norm_projection", layer_norm=True, projection=True, n_output=3, peephole=True, proj_clip=0.5)
lstm_step("lstm_cifg_clip", cifg=True, cell_clip=0.5)


def bidi_lstm(name, T=4, n_batch=2, n_input=3, n_cell=4, merge=False, time_major=True, aux=None, **kw):
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        shape = (T, n_batch, n_input) if time_major else (n_batch, T, n_input)
        x = b.input("x", shape)
        n_aux = {None: 0, "weights": 2, "backward": n_input}[aux]
        aux_shape = shape[:2] + (n_aux,)
        aux_t = b.input("aux", aux_shape) if aux else -1
        bw_in = n_input
        fw = lstm_direction(b, rng, "fw_", n_input, n_cell, n_cell, n_batch, n_aux=n_aux if aux == "weights" else 0,
                            **kw)
        bw = lstm_direction(b, rng, "bw_", bw_in, n_cell, n_cell, n_batch,
                            n_aux=n_aux if aux == "weights" else 0, **kw)
        ins = [x] + fw[0] + bw[0] + list(fw[1]) + list(bw[1]) + [aux_t] + fw[3] + bw[3]
        if merge:
            outs = [b.tensor("y", shape[:2] + (2 * n_cell,))]
        else:
            outs = [b.tensor("y_fw", shape[:2] + (n_cell,)), b.tensor("y_bw", shape[:2] + (n_cell,))]
        b.op(B.BIDIRECTIONAL_SEQUENCE_LSTM, ins, outs, BidirectionalSequenceLSTMOptions(
            fused_activation_function=Act.TANH, merge_outputs=merge, time_major=time_major, cell_clip=3.0))
        b.output(*outs)
        feeds = seq_inputs(rng, shape)
        if aux:
            feeds = [[f, a] for f, a in zip(feeds, seq_inputs(rng, aux_shape))]
        return b, feeds


bidi_lstm("bilstm_separate_outputs")
bidi_lstm("bilstm_merged_batch_major", merge=True, time_major=False, n_batch=1)   # TFLite is wrong for n_batch > 1
bidi_lstm("bilstm_batch_major_aux_weights", time_major=False, aux="weights", n_input=2)
bidi_lstm("bilstm_cifg_peephole", cifg=True, peephole=True)
bidi_lstm("bilstm_aux_weights", aux="weights")
bidi_lstm("bilstm_backward_reads_aux", aux="backward", merge=True)


def rnn_cell(b, rng, prefix, n_input, units, n_batch, n_aux=0):
    ids = [w(b, rng, f"{prefix}weights", (units, n_input)), w(b, rng, f"{prefix}recurrent", (units, units)),
           w(b, rng, f"{prefix}bias", (units,), 1.0),
           b.tensor(f"{prefix}hidden", (n_batch, units), is_variable=True)]
    aux = w(b, rng, f"{prefix}aux_weights", (units, n_aux)) if n_aux else -1
    return ids, aux


def rnn_step(name, act=Act.TANH, n_batch=2, n_input=3, units=4):
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", (n_batch, n_input))
        ids, _ = rnn_cell(b, rng, "", n_input, units, n_batch)
        y = b.tensor("y", (n_batch, units))
        b.op(B.RNN, [x] + ids, [y], RNNOptions(fused_activation_function=act))
        b.output(y)
        return b, seq_inputs(rng, (n_batch, n_input))


rnn_step("rnn_tanh")
rnn_step("rnn_relu", act=Act.RELU)
rnn_step("rnn_none", act=Act.NONE)
rnn_step("rnn_relu_n1_to_1", act=Act.RELU_N1_TO_1)


def uni_rnn(name, time_major=False, act=Act.TANH, T=6, n_batch=2, n_input=3, units=5):
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        shape = (T, n_batch, n_input) if time_major else (n_batch, T, n_input)
        x = b.input("x", shape)
        ids, _ = rnn_cell(b, rng, "", n_input, units, n_batch)
        y = b.tensor("y", shape[:2] + (units,))
        b.op(B.UNIDIRECTIONAL_SEQUENCE_RNN, [x] + ids, [y],
             SequenceRNNOptions(time_major=time_major, fused_activation_function=act))
        b.output(y)
        return b, seq_inputs(rng, shape)


uni_rnn("usrnn_batch_major")
uni_rnn("usrnn_time_major_relu6", time_major=True, act=Act.RELU6)


def bidi_rnn(name, merge=False, time_major=False, aux=None, T=5, n_batch=2, n_input=3, units=4):
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        shape = (T, n_batch, n_input) if time_major else (n_batch, T, n_input)
        x = b.input("x", shape)
        n_aux = {None: 0, "weights": 2, "backward": n_input}[aux]
        aux_shape = shape[:2] + (n_aux,)
        aux_t = b.input("aux", aux_shape) if aux else -1
        fw, fw_aux = rnn_cell(b, rng, "fw_", n_input, units, n_batch, n_aux if aux == "weights" else 0)
        bw, bw_aux = rnn_cell(b, rng, "bw_", n_input, units + 2, n_batch,
                              n_aux if aux == "weights" else 0)
        ins = [x] + fw + bw + [aux_t, fw_aux, bw_aux]
        if merge:
            outs = [b.tensor("y", shape[:2] + (2 * units + 2,))]
        else:
            outs = [b.tensor("y_fw", shape[:2] + (units,)), b.tensor("y_bw", shape[:2] + (units + 2,))]
        b.op(B.BIDIRECTIONAL_SEQUENCE_RNN, ins, outs, BidirectionalSequenceRNNOptions(
            time_major=time_major, fused_activation_function=Act.TANH, merge_outputs=merge))
        b.output(*outs)
        feeds = seq_inputs(rng, shape)
        if aux:
            feeds = [[f, a] for f, a in zip(feeds, seq_inputs(rng, aux_shape))]
        return b, feeds


bidi_rnn("birnn_separate")
bidi_rnn("birnn_merged_time_major", merge=True, time_major=True)
bidi_rnn("birnn_aux_weights", aux="weights")
bidi_rnn("birnn_backward_reads_aux", aux="backward", time_major=True)
bidi_rnn("birnn_batch_major_ignores_aux", aux="backward")
bidi_rnn("birnn_time_major_aux_weights", aux="weights", time_major=True, n_input=2)


def svdf_case(name, n_batch=2, n_input=5, num_units=3, rank=2, memory=4, act=Act.RELU, bias=True, int8=False,
              out_scale=0.05):
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        nf = num_units * rank
        if not int8:
            x = b.input("x", (n_batch, n_input))
            ins = [x, w(b, rng, "weights_feature", (nf, n_input)), w(b, rng, "weights_time", (nf, memory)),
                   w(b, rng, "bias", (num_units,)) if bias else -1,
                   b.tensor("state", (n_batch, memory * nf), is_variable=True)]
            y = b.tensor("y", (n_batch, num_units))
            feeds = seq_inputs(rng, (n_batch, n_input))
        else:
            def q(s, z=0):
                return {"scale": s, "zero_point": z}
            x = b.input("x", (n_batch, n_input), np.int8, quantization=q(0.02, -3))
            ins = [x,
                   b.constant("weights_feature", rng.integers(-127, 128, (nf, n_input)).astype(np.int8),
                              quantization=q(0.01)),
                   b.constant("weights_time", rng.integers(-32767, 32768, (nf, memory)).astype(np.int16),
                              quantization=q(3e-5)),
                   b.constant("bias", rng.integers(-2000, 2000, num_units).astype(np.int32),
                              quantization=q(3e-5 * 0.004)) if bias else -1,
                   b.tensor("state", (n_batch, memory * nf), np.int16, quantization=q(0.004), is_variable=True)]
            y = b.tensor("y", (n_batch, num_units), np.int8, quantization=q(out_scale, 5))
            feeds = [rng.integers(-128, 128, (n_batch, n_input)).astype(np.int8) for _ in range(2)]
        b.op(B.SVDF, ins, [y], SVDFOptions(rank=rank, fused_activation_function=act))
        b.output(y)
        return b, feeds


svdf_case("svdf_f32_relu")
svdf_case("svdf_f32_none_no_bias_rank1", act=Act.NONE, bias=False, rank=1, memory=6)
svdf_case("svdf_f32_tanh_batch1", act=Act.TANH, n_batch=1, num_units=4, rank=3)
svdf_case("svdf_int8", int8=True)
svdf_case("svdf_int8_no_bias_rank1_memory8", int8=True, bias=False, rank=1, memory=8, n_batch=1, n_input=10,
          out_scale=0.06)


def build_case(name):
    builder, feeds = CASES[name]()
    feeds = [f if isinstance(f, list) else [f] for f in feeds]
    return update_versions(builder.build()), feeds


def _uslstm(act=Act.TANH, variable=True, drop=None):
    rng = rng_for("bad")
    b = ModelBuilder()
    x = b.input("x", (1, 2, 3))
    ids, states, _, _ = lstm_direction(b, rng, "", 3, 4, 4, 1)
    if not variable:
        states = (b.input("h", (1, 4)), states[1])
    if drop is not None:
        ids[drop] = -1
    y = b.tensor("y", (1, 2, 4))
    b.op(B.UNIDIRECTIONAL_SEQUENCE_LSTM, [x] + ids + list(states), [y],
         UnidirectionalSequenceLSTMOptions(fused_activation_function=act))
    b.output(y)
    return update_versions(b.build())
