"""SVDF (float32 v1, hybrid v2 / v4, int8 v3): a fully-connected layer factored in time, as keyword
spotters use it.

Inputs: 0 input [n_batch, n_input]; 1 weights_feature [num_filters, n_input]; 2 weights_time
[num_filters, memory_size]; 3 bias [num_units] (optional); 4 state [n_batch, memory_size · num_filters]
(a variable tensor: the last memory_size feature activations of every filter).  Output [n_batch,
num_units] with num_units = num_filters / rank.  Options (SVDFOptions): rank, fused_activation_function,
asymmetric_quantize_inputs (hybrid).

Each invoke (TFLite's reference_ops ``EvalFloatSVDF`` / ``EvalHybridSVDF`` / ``EvalIntegerSVDF``):
  1. the state buffer moves one place to the left (the oldest activation of each filter drops out);
  2. each filter's newest activation, weights_feature · input, goes to its last state column;
  3. every filter's memory is dotted with its weights_time row;
  4. ``rank`` consecutive filters are summed into one unit, bias added, activation applied
     (``ApplyTimeWeightsBiasAndActivation``).
float32: the products and sums are tensor_utils' as litert's x86 build runs them (NEON code through
NEON_2_SSE: quant.recurrent's matrix_batch_vector_multiply_accumulate, neon_dot_f32,
neon_reduction_sum_f32) and TANH is Eigen's, so the outputs are bitwise equal to litert's.

hybrid (float32 input, bias, state and output; int8 weights_feature and weights_time, one scale each):
step 2 quantizes each input row (symmetric, or asymmetric with the row's zero point) unless the whole
input is zero (then the newest activations are 0): newest = float32(Σ q·w_f − zp·row_sum) ·
float32(row_scale · s_wf); steps 3-4 use weights_time made float once, float32(w_t · s_wt).

int8 (input int8 with zero point zp_in, weights_feature int8, weights_time int16, bias int32, state int16
with zero point 0, output int8), in integers (MBQM = MultiplyByQuantizedMultiplier):
  state_new = clamp_int16(MBQM(Σ w_f·(x − zp_in), scale_1)),  scale_1 = s_in · s_wf / s_state
  acc = Σ_rank Σ_memory w_t · state (int32) + bias
  out = clamp_int8(MBQM(acc, scale_2) + zp_out),             scale_2 = s_state · s_wt / s_out
(the scales multiplied in double from float32 values).  TFLite requires the fused activation to be RELU
for int8 but does not apply it (only the int8 clamp); so does this kernel.
LiteRT's BUILTIN_REF resolver registers this same kernel: both variants agree.  Speed layer:
``workbench/interpreter/fast/svdf.py`` (the hybrid's float weights_time and row sums made once).
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..quant import multiply_by_quantized_multiplier_array, quantize_multiplier, tensor_scale_zp
from ..quant.recurrent import (
    apply_activation_to_vector,
    hybrid_matrix_batch_vector_multiply_accumulate,
    matrix_batch_vector_multiply_accumulate,
    neon_dot_f32,
    neon_reduction_sum_f32,
    quantize_rows,
)
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, I32
from ._elementwise import refuse
from ._rnn import ACTIVATIONS


@opdata
class SVDFData(OpData):
    """The float32 SVDF (and what every kind has)."""

    rank: int
    n_batch: int
    n_input: int
    num_filters: int
    num_units: int
    memory_size: int
    activation: str
    activation_code: int
    has_bias: bool
    kind = "float"


@opdata
class SVDFHybridData(SVDFData):
    asymmetric_quantize_inputs: bool
    weights_feature_scale: float
    weights_time_scale: float
    kind = "hybrid"


@opdata
class SVDFInt8Data(SVDFData):
    input_zero_point: int
    output_zero_point: int
    effective_scale_1: float                # the real multipliers
    effective_scale_2: float
    effective_scale_1_a: int                # TFLite's field names: quantized multiplier and shift
    effective_scale_1_b: int
    effective_scale_2_a: int
    effective_scale_2_b: int
    kind = "int8"


def apply_time_weights_bias_and_activation(memory, weights_time, bias, d) -> np.ndarray:
    """Steps 3-4 (float and hybrid): memory [n_batch, num_filters, memory_size] · weights_time rows
    (``BatchVectorBatchVectorDotProduct``), ``rank`` filters summed per unit (``ReductionSumVector``),
    + bias, activation; returns [n_batch, num_units] float32."""
    out = neon_reduction_sum_f32(neon_dot_f32(memory, weights_time[None]), d.rank).reshape(d.n_batch, d.num_units)
    if bias is not None:
        out = (out + bias).astype(np.float32)
    return apply_activation_to_vector(out, d.activation_code)


def eval_float_svdf(x, weights_feature, weights_time, bias, state, d: SVDFData) -> np.ndarray:
    """``reference_ops::EvalFloatSVDF``."""
    memory = _memory(state, d)
    newest = np.zeros((d.n_batch, d.num_filters), np.float32)
    memory[:, :, -1] = matrix_batch_vector_multiply_accumulate(weights_feature, x, newest)
    return apply_time_weights_bias_and_activation(memory, weights_time, bias, d)


def eval_hybrid_svdf(x, weights_feature, weights_time, bias, state, d: SVDFHybridData, float_weights_time=None,
                     row_sums=None) -> np.ndarray:
    """``reference_ops::EvalHybridSVDF``; ``float_weights_time`` / ``row_sums``: if already made."""
    if float_weights_time is None:
        float_weights_time = (weights_time.astype(np.float32) * np.float32(d.weights_time_scale)).astype(np.float32)
    if row_sums is None and d.asymmetric_quantize_inputs:
        row_sums = quant.sse_row_sums(weights_feature)
    memory = _memory(state, d)
    newest = np.zeros((d.n_batch, d.num_filters), np.float32)
    if np.any(x):                                       # TFLite skips an all-zero input (newest = 0)
        newest = hybrid_matrix_batch_vector_multiply_accumulate(
            newest, quantize_rows(x, d.asymmetric_quantize_inputs), weights_feature, d.weights_feature_scale,
            row_sums if d.asymmetric_quantize_inputs else None)
    memory[:, :, -1] = newest
    return apply_time_weights_bias_and_activation(memory, float_weights_time, bias, d)


def eval_integer_svdf(x, weights_feature, weights_time, bias, state, d: SVDFInt8Data) -> np.ndarray:
    """``reference_ops::EvalIntegerSVDF`` (int32 sums wrap as TFLite's do)."""
    memory = _memory(state, d)
    dots = quant.wrap_int32((x.astype(np.int64) - d.input_zero_point) @ weights_feature.astype(np.int64).T)
    newest = multiply_by_quantized_multiplier_array(dots, d.effective_scale_1_a, d.effective_scale_1_b)
    memory[:, :, -1] = np.clip(newest, -32768, 32767)
    per_filter = quant.wrap_int32(np.einsum("bfm,fm->bf", memory.astype(np.int64), weights_time.astype(np.int64)))
    acc = per_filter.reshape(d.n_batch, d.num_units, d.rank).sum(axis=2)
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    v = multiply_by_quantized_multiplier_array(quant.wrap_int32(acc), d.effective_scale_2_a, d.effective_scale_2_b)
    return np.clip(v + d.output_zero_point, -128, 127)


def _memory(state, d) -> np.ndarray:
    """Shift the state left by one (std::copy(state + 1, end, state)) and view it as [n_batch,
    num_filters, memory_size]: the last column then takes each filter's newest activation."""
    flat = state.reshape(-1)
    flat[:-1] = flat[1:].copy()
    return state.reshape(d.n_batch, d.num_filters, d.memory_size)


@kernel(BuiltinOperator.SVDF, versions=(1, 2, 3, 4))
class SVDF(Kernel):
    name = "svdf"
    foldable = False

    def prepare(self, context, node):
        if len(node.inputs) != 5 or len(node.outputs) != 1:
            refuse(node, f"expects 5 inputs and 1 output; it has {len(node.inputs)} and {len(node.outputs)}")
        x, wf, wt, b, st = (node.input(k) for k in range(5))
        dt = context.expect_dtype(node, x, (F32, I8), "input")
        if dt == I8 and node.version != 3:
            refuse(node, "an int8 SVDF is version 3")
        hybrid = dt == F32 and context.dtype(wf) == I8
        context.expect_dtype(node, wf, (F32, I8) if dt == F32 else (I8,), "weights_feature")
        if hybrid:
            context.expect_dtype(node, wt, (I8,), "weights_time (a hybrid SVDF reads it as int8)")
        else:
            context.expect_dtype(node, wt, (F32,) if dt == F32 else (I16,), "weights_time")
        if b >= 0:
            context.expect_dtype(node, b, (F32,) if dt == F32 else (I32,), "bias")
        if st < 0 or not context.tensor_meta(st).is_variable:
            refuse(node, "the state (input 4) must be a variable tensor")
        context.expect_dtype(node, st, (F32,) if dt == F32 else (I16,), "state")
        rank = int(node.params.get("rank", 0))
        xs, wfs, wts = context.shape(x), context.shape(wf), context.shape(wt)
        if len(xs) != 2 or len(wfs) != 2 or len(wts) != 2:
            refuse(node, f"input {list(xs)}, weights_feature {list(wfs)} and weights_time {list(wts)} must be rank 2")
        n_batch, n_input = xs
        num_filters, memory_size = wfs[0], wts[1]
        if rank <= 0 or num_filters % rank:
            refuse(node, f"rank {rank} must be positive and divide num_filters {num_filters}")
        num_units = num_filters // rank
        if wfs[1] != n_input or wts[0] != num_filters:
            refuse(node, f"weights_feature {list(wfs)} must be [num_filters, {n_input}] and weights_time {list(wts)} "
                         f"[{num_filters}, memory_size]")
        if b >= 0 and tuple(context.shape(b)) != (num_units,):
            refuse(node, f"bias has shape {list(context.shape(b))}; expected [{num_units}]")
        if tuple(context.shape(st)) != (n_batch, memory_size * num_filters):
            refuse(node, f"state has shape {list(context.shape(st))}; expected "
                         f"[{n_batch}, {memory_size * num_filters}]")
        code = int(node.params.get("fused_activation_function", 0))
        if code not in ACTIVATIONS:
            refuse(node, f"fused activation {code} is not one TFLite's SVDF applies")
        context.set_output(node.outputs[0], (n_batch, num_units), dt)
        facts = (rank, n_batch, n_input, num_filters, num_units, memory_size, ACTIVATIONS[code], code, b >= 0)
        if hybrid:
            return SVDFHybridData(*facts, bool(node.params.get("asymmetric_quantize_inputs", False)),
                                  *(_hybrid_scale(node, context, t, what) for t, what in
                                    ((wf, "weights_feature"), (wt, "weights_time"))))
        if dt == F32:
            return SVDFData(*facts)
        if code != 1:
            refuse(node, f"an int8 SVDF needs fused activation RELU (TFLite requires it, and then only clamps to "
                         f"int8); got {ACTIVATIONS[code]}")
        (s_in, zp_in), (s_wf, _), (s_wt, _) = (tensor_scale_zp(context, t) for t in (x, wf, wt))
        (s_st, zp_st), (s_out, zp_out) = tensor_scale_zp(context, st), tensor_scale_zp(context, node.outputs[0])
        if zp_st != 0:
            refuse(node, f"the int16 state has zero point {zp_st}; TFLite assumes 0")
        e1 = float(np.float64(np.float32(s_in)) * np.float64(np.float32(s_wf)) / np.float64(np.float32(s_st)))
        e2 = float(np.float64(np.float32(s_st)) * np.float64(np.float32(s_wt)) / np.float64(np.float32(s_out)))
        return SVDFInt8Data(*facts, zp_in, zp_out, e1, e2, *quantize_multiplier(e1), *quantize_multiplier(e2))

    def invoke(self, context, node, d):
        run(context, node, d)


def run(context, node, d, **prepared) -> None:
    """One invoke by kind; ``prepared``: the hybrid's float weights_time and row sums if the speed layer
    made them once (the teaching layer passes nothing)."""
    t = context.tensors
    x, wf, wt, state = t[node.inputs[0]], t[node.inputs[1]], t[node.inputs[2]], t[node.inputs[4]]
    bias = t[node.input(3)] if d.has_bias else None
    if type(d) is SVDFInt8Data:
        y = eval_integer_svdf(x, wf, wt, bias, state, d)
    elif type(d) is SVDFHybridData:
        y = eval_hybrid_svdf(x, wf, wt, bias, state, d, **prepared)
    else:
        y = eval_float_svdf(x, wf, wt, bias, state, d)
    t[node.outputs[0]][...] = y


def _hybrid_scale(node, context, t, what) -> float:
    sc, zps, _ = quant.quant_params(context, t)
    if len(sc) != 1:
        refuse(node, f"{what} '{context.name(t)}' has {len(sc)} scales; a hybrid SVDF takes one per tensor")
    if int(zps[0]) != 0:
        refuse(node, f"{what} '{context.name(t)}' has zero point {int(zps[0])}; hybrid weights are symmetric")
    if not context.is_constant(t):
        refuse(node, f"{what} '{context.name(t)}' must be a constant tensor")
    return float(np.float32(sc[0]))
