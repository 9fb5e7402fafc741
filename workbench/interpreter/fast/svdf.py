"""Speed layer for SVDF: the hybrid kind's float weights_time (float32(w_t · s_wt), TFLite's own
``float_weights_time``, which TFLite also makes once) and the SSE row sums of weights_feature (asymmetric
inputs), made at prepare from the constant weights; every invoke then runs the teaching layer's
``eval_hybrid_svdf`` with them (same bits).  Float and int8 SVDF have no fast path.  Both arithmetic
variants: LiteRT's two resolvers run the same SVDF kernel.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..kernels import svdf
from ..variants import VARIANTS
from . import fast_path
from .lstm import Prepared


@fast_path(BuiltinOperator.SVDF, svdf.SVDFHybridData, variants=tuple(VARIANTS))
def bind_hybrid(context, node, d):
    wt = context.value(node.inputs[2])
    float_weights_time = (wt.astype(np.float32) * np.float32(d.weights_time_scale)).astype(np.float32)
    sums = quant.sse_row_sums(context.value(node.inputs[1])) if d.asymmetric_quantize_inputs else None
    return Prepared("hybrid(weights_time and row sums at prepare)", svdf.run, float_weights_time=float_weights_time,
                    row_sums=sums)
