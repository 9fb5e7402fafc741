"""FULLY_CONNECTED (float32): y = x W^T + b, W of shape [units, K].

The input is read as [batch, K] with batch = (number of elements) / K.  The output is
[batch, units], or x's leading dims + [units] with ``keep_num_dims`` (version 5).  The bias slot
may be -1 or missing altogether (version 6).  Only the DEFAULT weights format.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, activation_name, activation_range, apply_activation


@opdata
class FullyConnectedData(OpData):
    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple
    activation: str
    output_activation_min: float
    output_activation_max: float
    impl: str = "blas"
    weights_t: object = None     # contiguous [K, units] (W transposed), when W is constant
    bias: object = None


def reference(x, w, b, act_range):
    k = w.shape[1]
    y = x.reshape(-1, k).astype(np.float64) @ w.astype(np.float64).T
    if b is not None:
        y = y + b
    return np.clip(y, *act_range).astype(np.float32)


@kernel(BuiltinOperator.FULLY_CONNECTED, versions=(1, 5, 6))
class FullyConnected(Kernel):
    name = "fully_connected"

    def prepare(self, context, node):
        p = node.params
        x_t, w_t, b_t = node.input(0), node.input(1), node.input(2)
        context.expect_dtype(node, x_t, (F32,), "input")
        context.expect_dtype(node, w_t, (F32,), "weights")
        if b_t >= 0:
            context.expect_dtype(node, b_t, (F32,), "bias")
        if p.get("weights_format", 0) != 0:
            raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): weights format {p['weights_format']} "
                                     f"(shuffled int8) is not implemented")
        wshape = context.shape(w_t)
        if len(wshape) != 2:
            raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): weights of shape {list(wshape)}")
        units, k = wshape
        xshape = context.shape(x_t)
        total = math.prod(xshape)
        if k == 0 or total % k:
            raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): input {list(xshape)} is not a whole "
                                     f"number of rows of {k}")
        batch = total // k
        keep = bool(p.get("keep_num_dims", False))
        if keep:
            if xshape[-1] != k:
                raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): keep_num_dims needs the last input "
                                         f"dim to be {k}")
            out = tuple(xshape[:-1]) + (units,)
        else:
            out = (batch, units)
        context.set_output(node.outputs[0], out, F32)
        code = p.get("fused_activation_function", 0)
        lo, hi = activation_range(code)
        w = context.value(w_t)
        wt = np.ascontiguousarray(w.T, np.float32) if w is not None else None
        bias = context.value(b_t) if b_t >= 0 else None
        return FullyConnectedData(batch, units, k, keep, out, activation_name(code), lo, hi, "blas", wt,
                                  None if bias is None else np.ascontiguousarray(bias, np.float32))

    def invoke(self, context, node, d):
        t = context.tensors
        out2d = t[node.outputs[0]].reshape(d.batch, d.units)
        wt = d.weights_t if d.weights_t is not None else t[node.inputs[1]].T
        np.matmul(t[node.inputs[0]].reshape(d.batch, d.depth), wt, out=out2d)
        b_t = node.input(2)
        if d.bias is not None:
            out2d += d.bias
        elif b_t >= 0:
            out2d += t[b_t]
        apply_activation(out2d, d.output_activation_min, d.output_activation_max)

    def invoke_reference(self, context, node, d):
        t = context.tensors
        b_t = node.input(2)
        y = reference(t[node.inputs[0]], t[node.inputs[1]], t[b_t] if b_t >= 0 else None,
                      (d.output_activation_min, d.output_activation_max))
        t[node.outputs[0]][...] = y.reshape(d.output_shape)
