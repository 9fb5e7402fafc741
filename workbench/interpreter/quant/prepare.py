"""What the int8 kernels' ``prepare`` steps share: float → quantized rounding as TFLite does it,
activation clamps, a tensor's quantization parameters, the C library's float and double functions
(lookup tables are built with ``expf`` / ``tanhf`` ..., not numpy's), per-channel conv / depthwise /
fully-connected multipliers and the int8 lookup table.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from .fixed_point import quantize_multiplier

# ----------------------------------------------------------------------------------------------
# float → quantized (how TFLite rounds)


def round_half_away(x) -> np.ndarray:
    """``std::round`` elementwise (ties away from zero), exact for float32 inputs.

    numpy's ``np.round`` rounds ties to even (2.5 → 2), which is *not* what TFLite does.  The work
    is done in float64 so that adding 0.5 to a float32 value is exact.
    """
    x = np.asarray(x)
    a = np.abs(x.astype(np.float64))
    return np.copysign(np.floor(a + 0.5), x.astype(np.float64))


def quantize_float(f, scale: float, zero_point: int) -> int:
    """``zero_point + (int32)round(f / scale)`` with the division in float32 (kernel_util.cc)."""
    q = np.float32(f) / np.float32(scale)
    return int(zero_point) + int(round_half_away(q))


def activation_range_quantized(code: int, scale: float, zero_point: int, qmin: int = -128,
                               qmax: int = 127) -> tuple[int, int]:
    """``CalculateActivationRangeQuantized``: the int clamp a fused activation becomes (``kernels/kernel_util.cc``).

    RELU → [max(qmin, q(0)), qmax]; RELU6 → [max(qmin, q(0)), min(qmax, q(6))];
    RELU_N1_TO_1 → [max(qmin, q(-1)), min(qmax, q(1))]; NONE (and TANH, SIGN_BIT) → [qmin, qmax].
    """
    code = int(code)
    if code == 1:
        return max(qmin, quantize_float(0.0, scale, zero_point)), qmax
    if code == 3:
        return max(qmin, quantize_float(0.0, scale, zero_point)), min(qmax, quantize_float(6.0, scale, zero_point))
    if code == 2:
        return max(qmin, quantize_float(-1.0, scale, zero_point)), min(qmax, quantize_float(1.0, scale, zero_point))
    return qmin, qmax


def quant_params(context, t: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(scales float32 array, zero points int32 array, quantized_dimension) of tensor ``t``."""
    q = context.tensor_meta(t).quantization
    scales = np.asarray(tuple(q.scale or ()) if q is not None else (), np.float32)
    zps = np.asarray(tuple(q.zero_point or ()) if q is not None else (), np.int64)
    if len(zps) == 0:
        zps = np.zeros(max(len(scales), 1), np.int64)
    if not np.isfinite(scales).all():
        from ...errors import ModelError
        raise ModelError(f"tensor '{context.name(t)}' has a quantization scale that is not a finite number "
                         f"({scales.tolist()[:8]})")
    return scales, zps, int(q.quantized_dimension or 0) if q is not None else 0


# ----------------------------------------------------------------------------------------------
# the C library's float functions (lookup tables are built with expf / tanhf, not numpy's exp)

_LIBM = None


def libm():
    """The C math library through ctypes (loaded once), or None when it cannot be loaded."""
    global _LIBM
    if _LIBM is None:
        path = ctypes.util.find_library("m")
        try:
            _LIBM = ctypes.CDLL(path) if path else False
        except OSError:
            _LIBM = False
    return _LIBM or None


def libm_float(name: str):
    """The C math library's float function ``name`` (e.g. "expf"), or None when not loadable.

    TFLite builds its int8 LUTs with ``std::exp`` / ``std::tanh`` on float; numpy's float32 ``exp``
    is a different implementation that can differ in the last bit, which can move an output by one.
    """
    lib = libm()
    fn = getattr(lib, name, None) if lib is not None else None
    if fn is None:
        return None
    fn.restype = ctypes.c_float
    fn.argtypes = [ctypes.c_float]
    return fn


def float_fn(name: str, values: np.ndarray) -> np.ndarray:
    """Apply libm's float function (``expf``, ``tanhf``) elementwise; numpy float64 as a fallback."""
    values = np.asarray(values, np.float32)
    fn = libm_float(name)
    if fn is not None:
        return np.array([fn(float(v)) for v in values.reshape(-1)], np.float32).reshape(values.shape)
    np_fn = {"expf": np.exp, "tanhf": np.tanh}[name]
    return np_fn(values.astype(np.float64)).astype(np.float32)


_LIBM_DOUBLE: dict = {}


