"""Two builds of TFLite, two sets of int8 answers: the arithmetic variants the interpreter can follow.

TFLite ships every op twice.  ``reference_ops`` / ``reference_integer_ops`` (kernel type
``kReference``, the ``BUILTIN_REF`` op resolver) are the specification: plain loops, one rounding
rule.  The builtin kernels a phone or a PC actually runs (``kGenericOptimized``, the ``BUILTIN``
resolver) call optimized code — ruy for matrix products, NEON intrinsics that x86 builds emulate
with NEON_2_SSE, Eigen for float reductions — and some of those round or accumulate differently.
Both are correct TFLite; they just disagree in the last bit of some int8 outputs.

A :class:`Variant` names each such difference as a policy, so a kernel says *which* rule it applies
(``if context.variant.final_shift == "ties-up": ...``) instead of folding one build's habit into
"reference":

* :data:`LITERT_X86` — what ``ai-edge-litert``'s builtin kernels do on an x86 CPU.  The default:
  the interpreter is bit-exact with it.
* :data:`REFERENCE` — TFLite's reference kernels, bit-exact with LiteRT's ``BUILTIN_REF`` resolver.

``Interpreter(variant="reference")`` picks the second; it is independent of ``reference=True``,
which chooses the *code* that runs (the teaching layer alone) and not the arithmetic it follows.
Notebook 04 shows an input on which the two variants differ, and why.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["Variant", "LITERT_X86", "REFERENCE", "VARIANTS", "variant_named"]


@dataclass(frozen=True)
class Variant:
    """One build's arithmetic, as named policies.  Every field says what the ``REFERENCE`` value means
    and what the optimized build does instead."""

    name: str
    summary: str

    # -- matrix products (CONV_2D, FULLY_CONNECTED, BATCH_MATMUL, TRANSPOSE_CONV) -------------
    # The last step of MultiplyByQuantizedMultiplier is a rounding right shift.  Reference:
    # RoundingDivideByPOT, ties away from zero ("away").  ruy's kernels (the builtin int8 / uint8
    # matrix path) round that shift with ties going up ("ties-up").
    final_shift: str = "away"

    # -- DEPTHWISE_CONV_2D --------------------------------------------------------------------
    # Reference (reference_integer_ops::DepthwiseConvPerChannel): every output channel requantized the
    # same way, ties away from zero; hybrid: acc·(filter_scale·scaling_factor) (False).  The optimized
    # x86 kernels split the channels into a vector loop and a scalar tail (True): int8 rounds ties up
    # in the first 8·⌊C·M/8⌋ channels (its 8-wide NEON_2_SSE loop) and away from zero in the rest;
    # hybrid scales the first 4·⌊C·M/4⌋ channels (acc·filter_scale)·scaling_factor and the rest
    # (acc·scaling_factor)·filter_scale (``kernels/depthwise_conv_2d.vector_channels``).
    depthwise_chunks: bool = False
    # float32: Reference (reference_ops::DepthwiseConv): the taps' sum, then + bias (False).  The
    # optimized kernel starts its accumulators at the bias and adds the taps to it (True).
    depthwise_bias_first: bool = False

    # -- TRANSPOSE_CONV -----------------------------------------------------------------------
    # Reference (reference_ops / reference_integer_ops::TransposeConv, "scatter"): every input value
    # times the filter scattered onto the output — float32 in input order (row, column, channel),
    # then + bias; integer outputs requantized alike, ties away from zero.  The optimized
    # TransposeConvV2 ("gemm+col2im"): one matrix product, col2im in input-pixel order, then + bias;
    # int8 / 16x8-with-int32-bias requantize 8 channels at a time with ties up and the last O % 8 away
    # from zero, uint8 the flat output 16 values at a time (ties up) and the last size % 16 away.
    # Hybrid (float input, int8 weights) runs the reference kernel in both builds.
    transpose_conv_kernel: str = "scatter"

    # -- QUANTIZE / DEQUANTIZE ---------------------------------------------------------------
    # Reference: every element the same way (0).  The optimized kernels handle blocks of 8 with
    # NEON (emulated by NEON_2_SSE on x86) and the tail with scalar code (8).
    # (QUANTIZE float → integer per tensor: the reference rounds x / scale (float32) ties away; the
    # blocks round x · (1/scale) ties to even, the tail x / scale in double.  DEQUANTIZE per tensor: the
    # reference rounds scale · (q − zp) once; the blocks compute q · scale + (−zp · scale).)
    quantize_block: int = 0
    # QUANTIZE between 8-bit types (int8 / uint8 → int8 / uint8): Reference: ``Requantize``'s scalar
    # loop, MultiplyByQuantizedMultiplier with ties away from zero (0).  The optimized kernel's NEON
    # loop takes 16 values at a time and its final rounding shift sends ties up; the last size % 16
    # values go through the scalar loop (16).
    requantize_block: int = 0

    # -- ADD / SUB / MUL and other element-wise int8 ops --------------------------------------
    # Reference: scalar saturating arithmetic (False).  The optimized kernels narrow their int32
    # lanes through NEON's saturating narrowing, as NEON_2_SSE emulates it (True).
    # (True also covers the other vector loops of the builtin ADD / SUB: int16 ADD's one rounding per
    # input rescale, int16 SUB's vectorised broadcast — ``quant.elementwise.vector_loop_mask``.)
    neon_narrowing: bool = False

    # -- float reductions ------------------------------------------------------------------------
    # Reference: one accumulator, in index order ("sequential").  Eigen sums in packets of SIMD lanes
    # ("eigen-packets"), which changes the float rounding of long sums.
    # (SUM / MEAN float32: the reference kernels start each sum from 0; litert-x86's start from the
    # first value, and its MEAN over trailing axes is Eigen's 4-lane redux — kernels/_reduce.py.)
    float_sum_order: str = "sequential"

    # -- FULLY_CONNECTED / BATCH_MATMUL (float32 products) -------------------------------------
    # Reference: reference_ops::FullyConnected / BatchMatMul give every output one float32
    # accumulator, one product and one add at a time in index order, then + bias ("sequential").
    # litert-x86: the workbench takes numpy's BLAS product ("blas").  It does not reproduce the
    # builtin FULLY_CONNECTED's ruy / gemv blocking (nor BATCH_MATMUL's builtin, which is the
    # sequential loop): those outputs agree with LiteRT to float32 rounding, not bit for bit.
    float_matmul: str = "sequential"

    # -- FULLY_CONNECTED (int8 / uint8 / 16x8) ---------------------------------------------------
    # How the int32 sums become output units.  Reference: reference_integer_ops::FullyConnected(
    # PerChannel) scale in double, (int32)round(acc · input_scale·filter_scale/output_scale), C's
    # round: halves away from zero ("double").  litert-x86: int8 and uint8 (and 16x8 with zero points
    # 0, an int32 bias or none and quantized_bias_type not INT64) go through ruy:
    # MultiplyByQuantizedMultiplier, its last shift rounded as ``final_shift`` ("multiplier"); the
    # other 16x8 cases keep the reference kernel ("double").
    fc_rescale: str = "double"

    # -- FULLY_CONNECTED with int4 weights and float input --------------------------------------
    # Reference: the weights are unpacked to int8 and take the ordinary hybrid path (EvalHybrid),
    # and blockwise-quantized weights have no kernel (False).  litert-x86: constant int4 weights with
    # K even and >= 32, >= 4 units and a batch take the optimized 4-bit kernel (optimized_4bit:
    # nibbles w + 7, its own row quantization) or, blockwise, EvalBlockwise4Bit (True).
    fc_4bit_kernel: bool = False

    # -- FULLY_CONNECTED with sparse float32 weights (version 8) ---------------------------------
    # Reference: the weights are densified and run through the dense sequential loop, zeros included
    # (False).  litert-x86: the sparse kernels add only the stored weights: one sum per row ("random
    # sparse"), or four lane sums per row, added ((l0 + l1) + l2) + l3, for 1x4 blocks (True).
    fc_sparse_kernels: bool = False

    # -- RESIZE_BILINEAR (float32, uint8) ------------------------------------------------------------
    # Reference: reference_ops::ResizeBilinear, per output value x00·(1−dy)·(1−dx) + x10·dy·(1−dx) +
    # x01·(1−dy)·dx + x11·dy·dx in float32, left to right (+ 0.5 and truncation for uint8)
    # ("reference").  litert-x86: optimized_ops::ResizeBilinear ("optimized"): the corners x00, x01,
    # x10, x11 times the weight products (1−dy)(1−dx), (1−dy)dx, dy(1−dx), dy·dx added in that order
    # (float32 into a zeroed output), a 2x float upscale by halved sums, and the uint8 8.8 fixed-point
    # kernel for an exact 8x half-pixel upscale.  int8 and int16 take ResizeBilinearInteger in both.
    resize_bilinear: str = "reference"

    # -- MEAN (uint8, int8) ------------------------------------------------------------------------------
    # Reference: reference_ops::QuantizedMeanOrSum, 1/count folded into the fixed-point multiplier of
    # in_scale / out_scale ("reference").  litert-x86: a keep_dims mean over axes {1, 2} of a 4-D input
    # takes optimized_(integer_)ops::Mean ("optimized"): one multiplier for in_scale / (count ·
    # out_scale), a bias, 16 channels at a time through NEON code whose last shift rounds ties up.
    quantized_mean: str = "reference"

    # -- SUM (uint8, int8, int16) --------------------------------------------------------------------------
    # Reference: reference_ops::QuantizedMeanOrSum, MultiplyByQuantizedMultiplier(Σx − zp·count) with
    # the fixed-point in_scale / out_scale ("fixed-point").  litert-x86: optimized_ops::QuantizedMeanOrSum
    # rescales in float32, round(Σx · scale + bias) ("float32").
    quantized_sum: str = "fixed-point"

    # -- REDUCE_PROD (int8, int16) -------------------------------------------------------------------------
    # Reference: every output is rescaled, a product of one value too (False).  litert-x86: when every
    # reduced axis has size 1 the optimized kernel finds nothing to reduce and copies the integers (True).
    reduce_prod_copy: bool = False

    # -- float SOFTMAX, LOG_SOFTMAX, LOGISTIC, TANH, HARD_SWISH, LOCAL_RESPONSE_NORMALIZATION -----------
    # Reference: reference_ops' plain loops, one value at a time with the C library's expf / logf /
    # tanhf / pow, sums left to right, SOFTMAX's e / sum, LOGISTIC's cut-offs at −9 and 16.62
    # ("libm").  litert-x86: the optimized kernels' Eigen expressions ("eigen"): Eigen's own
    # polynomial exp / logistic / tanh on packets of 4 floats (the C library on the last n mod 4),
    # packet sums and maxima, SOFTMAX's e · (1 / sum), HARD_SWISH's 4-lane loop, LRN's running window
    # sum and its 1/x and 1/sqrt shortcuts for beta 1 and 0.5 (``kernels/_softmax.py`` and each op).
    float_activations: str = "libm"

    # -- SOFTMAX / LOG_SOFTMAX on uint8 / int8 inputs ----------------------------------------------------
    # Reference: reference_ops::Softmax / LogSoftmax in gemmlowp fixed point: exp_on_negative_values of
    # the rescaled differences, a Q12 sum, its reciprocal (SOFTMAX) or log (LOG_SOFTMAX), the output in
    # steps of 1/256 (1/65536 for int16 outputs) from the type's minimum ("fixed-point").
    # litert-x86: optimized_ops::Softmax / LogSoftmax read exp from a 256-entry float table filled in
    # prepare and sum, scale and round in float32 ("float-table").
    softmax_8bit: str = "fixed-point"

    # -- int16 LOGISTIC / TANH -----------------------------------------------------------------------------
    # Reference: reference_integer_ops::Logistic / Tanh for every input scale: the 256-entry sigmoid
    # table with linear interpolation ("table").  litert-x86: when the input scale is 2^-12 (TANH also
    # 2^-11) — the multiplier is 0 — or the multiplier did not fit, gemmlowp's fixed-point logistic /
    # tanh on the input read as Q3.12 ("gemmlowp-pot").
    int16_logistic_tanh: str = "table"

    # -- CONV_2D, hybrid (float input, int8 filter with per-channel scales) ----------------------
    # Reference (reference_ops::HybridConvPerChannel): int32 Σ filter·(q − zero point) over the taps
    # inside the image, then float32 (sum · filter_scale) · scaling_factor, + bias ("reference").
    # litert-x86 runs optimized_ops::HybridConvPerChannel for ungrouped convolutions ("optimized"): an
    # im2col whose border holds the zero point, Σ filter·q − zero point · row sums (SSE row sums in
    # int16 lanes, which wrap for long rows), then sum · float32(filter_scale · scaling_factor) + bias.
    # Grouped ones take the reference kernel in both builds, per-tensor ones HybridConv in both.
    hybrid_conv: str = "reference"

    def differences(self, other: "Variant") -> list[str]:
        """The policies on which two variants disagree, as ``name: mine vs theirs``."""
        return [f"{f.name}: {getattr(self, f.name)!r} vs {getattr(other, f.name)!r}" for f in fields(self)
                if f.name not in ("name", "summary") and getattr(self, f.name) != getattr(other, f.name)]


REFERENCE = Variant(
    "reference",
    "TFLite's reference kernels (reference_ops / reference_integer_ops), LiteRT's BUILTIN_REF resolver")

LITERT_X86 = Variant(
    "litert-x86",
    "ai-edge-litert's builtin kernels on an x86 CPU (ruy, NEON_2_SSE, Eigen)",
    final_shift="ties-up",
    depthwise_chunks=True,
    depthwise_bias_first=True,
    transpose_conv_kernel="gemm+col2im",
    quantize_block=8,
    requantize_block=16,
    neon_narrowing=True,
    float_sum_order="eigen-packets",
    float_matmul="blas",
    fc_rescale="multiplier",
    fc_4bit_kernel=True,
    fc_sparse_kernels=True,
    resize_bilinear="optimized",
    quantized_mean="optimized",
    quantized_sum="float32",
    reduce_prod_copy=True,
    float_activations="eigen",
    softmax_8bit="float-table",
    int16_logistic_tanh="gemmlowp-pot",
    hybrid_conv="optimized",
)

VARIANTS = {v.name: v for v in (LITERT_X86, REFERENCE)}


def variant_named(name) -> Variant:
    """``"litert-x86"`` / ``"reference"`` (or a :class:`Variant`) → the :class:`Variant`."""
    if isinstance(name, Variant):
        return name
    try:
        return VARIANTS[name]
    except KeyError:
        raise ValueError(f"unknown arithmetic variant {name!r}; the variants are "
                         f"{', '.join(sorted(VARIANTS))}") from None
