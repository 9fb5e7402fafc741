"""Precision ``int8``, the TIDL way: a float partition becomes an int8 network.

TI's import tool never runs a float network on the accelerator: it *calibrates* it — runs it on a few
frames, picks fixed-point parameters for every tensor — and the device runs the fixed-point copy.
This module does the same with TFLite's int8 format, so the copy runs on our int8 kernels *and* in
LiteRT, bit for bit::

    from workbench.delegate.quantize import calibrate, sqnr
    cal = calibrate(model, frames, iterations=2, progress=True)  # frames: [[x0], [x1], ...] (training data!)
    cal                       # a table: every activation's float range, its scale and zero point
    cal.model                 # the int8 Model; float in and out, so it replaces the float partition as-is
    workbench.dump(cal.model) # bytes LiteRT runs with the same outputs as workbench.Interpreter
    cal.compare(frames)       # int8-vs-float error of every activation (sqnr: max |error|, SNR in dB)

How a float graph becomes an int8 one
-------------------------------------
1. **Collect ranges** (calibration iteration 1).  Run the float model on each calibration frame
   (``advanced_options:calibration_frames``) and keep, for every float activation, the smallest and
   the largest value seen (``Calibrated.ranges``).  Calibrate on training data only: a range taken
   from the test set would leak it into the model.
2. **Choose activation parameters.**  TIDL supports "only power of 2 scales for feature maps"
   (edgeai-tidl-tools ``docs/tidl_fsg_quantization.md``, B.1): zero point 0 and the smallest power of
   two ≥ ``max|x| / 127`` (the device then rescales with shifts only).  A tensor after a ReLU or ReLU6
   is never negative, and TIDL stores it *unsigned*: its 256 codes cover [0, max], with the smallest
   power of two ≥ ``max / 255`` — written here as int8 with zero point −128, the same 256 values.  (The
   earlier mode, ``scale_type="symmetric"`` or ``"power_of_two"``, gives every tensor the symmetric
   ``max|x| / 127``, or its power of two, and no unsigned storage.)  Two kinds of ops do not get free
   parameters, because TFLite's int8 kernels would refuse them (or compute
   garbage) and the exported model must run in LiteRT:

   * *fixed* outputs: SOFTMAX and LOGISTIC write scale 1/256, zero point −128 (the probabilities
     [0, 1) use the whole int8 range); TANH writes 1/128, 0.  A deviation from pure symmetric TIDL
     scales, taken from TFLite (``kernels/activations.cc`` SoftmaxPrepare, SigmoidPrepare).
   * *tied* tensors: ops that move values without arithmetic (RESHAPE, SQUEEZE, MAX/AVERAGE_POOL_2D,
     PAD, TRANSPOSE, resizes ... see :data:`TIED`) cannot rescale, so their outputs share their input's
     parameters; CONCATENATION, PACK, MAXIMUM, MINIMUM and PADV2 tie every float input to the output.
     A tied group takes the widest range of its members.  An input already fixed (a SOFTMAX output
     joining a CONCATENATION) gets a requantizing QUANTIZE (int8 → int8) in front instead.

   A tensor whose range is unknown — 0 on every calibration frame, or never reached — has no scale;
   it is refused (:class:`~workbench.errors.UnsupportedOpError` naming the node), not guessed.  A
   tensor that is never 0 in float but whose values nearest 0 are below half its scale becomes 0 in
   int8 (``exp(x) + 1`` over 1 … 1809 gets the scale 16): a :class:`QuantizationWarning` names the node.
   A bias too large for int32 in its units (``input_scale · weight_scale``) would be clipped: refused too.
   Once written, the copy runs beside the float model on the calibration frames, and the first node
   whose output falls below :data:`EXPLODED_DB` (10 dB) gets a :class:`QuantizationWarning`: where the
   int8 copy stops computing the model.  Errors add up from layer to layer, so that node is where to
   look.  When it is a weighted op with per-tensor weights, the warning says how few of the 127 levels
   its typical channel uses: after batch-norm folding the channels of a depthwise convolution can
   differ by a factor of 100 or more, and one scale for all of them leaves the small ones a few levels
   (or none: a channel whose largest |w| is below half the scale becomes all 0).
3. **Quantize constants.**  TIDL's weights are symmetric and *per tensor* (its quantization proto
   defaults to ``SYMMETRIC`` / ``PERTENSOR``, ``docs/tidl_quantParams.md``): one ``scale = max|w| / 127``
   (``quantization_scale_type`` 0) or its power of two (type 1), in [−127, 127], written once per output
   channel so that the file has TFLite's per-channel layout (CONV_2D and TRANSPOSE_CONV filters along
   dim 0, DEPTHWISE_CONV_2D along dim 3, FULLY_CONNECTED per output row).  The earlier mode quantizes
   per output channel, ``scale[c] = max|w_c| / 127``, as TFLite's converter does.  Biases become int32 with
   ``scale[c] = input_scale · weight_scale[c]``, so the accumulator needs no rescaling before the
   bias is added.  Other float constants (the second operand of ADD or MUL, PRELU's alpha) get a
   per-tensor symmetric scale of their own; constants in a tied group take the group's.
4. **Rewrite the graph.**  Every float activation becomes INT8 with its parameters; the graph keeps
   float inputs and outputs, with a QUANTIZE after each input and a DEQUANTIZE before each output (the
   boundary conversion of the TI paper).  Ops whose tensors are not float (shape arithmetic in int32)
   stay as they are; constant unpacking (fp16 DEQUANTIZE, DENSIFY) is folded into the weights (one
   whose float result the partition also hands on to the CPU keeps its op and its own float tensor).  Op
   versions are set as the converter would write them (:func:`workbench.versioning.op_version`: an
   int8 CONV_2D is version 3), and so is the ``min_runtime_version`` metadata.
5. **Bias calibration** (iterations 2, 3, ...: TIDL's ``calibration_iterations``).  Rounding weights
   and activations shifts the mean of each output channel a little, and the shifts add up layer after
   layer.  Each further iteration runs the float model and the *current int8 model* side by side on
   the same frames, takes the mean error of every CONV_2D / DEPTHWISE_CONV_2D / TRANSPOSE_CONV /
   FULLY_CONNECTED output channel (int8 output dequantized, minus the float output, averaged over the
   positions of each frame, then over the frames), and moves that channel's int32 bias against it, in
   bias units (``bias_scale[c]``)::

       bias_q[c] -= round(BIAS_STEP · mean_error[c] / bias_scale[c])    where |mean_error[c]| > 2 standard errors

   Two guards, both measured on this project's models: all layers are corrected at once from one run,
   and a later layer's error already contains what the earlier layers will fix, so a full step
   overshoots — half a step (``BIAS_STEP``) converges over the iterations instead; and a mean taken over
   few samples is mostly noise (a classifier's last layer has one position per frame), so only channels
   whose mean error stands out of its frame-to-frame spread (``SIGNIFICANCE`` standard errors) move.
   The error is the op's output error after its fused activation (a ReLU hides the negative part).  A
   conv or FC without a bias gets a zero int32 bias, so there is something to correct.  (TIDL's
   advanced calibration also clips weights and takes ranges from histograms; not done here.)

Anything else (an op this module has no rule for, non-constant weights, several subgraphs) raises a
:class:`~workbench.errors.UnsupportedOpError` naming the op and the node.
"""

