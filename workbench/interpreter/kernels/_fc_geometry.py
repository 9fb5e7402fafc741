"""What every FULLY_CONNECTED kernel shares, whatever its types: the matrix shapes and the output shape.

The input is read as [batch, depth] rows (depth = the weights' K); the output is [batch, units], or the
input's leading dims + [units] with ``keep_num_dims``.  The checks are those of TFLite's Prepare in
``tensorflow/lite/kernels/fully_connected.cc``.  Every FULLY_CONNECTED OpData (float, int8, uint8, 16x8,
hybrid, int4, int16 weights, sparse) starts with the fields of :class:`FullyConnectedGeometry`, as every
CONV_2D OpData starts with :class:`._conv_geometry.ConvGeometry`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ...errors import UnsupportedOpError
from ..registry import OpData, opdata
from ._common import check_bias


@opdata
class FullyConnectedGeometry(OpData):
    """The fields every FULLY_CONNECTED OpData begins with."""

    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple
    activation: str


class MatrixShape(NamedTuple):
    """The shapes :func:`geometry` finds: the first five fields of :class:`FullyConnectedGeometry`
    (``FullyConnected…Data(**shape._asdict(), activation=…, …)``)."""

    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple



def geometry(context, node, p) -> MatrixShape:
    """Weights [units, K], an optional bias [units], an input of any shape holding whole rows of K."""
    x_t, w_t, b_t = node.input(0), node.input(1), node.input(2)
    wshape = context.shape(w_t)
    if len(wshape) != 2:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): weights of shape {list(wshape)}")
    units, k = wshape
    check_bias(node, context, b_t, units)
    xshape = context.shape(x_t)
    total = math.prod(xshape)
    if k == 0 or total % k:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): input {list(xshape)} is not a whole "
                                 f"number of rows of {k}")
    keep = bool(p.get("keep_num_dims", False))
    if keep and xshape[-1] != k:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): keep_num_dims needs the last input "
                                 f"dim to be {k}")
    out = tuple(xshape[:-1]) + (units,) if keep else (total // k, units)
    return MatrixShape(total // k, units, k, keep, out)
