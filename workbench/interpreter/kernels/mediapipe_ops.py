"""MediaPipe's custom ops used by face_landmark_with_attention (all version 2, float32).

Semantics read from MediaPipe's public sources (mediapipe/util/tflite/operations/
landmarks_to_transform_matrix.cc, transform_landmarks.cc, transform_tensor_bilinear.cc, and the
attribute parsers in tensorflow/lite/delegates/gpu/common/mediapipe/); the code here is our own.
Options are FlexBuffer maps (``workbench.options.custom``).

``Landmarks2TransformMatrix`` v2: landmarks [1, N, 3] -> a 4x4 matrix [1, 4, 4] mapping a crop's
  pixel (x, y) to landmark space.  Options: subset_idxs (flat list; all listed landmarks count),
  left_rotation_idx, right_rotation_idx, target_rotation_radians, output_height, output_width,
  scale_x, scale_y.
    rotation r = target - atan2(y_R - y_L, x_R - x_L)
    rotate the subset by r, take its bounding box (w, h) and centre c; rotate c back by -r
    T = shift(c) . rot(-r) . scale(scale_x * w / out_w, scale_y * h / out_h) . shift(-out_w / 2, -out_h / 2)
``TransformLandmarks`` v2 (no options): points [1, N, D], D = 2 or 3, and a matrix [1, 4, 4];
  (x, y) -> (m00 x + m01 y + m03, m10 x + m11 y + m13); z (D = 3) is copied.
``TransformTensorBilinear`` v2: features [1, H, W, C] and a matrix [1, 4, 4] -> [1, oh, ow, C]
  (output_height / output_width from the options).  The matrix is first corrected for pixel
  centres ("align corners": m03 += (m00 + m01 - 1) / 2, m13 += (m10 + m11 - 1) / 2); each output
  pixel (x, y) samples the input at (m00 x + m01 y + m03, m10 x + m11 y + m13) bilinearly; a sample
  point outside [0, W-1] x [0, H-1] gives 0, and neighbours outside the image read as 0.
Only batch 0 is processed by MediaPipe's kernels; these refuse a batch other than 1.
"""

from __future__ import annotations

import math

import numpy as np

from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._elementwise import fail, refuse


def _options(node) -> dict:
    c = node.custom
    if c is None or c.format != "flexbuffers" or not isinstance(c.value, dict):
        refuse(node, "custom options are not a FlexBuffer map")
    return c.value


def _require(node, opts: dict, key: str):
    if key not in opts:
        refuse(node, f"custom option {key!r} is missing")
    return opts[key]


def _rank_check(node, context, t, rank, what):
    shape = context.shape(t)
    if len(shape) != rank:
        refuse(node, f"{what} '{context.name(t)}' has shape {list(shape)}; expected rank {rank}")
    return shape


def _matrix_check(node, context, t):
    context.expect_dtype(node, t, (F32,), "the matrix")
    shape = context.shape(t)
    if int(np.prod(shape)) < 16 or shape[-2:] != (4, 4):
        refuse(node, f"the matrix '{context.name(t)}' has shape {list(shape)}; expected [1, 4, 4]")


# ----------------------------------------------------------------------------------------------
# Landmarks2TransformMatrix


@opdata
class Landmarks2TransformMatrixData(OpData):
    subset: tuple
    left: int
    right: int
    target_rotation: float
    output_height: int
    output_width: int
    scale_x: float
    scale_y: float


def landmarks_to_matrix(lm: np.ndarray, d) -> np.ndarray:
    """lm: [N, 3] -> the 4x4 matrix (float64 arithmetic, float32 result)."""
    pts = lm[:, :2].astype(np.float64)
    (lx, ly), (rx, ry) = pts[d.left], pts[d.right]
    r = d.target_rotation - math.atan2(ry - ly, rx - lx)
    c, s = math.cos(r), math.sin(r)
    sub = pts[list(d.subset)]
    rot = np.stack([c * sub[:, 0] - s * sub[:, 1], s * sub[:, 0] + c * sub[:, 1]], axis=1)
    lo, hi = rot.min(axis=0), rot.max(axis=0)
    w, h = hi - lo
    mx, my = (lo + hi) / 2
    cx, cy = c * mx + s * my, -s * mx + c * my          # rotate the centre back by -r
    ci, si = math.cos(-r), math.sin(-r)
    shift = np.array([[1, 0, 0, cx], [0, 1, 0, cy], [0, 0, 1, 0], [0, 0, 0, 1]], np.float64)
    rotm = np.array([[ci, -si, 0, 0], [si, ci, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], np.float64)
    scale = np.diag([d.scale_x * w / d.output_width, d.scale_y * h / d.output_height, 1.0, 1.0])
    shift2 = np.array([[1, 0, 0, -d.output_width / 2.0], [0, 1, 0, -d.output_height / 2.0], [0, 0, 1, 0],
                       [0, 0, 0, 1]], np.float64)
    return (shift @ rotm @ scale @ shift2).astype(np.float32)


@kernel("Landmarks2TransformMatrix", versions=(2,), custom=True)
class Landmarks2TransformMatrix(Kernel):
    name = "landmarks_to_transform_matrix"

    def prepare(self, context, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            refuse(node, "needs 1 input and 1 output")
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32,), "landmarks")
        b, n, dims = _rank_check(node, context, x, 3, "landmarks")
        if b != 1 or dims < 2:
            refuse(node, f"landmarks shape {[b, n, dims]}: expected [1, N, 3]")
        o = _options(node)
        subset = tuple(int(i) for i in _require(node, o, "subset_idxs"))
        data = Landmarks2TransformMatrixData(
            subset, int(_require(node, o, "left_rotation_idx")), int(_require(node, o, "right_rotation_idx")),
            float(o.get("target_rotation_radians", 0.0)), int(_require(node, o, "output_height")),
            int(_require(node, o, "output_width")), float(_require(node, o, "scale_x")),
            float(_require(node, o, "scale_y")))
        if not subset:
            fail(node, "subset_idxs is empty")
        for what, i in [("left_rotation_idx", data.left), ("right_rotation_idx", data.right)] + \
                [("subset_idxs", i) for i in subset]:
            if not 0 <= i < n:
                fail(node, f"{what} {i} is out of range for {n} landmarks")
        if data.output_height <= 0 or data.output_width <= 0 or data.scale_x <= 0 or data.scale_y <= 0:
            fail(node, f"output size {data.output_height}x{data.output_width} and scales ({data.scale_x}, "
                       f"{data.scale_y}) must be positive")
        context.set_output(node.outputs[0], (1, 4, 4), F32)
        return data

    def invoke(self, context, node, d):
        lm = context.tensors[node.inputs[0]]
        context.tensors[node.outputs[0]][...] = landmarks_to_matrix(lm[0], d).reshape(1, 4, 4)