from __future__ import annotations

import html
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import UnsupportedOpError, WorkbenchError
from ..partition import GraphView
from ..schema.enums import ActivationFunctionType as Act
from ..schema.enums import BuiltinOperator as B
from ..schema.enums import TensorType
from ..schema.types import NUMPY_DTYPE, tensor_data

__all__ = ["calibrate", "Calibrated", "sqnr", "SCALE_TYPES", "QUANTIZATION_SCALE_TYPES", "WEIGHTED", "OWN_SCALE",
           "FIXED", "TIED", "INT_OUTPUT", "QUANTIZABLE", "symmetric_scale", "unsigned_scale", "quantize_per_channel",
           "quantize_per_tensor", "QuantizationWarning", "Mode", "mode_of", "feature_map_params", "EXPLODED_DB"]

# bias calibration: move a bias by this fraction of the measured mean error, and only where that mean
# stands out of the frame-to-frame noise by this many standard errors (see step 5 in the module's text)
BIAS_STEP = 0.5
SIGNIFICANCE = 2.0
QMAX = 127                      # symmetric int8: codes −127 … 127 (−128 only where TFLite fixes it)
# below this SNR (dB) against float an int8 activation is mostly error: noise power above a tenth of the
# signal's.  The first node of the copy to fall below it on the calibration frames gets a warning.
EXPLODED_DB = 10.0
UQMAX = 255                     # unsigned storage (a tensor after a ReLU): codes 0 … 255
# the earlier mode's scale types (``scale_type=``): every scale max|x| / 127, or its power of two
SCALE_TYPES = ("symmetric", "power_of_two")
# TI's ``advanced_options:quantization_scale_type`` values this module simulates (edgeai-tidl-tools
# examples/osrt_python/README.md, "Advanced miscellaneous options"): the scales of the *parameters*;
# feature maps always get power-of-two scales (docs/tidl_fsg_quantization.md, B.1 Simple Calibration)
QUANTIZATION_SCALE_TYPES = {0: "non-power-of-2 weight scales", 1: "power-of-2 weight scales"}

# -- the rules, one line per op ------------------------------------------------------------------
# ops with weights: (activation input, weights input, channel axis of the weights, bias input)
WEIGHTED = {
    B.CONV_2D: (0, 1, 0, 2),
    B.DEPTHWISE_CONV_2D: (0, 1, 3, 2),
    B.FULLY_CONNECTED: (0, 1, 0, 2),
    B.TRANSPOSE_CONV: (2, 1, 0, 3),
}
# ops that rescale: their output gets a scale of its own, from its calibrated range
OWN_SCALE = frozenset({B.ADD, B.SUB, B.MUL, B.MEAN, B.RELU, B.RELU6, B.RELU_N1_TO_1, B.LEAKY_RELU, B.PRELU,
                       B.HARD_SWISH, B.ELU})
# ops whose int8 kernels in TFLite fix the output parameters: (scale, zero point)
FIXED = {B.SOFTMAX: (1.0 / 256, -128), B.LOGISTIC: (1.0 / 256, -128), B.TANH: (1.0 / 128, 0)}
# ops that move values without arithmetic: every float tensor they touch shares one (scale, zero point)
TIED = frozenset({B.RESHAPE, B.SQUEEZE, B.EXPAND_DIMS, B.AVERAGE_POOL_2D, B.MAX_POOL_2D, B.PAD, B.PADV2,
                  B.TRANSPOSE, B.STRIDED_SLICE, B.SLICE, B.GATHER, B.SPLIT, B.SPLIT_V, B.DEPTH_TO_SPACE,
                  B.SPACE_TO_DEPTH, B.BATCH_TO_SPACE_ND, B.SPACE_TO_BATCH_ND, B.RESIZE_NEAREST_NEIGHBOR,
                  B.RESIZE_BILINEAR, B.TILE, B.REDUCE_MAX, B.REDUCE_MIN, B.CONCATENATION, B.PACK, B.MAXIMUM,
                  B.MINIMUM})
# ops that read an int8 tensor and write integers (a shape, an index): nothing to choose
INT_OUTPUT = frozenset({B.SHAPE, B.ARG_MAX, B.ARG_MIN})
# ops that unpack constants (fp16 weights, sparse weights): folded into the weights they make
_FOLDED = frozenset({B.DEQUANTIZE, B.DENSIFY})
# every op this module has a rule for: what an int8 device can take
QUANTIZABLE = frozenset(WEIGHTED) | OWN_SCALE | frozenset(FIXED) | TIED | INT_OUTPUT | _FOLDED

_F32 = TensorType.FLOAT32


# ================================================================================================
# Scales and constants
# ================================================================================================
def symmetric_scale(max_abs: float, scale_type: str = "symmetric") -> float:
    """``max_abs / 127``, or the smallest power of two ≥ that; 1/127 (the range ±1) for an all-zero
    tensor, so the scale is never 0.

    >>> symmetric_scale(12.7)                          # 0.1, as the float32 the file stores
    0.10000000149011612
    >>> symmetric_scale(12.7, "power_of_two")          # 0.1 → 2**-3
    0.125
    """
    s = float(max_abs) / QMAX if max_abs > 0 and math.isfinite(max_abs) else 1.0 / QMAX
    if scale_type == "power_of_two":
        s = 2.0 ** math.ceil(math.log2(s))
    return float(np.float32(s))    # as stored in the file


