"""The SVDF and bidirectional session cases of tests/interpreter/quant/test_quantized_svdf_bidirectional.py.

Shared with the recurrent kernel tests (tests/helpers/recurrent_cases.py).
"""

from __future__ import annotations

import numpy as np

from helpers.quantized_rnn_cases import int8_weights, lstm_tensors, rng_for
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import (
    BidirectionalSequenceLSTMOptions,
    BidirectionalSequenceRNNOptions,
    ModelBuilder,
    SVDFOptions,
)
from workbench.schema import BuiltinOperator as B
from workbench.versioning import update_versions

CASES = {}


STATELESS = set()


def case(name, stateless=False):
    def register(fn):
        CASES[name] = fn
        if stateless:
            STATELESS.add(name)
        return fn
    return register


def float_feeds(rng, shapes, n=3, scale=1.5, zero_call=True, zero_row=True):
    """n invokes of float inputs; the last one all zero (TFLite's all-zero shortcuts), a zero row in the
    second one."""
    feeds = [[rng.uniform(-scale, scale, s).astype(np.float32) for s in shapes] for _ in range(n)]
    if zero_row:
        feeds[1][0].reshape(-1, shapes[0][-1])[0] = 0.0
    if zero_call:
        feeds[-1] = [np.zeros(s, np.float32) for s in shapes]
    return feeds


def svdf(name, n_batch=2, n_input=11, num_units=3, rank=2, memory=6, act=Act.TANH, bias=True, asymmetric=False):
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        nf = num_units * rank
        x = b.input("x", (n_batch, n_input))
        ins = [x, int8_weights(b, rng, "weights_feature", (nf, n_input), 0.0123),
               int8_weights(b, rng, "weights_time", (nf, memory), 0.0071),
               b.constant("bias", rng.uniform(-0.5, 0.5, num_units).astype(np.float32)) if bias else -1,
               b.tensor("state", (n_batch, memory * nf), is_variable=True)]
        y = b.tensor("y", (n_batch, num_units))
        b.op(B.SVDF, ins, [y], SVDFOptions(rank=rank, fused_activation_function=act,
                                           asymmetric_quantize_inputs=asymmetric))
        b.output(y)
        return b, float_feeds(rng, [(n_batch, n_input)], n=4)


svdf("svdf_hyb_tanh")
svdf("svdf_hyb_asym_relu", asymmetric=True, act=Act.RELU)
svdf("svdf_hyb_rank5_memory9_relu6", rank=5, memory=9, act=Act.RELU6, n_input=17)
svdf("svdf_hyb_batch1_rank1_no_bias_none", n_batch=1, rank=1, memory=3, bias=False, act=Act.NONE)
svdf("svdf_hyb_asym_rank8_memory13", rank=8, memory=13, n_input=21, asymmetric=True, act=Act.RELU_N1_TO_1,
     n_batch=3)
svdf("svdf_hyb_sign_bit", act=Act.SIGN_BIT, memory=4)


def svdf_float(name, n_batch=2, n_input=11, num_units=3, rank=2, memory=6, act=Act.TANH):
    """float32 SVDF (v1): bitwise too, since the dot products follow litert's NEON order."""
    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        nf = num_units * rank
        x = b.input("x", (n_batch, n_input))
        ins = [x, b.constant("weights_feature", rng.uniform(-1, 1, (nf, n_input)).astype(np.float32)),
               b.constant("weights_time", rng.uniform(-1, 1, (nf, memory)).astype(np.float32)),
               b.constant("bias", rng.uniform(-1, 1, num_units).astype(np.float32)),
               b.tensor("state", (n_batch, memory * nf), is_variable=True)]
        y = b.tensor("y", (n_batch, num_units))
        b.op(B.SVDF, ins, [y], SVDFOptions(rank=rank, fused_activation_function=act))
        b.output(y)
        return b, float_feeds(rng, [(n_batch, n_input)], n=3, zero_call=False)


svdf_float("svdf_f32_tanh")
svdf_float("svdf_f32_relu_rank5_memory9", rank=5, memory=9, n_input=17, act=Act.RELU, n_batch=3)


