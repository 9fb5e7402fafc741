"""LOCAL_RESPONSE_NORMALIZATION (float32, 4-D NHWC): each value divided by a power of the sum of
squares of its neighbours along the channel axis,

    out[..., c] = x[..., c] * (bias + alpha * sum_{j = c - radius}^{c + radius} x[..., j]^2) ^ (-beta)

(the window is cut at the channel edges).  Options (LocalResponseNormalizationOptions): radius,
bias, alpha, beta."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._elementwise import refuse


@opdata
class LocalResponseNormalizationData(OpData):
    radius: int
    bias: float
    alpha: float
    beta: float


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

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")   # float inf / nan silently, as TFLite
    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        sq = (x * x).astype(np.float32)
        c = x.shape[-1]
        csum = np.concatenate([np.zeros(x.shape[:-1] + (1,), np.float32), np.cumsum(sq, axis=-1, dtype=np.float32)],
                              axis=-1)
        lo = np.clip(np.arange(c) - d.radius, 0, c)
        hi = np.clip(np.arange(c) + d.radius + 1, 0, c)
        window = csum[..., hi] - csum[..., lo]
        base = (np.float32(d.bias) + np.float32(d.alpha) * window).astype(np.float32)
        context.tensors[node.outputs[0]][...] = x * np.power(base, np.float32(-d.beta))

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")
    def invoke_reference(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = np.empty_like(x)
        c = x.shape[-1]
        for i in range(c):
            j0, j1 = max(0, i - d.radius), min(c, i + d.radius + 1)
            acc = np.sum(x[..., j0:j1] * x[..., j0:j1], axis=-1, dtype=np.float32)
            out[..., i] = x[..., i] * np.power(np.float32(d.bias) + np.float32(d.alpha) * acc, np.float32(-d.beta))
        context.tensors[node.outputs[0]][...] = out
