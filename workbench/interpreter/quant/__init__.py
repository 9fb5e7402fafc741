"""Fixed-point arithmetic of TFLite's int8 kernels, written so a learner can follow every bit.

A quantized tensor stores integers ``q`` that stand for real numbers ``scale * (q - zero_point)`` (TensorFlow Lite's
"8-bit quantization specification").  An int8 convolution therefore multiplies integers, adds them up in int32 and
must then turn the int32 sum into the int8 output.  In real numbers the step is a
multiplication by ``M = input_scale * filter_scale / output_scale`` (a float, usually < 1).
TFLite never multiplies by a float at run time; instead it writes ``M`` once as

    M = m * 2^shift      with m an int32 "mantissa" in [2^30, 2^31)  (i.e. m / 2^31 in [0.5, 1))

(:func:`quantize_multiplier`) and applies it with two integer roundings
(:func:`multiply_by_quantized_multiplier`):

1. ``saturating_rounding_doubling_high_mul(x * 2^left, m)``: the high 32 bits of the 64-bit
   product ``2 * x * m``, rounded to nearest (this is ARM's ``VQRDMULH`` instruction);
2. ``rounding_divide_by_pot(…, right)``: a right shift that rounds to nearest, ties away from 0.

Every function exists twice: a scalar version on Python ints (exact, slow, easy to read and to
step through) and an array version on numpy int64 (``*_array``) that the kernels use.  The speed
layer compiles the same arithmetic into numba loops (:mod:`workbench.interpreter.fast.requantize`).

Sources (facts only): ``tensorflow/lite/kernels/internal/quantization_util.cc``, ``common.h``,
gemmlowp ``fixedpoint/fixedpoint.h``, ``tensorflow/lite/kernels/kernel_util.cc``.
"""

from __future__ import annotations

from .elementwise import (
    checked_log2,
    checked_quantize_multiplier,
    count_leading_sign_bits32,
    count_leading_zeros32,
    float_to_int32,
    fp_add,
    fp_const,
    fp_exp_on_interval,
    fp_exp_on_negative_values,
    fp_logistic,
    fp_one,
    fp_one_minus_x_over_one_plus_x,
    fp_one_over_one_plus_x,
    fp_rescale,
    fp_sat_mul_pot,
    fp_srdhm,
    fp_sub,
    fp_tanh,
    get_reciprocal,
    log_softmax_output_int32_x86,
    lut_8bit,
    lut_float_to_8bit,
    lut_int16,
    lut_lookup_int16,
    multiply_by_quantized_multiplier_x86_array,
    quantize_multiplier_x86,
    require_finite,
    rounding_divide_by_pot_int16,
    rounding_divide_by_pot_x86,
    sigmoid_table_uint16,
    softmax_output_int32_x86,
    wrap_bits,
)

# The package's modules, one per area; every name below was importable from the single module
# ``quant.py`` this package replaced, and kernels, tests and notebooks use it as ``quant.<name>``.
from .fixed_point import (
    INT32_MAX,
    INT32_MIN,
    _wrap_int32,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_array,
    multiply_by_quantized_multiplier_ruy,
    quantize_multiplier,
    quantize_multiplier_greater_than_one,
    quantize_multiplier_smaller_than_one_exp,
    requantize_rows,
    rounding_divide_by_pot,
    rounding_divide_by_pot_array,
    rounding_right_shift_half_up,
    saturating_rounding_doubling_high_mul,
    srdhm_array,
)
from .hybrid import (
    apply_float_activation,
    asymmetric_quantize_rows,
    hybrid_filter_scales,
    legacy_bias_scale_ok,
    legacy_conv_multiplier,
    neon_round_to_nearest,
    sse_row_sums,
    std_max,
    std_min,
    symmetric_quantize_rows,
    uint8_matrix_scales,
    wrap_int32,
)
from .int16 import (
    BIAS_OPTION_NAMES,
    INT16_MAX,
    INT16_MIN,
    bias_type_16x8,
    check_symmetric_filter,
    exact_matmul_dtype,
    multiply_by_quantized_multiplier_int64_array,
    requantize_int32_rows,
    requantize_int64_rows,
    round_half_away_double,
    scale_by_double,
    symmetric_int16_scales,
    wrap_int32_array,
)
from .pooling import (
    QUANTIZED_RANGES,
    inv_sqrt_quantized_multiplier_exp,
    is_quantized,
    multiply_by_quantized_multiplier_int64,
    quantized_range,
)
from .prepare import (
    I8,
    activation_range_quantized,
    exact_float_dtype,
    float_fn,
    libm_apply,
    libm_float,
    logistic_f32,
    lut_int8,
    per_channel_multipliers,
    quant_params,
    quantize_float,
    round_half_away,
    tanh_f32,
    tensor_scale_zp,
)
from .recurrent import (
    eigen_apply_f32,
    eigen_logistic_packet_f32,
    eigen_logistic_scalar_f32,
    eigen_tanh_f32,
    lstm_layer_norm_int16,
    neon_dot_f32,
    neon_reduction_sum_f32,
    saturate_int16,
)