# ----------------------------------------------------------------------------------------------
# TransformLandmarks


@opdata
class TransformLandmarksData(OpData):
    dimensions: int
    output_shape: tuple


@kernel("TransformLandmarks", versions=(2,), custom=True)
class TransformLandmarks(Kernel):
    name = "transform_landmarks"

    def prepare(self, context, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            refuse(node, "needs 2 inputs and 1 output")
        x, m = node.inputs
        context.expect_dtype(node, x, (F32,), "landmarks")
        shape = _rank_check(node, context, x, 3, "landmarks")
        if shape[0] != 1 or shape[2] not in (2, 3):
            refuse(node, f"landmarks shape {list(shape)}: expected [1, N, 2] or [1, N, 3]")
        _matrix_check(node, context, m)
        context.set_output(node.outputs[0], shape, F32)
        return TransformLandmarksData(shape[2], shape)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        m = context.tensors[node.inputs[1]].reshape(-1)[:8]
        out = context.tensors[node.outputs[0]]
        px, py = x[..., 0], x[..., 1]
        out[..., 0] = m[0] * px + m[1] * py + m[3]
        out[..., 1] = m[4] * px + m[5] * py + m[7]
        if d.dimensions == 3:
            out[..., 2] = x[..., 2]


# ----------------------------------------------------------------------------------------------
# TransformTensorBilinear


@opdata
class TransformTensorBilinearData(OpData):
    output_height: int
    output_width: int
    output_shape: tuple


def corrected_rows(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first two matrix rows with the pixel-centre ("align corners") correction, float32."""
    mx = m[0:4].astype(np.float32).copy()
    my = m[4:8].astype(np.float32).copy()
    mx[3] = np.float32(float(mx[3]) + float(mx[0]) * 0.5 + float(mx[1]) * 0.5 - 0.5)
    my[3] = np.float32(float(my[3]) + float(my[0]) * 0.5 + float(my[1]) * 0.5 - 0.5)
    return mx, my


def transform_tensor_bilinear(x: np.ndarray, m: np.ndarray, oh: int, ow: int) -> np.ndarray:
    """x: [H, W, C], m: 16 floats -> [oh, ow, C]: every output pixel's sample point at once, its four
    neighbours read from the input padded by a row and a column of zeros."""
    h, w, c = x.shape
    mx, my = corrected_rows(m)
    ys, xs = np.meshgrid(np.arange(oh, dtype=np.float32), np.arange(ow, dtype=np.float32), indexing="ij")
    tx = mx[0] * xs + mx[1] * ys + mx[3]
    ty = my[0] * xs + my[1] * ys + my[3]
    inside = (tx >= 0) & (tx <= w - 1) & (ty >= 0) & (ty <= h - 1)
    fx, fy = np.floor(tx), np.floor(ty)
    ax, ay = (tx - fx)[..., None], (ty - fy)[..., None]
    x0 = np.where(inside, fx, 0).astype(np.int64)
    y0 = np.where(inside, fy, 0).astype(np.int64)
    padded = np.zeros((h + 1, w + 1, c), np.float32)       # neighbours past the edge read as 0
    padded[:h, :w] = x
    q11, q21 = padded[y0, x0], padded[y0, x0 + 1]
    q12, q22 = padded[y0 + 1, x0], padded[y0 + 1, x0 + 1]
    upper = (1 - ax) * q11 + ax * q21
    lower = (1 - ax) * q12 + ax * q22
    out = ay * lower + (1 - ay) * upper
    return np.where(inside[..., None], out, np.float32(0)).astype(np.float32)


@kernel("TransformTensorBilinear", versions=(2,), custom=True)
class TransformTensorBilinear(Kernel):
    name = "transform_tensor_bilinear"

    def prepare(self, context, node):
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            refuse(node, "needs 2 inputs and 1 output")
        x, m = node.inputs
        context.expect_dtype(node, x, (F32,), "the features")
        n, _, _, c = _rank_check(node, context, x, 4, "the features")
        if n != 1:
            refuse(node, f"batch {n}: MediaPipe's kernel only processes batch 0")
        _matrix_check(node, context, m)
        o = _options(node)
        oh, ow = int(_require(node, o, "output_height")), int(_require(node, o, "output_width"))
        if oh <= 0 or ow <= 0:
            fail(node, f"output size {oh}x{ow} must be positive")
        out = (1, oh, ow, c)
        context.set_output(node.outputs[0], out, F32)
        return TransformTensorBilinearData(oh, ow, out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]][0]
        m = context.tensors[node.inputs[1]].reshape(-1)[:16]
        context.tensors[node.outputs[0]][0] = transform_tensor_bilinear(x, m, d.output_height, d.output_width)
