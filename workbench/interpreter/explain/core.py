"""The entry point: :func:`explain` finds the node's explainer by its OpData class (or op and OpData
for shared OpData), runs it and builds the :class:`Explanation`."""

from __future__ import annotations

import math

import numpy as np

from ._steps import _Work, _act_real
from .conversion import _explain_dequantize, _explain_quantize
from .elementwise import (
    _explain_abs, _explain_binary, _explain_div, _explain_hard_swish, _explain_leaky_relu, _explain_neg,
    _explain_prelu, _explain_relu, _explain_rsqrt8, _explain_sqrt, _explain_squared_difference,
)
from .hybrid import (
    _explain_hybrid_bmm, _explain_hybrid_conv, _explain_hybrid_depthwise, _explain_hybrid_fc, _explain_hybrid_tconv,
)
from .matrix import _explain_matrix
from .movement import (
    DATA_MOVEMENT, _explain_arg, _explain_concatenation, _explain_copy, _explain_reduce_select, _explain_select2,
    _explain_shape,
)
from .pooling import (
    _explain_l2norm, _explain_mean, _explain_pool, _explain_reduce_prod, _explain_resize_integer,
    _explain_resize_uint8, _explain_sum,
)
from .result import Explanation, Step, _item, _number
from .tables import (
    _explain_log_softmax, _explain_logistic_tanh16, _explain_lut, _explain_softmax16, _explain_softmax8,
)


# ----------------------------------------------------------------------------------------------
# dispatch


_EXPLAINERS = {
    "Conv2DInt8Data": _explain_matrix, "DepthwiseConv2DInt8Data": _explain_matrix,
    "FullyConnectedInt8Data": _explain_matrix, "Conv2DUint8Data": _explain_matrix,
    "DepthwiseConv2DUint8Data": _explain_matrix, "FullyConnectedUint8Data": _explain_matrix,
    "Conv2DInt16Data": _explain_matrix, "DepthwiseConv2DInt16Data": _explain_matrix,
    "FullyConnectedInt16Data": _explain_matrix, "TransposeConvQuantizedData": _explain_matrix,
    "TransposeConvUint8Data": _explain_matrix, "BatchMatMulQuantizedData": _explain_matrix,
    "FullyConnectedHybridData": _explain_hybrid_fc, "Conv2DHybridData": _explain_hybrid_conv,
    "DepthwiseConv2DHybridData": _explain_hybrid_depthwise, "BatchMatMulHybridData": _explain_hybrid_bmm,
    "TransposeConvHybridData": _explain_hybrid_tconv,
    "BinaryInt8Data": _explain_binary, "BinaryQuantizedData": _explain_binary,
    "Pool2DQuantizedData": _explain_pool, "MeanQuantizedData": _explain_mean, "SumData": _explain_sum,
    "ReduceProdData": _explain_reduce_prod, "QuantizeData": _explain_quantize, "DequantizeData": _explain_dequantize,
    "SoftmaxInt8Data": _explain_softmax8, "SoftmaxInt16Data": _explain_softmax16, "LutData": _explain_lut,
    "LogisticInt16Data": _explain_logistic_tanh16, "TanhInt16Data": _explain_logistic_tanh16,
    "ReluData": _explain_relu, "LeakyReluQuantizedData": _explain_leaky_relu, "HardSwishData": _explain_hard_swish,
    "ResizeBilinearInt8Data": _explain_resize_integer, "ResizeBilinearUint8Data": _explain_resize_uint8,
    "L2NormalizationQuantizedData": _explain_l2norm, "AbsData": _explain_abs, "PreluQuantizedData": _explain_prelu,
    "DivQuantizedData": _explain_div, "SqrtQuantizedData": _explain_sqrt, "RsqrtInt8Data": _explain_rsqrt8,
    "SquaredDifferenceInt8Data": _explain_squared_difference, "LogSoftmaxQuantizedData": _explain_log_softmax,
}


# OpData shared with float / plain-integer variants: explained only for these ops on integer data
_BY_OP = {("NEG", "UnaryData"): _explain_neg, ("MAXIMUM", "ElementwiseData"): _explain_select2,
          ("MINIMUM", "ElementwiseData"): _explain_select2, ("ARG_MAX", "ArgData"): _explain_arg,
          ("ARG_MIN", "ArgData"): _explain_arg, ("REDUCE_MAX", "ReduceData"): _explain_reduce_select,
          ("REDUCE_MIN", "ReduceData"): _explain_reduce_select, ("SHAPE", "ShapeData"): _explain_shape,
          ("RANK", "RankData"): _explain_shape}