def bidi_lstm(name, T=4, n_batch=2, n_input=3, n_cell=4, n_output=None, merge=False, time_major=True, aux=None,
              asymmetric=False, cell_clip=0.0, proj_clip=0.0, **kw):
    @case(name)
    def build():
        rng = rng_for(name)
        n_out = n_output or n_cell
        b = ModelBuilder()
        shape = (T, n_batch, n_input) if time_major else (n_batch, T, n_input)
        x = b.input("x", shape)
        n_aux = n_input if aux else 0
        aux_shape = shape[:2] + (n_aux,)
        aux_t = b.input("aux", aux_shape) if aux else -1
        with_w = n_aux if aux == "weights" else 0
        fw = lstm_tensors(b, rng, "fw_", n_input, n_cell, n_out, n_batch, "hybrid", n_aux=with_w, **kw)
        bw = lstm_tensors(b, rng, "bw_", n_input, n_cell, n_out, n_batch, "hybrid", n_aux=with_w, **kw)
        ins = [x] + fw[0] + bw[0] + list(fw[1]) + list(bw[1]) + [aux_t] + fw[3] + bw[3]
        if merge:
            outs = [b.tensor("y", shape[:2] + (2 * n_out,))]
        else:
            outs = [b.tensor("y_fw", shape[:2] + (n_out,)), b.tensor("y_bw", shape[:2] + (n_out,))]
        b.op(B.BIDIRECTIONAL_SEQUENCE_LSTM, ins, outs, BidirectionalSequenceLSTMOptions(
            fused_activation_function=Act.TANH, merge_outputs=merge, time_major=time_major, cell_clip=cell_clip,
            proj_clip=proj_clip, asymmetric_quantize_inputs=asymmetric))
        b.output(*outs)
        shapes = [shape] + ([aux_shape] if aux else [])
        return b, float_feeds(rng, shapes)


bidi_lstm("bilstm_hyb_time_major")
bidi_lstm("bilstm_hyb_batch_major_asym", time_major=False, n_batch=3, n_cell=5, asymmetric=True)
bidi_lstm("bilstm_hyb_merged_time_major", merge=True, n_input=9)
bidi_lstm("bilstm_hyb_merged_batch_major_batch1", merge=True, time_major=False, n_batch=1)
bidi_lstm("bilstm_hyb_cifg_peephole_clip", cifg=True, peephole=True, cell_clip=0.6)
bidi_lstm("bilstm_hyb_projection_asym", n_cell=6, n_output=3, projection=True, proj_clip=0.4, asymmetric=True)
bidi_lstm("bilstm_hyb_aux_weights", aux="weights", n_input=5)
bidi_lstm("bilstm_hyb_aux_weights_batch_major_asym", aux="weights", time_major=False, asymmetric=True)
bidi_lstm("bilstm_hyb_backward_reads_aux", aux="backward", merge=True)
bidi_lstm("bilstm_hyb_long", T=7, n_batch=1, n_input=20, n_cell=12)


def rnn_cell(b, rng, prefix, n_input, units, n_batch, n_aux=0):
    ids = [int8_weights(b, rng, prefix + "weights", (units, n_input), 0.011),
           int8_weights(b, rng, prefix + "recurrent", (units, units), 0.007),
           b.constant(prefix + "bias", rng.uniform(-0.5, 0.5, units).astype(np.float32)),
           b.tensor(prefix + "hidden", (n_batch, units), is_variable=True)]
    return ids, (int8_weights(b, rng, prefix + "aux_weights", (units, n_aux), 0.009) if n_aux else -1)


def bidi_rnn(name, merge=False, time_major=False, aux=None, T=None, n_batch=2, n_input=9, units=4, act=Act.TANH,
             asymmetric=False):
    # time-major: litert runs T sweeps per invoke (T² steps), after which the carried-over state has
    # faded below float32 resolution for long sequences; 3 steps keep it visible
    T = T or (3 if time_major else 5)

    @case(name)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        shape = (T, n_batch, n_input) if time_major else (n_batch, T, n_input)
        x = b.input("x", shape)
        n_aux = n_input if aux else 0
        aux_shape = shape[:2] + (n_aux,)
        aux_t = b.input("aux", aux_shape) if aux else -1
        with_w = n_aux if aux == "weights" else 0
        fw, fw_aux = rnn_cell(b, rng, "fw_", n_input, units, n_batch, with_w)
        bw, bw_aux = rnn_cell(b, rng, "bw_", n_input, units + 2, n_batch, with_w)
        ins = [x] + fw + bw + [aux_t, fw_aux, bw_aux]
        if merge:
            outs = [b.tensor("y", shape[:2] + (2 * units + 2,))]
        else:
            outs = [b.tensor("y_fw", shape[:2] + (units,)), b.tensor("y_bw", shape[:2] + (units + 2,))]
        b.op(B.BIDIRECTIONAL_SEQUENCE_RNN, ins, outs, BidirectionalSequenceRNNOptions(
            time_major=time_major, fused_activation_function=act, merge_outputs=merge,
            asymmetric_quantize_inputs=asymmetric))
        b.output(*outs)
        shapes = [shape] + ([aux_shape] if aux else [])
        return b, float_feeds(rng, shapes)


