"""LOCAL_RESPONSE_NORMALIZATION (float32, version 1): each value divided by a power of the sum of
squares of its neighbours along the last (channel) axis,

    out[..., c] = x[..., c] · (bias + alpha · Σ_window x[..., j]²) ^ (−beta)

Options (LocalResponseNormalizationOptions): radius, bias, alpha, beta.  TFLite keeps the options
as doubles in ``LocalResponseNormalizationParams``.  ``Variant.float_activations``:

* "libm" (``reference_ops::LocalResponseNormalization``): the window is j ∈ [c − radius,
  c + radius) — the upper end excluded, as TFLite's loop has it — cut at the channel edges; the
  squares are summed in float32 in channel order; the multiplier is
  pow(bias + alpha·sum, −beta) in double (the C library's ``pow``), rounded to float32, times x.
* "eigen" (litert-x86, ``optimized_ops::LocalResponseNormalization``): the window is symmetric,
  [c − radius, c + radius]; alpha·x² (float32) slides through one running float32 sum per row
  (add the value entering, take bias + sum, subtract the value leaving); then x·(1/s) for
  beta = 1, x·(1/sqrt(s)) for beta = 0.5 (bit for bit with litert), and for any other beta
  x·s^(−beta) with Eigen's vectorised ``pow`` — which this kernel does not reproduce: it takes the
  correctly rounded power, within 2 float32 ulps of litert on the first 4·⌊N/4⌋ values
  (tests/interpreter/kernels/test_local_response_normalization.py shows the gap).
"""

import math

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._elementwise import refuse

_F32 = np.float32


@opdata
class LocalResponseNormalizationData(OpData):
    radius: int
    bias: float
    alpha: float
    beta: float


def _c_pow(base: float, exponent: float) -> float:
    """The C library's ``pow`` (Python's math.pow calls it); IEEE's NaN / inf where Python raises."""
    try:
        return math.pow(base, exponent)
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            return float(np.power(np.float64(base), np.float64(exponent)))


_C_POW = np.frompyfunc(_c_pow, 2, 1)


@np.errstate(over="ignore", invalid="ignore", divide="ignore")   # float inf / nan silently, as TFLite
def lrn_reference(x: np.ndarray, d: LocalResponseNormalizationData) -> np.ndarray:
    """``reference_ops::LocalResponseNormalization``: window [c − r, c + r), float32 sums, double pow."""
    sq = (x * x).astype(_F32)
    c = x.shape[-1]
    acc = np.zeros(x.shape, _F32)
    for j in range(max(-d.radius, 1 - c), min(d.radius, c)):     # offsets into the window, in order
        lo, hi = max(0, -j), min(c, c - j)                         # channels whose neighbour c + j exists
        acc[..., lo:hi] = (acc[..., lo:hi] + sq[..., lo + j:hi + j]).astype(_F32)
    base = np.float64(d.bias) + np.float64(d.alpha) * acc.astype(np.float64)
    multiplier = _C_POW(base, -np.float64(d.beta)).astype(np.float64).astype(_F32)
    return (x * multiplier).astype(_F32)


@np.errstate(over="ignore", invalid="ignore", divide="ignore")
def lrn_x86(x: np.ndarray, d: LocalResponseNormalizationData) -> np.ndarray:
    """``optimized_ops::LocalResponseNormalization``: a running window sum per row, then the power."""
    c, r = x.shape[-1], d.radius
    rows = x.reshape(-1, c)
    scaled = ((rows * rows).astype(_F32) * _F32(d.alpha)).astype(_F32)      # alpha·x², Eigen's order
    acc = np.zeros(rows.shape[0], _F32)
    for k in range(min(r, c)):                        # the window of channel 0 before its last value
        acc = (acc + scaled[:, k]).astype(_F32)
    s = np.empty(rows.shape, _F32)
    for k in range(c):                                # zeros pad both ends: adding them changes nothing
        if k + r < c:
            acc = (acc + scaled[:, k + r]).astype(_F32)
        s[:, k] = (_F32(d.bias) + acc).astype(_F32)
        if k >= r:
            acc = (acc - scaled[:, k - r]).astype(_F32)
    if d.beta == 1.0:
        m = (_F32(1) / s).astype(_F32)
    elif d.beta == 0.5:
        m = (_F32(1) / np.sqrt(s)).astype(_F32)
    else:                                             # Eigen's packet pow: not reproduced (see above)
        m = np.power(s.astype(np.float64), -np.float64(_F32(d.beta))).astype(_F32)
    return (rows * m).astype(_F32).reshape(x.shape)


@kernel(BuiltinOperator.LOCAL_RESPONSE_NORMALIZATION, versions=(1,))
class LocalResponseNormalization(Kernel):
    name = "local_response_normalization"

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32,), "input")
        if len(context.shape(x)) != 4:
            refuse(node, f"input has shape {list(context.shape(x))}; expected rank 4")
        p = node.params
        context.set_output(node.outputs[0], context.shape(x), F32)
        return LocalResponseNormalizationData(int(p.get("radius", 0)), float(np.float32(p.get("bias", 0.0))),
                                              float(np.float32(p.get("alpha", 0.0))),
                                              float(np.float32(p.get("beta", 0.0))))

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        if x.size == 0:
            return
        lrn = lrn_x86 if context.variant.float_activations == "eigen" else lrn_reference
        context.tensors[node.outputs[0]][...] = lrn(x, d)