__all__ = [
    "INT32_MIN", "INT32_MAX", "quantize_multiplier", "quantize_multiplier_smaller_than_one_exp",
    "quantize_multiplier_greater_than_one", "_wrap_int32", "saturating_rounding_doubling_high_mul",
    "rounding_divide_by_pot", "multiply_by_quantized_multiplier", "rounding_right_shift_half_up",
    "multiply_by_quantized_multiplier_ruy", "srdhm_array", "rounding_divide_by_pot_array",
    "multiply_by_quantized_multiplier_array", "requantize_rows",
    "round_half_away", "quantize_float", "activation_range_quantized", "quant_params", "libm_float",
    "float_fn", "I8", "per_channel_multipliers", "exact_float_dtype", "tensor_scale_zp", "lut_int8",
    "logistic_f32", "tanh_f32", "libm_apply", "QUANTIZED_RANGES", "quantized_range", "is_quantized",
    "multiply_by_quantized_multiplier_int64", "inv_sqrt_quantized_multiplier_exp",
    "lut_8bit", "lut_float_to_8bit", "float_to_int32", "lut_int16", "lut_lookup_int16", "wrap_bits", "checked_log2",
    "count_leading_zeros32", "count_leading_sign_bits32", "require_finite", "checked_quantize_multiplier",
    "quantize_multiplier_x86", "multiply_by_quantized_multiplier_x86_array", "rounding_divide_by_pot_int16",
    "fp_const", "fp_srdhm", "fp_sat_mul_pot", "fp_rescale", "fp_add", "fp_sub", "fp_one",
    "fp_exp_on_interval", "fp_exp_on_negative_values", "fp_one_over_one_plus_x",
    "fp_one_minus_x_over_one_plus_x", "fp_logistic", "fp_tanh", "get_reciprocal",
    "rounding_divide_by_pot_x86", "sigmoid_table_uint16", "INT16_MIN", "INT16_MAX", "wrap_int32_array",
    "multiply_by_quantized_multiplier_int64_array", "requantize_int64_rows",
    "requantize_int32_rows", "round_half_away_double", "scale_by_double",
    "exact_matmul_dtype", "BIAS_OPTION_NAMES", "bias_type_16x8", "symmetric_int16_scales",
    "check_symmetric_filter", "legacy_conv_multiplier", "legacy_bias_scale_ok", "neon_round_to_nearest",
    "symmetric_quantize_rows", "asymmetric_quantize_rows", "sse_row_sums",
    "wrap_int32", "uint8_matrix_scales", "hybrid_filter_scales", "std_max", "std_min",
    "apply_float_activation", "eigen_tanh_f32", "eigen_logistic_packet_f32", "eigen_logistic_scalar_f32",
    "eigen_apply_f32", "saturate_int16", "lstm_layer_norm_int16", "neon_dot_f32", "neon_reduction_sum_f32",
    "softmax_output_int32_x86", "log_softmax_output_int32_x86",
]
