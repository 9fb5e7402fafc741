"""SVDF (float32 v1, hybrid v2 / v4, int8 v3): a fully-connected layer factored in time, as keyword
spotters use it.

Inputs: 0 input [n_batch, n_input]; 1 weights_feature [num_filters, n_input]; 2 weights_time
[num_filters, memory_size]; 3 bias [num_units] (optional); 4 state [n_batch, memory_size *
num_filters] (a variable tensor: the last memory_size feature activations of every filter).
Output [n_batch, num_units] with num_units = num_filters / rank.  Options (SVDFOptions): rank,
fused_activation_function, asymmetric_quantize_inputs (hybrid).

Each invoke (TFLite's EvalFloatSVDF / EvalIntegerSVDF):
  1. the state buffer moves one place to the left (the oldest activation of each filter drops out);
  2. each filter's newest activation, weights_feature · input, goes to its last state column;
  3. every filter's memory is dotted with its weights_time row;
  4. ``rank`` consecutive filters are summed into one unit, bias added, activation applied.
In float32 every dot product and sum follows litert's NEON order (quant.neon_dot_f32,
quant.neon_reduction_sum_f32) and TANH is Eigen's, so float outputs are bitwise equal to litert's too.

int8 (full integer, v3): input int8 (zero point zp_in), weights_feature int8, weights_time int16,
bias int32, state int16 (zero point 0), output int8.  In integers:
  state_new = clamp_int16(MBQM(Σ w_f·(x − zp_in), scale_1))
      scale_1 = (double)s_in * (double)s_wf / (double)s_state
  acc = Σ_rank Σ_memory w_t · state (int32) + bias
  out = clamp_int8(MBQM(acc, scale_2) + zp_out)
      scale_2 = (double)s_state * (double)s_wt / (double)s_out
(MBQM = MultiplyByQuantizedMultiplier).  TFLite requires the fused activation to be RELU for int8
but does not apply it (only the int8 clamp); so does this kernel.

hybrid (dynamic range, v2; v4 with asymmetric_quantize_inputs): float32 input, bias, state and
output; int8 weights_feature and int8 weights_time, one scale each (TFLite's EvalHybridSVDF):
  1. the state moves one place to the left, as above;
  2. unless the whole input is zero, each input row is quantized (symmetric, or asymmetric with
     the row's zero point; quant.symmetric_quantize_rows / asymmetric_quantize_rows) and
     newest = float32(Σ q·w_f − zp·row_sum) · float32(row_scale · s_wf); an all-zero input gives 0;
  3. weights_time is turned into float32 once (w_t · s_wt) and every filter's memory is dotted with
     its row in float32, in NEON order (quant.neon_dot_f32: four partial sums, then the tail);
  4. ``rank`` filters are summed into a unit (quant.neon_reduction_sum_f32), the bias is added, and
     the activation is applied to the whole output (TANH is Eigen's, quant.eigen_tanh_f32; RELU,
     RELU_N1_TO_1, RELU6 as std::max/std::min; SIGN_BIT gives 1.0 for a set sign bit).
Every float32 operation in litert's order, so the outputs are bitwise equal to litert's.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..quant import (multiply_by_quantized_multiplier, multiply_by_quantized_multiplier_array, quantize_multiplier,
                     tensor_scale_zp)
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._elementwise import refuse
from ._rnn import ACTIVATIONS

I8, I16, I32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)


@opdata
class SVDFData(OpData):
    rank: int
    n_batch: int
    n_input: int
    num_filters: int
    num_units: int
    memory_size: int
    activation: str
    activation_code: int
    has_bias: bool
    dtype: str
    input_zero_point: int = 0
    output_zero_point: int = 0
    effective_scale_1: float = 0.0          # real multipliers (int8)
    effective_scale_2: float = 0.0
    effective_scale_1_a: int = 0            # TFLite's field names: quantized multiplier and shift
    effective_scale_1_b: int = 0
    effective_scale_2_a: int = 0
    effective_scale_2_b: int = 0
    hybrid: bool = False                    # float input with int8 weights (v2 / v4)
    asymmetric_quantize_inputs: bool = False
    weights_feature_scale: float = 0.0
    weights_time_scale: float = 0.0
    float_weights_time: np.ndarray = None   # hybrid: float32(w_t · s_wt), made once (TFLite's float_weights_time)
    row_sums: np.ndarray = None             # hybrid asymmetric: SSE row sums of weights_feature


def _wrap32(v: np.ndarray) -> np.ndarray:
    return ((np.asarray(v, np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _shift_state(state: np.ndarray) -> None:
    """Move the whole state buffer one place to the left (TFLite's std::copy(state + 1, end, state))."""
    flat = state.reshape(-1)
    flat[:-1] = flat[1:].copy()


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
        common = dict(rank=rank, n_batch=n_batch, n_input=n_input, num_filters=num_filters, num_units=num_units,
                      memory_size=memory_size, activation=ACTIVATIONS[code], activation_code=code, has_bias=b >= 0,
                      dtype=str(dt))
        if hybrid:
            return self._prepare_hybrid(node, context, wf, wt, common)
        if dt == F32:
            return SVDFData(**common)
        if code != 1:
            refuse(node, f"an int8 SVDF needs fused activation RELU (TFLite requires it, and then only clamps to "
                         f"int8); got {ACTIVATIONS[code]}")
        s_in, zp_in = tensor_scale_zp(context, x)
        s_wf, _ = tensor_scale_zp(context, wf)
        s_wt, _ = tensor_scale_zp(context, wt)
        s_st, zp_st = tensor_scale_zp(context, st)
        s_out, zp_out = tensor_scale_zp(context, node.outputs[0])
        if zp_st != 0:
            refuse(node, f"the int16 state has zero point {zp_st}; TFLite assumes 0")
        e1 = float(np.float64(np.float32(s_in)) * np.float64(np.float32(s_wf)) / np.float64(np.float32(s_st)))
        e2 = float(np.float64(np.float32(s_st)) * np.float64(np.float32(s_wt)) / np.float64(np.float32(s_out)))
        m1, sh1 = quantize_multiplier(e1)
        m2, sh2 = quantize_multiplier(e2)
        return SVDFData(**common, input_zero_point=zp_in, output_zero_point=zp_out, effective_scale_1=e1,
                        effective_scale_2=e2, effective_scale_1_a=m1, effective_scale_1_b=sh1, effective_scale_2_a=m2,
                        effective_scale_2_b=sh2)

    def _prepare_hybrid(self, node, context, wf, wt, common):
        scales = {}
        for what, t in (("weights_feature", wf), ("weights_time", wt)):
            sc, zps, _ = quant.quant_params(context, t)
            if len(sc) != 1:
                refuse(node, f"{what} '{context.name(t)}' has {len(sc)} scales; a hybrid SVDF takes one per tensor")
            if int(zps[0]) != 0:
                refuse(node, f"{what} '{context.name(t)}' has zero point {int(zps[0])}; hybrid weights are symmetric")
            if not context.is_constant(t):
                refuse(node, f"{what} '{context.name(t)}' must be a constant tensor")
            scales[what] = np.float32(sc[0])
        asym = bool(node.params.get("asymmetric_quantize_inputs", False))
        wt_f = (context.value(wt).astype(np.float32) * scales["weights_time"]).astype(np.float32)
        sums = quant.sse_row_sums(context.value(wf)) if asym else None
        return SVDFData(**common, hybrid=True, asymmetric_quantize_inputs=asym,
                        weights_feature_scale=float(scales["weights_feature"]),
                        weights_time_scale=float(scales["weights_time"]), float_weights_time=wt_f, row_sums=sums)

    # -- hybrid --------------------------------------------------------------------------------
    def _hybrid(self, context, node, d, reference):
        t = context.tensors
        x, wf = t[node.inputs[0]], t[node.inputs[1]]
        bias = t[node.input(3)] if d.has_bias else None
        state = t[node.inputs[4]]
        _shift_state(state)
        mem = state.reshape(d.n_batch, d.num_filters, d.memory_size)
        out = t[node.outputs[0]]
        f32 = np.float32
        s_wf = f32(d.weights_feature_scale)
        rows = None
        if np.any(x):                                   # TFLite skips an all-zero input (newest = 0)
            rows = quant.asymmetric_quantize_rows(x) if d.asymmetric_quantize_inputs else \
                quant.symmetric_quantize_rows(x) + (np.zeros(d.n_batch, np.int32),)
        if reference:
            for b in range(d.n_batch):
                for f in range(d.num_filters):
                    newest = f32(0.0)
                    if rows is not None:
                        q, sf, zp = rows
                        acc = sum(int(q[b, c]) * int(wf[f, c]) for c in range(d.n_input))
                        if d.asymmetric_quantize_inputs:
                            acc = int(quant.wrap_int32(acc - int(zp[b]) * int(d.row_sums[f])))
                        newest = f32(f32(acc) * f32(sf[b] * s_wf))
                    mem[b, f, -1] = newest
            flat = _time_and_units_reference(mem, d.float_weights_time, bias, d)
        else:
            if rows is None:
                mem[:, :, -1] = 0.0
            else:
                q, sf, zp = rows
                acc = q.astype(np.int64) @ wf.astype(np.int64).T
                if d.asymmetric_quantize_inputs:
                    acc = quant.wrap_int32(acc - zp.astype(np.int64)[:, None] * d.row_sums[None, :])
                scale = (sf * s_wf).astype(np.float32)
                mem[:, :, -1] = (acc.astype(np.float32) * scale[:, None]).astype(np.float32)
            per_filter = quant.neon_dot_f32(mem, d.float_weights_time[None])
            flat = quant.neon_reduction_sum_f32(per_filter, d.rank)
            if bias is not None:
                flat = (flat.reshape(d.n_batch, d.num_units) + bias).astype(np.float32).reshape(-1)
        out[...] = _float_activation(d.activation_code, flat).reshape(out.shape)

    # -- float ---------------------------------------------------------------------------------
    def _float(self, context, node, d, reference):
        t = context.tensors
        x, wf, wt = t[node.inputs[0]], t[node.inputs[1]], t[node.inputs[2]]
        bias = t[node.input(3)] if d.has_bias else None
        state = t[node.inputs[4]]
        _shift_state(state)
        mem = state.reshape(d.n_batch, d.num_filters, d.memory_size)
        out = t[node.outputs[0]]
        if reference:
            for b in range(d.n_batch):
                for f in range(d.num_filters):
                    mem[b, f, -1] = _neon_sum_reference([np.float32(wf[f, c] * x[b, c]) for c in range(d.n_input)])
            flat = _time_and_units_reference(mem, wt, bias, d)
        else:
            mem[:, :, -1] = quant.neon_dot_f32(x[:, None, :], wf[None])
            flat = quant.neon_reduction_sum_f32(quant.neon_dot_f32(mem, wt[None]), d.rank)
            if bias is not None:
                flat = (flat.reshape(d.n_batch, d.num_units) + bias).astype(np.float32).reshape(-1)
        out[...] = _float_activation(d.activation_code, flat).reshape(out.shape)

    # -- int8 ----------------------------------------------------------------------------------
    def _int8(self, context, node, d, reference):
        t = context.tensors
        x, wf, wt = t[node.inputs[0]], t[node.inputs[1]], t[node.inputs[2]]
        bias = t[node.input(3)] if d.has_bias else None
        state = t[node.inputs[4]]
        _shift_state(state)
        mem = state.reshape(d.n_batch, d.num_filters, d.memory_size)
        out = t[node.outputs[0]]
        if reference:
            for b in range(d.n_batch):
                for f in range(d.num_filters):
                    dot = int(sum(int(wf[f, c]) * (int(x[b, c]) - d.input_zero_point) for c in range(d.n_input)))
                    v = multiply_by_quantized_multiplier(int(_wrap32(dot)), d.effective_scale_1_a,
                                                         d.effective_scale_1_b)
                    mem[b, f, -1] = min(max(v, -32768), 32767)
                for u in range(d.num_units):
                    acc = 0
                    for r in range(d.rank):
                        f = u * d.rank + r
                        acc += int(_wrap32(sum(int(wt[f, m]) * int(mem[b, f, m]) for m in range(d.memory_size))))
                    if bias is not None:
                        acc += int(bias[u])
                    v = multiply_by_quantized_multiplier(int(_wrap32(acc)), d.effective_scale_2_a,
                                                         d.effective_scale_2_b)
                    out[b, u] = min(max(v + d.output_zero_point, -128), 127)
            return
        dots = _wrap32((x.astype(np.int64) - d.input_zero_point) @ wf.astype(np.int64).T)
        newest = multiply_by_quantized_multiplier_array(dots, d.effective_scale_1_a, d.effective_scale_1_b)
        mem[:, :, -1] = np.clip(newest, -32768, 32767)
        per_filter = _wrap32(np.einsum("bfm,fm->bf", mem.astype(np.int64), wt.astype(np.int64)))
        acc = per_filter.reshape(d.n_batch, d.num_units, d.rank).sum(axis=2)
        if bias is not None:
            acc = acc + bias.astype(np.int64)
        v = multiply_by_quantized_multiplier_array(_wrap32(acc), d.effective_scale_2_a, d.effective_scale_2_b)
        out[...] = np.clip(v + d.output_zero_point, -128, 127)

    def _path(self, d):
        return self._hybrid if d.hybrid else (self._float if d.dtype == "float32" else self._int8)

    def invoke(self, context, node, d):
        self._path(d)(context, node, d, False)

    def invoke_reference(self, context, node, d):
        self._path(d)(context, node, d, True)


def _neon_sum_reference(terms) -> np.float32:
    """Σ terms in litert's NEON order, one float32 value at a time (see quant.neon_dot_f32)."""
    f32 = np.float32
    n = len(terms)
    body = n - n % 4
    lanes = [f32(0.0)] * 4
    for k in range(body):
        lanes[k % 4] = f32(lanes[k % 4] + terms[k])
    total = f32(f32(f32(lanes[0] + lanes[1]) + lanes[2]) + lanes[3])
    for k in range(body, n):
        total = f32(total + terms[k])
    return total


def _time_and_units_reference(mem, weights_time, bias, d) -> np.ndarray:
    """Steps 3-4 of the float and hybrid SVDF written out: every filter's memory · its weights_time row,
    ``rank`` filters summed into a unit, plus the bias; flat [n_batch * num_units] float32."""
    f32 = np.float32
    flat = np.empty(d.n_batch * d.num_units, np.float32)
    for b in range(d.n_batch):
        per_filter = [_neon_sum_reference([f32(weights_time[f, m] * mem[b, f, m]) for m in range(d.memory_size)])
                      for f in range(d.num_filters)]
        for u in range(d.num_units):
            total = _neon_sum_reference(per_filter[u * d.rank:(u + 1) * d.rank])
            flat[b * d.num_units + u] = f32(total + bias[u]) if bias is not None else total
    return flat


def _float_activation(code: int, v: np.ndarray) -> np.ndarray:
    """TFLite's ApplyActivationToVector on a float32 vector (TANH is Eigen's tanh; NONE leaves it)."""
    if code == 4:
        return quant.eigen_tanh_f32(v)
    if code == 5:
        return np.signbit(v).astype(np.float32)
    return quant.apply_float_activation(v, code)