def libm_apply(name: str, values, double: bool = False) -> np.ndarray:
    """The C library's ``name`` (``expf``, ``erfcf``, ``log`` ...) applied elementwise.

    ``double=False`` calls the float version on float32 values (what ``std::exp(float)`` runs);
    ``double=True`` the double one on float64 values.  TFLite builds its lookup tables with these
    functions, whose last bit can differ from numpy's own implementations.  Without a loadable libm
    numpy's float64 function is used (and rounded to float32 for the float case).
    """
    dt = np.float64 if double else np.float32
    values = np.asarray(values, dt)
    if name in ("sqrt", "sqrtf"):                     # IEEE square roots are correctly rounded everywhere
        with np.errstate(invalid="ignore"):
            return np.sqrt(values).astype(dt)
    fn = None
    if double:
        fn = _LIBM_DOUBLE.get(name)
        if fn is None and libm_float("expf") is not None:       # loads the library
            f = getattr(_LIBM, name, None)
            if f is not None:
                f.restype = ctypes.c_double
                f.argtypes = [ctypes.c_double]
                _LIBM_DOUBLE[name] = fn = f
    else:
        fn = libm_float(name)
    if fn is not None:
        return np.array([fn(float(v)) for v in values.reshape(-1)], dt).reshape(values.shape)
    import math
    base = name[:-1] if (not double and name.endswith("f")) else name
    np_fn = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh,
             "erfc": np.frompyfunc(math.erfc, 1, 1)}[base]
    return np.asarray(np_fn(values.astype(np.float64)), np.float64).astype(dt)


# ----------------------------------------------------------------------------------------------
# what conv / depthwise / fully-connected prepare share


I8 = np.dtype(np.int8)


def per_channel_multipliers(input_scale: float, filter_scales, output_scale: float, channels: int):
    """``PopulateConvolutionQuantizationParams``: per output channel c,
    effective_scale[c] = (double)in_scale * (double)filter_scale[c] / (double)out_scale, then
    :func:`quantize_multiplier`.  A per-tensor filter (one scale) broadcasts to every channel.

    Returns (effective_scale float64 [C], output_multiplier int64 [C], output_shift int64 [C]).
    """
    fs = np.asarray(filter_scales, np.float32).reshape(-1)
    if len(fs) == 1:
        fs = np.repeat(fs, channels)
    if len(fs) != channels:
        from ...errors import ModelError
        raise ModelError(f"{len(fs)} filter scales for {channels} output channels (a per-channel quantized "
                         f"filter needs one scale per channel, or one for all)")
    eff = np.array([float(np.float64(np.float32(input_scale)) * np.float64(s) / np.float64(np.float32(output_scale)))
                    for s in fs], np.float64)
    pairs = [quantize_multiplier(e) for e in eff]
    return eff, np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)


def exact_float_dtype(weights_abs_colsum_max: float, input_abs_max: int = 128) -> np.dtype:
    """The cheapest float type in which a matrix product of int8 data is *exactly* the int sum.

    Every partial sum of Σ w·x is an integer with |value| ≤ max|x| · Σ|w| (in any order, with or
    without fused multiply-add).  Integers up to 2^24 are exact in float32, up to 2^53 in float64, so
    when ``input_abs_max * max_over_outputs(Σ|w|) < 2^24`` single-precision BLAS is exact.
    """
    return np.dtype(np.float32) if input_abs_max * weights_abs_colsum_max < 2 ** 24 else np.dtype(np.float64)


def tensor_scale_zp(context, t: int) -> tuple[float, int]:
    scales, zps, _ = quant_params(context, t)
    if len(scales) == 0:
        from ...errors import UnsupportedOpError
        raise UnsupportedOpError(f"tensor '{context.name(t)}' is {context.dtype(t)} without quantization parameters")
    if not scales[0] > 0:
        from ...errors import ModelError
        raise ModelError(f"tensor '{context.name(t)}' has quantization scale {float(scales[0])}; it must be > 0")
    return float(scales[0]), int(zps[0])


def lut_int8(input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int,
             transform) -> np.ndarray:
    """TFLite's ``LUTPopulate<int8_t>``: a 256-entry table indexed by the input byte (as uint8).

    For every int8 v: d = in_scale·(v − in_zp) (float32); y = transform(d) (float32);
    q = round_half_away(y · (1/out_scale)) + out_zp (float32), clamped to [−128, 127] while a float
    and truncated (a NaN, from absurd scales, gives 0 — see ``quant.lut_float_to_8bit``).
    ``transform`` maps a float32 array to float32 (built on libm's expf / tanhf, see :func:`float_fn`).
    """
    v = np.arange(-128, 128, dtype=np.int64)
    d = (np.float32(input_scale) * (v - int(input_zero_point)).astype(np.float32)).astype(np.float32)
    y = np.asarray(transform(d), np.float32)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        inv = np.float32(1.0) / np.float32(output_scale)
        r = round_half_away((y * inv).astype(np.float32)).astype(np.float32)
        qf = np.clip((r + np.float32(output_zero_point)).astype(np.float32), np.float32(-128), np.float32(127))
    q = np.where(np.isnan(qf), np.float32(0), qf).astype(np.int64)
    table = np.empty(256, np.int8)
    table[(v & 0xFF)] = q
    return table


def logistic_f32(d: np.ndarray) -> np.ndarray:
    """1.0f / (1.0f + expf(-d)) in float32."""
    e = float_fn("expf", (-np.asarray(d, np.float32)).astype(np.float32))
    return (np.float32(1.0) / (np.float32(1.0) + e).astype(np.float32)).astype(np.float32)


def tanh_f32(d: np.ndarray) -> np.ndarray:
    """tanhf(d) in float32."""
    return float_fn("tanhf", d)