bidi_rnn("birnn_hyb_batch_major")
bidi_rnn("birnn_hyb_time_major_repeats_the_sequence", time_major=True, T=4, n_batch=3)
bidi_rnn("birnn_hyb_merged_time_major_asym", merge=True, time_major=True, asymmetric=True)
bidi_rnn("birnn_hyb_merged_batch_major_relu", merge=True, act=Act.RELU, units=6, n_input=17)
bidi_rnn("birnn_hyb_aux_weights_asym", aux="weights", asymmetric=True)
bidi_rnn("birnn_hyb_aux_weights_time_major", aux="weights", time_major=True, act=Act.RELU6)
bidi_rnn("birnn_hyb_backward_reads_aux_time_major", aux="backward", time_major=True)
bidi_rnn("birnn_hyb_batch_major_ignores_aux", aux="backward")


def topk(name, x_dtype, k_dtype=np.int32, index_dtype=np.int32, shape=(3, 9), k=4):
    @case(name, stateless=True)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", shape, x_dtype)
        kt = b.constant("k", np.array([k], k_dtype))
        out = shape[:-1] + (k,)
        v, i = b.tensor("values", out, x_dtype), b.tensor("indices", out, index_dtype)
        b.op(B.TOPK_V2, [x, kt], [v, i])
        b.output(v, i)
        if np.dtype(x_dtype).kind == "f":
            feeds = [[rng.integers(-4, 5, shape).astype(x_dtype)] for _ in range(2)]       # many ties
        else:
            info = np.iinfo(x_dtype)
            feeds = [[rng.integers(info.min, info.max, shape, endpoint=True).astype(x_dtype)],
                     [rng.integers(-3, 4, shape).astype(x_dtype)]]
        return b, feeds


topk("topk_int16", np.int16)
topk("topk_int16_k_and_indices_int16", np.int16, np.int16, np.int16, shape=(2, 3, 7), k=7)
topk("topk_float_int16_k", np.float32, np.int16)
topk("topk_int8_int16_indices", np.int8, index_dtype=np.int16, k=1)


def dus(name, dtype, index_dtype=np.int32, operand=(4, 5, 3), update=(2, 3, 3)):
    @case(name, stateless=True)
    def build():
        rng = rng_for(name)
        b = ModelBuilder()
        o, u = b.input("operand", operand, dtype), b.input("update", update, dtype)
        s = b.input("start", (len(operand),), index_dtype)
        y = b.tensor("y", operand, dtype)
        b.op(B.DYNAMIC_UPDATE_SLICE, [o, u, s], [y])
        b.output(y)

        def values(shape):
            if np.dtype(dtype) == np.bool_:
                return rng.integers(0, 2, shape).astype(bool)
            if np.dtype(dtype).kind == "f":
                return rng.uniform(-100, 100, shape).astype(dtype)
            info = np.iinfo(dtype)
            return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)

        starts = [np.array([1, -2, 0], index_dtype), np.array([3, 4, 1], index_dtype)]   # clamped both ways
        return b, [[values(operand), values(update), s_] for s_ in starts]


dus("dus_float16", np.float16)
dus("dus_int16", np.int16)
dus("dus_int16_int64_starts", np.int16, np.int64)
dus("dus_float16_int64_starts", np.float16, np.int64)
for _dt in (np.uint8, np.uint16, np.uint32, np.float64):
    dus(f"dus_{np.dtype(_dt).name}", _dt)


def build_case(name):
    builder, feeds = CASES[name]()
    return update_versions(builder.build()), feeds


def _bad_bidi_rnn_aux(n_aux):
    rng = rng_for("bad aux")
    b = ModelBuilder()
    x = b.input("x", (2, 3, 4))
    aux = b.input("aux", (2, 3, n_aux))
    fw, fw_aux = rnn_cell(b, rng, "fw_", 4, 3, 2, n_aux)
    bw, bw_aux = rnn_cell(b, rng, "bw_", 4, 3, 2, n_aux)
    y1, y2 = b.tensor("y1", (2, 3, 3)), b.tensor("y2", (2, 3, 3))
    b.op(B.BIDIRECTIONAL_SEQUENCE_RNN, [x] + fw + bw + [aux, fw_aux, bw_aux], [y1, y2],
         BidirectionalSequenceRNNOptions(fused_activation_function=Act.TANH))
    b.output(y1, y2)
    return update_versions(b.build())