def explained_kinds() -> dict:
    """OpData class name → what explain() does with it (for documentation and tests)."""
    return {name: fn.__name__.removeprefix("_explain_") for name, fn in _EXPLAINERS.items()}


def _dequantized(w: _Work, value, output: int) -> float:
    t = w.n.outputs[output]
    if isinstance(value, (float, np.floating)) or not w.is_quantized(t):
        return _number(value)
    s, z, dim = w.quantization(t)
    if len(s) > 1:
        return float(s[w.pos[dim]]) * (int(value) - int(z[w.pos[dim]]))
    return float(s[0]) * (int(value) - int(z[0]))


def explain(interpreter, node, output_index, output: int = 0) -> Explanation:
    """Compute element ``output_index`` (flat int or a tuple) of output ``output`` of ``node`` by hand.

    The interpreter must have run (``invoke``) and keep the node's inputs readable
    (``keep_intermediates=True``, or the node reads model inputs/constants only).
    """
    index = node.index if hasattr(node, "index") else int(node)
    w = _Work(interpreter, index)
    n = w.n
    if not 0 <= output < len(n.outputs):
        raise IndexError(f"node {index} {n.op_name} has {len(n.outputs)} output(s), not {output + 1}")
    out = w.get(n.outputs[output])
    if np.isscalar(output_index) or np.ndim(output_index) == 0:
        k = int(output_index)
        if not -out.size <= k < out.size:
            raise IndexError(f"output element {k} is outside node {index}'s output of {out.size} elements")
        pos = np.unravel_index(k % max(out.size, 1), out.shape)
    else:
        pos = tuple(output_index)
        if len(pos) != out.ndim or any(not 0 <= int(p) < s for p, s in zip(pos, out.shape)):
            raise IndexError(f"output element {list(pos)} is outside node {index}'s output of shape "
                             f"{list(out.shape)}")
    w.out, w.pos = out, tuple(int(p) for p in pos)
    name = type(w.d).__name__
    fn = _EXPLAINERS.get(name)
    if fn is None and (n.op_name, name) in _BY_OP and out.dtype.kind in "iu" and \
            any(w.is_quantized(t) for t in n.inputs if t >= 0):
        fn = _BY_OP[(n.op_name, name)]
    if fn is not None and output != 0:
        raise IndexError(f"node {index} {n.op_name}: explain() works out output 0 only")
    if fn is not None:
        by_hand, real = fn(w)
        if fn in (_explain_binary, _explain_pool, _explain_hybrid_fc, _explain_hybrid_conv, _explain_hybrid_depthwise,
                  _explain_div, _explain_hybrid_tconv):
            real = _act_real(w.d, real)
    elif n.op_name in DATA_MOVEMENT and not (name == "ConcatenationData" and any(w.d.rescaled or ())):
        by_hand, real = _explain_copy(w, output)
    elif name == "ConcatenationData":
        by_hand, real = _explain_concatenation(w)
    elif not any(w.is_quantized(t) for t in tuple(n.inputs) + tuple(n.outputs) if t >= 0):
        value = _item(out[w.pos])
        return Explanation(index, n.op_name, w.pos, (Step("no quantized tensor", "the kernel computes in "
                                                          f"{out.dtype}; nothing quantized to work out", value),),
                           None, value, math.nan, _number(value), "not quantized", f"{out.dtype}")
    else:
        raise NotImplementedError(f"explain() does not know node {index} {n.op_name} ({name}); it explains "
                                  f"{', '.join(sorted(explained_kinds()))} and data movement "
                                  f"({', '.join(sorted(DATA_MOVEMENT))})")
    value = out[w.pos] if out.dtype == np.float32 else _item(out[w.pos])
    if isinstance(by_hand, np.floating) or (isinstance(by_hand, float) and out.dtype == np.float32):
        by_hand = np.float32(by_hand)
    elif isinstance(by_hand, np.integer):
        by_hand = int(by_hand)
    return Explanation(index, n.op_name, w.pos, tuple(w.steps), by_hand, value, float(real),
                       _dequantized(w, value, output), w.kind, w.recipe)