def round_half_away(x: np.ndarray) -> np.ndarray:
    """Round to nearest, ties away from zero (C's ``std::round``, which TFLite uses)."""
    x = np.asarray(x, np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def quantize_per_channel(w: np.ndarray, axis: int, scale_type: str = "symmetric") -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 weights, one scale per slice along ``axis``: (int8 array, float32 scales).

    >>> q, s = quantize_per_channel(np.array([[1.27, -0.635], [0.0, 0.254]], np.float32), axis=0)
    >>> q.tolist(), [round(float(x), 6) for x in s]   # row 0: 1.27 / 127 = 0.01; row 1: 0.254 / 127
    ([[127, -64], [0, 127]], [0.01, 0.002])
    """
    w = np.asarray(w, np.float32)
    other = tuple(k for k in range(w.ndim) if k != axis)
    max_abs = np.abs(w).max(axis=other) if w.size else np.zeros(w.shape[axis])
    scales = np.array([symmetric_scale(m, scale_type) for m in max_abs], np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(round_half_away(w / scales.reshape(shape).astype(np.float64)), -QMAX, QMAX)
    return q.astype(np.int8), scales


def quantize_per_tensor(w: np.ndarray, axis: int, scale_type: str = "symmetric") -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 weights with *one* scale for the whole tensor (TIDL's default for parameters), written
    as that scale repeated once per slice along ``axis``, so the file has the layout of per-channel weights
    (every TFLite int8 kernel takes it) while the arithmetic is per-tensor.

    >>> q, s = quantize_per_tensor(np.array([[1.27, -0.635], [0.0, 0.254]], np.float32), axis=0)
    >>> q.tolist(), [round(float(x), 6) for x in s]   # one scale, 1.27 / 127, for both rows
    ([[127, -64], [0, 25]], [0.01, 0.01])
    """
    w = np.asarray(w, np.float32)
    max_abs = float(np.abs(w).max()) if w.size else 0.0
    s = symmetric_scale(max_abs, scale_type)
    scales = np.full(w.shape[axis] if w.ndim else 1, s, np.float32)
    q = np.clip(round_half_away(w / np.float64(s)), -QMAX, QMAX)
    return q.astype(np.int8), scales


def unsigned_scale(max_value: float) -> float:
    """TIDL's scale for a tensor that is never negative (after a ReLU): the smallest power of two ≥
    ``max / 255``, so the 256 codes cover [0, max] (stored here as int8 with zero point −128).

    >>> unsigned_scale(6.0)                            # 6 / 255 = 0.0235 → 2**-5
    0.03125
    """
    s = float(max_value) / UQMAX if max_value > 0 and math.isfinite(max_value) else 1.0 / UQMAX
    return float(np.float32(2.0 ** math.ceil(math.log2(s))))


def feature_map_params(lo: float, hi: float) -> tuple[float, int, bool]:
    """(scale, zero point, signed) of a feature map whose values lie in [lo, hi], as TIDL quantizes
    feature maps at a subgraph's boundary: a power-of-two scale, zero point 0 — :func:`symmetric_scale`
    (power of two) when a value is negative, :func:`unsigned_scale` otherwise (stored unsigned, 256 codes
    for [0, max]).  No range (all 0, or not finite): scale 1.

    >>> feature_map_params(-1.0, 1.0)                  # 1/127 → 2**-6, signed
    (0.015625, 0, True)
    >>> feature_map_params(0.0, 6.0)                   # 6/255 → 2**-5, unsigned after a ReLU6
    (0.03125, 0, False)
    """
    signed = lo < 0
    peak = max(abs(lo), abs(hi))
    if peak == 0 or not math.isfinite(peak):
        return 1.0, 0, signed
    return (symmetric_scale(peak, "power_of_two") if signed else unsigned_scale(peak)), 0, signed


@dataclass(frozen=True)
class Mode:
    """How activations and weights get their int8 parameters.

    ``name``: ``"tidl"`` (TI's post-training quantization, the default) or ``"per_channel"`` (this
    module's earlier mode: symmetric per-tensor activations, per-channel weights, as TFLite's converter
    quantizes weights).  ``activations`` / ``weights``: ``"symmetric"`` (max|x| / 127) or
    ``"power_of_two"``; ``per_channel``: one weight scale per output channel; ``unsigned``: tensors after
    a ReLU / ReLU6 use the 256 codes for [0, max]; ``quantization_scale_type``: TI's option value.
    """

    name: str
    activations: str
    weights: str
    per_channel: bool
    unsigned: bool
    quantization_scale_type: int | None = None

    def __str__(self) -> str:
        if self.name == "tidl":
            weights = "power-of-2" if self.weights == "power_of_two" else "non-power-of-2"
            return (f"tidl (quantization_scale_type {self.quantization_scale_type}: power-of-2 feature maps, "
                    f"unsigned after ReLU, per-tensor {weights} weights)")
        return f"per_channel ({self.activations} scales, per-channel weights)"


def mode_of(quantization_scale_type=0, scale_type: str | None = None) -> Mode:
    """The :class:`Mode` for TI's ``quantization_scale_type`` (0 or 1), or — when ``scale_type`` is given
    (``"symmetric"`` / ``"power_of_two"``) — the earlier per-channel mode with that scale type."""
    if scale_type is not None:
        if scale_type not in SCALE_TYPES:
            raise ValueError(f"scale_type must be one of {', '.join(SCALE_TYPES)}, got {scale_type!r} (scale_type "
                             f"selects the per-channel mode; TI's mode takes quantization_scale_type 0 or 1)")
        return Mode("per_channel", scale_type, scale_type, per_channel=True, unsigned=False)
    if isinstance(quantization_scale_type, bool) or quantization_scale_type not in QUANTIZATION_SCALE_TYPES:
        raise ValueError(f"quantization_scale_type must be one of "
                         f"{', '.join(f'{k} ({v})' for k, v in QUANTIZATION_SCALE_TYPES.items())}, got "
                         f"{quantization_scale_type!r} (TI's 3, a pre-quantized TFLite model, and 4, asymmetric "
                         f"per-channel, are not simulated)")
    q = int(quantization_scale_type)
    return Mode("tidl", "power_of_two", "power_of_two" if q == 1 else "symmetric", per_channel=False,
                unsigned=True, quantization_scale_type=q)


class QuantizationWarning(UserWarning):
    """An int8 choice that will change what the model computes (e.g. a tensor that is never 0 in float,
    of which int8 makes 0)."""


def quantize_bias(b: np.ndarray, input_scale: float, weight_scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int32 bias with ``scale[c] = input_scale · weight_scale[c]``: (int32 array, float32 scales)."""
    scales = (np.float64(input_scale) * weight_scales.astype(np.float64)).astype(np.float32)
    q = round_half_away(np.asarray(b, np.float64) / scales.astype(np.float64))
    info = np.iinfo(np.int32)
    return np.clip(q, info.min, info.max).astype(np.int32), scales


def quantize_tensor(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """float → int8 with one (scale, zero point), as TFLite's QUANTIZE (round half away, clamp)."""
    q = round_half_away(np.asarray(x, np.float32) / np.float32(scale)) + zero_point
    return np.clip(q, -128, 127).astype(np.int8)


def sqnr(float_array, int8_dequantized_array) -> dict:
    """The error of an int8 result against the float one: ``max_abs`` (largest |x − y|) and ``snr_db``
    = 10·log10(Σx² / Σ(x − y)²) — inf when they are equal.

    >>> sqnr([1.0, -2.0], [1.0, -2.0])
    {'max_abs': 0.0, 'snr_db': inf}
    >>> sqnr([3.0, 4.0], [3.0, 4.5])['snr_db']                    # 25 / 0.25 → 20 dB
    20.0
    """
    x = np.asarray(float_array, np.float64)
    y = np.asarray(int8_dequantized_array, np.float64)
    if x.shape != y.shape:
        raise ValueError(f"sqnr: shapes differ, {x.shape} vs {y.shape}")
    err = x - y
    noise = float(np.sum(err * err))
    signal = float(np.sum(x * x))
    if noise == 0.0:
        snr = math.inf
    elif signal == 0.0:
        snr = -math.inf
    else:
        snr = 10.0 * math.log10(signal / noise)
    return {"max_abs": float(np.max(np.abs(err))) if err.size else 0.0, "snr_db": snr}


# ================================================================================================
# The result
# ================================================================================================
@dataclass(eq=False)
class Calibrated:
    """What :func:`calibrate` made: the int8 model and every choice behind it.

    ``scales``: float activation name → (scale, zero point) of its int8 tensor (a graph input or
    output is the float tensor; its int8 twin inside is named ``NAME/int8``); ``ranges``: the same
    names → (min, max) seen in float on the calibration frames; ``scale_type``: ``"tidl-0"`` /
    ``"tidl-1"`` (TI's mode and its ``quantization_scale_type``) or the earlier mode's ``"symmetric"`` /
    ``"power_of_two"``; ``weight_scales``: weight tensor name → its scales, one per output channel (all
    equal in TI's per-tensor mode); ``bias_corrections``: the same weight names → the int32 steps bias
    calibration moved the op's bias by, per channel, summed over the iterations; ``notes``: name → why
    its parameters are not the plain symmetric ones (fixed by the op, tied to other tensors,
    requantized, unsigned); ``mode``: the :class:`Mode`; ``warnings``: tensor name → a
    :class:`QuantizationWarning`'s text (a tensor int8 turns into 0 where float never is).
    """

    model: object
    scales: dict
    ranges: dict
    frames: int
    iterations: int
    scale_type: str = "symmetric"
    weight_scales: dict = field(default_factory=dict)
    bias_corrections: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    float_model: object = field(default=None, repr=False)
    mode: Mode | None = None
    warnings: dict = field(default_factory=dict)

    def compare(self, frames) -> dict:
        """Run the float and the int8 model on ``frames``; float activation name → :func:`sqnr` of the
        int8 values (dequantized) against the float ones, over all frames."""
        inputs = _input_specs(self.float_model)
        frames = [_frame(f, inputs) for f in frames]
        first = frames[0] if frames else None
        fl, q8 = _interpreter(self.float_model, first), _interpreter(self.model, first)
        fl_idx = {t.name: k for k, t in enumerate(self.float_model.subgraphs[0].tensors)}
        q_tensors = self.model.subgraphs[0].tensors
        q_idx = {t.name: k for k, t in enumerate(q_tensors)}
        pairs = {}
        for name in self.scales:
            if name in fl_idx:
                k = q_idx.get(f"{name}/int8", q_idx.get(name))
                if k is not None and q_tensors[k].type == TensorType.INT8:
                    pairs[name] = (fl_idx[name], k)
        xs: dict = {n: [] for n in pairs}
        ys: dict = {n: [] for n in pairs}
        for frame in frames:
            _run(fl, frame)
            _run(q8, frame)
            for name, (a, b) in pairs.items():
                s, zp = self.scales[name]
                xs[name].append(fl.get_tensor(a).ravel())
                ys[name].append((q8.get_tensor(b).astype(np.float64).ravel() - zp) * s)
        return {n: sqnr(np.concatenate(xs[n]), np.concatenate(ys[n])) for n in pairs}

    # -- views --------------------------------------------------------------------------------
    def rows(self) -> list:
        """One row per activation: (name, min, max, scale, zero point, note)."""
        out = []
        for name, (s, zp) in self.scales.items():
            lo, hi = self.ranges.get(name, (math.nan, math.nan))
            out.append((name, lo, hi, s, zp, self.notes.get(name, "")))
        return out

    def _title(self) -> str:
        n_ops = len(self.model.subgraphs[0].operators or ())
        mode = self.mode or mode_of(scale_type=self.scale_type)
        kind = "per-channel" if mode.per_channel else "per-tensor"
        scales = f"{self.scale_type} scales" if mode.name != "tidl" else str(mode)
        return (f"Calibrated int8 model: {n_ops} ops, {len(self.scales)} activations, {len(self.weight_scales)} "
                f"{kind} weights; {self.frames} frames, {self.iterations} iteration"
                f"{'s' if self.iterations != 1 else ''}, {scales}")

    def __repr__(self) -> str:
        lines = [self._title()]
        w = min(48, max((len(r[0]) for r in self.rows()), default=4))
        lines.append(f"  {'tensor':<{w}} {'min':>10} {'max':>10} {'scale':>12} {'zp':>5}  note")
        for name, lo, hi, s, zp, note in self.rows():
            lines.append(f"  {_short(name, w):<{w}} {lo:>10.4g} {hi:>10.4g} {s:>12.6g} {zp:>5}  {note}")
        for name, sc in self.weight_scales.items():
            lines.append(f"  {_short(name, w):<{w}} weights: {len(sc)} channel scales "
                         f"{float(sc.min()):.4g} … {float(sc.max()):.4g}")
        for name, c in self.bias_corrections.items():
            if np.any(c):
                lines.append(f"  {_short(name, w):<{w}} bias calibration moved {int(np.count_nonzero(c))} of "
                             f"{len(c)} channels (largest step {int(np.abs(c).max())})")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        e = html.escape
        head = "".join(f"<th>{h}</th>" for h in ("tensor", "min", "max", "scale", "zero point", "note"))
        body = "".join(
            f"<tr><td title='{e(name)}'>{e(_short(name, 60))}</td><td>{lo:.4g}</td><td>{hi:.4g}</td>"
            f"<td>{s:.6g}</td><td>{zp}</td><td>{e(note)}</td></tr>"
            for name, lo, hi, s, zp, note in self.rows())
        wrows = "".join(
            f"<tr><td title='{e(name)}'>{e(_short(name, 60))}</td><td>{len(sc)}</td>"
            f"<td>{float(sc.min()):.4g} … {float(sc.max()):.4g}</td>"
            f"<td>{int(np.count_nonzero(self.bias_corrections.get(name, ())))}</td></tr>"
            for name, sc in self.weight_scales.items())
        return (f"<div><b>{e(self._title())}</b>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
                f"<table><thead><tr><th>weights</th><th>channels</th><th>scales</th>"
                f"<th>bias channels moved by calibration</th></tr></thead><tbody>{wrows}</tbody></table></div>")


def _short(name: str, width: int) -> str:
    return name if len(name) <= width else "…" + name[-(width - 1):]


# ================================================================================================
# calibrate
# ================================================================================================
def calibrate(model, frames, *, iterations: int = 1, quantization_scale_type: int = 0, scale_type: str | None = None,
              progress=None, node_names=None) -> Calibrated:
    """Quantize the float ``model`` to int8 from calibration ``frames`` (see the module's text).

    ``frames``: a sequence of frames, each a list of arrays, one per model input in input order (a
    bare array is accepted for a one-input model); TI's ``calibration_frames`` is how many you pass.
    ``iterations``: TIDL's ``calibration_iterations`` (1 = ranges only; each further one is a
    bias-calibration pass).  ``quantization_scale_type``: TI's option, 0 (the default: per-tensor
    weights with non-power-of-2 scales) or 1 (power-of-2 weight scales); feature maps get power-of-two
    scales and tensors after a ReLU are stored unsigned in both.  ``scale_type``: ``"symmetric"`` or
    ``"power_of_two"`` selects the earlier per-channel mode instead (see :class:`Mode`).
    ``progress``: None (silent), True (a tqdm bar: a widget in Jupyter, text on a terminal) or a
    callable ``progress(done, total, what)`` called after every frame.  ``node_names``: how warnings
    and errors name the model's nodes (the delegate passes the partition's node numbers).

    A tensor the calibration gives no range (0 on every frame, never reached) raises
    :class:`~workbench.errors.UnsupportedOpError`; a tensor of which int8 makes 0 where float never is
    gives a :class:`QuantizationWarning` naming the node (kept in ``Calibrated.warnings``), and so does the
    first node whose int8 output falls below :data:`EXPLODED_DB` against float on the calibration frames.
    A bias int32 cannot hold in its units raises :class:`~workbench.errors.UnsupportedOpError`.
    """
    mode = mode_of(quantization_scale_type, scale_type)
    if isinstance(iterations, bool) or int(iterations) != iterations or iterations < 1:
        raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
    iterations = int(iterations)
    frames = list(frames)
    if not frames:
        raise ValueError("calibrate needs at least one calibration frame")
    if len(model.subgraphs or ()) != 1:
        raise UnsupportedOpError(f"calibrate quantizes models of one subgraph; this one has "
                                 f"{len(model.subgraphs or ())} (control flow is not supported)")
    graph = _Graph(model, node_names)             # which op gets which rule; fails early on unknown ops
    inputs = _input_specs(model)
    frames = [_frame(f, inputs) for f in frames]
    report = _Progress(progress, total=len(frames) * iterations)
    try:
        # 1. ranges, from the float model
        stats = _collect_float(graph, frames, lambda: report.tick("calibration 1: float ranges"))
        # 2.-4. parameters, constants, the int8 graph
        plan = _Plan(graph, stats, mode)
        zeros = plan.zero_rounding()
        for _, text in zeros:
            warnings.warn(text, QuantizationWarning, stacklevel=2)
        qmodel = plan.write()
        # 5. bias calibration
        for it in range(2, iterations + 1):
            errors = _channel_errors(qmodel, plan, frames,
                                     lambda: report.tick(f"calibration {it}: bias correction"))
            plan.correct_biases(errors)
            qmodel = plan.write()
    finally:
        report.close()
    found = {graph.tensors[t].name: text for t, text in zeros}
    cal = Calibrated(model=qmodel, scales=plan.activation_params(), ranges=plan.named_ranges(),
                     frames=len(frames), iterations=iterations,
                     scale_type=scale_type if scale_type is not None else f"tidl-{mode.quantization_scale_type}",
                     weight_scales=plan.named_weight_scales(), bias_corrections=plan.named_corrections(),
                     notes=plan.named_notes(), float_model=model, mode=mode, warnings=found)
    # where the copy stops computing the model: the first node below EXPLODED_DB on the calibration frames
    exploded = plan.explosion(cal.compare(frames))
    if exploded is not None:
        t, text = exploded
        warnings.warn(text, QuantizationWarning, stacklevel=2)
        name = graph.tensors[t].name
        found[name] = f"{found[name]}; {text}" if name in found else text
    return cal


# -- frames, runs, progress ------------------------------------------------------------------------
def _input_specs(model) -> list:
    """(name, numpy dtype) of each input of the model."""
    sg = model.subgraphs[0]
    return [(sg.tensors[t].name, NUMPY_DTYPE.get(sg.tensors[t].type, np.float32)) for t in sg.inputs or ()]


def _frame(frame, inputs) -> list:
    if isinstance(frame, np.ndarray) and len(inputs) == 1:
        frame = [frame]
    frame = list(frame)
    if len(frame) != len(inputs):
        raise WorkbenchError(f"a calibration frame holds {len(frame)} arrays; the model has {len(inputs)} inputs "
                             f"({', '.join(repr(n) for n, _ in inputs)})")
    return [np.asarray(x, dtype) for x, (_, dtype) in zip(frame, inputs)]


def _interpreter(model, frame=None):
    """A workbench.Interpreter that keeps every tensor readable after invoke, sized for ``frame`` (the
    first calibration frame) when given: an input stored with -1 dimensions gets its run-time shape
    before anything is prepared, not its stored placeholder (which may hold a 0)."""
    from ..interpreter import Interpreter

    interp = Interpreter(model=model, keep_intermediates=True)
    if frame is not None:
        for d, x in zip(interp.get_input_details(), frame):
            if tuple(d["shape"]) != np.shape(x):
                interp.resize_tensor_input(d["index"], list(np.shape(x)))
    interp.allocate_tensors()
    return interp


def _run(interp, frame) -> None:
    """Set one frame (resizing the inputs whose shape differs) and invoke."""
    details = interp.get_input_details()
    if any(tuple(d["shape"]) != x.shape for d, x in zip(details, frame)):
        for d, x in zip(details, frame):
            interp.resize_tensor_input(d["index"], list(x.shape))
        interp.allocate_tensors()
    for d, x in zip(details, frame):
        interp.set_tensor(d["index"], x)
    interp.invoke()


class _Progress:
    """Counts the frames run; shows them as asked: None (nothing), True (a tqdm bar: tqdm.auto is a
    widget in Jupyter and a text bar on a terminal) or a callable ``progress(done, total, what)``."""

    def __init__(self, progress, total: int):
        self.done, self.total = 0, total
        self.bar = self.callback = None
        if progress is True:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc="calibrate", unit="frame")
        elif callable(progress):
            self.callback = progress
        elif progress is not None and progress is not False:
            raise TypeError(f"progress must be None, True or a callable(done, total, what), got {progress!r}")

    def tick(self, what: str) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_description(what, refresh=False)
            self.bar.update(1)
        elif self.callback is not None:
            self.callback(self.done, self.total, what)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ================================================================================================
# Step 0: which rule each op follows
# ================================================================================================
class _Graph:
    """The float model's graph with a rule per op: ``weighted``, ``own``, ``fixed``, ``tied``, ``int``
    (reads int8, writes integers), ``copy`` (no float tensor: int32 shape arithmetic …) or ``fold``
    (unpacks constants)."""

    def __init__(self, model, node_names=None):
        self.model = model
        self.node_names = node_names
        self.g = g = GraphView(model)
        self.sg = model.subgraphs[0]
        self.tensors = self.sg.tensors
        self.rule: list[str] = []
        for nd in g.nodes:
            self.rule.append(self._rule(nd))
        # float activations: float tensors that are neither constants nor unpacked constants
        used = {t for nd in g.nodes for t in (*nd.inputs, *nd.outputs) if t >= 0}
        used.update(t for t in (*g.inputs, *g.outputs) if t >= 0)
        self.activations = sorted(t for t in used if self.is_float(t) and not g.static[t])

    def is_float(self, t: int) -> bool:
        return t >= 0 and self.tensors[t].type == _F32

    def where(self, nd) -> str:
        k = self.node_names[nd.index] if self.node_names is not None and nd.index < len(self.node_names) else nd.index
        return f"{nd.name} (node {k})"

    def _rule(self, nd) -> str:
        g = self.g
        if nd.op in _FOLDED and all(t < 0 or g.static[t] for t in nd.inputs):
            # unpacked into the weights that use it; kept (in float) when the partition hands it on
            return "copy" if any(t in g.outputs for t in nd.outputs) else "fold"
        floats = [t for t in (*nd.inputs, *nd.outputs) if self.is_float(t) and not g.static[t]]
        if not floats and not any(self.is_float(t) for t in nd.inputs):
            return "copy"
        if nd.op in WEIGHTED:
            a, w, _, _ = WEIGHTED[nd.op]
            if not (len(nd.inputs) > w and nd.inputs[w] >= 0 and g.static[nd.inputs[w]]):
                raise UnsupportedOpError(f"{self.where(nd)}: its weights are not constant; only constant weights "
                                         f"can be quantized per channel")
            if not self.is_float(nd.inputs[a]) or not self.is_float(nd.inputs[w]):
                raise UnsupportedOpError(f"{self.where(nd)}: expected float activations and weights")
            if self.tensors[nd.inputs[w]].sparsity is not None:
                raise UnsupportedOpError(f"{self.where(nd)}: sparse weights are not supported")
            return "weighted"
        if nd.op in OWN_SCALE:
            return "own"
        if nd.op in FIXED:
            return "fixed"
        if nd.op in TIED:
            return "tied"
        if nd.op in INT_OUTPUT:
            return "int"
        known = sorted(o.name for o in (*WEIGHTED, *OWN_SCALE, *FIXED, *TIED, *INT_OUTPUT))
        raise UnsupportedOpError(f"{self.where(nd)}: no int8 quantization rule for {nd.name} "
                                 f"(known: {', '.join(known)})")


def _relu_output(graph: "_Graph", nd) -> bool:
    """The node's output is a ReLU's or a ReLU6's (the op itself, or a fused activation)."""
    if nd.op in (B.RELU, B.RELU6):
        return True
    from ..partition.target import _opt

    return _opt(graph.g, nd, "fused_activation_function") in (Act.RELU, Act.RELU6)


# ================================================================================================
# Step 1: run the float model
# ================================================================================================
@dataclass
class _FloatStats:
    ranges: dict            # activation tensor → [min, max]
    static: dict            # unpacked constant (fp16 DEQUANTIZE output …) → its value
    unreached: set = field(default_factory=set)     # activations empty on every frame


def _collect_float(graph: _Graph, frames, tick) -> _FloatStats:
    """Run the float model on every frame: the range of every activation, the values of unpacked
    constants (an fp16 DEQUANTIZE's output ...)."""
    interp = _interpreter(graph.model, frames[0] if frames else None)
    acts = graph.activations
    lo = {t: math.inf for t in acts}
    hi = {t: -math.inf for t in acts}
    static: dict = {}
    unpacked = [t for t in range(len(graph.tensors)) if graph.g.static[t] and not graph.g.constant[t]]
    for k, frame in enumerate(frames):
        _run(interp, frame)
        for t in acts:
            v = interp.get_tensor(t)
            if v.size:
                lo[t] = min(lo[t], float(v.min()))
                hi[t] = max(hi[t], float(v.max()))
        if k == 0:
            for t in unpacked:
                static[t] = interp.get_tensor(t)
        tick()
    ranges = {t: (lo[t], hi[t]) if lo[t] <= hi[t] else (0.0, 0.0) for t in acts}
    return _FloatStats(ranges, static, {t for t in acts if not lo[t] <= hi[t]})


# ================================================================================================
# Steps 2-4: parameters, constants and the int8 graph
# ================================================================================================
class _Groups:
    """Union-find over tensor indices: the tensors that must share one (scale, zero point)."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, t: int) -> int:
        p = self.parent.setdefault(t, t)
        if p != t:
            p = self.parent[t] = self.find(p)
        return p

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


class _Plan:
    """Every decision of steps 2-4, kept so that bias calibration can change biases and write again."""

    def __init__(self, graph: _Graph, stats: _FloatStats, mode: Mode):
        self.graph = graph
        self.stats = stats
        self.mode = mode
        self.scale_type = mode.weights      # constants of their own (an ADD's operand …) are parameters
        self.params: dict = {}          # float tensor (activation or tied constant) → (scale, zero point)
        self.notes: dict = {}           # tensor → why its parameters are what they are
        self.requantize: dict = {}      # (node, input slot) → (scale, zero point) the op needs there
        self._choose_activation_params()
        self.weights: dict = {}         # node → (int8 weights, scales, axis)
        self.bias: dict = {}            # node → (int32 bias, bias scales)
        self.corrections: dict = {}     # node → int32 steps moved by bias calibration
        self._quantize_weights()

    # -- step 2 --------------------------------------------------------------------------------
    def _value_range(self, t: int) -> tuple:
        if t in self.stats.ranges:
            return self.stats.ranges[t]
        v = self._const(t)
        return (float(v.min()), float(v.max())) if v.size else (0.0, 0.0)

    def _choose_activation_params(self) -> None:
        graph, g = self.graph, self.graph.g
        groups = _Groups()
        fixed: dict = {}                                    # tensor → fixed (scale, zero point)
        requantize_to: dict = {}                            # (node, input slot) → tensor whose parameters it needs
        tied_outputs = {t for nd, rule in zip(g.nodes, graph.rule) if rule == "tied" for t in nd.outputs}
        for nd, rule in zip(g.nodes, graph.rule):
            if rule == "fixed":
                fixed[nd.outputs[0]] = FIXED[nd.op]
                self.notes[nd.outputs[0]] = f"fixed by {nd.name}'s int8 kernel"
            elif rule == "tied":
                outs = [t for t in nd.outputs if graph.is_float(t)]
                ins = [(k, t) for k, t in enumerate(nd.inputs) if graph.is_float(t)]
                anchor = outs[0]
                for t in outs[1:]:
                    groups.union(anchor, t)
                for k, t in ins:
                    root_fixed = any(groups.find(f) == groups.find(t) for f in fixed)
                    if len(ins) > 1 and root_fixed:     # a fixed tensor joining others: requantize it
                        requantize_to[(nd.index, k)] = anchor
                        continue
                    groups.union(anchor, t)
        members: dict = {}
        for t in {*graph.activations, *groups.parent}:
            members.setdefault(groups.find(t), []).append(t)
        for root, ts in members.items():
            fixed_here = {fixed[t] for t in ts if t in fixed}
            if len(fixed_here) > 1:
                raise UnsupportedOpError(f"tensors {sorted(ts)} must share one scale but two ops fix different "
                                         f"ones: {sorted(fixed_here)}")
            if fixed_here:
                p = fixed_here.pop()
            else:
                m = max(max(abs(lo), abs(hi)) for lo, hi in (self._value_range(t) for t in ts))
                if not (m > 0 and math.isfinite(m)):
                    self._refuse(ts, m)
                if self.mode.unsigned and self._never_negative(ts, tied_outputs):
                    p = (unsigned_scale(m), -128)
                    for t in ts:
                        self.notes.setdefault(t, "unsigned: never negative (after a ReLU)")
                else:
                    p = (symmetric_scale(m, self.mode.activations), 0)
            for t in ts:
                self.params[t] = p
            if len(ts) > 1:
                for t in ts:
                    if t not in fixed:
                        unsigned = "unsigned, " if p[1] == -128 and t not in fixed else ""
                        self.notes[t] = f"{unsigned}tied: one scale for {len(ts)} tensors"
        for (i, k), anchor in requantize_to.items():
            self.requantize[(i, k)] = self.params[anchor]
            self.notes[g.nodes[i].inputs[k]] = f"requantized before {g.nodes[i].name} (node {i})"

    def _never_negative(self, ts: list, tied_outputs: set) -> bool:
        """True when no tensor of the group can be negative: each is written by a ReLU / ReLU6 (an op of
        its own or fused), is a constant ≥ 0, or is the output of an op that only moves values (its values
        come from the others).  TIDL stores such tensors unsigned (docs/tidl_fsg_quantization.md)."""
        g, producer = self.graph.g, self.graph.g.producer
        sources = 0
        for t in ts:
            if t in tied_outputs:
                continue
            if g.static[t]:
                v = self._const(t)
                if v.size and float(v.min()) < 0:
                    return False
                continue
            i = producer[t]
            if i < 0 or not _relu_output(self.graph, g.nodes[i]):
                return False
            sources += 1
        return sources > 0 and min(self._value_range(t)[0] for t in ts) >= 0

    def _refuse(self, ts: list, m: float) -> None:
        """No scale can be chosen: the calibration frames never gave these tensors a value other than 0
        (or never reached them, or gave inf / nan)."""
        graph, g = self.graph, self.graph.g
        t = next((t for t in ts if not g.static[t]), ts[0])
        i = g.producer[t]
        who = f"{graph.where(g.nodes[i])}: its output" if i >= 0 else "graph input"
        if t in self.stats.unreached:
            why = "the calibration frames never reached it (it was empty on every frame)"
        elif not math.isfinite(m):
            why = f"the calibration frames gave it {m} (not a finite range)"
        else:
            why = "it was 0 on every calibration frame (range 0 … 0)"
        raise UnsupportedOpError(f"{who} '{graph.tensors[t].name}' has no range to quantize: {why}, so no int8 scale "
                                 f"can be chosen and the int8 copy would compute garbage; calibrate with frames that "
                                 f"exercise it, or keep this node on the CPU (e.g. deny it)")

    def zero_rounding(self) -> list:
        """(tensor, message) for each activation that is never 0 on the calibration frames but of which
        int8 makes 0: its values nearest 0 are below half its scale (e.g. exp(x) + 1 with a range 1 … 1809
        and a scale of 16: every value below 8 becomes 0, and a DIV after it divides by zero)."""
        graph, g, out = self.graph, self.graph.g, []
        for t in graph.activations:
            if t not in self.params or t not in self.stats.ranges:
                continue
            lo, hi = self.stats.ranges[t]
            if not (lo > 0 or hi < 0):
                continue
            s, _ = self.params[t]
            nearest = min(abs(lo), abs(hi))
            i = g.producer[t]
            if nearest >= s / 2 or (i >= 0 and graph.rule[i] == "fixed"):   # a tiny probability may become 0
                continue
            who = f"{graph.where(g.nodes[i])}: output" if i >= 0 else "input"
            out.append((t, f"{who} '{graph.tensors[t].name}' is never 0 in float (range {lo:.4g} … {hi:.4g} "
                           f"on the calibration frames), but its int8 scale {s:g} makes every value nearer 0 than "
                           f"{s / 2:g} exactly 0; an op after it that divides by it (DIV) or takes its log or "
                           f"reciprocal gets 0 — keep this node on the CPU or give the values a smaller range"))
        return out

    # -- step 3 --------------------------------------------------------------------------------
    def _const(self, t: int) -> np.ndarray:
        if t in self.stats.static:
            return np.asarray(self.stats.static[t])
        v = tensor_data(self.graph.model, 0, t)
        if v is None:
            raise UnsupportedOpError(f"tensor {t} ('{self.graph.tensors[t].name}') has no constant data")
        return np.asarray(v)

    def _quantize_weights(self) -> None:
        graph = self.graph
        for nd, rule in zip(graph.g.nodes, graph.rule):
            if rule != "weighted":
                continue
            a, w, axis, b = WEIGHTED[nd.op]
            quantize = quantize_per_channel if self.mode.per_channel else quantize_per_tensor
            qw, ws = quantize(self._const(nd.inputs[w]), axis, self.mode.weights)
            self.weights[nd.index] = (qw, ws, axis)
            in_scale = self.params[nd.inputs[a]][0]
            has_bias = len(nd.inputs) > b and nd.inputs[b] >= 0
            fb = self._const(nd.inputs[b]) if has_bias else np.zeros(len(ws), np.float32)
            self.bias[nd.index] = quantize_bias(fb, in_scale, ws)
            self._check_bias(nd, fb, self.bias[nd.index][1])
            self.corrections[nd.index] = np.zeros(len(ws), np.int64)

    def _check_bias(self, nd, fb: np.ndarray, scales: np.ndarray) -> None:
        """A bias is added in the int32 accumulator, in units of ``input_scale · weight_scale``; one too
        large for int32 in those units cannot be held (it would be clipped): refuse the node."""
        steps = np.abs(np.asarray(fb, np.float64)) / scales.astype(np.float64)
        limit = float(np.iinfo(np.int32).max)
        if steps.size and not np.all(steps <= limit):
            c = int(np.argmax(np.where(np.isfinite(steps), steps, np.inf)))
            raise UnsupportedOpError(
                f"{self.graph.where(nd)}: its bias cannot be calibrated: channel {c}'s bias {float(fb[c]):.6g} is "
                f"{steps[c]:.3g} steps of input_scale x weight_scale ({float(scales[c]):.3g}), beyond int32's "
                f"{np.iinfo(np.int32).max}, so the int8 copy would clip it and compute garbage; keep this node on the "
                f"CPU (e.g. deny it) or calibrate with frames that give its input a wider range")

    def channel_levels(self, i: int) -> tuple[float, int, int]:
        """(median over output channels of the int8 levels a channel's largest |w| reaches, channels whose
        float weights are not all 0 but whose int8 weights are, channels) of weighted node ``i``.  With one
        scale for the whole tensor a small channel reaches few of the 127 levels, or none (it becomes all 0
        and its output is the bias alone)."""
        qw, _, axis = self.weights[i]
        nd = self.graph.g.nodes[i]
        w = np.asarray(self._const(nd.inputs[WEIGHTED[nd.op][1]]))
        other = tuple(k for k in range(qw.ndim) if k != axis)
        levels = np.abs(qw.astype(np.int32)).max(axis=other) if qw.size else np.zeros(0)
        lost = np.all(qw == 0, axis=other) & ~np.all(w == 0, axis=other)
        return float(np.median(levels)) if levels.size else 0.0, int(np.count_nonzero(lost)), int(qw.shape[axis])

    def explosion(self, snr: dict) -> tuple | None:
        """(tensor, message) for the first node, in node order, whose int8 output falls below EXPLODED_DB
        against float (``snr``: activation name → :func:`sqnr`, from :meth:`Calibrated.compare`), with the
        likely cause when it is a weighted op whose per-tensor weights lose whole channels."""
        graph, g = self.graph, self.graph.g
        for nd in g.nodes:
            for t in nd.outputs:
                name = graph.tensors[t].name
                if t < 0 or name not in snr or snr[name]["snr_db"] >= EXPLODED_DB:
                    continue
                cause = ""
                if nd.index in self.weights and not self.mode.per_channel:
                    median, lost, n = self.channel_levels(nd.index)
                    cause = (f"; its per-tensor weights (one scale, {float(self.weights[nd.index][1][0]):.4g}, for "
                             f"{n} output channels) leave the median channel ±{median:g} of the 127 levels"
                             + (f" and {lost} channel(s) all 0" if lost else "")
                             + " — per-channel weights (scale_type='symmetric') give each channel all 127")
                return t, (f"{graph.where(nd)}: the int8 error explodes here: output '{name}' has an SNR of "
                           f"{snr[name]['snr_db']:.1f} dB against float on the calibration frames, the first node "
                           f"below {EXPLODED_DB:g} dB (max |error| {snr[name]['max_abs']:.4g}){cause}; node_errors() "
                           f"shows every device node")
        return None

    # -- step 5 (called by calibrate) ----------------------------------------------------------
    def correct_biases(self, errors: "_ChannelErrors") -> None:
        info = np.iinfo(np.int32)
        for i, err in errors.mean.items():
            q, scales = self.bias[i]
            err = np.where(np.abs(err) > SIGNIFICANCE * errors.stderr[i], err, 0.0)
            step = round_half_away(BIAS_STEP * err / scales.astype(np.float64)).astype(np.int64)
            self.bias[i] = (np.clip(q.astype(np.int64) - step, info.min, info.max).astype(np.int32), scales)
            self.corrections[i] = self.corrections[i] - step

    # -- step 4 --------------------------------------------------------------------------------
    def write(self):
        """The int8 model (see :class:`workbench.delegate.quantize_model.Writer`)."""
        from .quantize_model import Writer

        return Writer(self).model

    # -- names for Calibrated --------------------------------------------------------------------
    def activation_params(self) -> dict:
        t = self.graph.tensors
        return {t[k].name: self.params[k] for k in self.graph.activations if k in self.params}

    def named_ranges(self) -> dict:
        t = self.graph.tensors
        return {t[k].name: self.stats.ranges[k] for k in self.graph.activations}

    def named_notes(self) -> dict:
        t = self.graph.tensors
        return {t[k].name: v for k, v in self.notes.items() if k in self.stats.ranges}

    def named_weight_scales(self) -> dict:
        nodes, t = self.graph.g.nodes, self.graph.tensors
        return {t[nodes[i].inputs[WEIGHTED[nodes[i].op][1]]].name: ws for i, (_, ws, _) in self.weights.items()}

    def named_corrections(self) -> dict:
        nodes, t = self.graph.g.nodes, self.graph.tensors
        return {t[nodes[i].inputs[WEIGHTED[nodes[i].op][1]]].name: c for i, c in self.corrections.items()}


# ================================================================================================
# Step 5: the mean error of every weighted op's output channels
# ================================================================================================
@dataclass
class _ChannelErrors:
    mean: dict      # node → per-channel mean of (int8 output, dequantized) − (float output)
    stderr: dict    # node → the standard error of that mean, from its spread over the frames


def _channel_errors(qmodel, plan: _Plan, frames, tick) -> _ChannelErrors:
    """Run the float and the int8 model side by side on every frame; per weighted op and output channel,
    the mean error of each frame (over positions), then their mean and standard error over frames."""
    fl, q8 = _interpreter(plan.graph.model, frames[0]), _interpreter(qmodel, frames[0])
    nodes = plan.graph.g.nodes
    names = {t.name: k for k, t in enumerate(qmodel.subgraphs[0].tensors)}
    where = {}                        # node → (its output in the float model, the same in the int8 model)
    for i in plan.weights:
        out = nodes[i].outputs[0]
        name = plan.graph.tensors[out].name
        where[i] = (out, names.get(f"{name}/int8", names[name]))       # a graph output: its int8 twin
    s1: dict = {i: 0.0 for i in where}
    s2: dict = {i: 0.0 for i in where}
    for k, frame in enumerate(frames):
        _run(fl, frame)
        _run(q8, frame)
        for i, (tf, tq) in where.items():
            s, zp = plan.params[tf]
            err = (q8.get_tensor(tq).astype(np.float64) - zp) * s - fl.get_tensor(tf)
            m = err.reshape(-1, err.shape[-1]).mean(axis=0)
            s1[i] = s1[i] + m
            s2[i] = s2[i] + m * m
        tick()
    n = len(frames)
    mean = {i: s1[i] / n for i in where}
    var = {i: np.maximum(s2[i] / n - mean[i] ** 2, 0.0) * n / max(n - 1, 1) for i in where}
    return _ChannelErrors(mean, {i: np.sqrt(var[i] / n) for i in where})
