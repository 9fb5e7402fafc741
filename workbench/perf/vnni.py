"""int8 matrix products on the CPU's 8-bit dot-product instruction (x86 AVX-512 VNNI).

An int8 CONV_2D (or FULLY_CONNECTED) is a matrix product of int8 data summed in int32:
``acc[m, n] = Σ_k (x[m, k] − input_zero_point) · w[n, k]`` (``m`` an output pixel, ``n`` an
output channel, ``k`` runs over the filter window × input channels).  The general path of the
kernels does it with a float BLAS product that is provably exact; this module does it with the
instruction built for it, ``vpdpbusd``: in each 32-bit lane it multiplies 4 *unsigned* bytes by 4
*signed* bytes and adds the four products to the lane — 64 multiply-adds per instruction, on 1 byte
per value instead of 4.  The sums are integers throughout, so the result is exact by construction.

Two small tricks make TFLite's arithmetic fit the instruction:

* **unsigned inputs.** ``vpdpbusd`` wants one operand unsigned.  The input byte ``x`` (int8) is
  stored as ``u = x + 128`` (uint8, 0..255: the same bits with the top bit flipped), so
  Σ u·w = Σ (x − zp)·w + (zp + 128)·Σ w.  The constant ``(zp + 128)·Σ_k w[n, k]`` is subtracted
  from the bias once, in prepare (``bias_folded``).  A padded tap holds ``zp + 128`` and therefore
  adds (zp − zp)·w = 0, as TFLite's zero-point padding does.
* **packed filter.** The filter is rearranged once so that 64 consecutive bytes hold 16 output
  channels × 4 consecutive k: block ``b`` (channels 16·b … 16·b + 15), group of k ``g``, byte
  ``4·j + i`` holds ``w[16·b + j, 4·g + i]`` (zero where n or k runs past the filter).  One 64-byte
  load then feeds one ``vpdpbusd`` with the same 4 input bytes broadcast to all 16 lanes; 16 lanes =
  16 output channels, no horizontal sums.  The blocks of a group of ``BLOCKS`` (the micro-kernel's
  64 channels) are interleaved: for each g, the 64 bytes of each of its blocks in turn
  (:func:`block_of`), so that the micro-kernel reads its filter as one stream of 256 bytes a step
  rather than four streams as many kilobytes apart, which the hardware's prefetchers followed badly
  when the filter came from the last-level cache or memory.

The micro-kernel (:func:`tile`) keeps a 4-row × 64-channel block of sums in 16 registers while it
walks k, written in LLVM IR through numba's ``@intrinsic`` (:func:`workbench.perf.jit.native`);
its Python twin :func:`tile` computes the same block with numpy.  :func:`conv_rows` builds the
unsigned input rows (im2col with the zero-point border), calls the micro-kernel and requantizes
each block straight away (the same arithmetic as :func:`workbench.interpreter.requantize.requantize_rows_jit`).

The requantization in registers (:func:`tile_rq`, :func:`requantize_block`, :func:`conv_rq`): where
the requantization is "narrow" (no left shift, and sum + bias always fits int32: :func:`requant_tables`
decides at prepare and lays out per channel the bias, multiplier, shifts and rounding terms, 16 channels
to a vector), the micro-kernel requantizes each 16-lane block of sums while it is still in a register —
+ bias, a 32 × 32 → 64-bit multiply, one rounding shift (the two roundings of
MultiplyByQuantizedMultiplier with ties up fold into one: ((p + 2^30) >> 31 + nudge) >> right =
(p + 2^30 + nudge·2^31) >> (31 + right), as floor(floor(a / m) / n) = floor(a / (m·n))), + zero point,
clamp — and stores int8.  The general requantization ran as a separate scalar pass over int64 values
and cost more than the products themselves (MobileNet v1's 56x56x64 -> 128 layer: 1.57 -> 0.33 ms).  A
1x1 convolution with stride 1, no padding and C a multiple of 4 skips the im2col copy: the micro-kernel
reads the input pixels in place and flips their top bits (XOR 0x80: x + 128) as it loads them.

AMX (Advanced Matrix Extensions, on Sapphire Rapids and later Xeons): where the CPU has ``amx_tile``
and ``amx_int8`` and Linux grants the process the tile state (``arch_prctl(ARCH_REQ_XCOMP_PERM,
XFEATURE_XTILEDATA)``, see the kernel's ``Documentation/arch/x86/xstate.rst``), :func:`conv` runs
:func:`conv_rows_amx` instead: the same unsigned rows, the same packed filter (padded to a multiple of
64 in k), the same requantization, but the sums of a 16-row × 64-channel block come from
``tdpbusd``, which multiplies a 16×64 tile of unsigned bytes by a 64×16 tile of signed bytes into a
16×16 tile of int32 sums in one instruction (Intel's Architecture Instruction Set Extensions
Programming Reference, chapter 3, "Intel AMX").  The packed filter's layout, 16 output channels × 4
consecutive k per 64 bytes, is exactly the layout ``tdpbusd`` wants for its second operand, so
16 consecutive k-groups of one block are one tile (its rows as far apart as the blocks of the group
times 64 bytes).  The sums are integers: exact, the same bits.

Overflow: |Σ u·w| ≤ 255·128·K < 2^31 needs K ≤ 65 000 (checked by :func:`fits`).
Used only where the CPU has AVX-512 VNNI and numba compiles for this CPU (:func:`available`),
for products of at least ``MIN_MACS`` multiply-adds; elsewhere, and with ``WORKBENCH_VNNI=0`` in the
environment (:func:`workbench.config.vnni`), the kernels keep their float BLAS path.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from .. import config
from . import aligned_zeros
from .jit import native, njit, rows_call, run_rows

ROWS = 4            # rows of the micro-kernel's block (4 × 4 accumulators of 16 lanes = 16 registers)
BLOCKS = 4          # 16-channel blocks of the micro-kernel's block
CHUNK = 32          # input rows converted at a time (stay in the L1/L2 cache while they are used)
GATHER_BYTES = 16384  # conv_rq gathers as many rows as fit in this many bytes (at least CHUNK, at most
MAX_CHUNK = 256      # MAX_CHUNK): a first layer's rows of 27 bytes 256 at a time, since each chunk costs a
                     # call of the blocks' loop and its set-up (MobileNet v1 int8's first layer inside the
                     # network, one thread: 178-189 -> 134-145 µs)
TALL_ROWS = 8       # rows of the micro-kernel's block for at most 2 channel blocks (8 × 2 accumulators)
AMX_ROWS = 16       # rows of the AMX block (one tile of sums holds 16 rows × 16 int32); CHUNK is a multiple
AMX_MIN_K = 128     # shorter sums stay on the VNNI block: with the requantization in registers and the
                    # filter-block-first loops of conv_amx_rq, AMX was measured faster from K 128 (56x56x128
                    # -> 128: 0.33 against 0.43 ms; 28x28x256 -> 256: 0.22 against 0.35), level at K 64 (where
                    # the VNNI block reads a 1x1 convolution's input in place) and slower below
COLS_BELOW = 4 * AMX_ROWS  # products with fewer rows are cut among threads by output channels, not rows
MIN_MACS = 1 << 18  # smaller products stay on the plain BLAS path (nothing to win there)
PREFETCH_LOCALITY = 2  # llvm.prefetch's locality of the blocks' software prefetch (x86 prefetcht1)

_available: bool | None = None


def available() -> bool:
    """True when numba compiles for a CPU with AVX-512 VNNI (and ``WORKBENCH_VNNI`` is not 0)."""
    global _available
    if _available is None:
        _available = _detect()
    return _available


def _detect() -> bool:
    if not config.JIT or not config.vnni():
        return False
    if os.environ.get("NUMBA_CPU_NAME") or os.environ.get("NUMBA_CPU_FEATURES"):
        return False            # numba compiles for another CPU than this one: do not guess
    if os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0"):
        return False            # numba runs Python: the LLVM micro-kernel cannot
    try:
        import platform

        if platform.machine().lower() not in ("x86_64", "amd64"):
            return False
        flags = _cpuinfo_flags()
        if flags is not None:   # Linux: the kernel lists what the CPU has and the OS saves for us
            return {"avx512f", "avx512bw", "avx512_vnni"} <= flags
        from llvmlite import binding

        feats = binding.get_host_cpu_features()
        return all(feats.get(f, False) for f in ("avx512f", "avx512bw", "avx512vnni"))
    except Exception:           # no llvmlite, or it cannot tell: stay on the portable path
        return False


def _cpuinfo_flags() -> set | None:
    """The ``flags`` of the first CPU in /proc/cpuinfo (None where there is no such file): read
    without starting LLVM, which costs ~50 MB when the kernels come from the precompiled library."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


_amx: bool | None = None
_AMX_CONFIG = np.zeros(64, np.uint8)    # filled by amx_available()
ARCH_REQ_XCOMP_PERM = 0x1023    # arch_prctl code: ask for an extended state component (linux/arch/x86 uapi prctl.h)
XFEATURE_XTILEDATA = 18         # the AMX tile data component
SYS_ARCH_PRCTL = 158            # x86-64 system call number of arch_prctl


def amx_available() -> bool:
    """True when :func:`available` and the CPU has AMX int8 tiles that Linux lets this process use
    (asked once: the permission is for the whole process, every thread)."""
    global _amx
    if _amx is None:
        _amx = available() and _request_amx()
        _AMX_CONFIG[:] = amx_config()
    return _amx


def _request_amx() -> bool:
    flags = _cpuinfo_flags()
    if flags is None or not {"amx_tile", "amx_int8"} <= flags:
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syscall(SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0
    except (OSError, AttributeError):
        return False


def k_align(k: int) -> int:
    """The k padding :func:`pack_filter` needs for :func:`conv` to take the AMX block for a product over
    ``k``: 64 with AMX and k ≥ ``AMX_MIN_K``, else 4 (the VNNI block)."""
    return 64 if k >= AMX_MIN_K and amx_available() else 4


def amx_config() -> np.ndarray:
    """The 64-byte tile configuration :func:`conv_rows_amx` loads (``ldtilecfg``): palette 1, tiles
    0-3 the int32 sums (16 rows × 64 bytes), 4 the unsigned rows (16 × 64), 5-6 filter tiles (16 × 64)."""
    cfg = np.zeros(64, np.uint8)
    cfg[0] = 1
    colsb, rows = cfg[16:48].view(np.uint16), cfg[48:64]
    colsb[:7] = 64
    rows[:7] = 16
    return cfg


def fits(k: int) -> bool:
    """int32 sums cannot overflow: 255 · 128 · K < 2^31."""
    return 0 < k and 255 * 128 * k < 2 ** 31


def worth_it(m: int, k: int, n: int) -> bool:
    return available() and fits(k) and m * k * n >= MIN_MACS


def pack_filter(w2d: np.ndarray, k_align: int = 4) -> np.ndarray:
    """[N, K] int8 filter → [ceil(N/16), ceil(K/k_align)·k_align/4, 64] int8 (see the module docstring):
    K padded with zeros to a multiple of ``k_align`` (4; :func:`k_align` gives 64, whole AMX tiles,
    where :func:`amx_available`)."""
    n, k = w2d.shape
    n16, k4 = -(-n // 16) * 16, -(-k // k_align) * k_align
    padded = np.zeros((n16, k4), np.int8)
    padded[:n, :k] = w2d
    nb, kg = n16 // 16, k4 // 4
    blocks = padded.reshape(nb, 16, kg, 4).transpose(0, 2, 1, 3).reshape(nb, kg, 64)
    packed = aligned_zeros((nb, kg, 64), np.int8)
    for b0 in range(0, nb, BLOCKS):
        nbg = min(BLOCKS, nb - b0)
        group = packed.reshape(-1)[b0 * kg * 64:(b0 + nbg) * kg * 64].reshape(kg, nbg, 64)
        group[...] = blocks[b0:b0 + nbg].transpose(1, 0, 2)
    return packed


def block_of(packed: np.ndarray, b: int) -> np.ndarray:
    """Block ``b`` of a filter from :func:`pack_filter` as [kg, 64] bytes (a view): its group of ``BLOCKS``
    blocks starts where an uninterleaved block b − b % BLOCKS would, and holds, for each group of k, the
    64 bytes of each of its blocks in turn."""
    nb, kg, _ = packed.shape
    b0 = b - b % BLOCKS
    nbg = min(BLOCKS, nb - b0)
    return packed.reshape(-1)[b0 * kg * 64:(b0 + nbg) * kg * 64].reshape(kg, nbg, 64)[:, b - b0]


def unpack_filter(packed: np.ndarray, n: int, k: int) -> np.ndarray:
    """Inverse of :func:`pack_filter` (for tests and notebooks)."""
    nb, kg, _ = packed.shape
    blocks = np.stack([block_of(packed, b) for b in range(nb)])
    return blocks.reshape(nb, kg, 16, 4).transpose(0, 2, 1, 3).reshape(nb * 16, kg * 4)[:n, :k]


def _group_strides(context, builder, packed_v, packed_ty, nb0):
    """IR: (bytes from one block of the group at nb0 to the next, bytes from one group of k to the next) in
    :func:`pack_filter`'s interleaved layout: 64, and 64 × the group's blocks (``BLOCKS``, fewer in the
    last group)."""
    from llvmlite import ir
    from numba.core import cgutils

    i64 = ir.IntType(64)
    nb = cgutils.unpack_tuple(builder, context.make_array(packed_ty)(context, builder, packed_v).shape, 3)[0]
    left = builder.sub(nb, nb0)
    full = ir.Constant(i64, BLOCKS)
    nbg = builder.select(builder.icmp_signed("<", left, full), left, full)
    return ir.Constant(i64, 64), builder.mul(nbg, ir.Constant(i64, 64))


def folded_bias(bias, w2d: np.ndarray, input_zero_point: int) -> np.ndarray:
    """int64 [N]: bias − (input_zero_point + 128) · Σ_k w[n, k]."""
    return np.asarray(bias, np.int64) - (int(input_zero_point) + 128) * w2d.sum(axis=1, dtype=np.int64)


# ----------------------------------------------------------------------------------------------
# the micro-kernel


def _build_tile():
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def tile_native(typingctx, a, r0, packed, nb0, kg, out, rows, blocks):
        ok = (isinstance(a, types.Array) and a.ndim == 2 and a.layout == "C" and a.dtype == types.uint8
              and isinstance(packed, types.Array) and packed.ndim == 3 and packed.layout == "C"
              and packed.dtype == types.int8 and isinstance(out, types.Array) and out.ndim == 2
              and out.layout == "C" and out.dtype == types.int32)
        if not ok:
            return None
        sig = types.void(a, r0, packed, nb0, kg, out, rows, blocks)

        def codegen(context, builder, signature, args):
            i32, i64 = ir.IntType(32), ir.IntType(64)
            v16 = ir.VectorType(i32, 16)
            tys = signature.args
            a_v, r0_v, p_v, nb0_v, kg_v, o_v, rows_v, blocks_v = args

            def as_i64(v, ty):
                return context.cast(builder, v, ty, types.int64)

            def data(v, ty):
                return builder.ptrtoint(context.make_array(ty)(context, builder, v).data, i64)

            r0_, nb0_, kg_ = as_i64(r0_v, tys[1]), as_i64(nb0_v, tys[3]), as_i64(kg_v, tys[4])
            rows_, blocks_ = as_i64(rows_v, tys[6]), as_i64(blocks_v, tys[7])
            lda = builder.mul(kg_, ir.Constant(i64, 4))
            wstride = builder.mul(kg_, ir.Constant(i64, 64))
            a0 = builder.add(data(a_v, tys[0]), builder.mul(r0_, lda))
            w0 = builder.add(data(p_v, tys[2]), builder.mul(nb0_, wstride))
            o0 = data(o_v, tys[5])
            one = ir.Constant(i64, 1)

            def clamped(i, count):        # rows / blocks past the end re-read the last one (no stores)
                c = ir.Constant(i64, i)
                return builder.select(builder.icmp_signed("<", c, count), c, builder.sub(count, one))

            arow = [builder.add(a0, builder.mul(clamped(r, rows_), lda)) for r in range(ROWS)]
            cstride, gstride = _group_strides(context, builder, p_v, tys[2], nb0_)
            wcol = [builder.add(w0, builder.mul(clamped(c, blocks_), cstride)) for c in range(BLOCKS)]
            dp = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v16, [v16, v16, v16]),
                                                "llvm.x86.avx512.vpdpbusd.512")
            accs = [[cgutils.alloca_once_value(builder, ir.Constant(v16, None)) for _ in range(BLOCKS)]
                    for _ in range(ROWS)]
            with cgutils.for_range(builder, kg_) as loop:
                g = loop.index
                ws = [builder.load(builder.inttoptr(builder.add(wcol[c], builder.mul(g, gstride)),
                                                    v16.as_pointer()), align=1) for c in range(BLOCKS)]
                for r in range(ROWS):
                    four = builder.load(builder.inttoptr(builder.add(arow[r], builder.mul(g, ir.Constant(i64, 4))),
                                                         i32.as_pointer()), align=1)
                    vec = builder.insert_element(ir.Constant(v16, ir.Undefined), four, ir.Constant(i32, 0))
                    vec = builder.shuffle_vector(vec, ir.Constant(v16, ir.Undefined), ir.Constant(v16, None))
                    for c in range(BLOCKS):
                        builder.store(builder.call(dp, [builder.load(accs[r][c]), vec, ws[c]]), accs[r][c])
            for r in range(ROWS):
                for c in range(BLOCKS):
                    keep = builder.and_(builder.icmp_signed("<", ir.Constant(i64, r), rows_),
                                        builder.icmp_signed("<", ir.Constant(i64, c), blocks_))
                    with builder.if_then(keep, likely=True):
                        ptr = builder.inttoptr(builder.add(o0, ir.Constant(i64, 4 * (r * 16 * BLOCKS + 16 * c))),
                                               v16.as_pointer())
                        builder.store(builder.load(accs[r][c]), ptr, align=1)
            return context.get_dummy_value()

        return sig, codegen

    return tile_native


@native(_build_tile)
def tile(a, r0, packed, nb0, kg, out, rows, blocks):
    """out[r, 16·c + j] = Σ_k a[r0 + r, k] · w[16·(nb0 + c) + j, k] for r < rows, c < blocks.

    ``a`` uint8 [*, 4·kg] (rows of unsigned inputs), ``packed`` from :func:`pack_filter`, ``out``
    int32 [ROWS, 16·BLOCKS] (exactly: the compiled version writes by address), all C-contiguous.
    Compiled, this is the ``vpdpbusd`` loop; here, numpy.
    """
    x = a[r0:r0 + rows, :4 * kg].astype(np.int64)
    for c in range(blocks):
        w = block_of(packed, nb0 + c).reshape(kg, 16, 4).transpose(1, 0, 2).reshape(16, 4 * kg).astype(np.int64)
        out[:rows, 16 * c:16 * c + 16] = x @ w.T


@functools.cache
def _build_amx():
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    i8, i64 = ir.IntType(8), ir.IntType(64)
    ptr = i8.as_pointer()

    def function(builder, name, args):
        return cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), args), name)

    @intrinsic
    def amx_tile_native(typingctx, cfg, a, r0, packed, nb0, kg, out, blocks):
        ok = (isinstance(a, types.Array) and a.ndim == 2 and a.layout == "C" and a.dtype == types.uint8
              and isinstance(cfg, types.Array) and cfg.layout == "C" and cfg.dtype == types.uint8
              and isinstance(packed, types.Array) and packed.ndim == 3 and packed.layout == "C"
              and packed.dtype == types.int8 and isinstance(out, types.Array) and out.ndim == 2
              and out.layout == "C" and out.dtype == types.int32)
        if not ok:
            return None
        sig = types.void(cfg, a, r0, packed, nb0, kg, out, blocks)

        def codegen(context, builder, signature, args):
            tys = signature.args
            cfg_v, a_v, r0_v, p_v, nb0_v, kg_v, o_v, blocks_v = args

            def as_i64(v, ty):
                return context.cast(builder, v, ty, types.int64)

            def data(v, ty):
                return builder.ptrtoint(context.make_array(ty)(context, builder, v).data, i64)

            def const(v, ty=i64):
                return ir.Constant(ty, v)

            r0_, nb0_, kg_ = as_i64(r0_v, tys[2]), as_i64(nb0_v, tys[4]), as_i64(kg_v, tys[5])
            blocks_ = as_i64(blocks_v, tys[7])
            lda = builder.mul(kg_, const(4))
            wstride = builder.mul(kg_, const(64))
            a0 = builder.add(data(a_v, tys[1]), builder.mul(r0_, lda))
            w0 = builder.add(data(p_v, tys[3]), builder.mul(nb0_, wstride))
            o0 = data(o_v, tys[6])
            load = function(builder, "llvm.x86.tileloadd64", [i8, ptr, i64])
            dp = function(builder, "llvm.x86.tdpbusd", [i8, i8, i8])
            for c in range(BLOCKS):
                builder.call(function(builder, "llvm.x86.tilezero", [i8]), [const(c, i8)])
            cstride, gstride = _group_strides(context, builder, p_v, tys[3], nb0_)
            with cgutils.for_range(builder, builder.udiv(kg_, const(16))) as loop:
                step = loop.index
                builder.call(load, [const(4, i8), builder.inttoptr(builder.add(a0, builder.mul(step, const(64))), ptr),
                                    lda])
                for c in range(BLOCKS):
                    with builder.if_then(builder.icmp_signed("<", const(c), blocks_), likely=True):
                        # 16 groups of k of block c: rows gstride bytes apart
                        at = builder.add(builder.add(w0, builder.mul(const(c), cstride)),
                                         builder.mul(step, builder.mul(gstride, const(16))))
                        builder.call(load, [const(5 + c % 2, i8), builder.inttoptr(at, ptr), gstride])
                        builder.call(dp, [const(c, i8), const(4, i8), const(5 + c % 2, i8)])
            for c in range(BLOCKS):
                builder.call(function(builder, "llvm.x86.tilestored64", [i8, ptr, i64]),
                             [const(c, i8), builder.inttoptr(builder.add(o0, const(64 * c)), ptr),
                              const(4 * 16 * BLOCKS)])
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def amx_begin_native(typingctx, cfg):
        if not (isinstance(cfg, types.Array) and cfg.layout == "C" and cfg.dtype == types.uint8):
            return None

        def codegen(context, builder, signature, args):
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            builder.call(function(builder, "llvm.x86.ldtilecfg", [ptr]), [builder.bitcast(data, ptr)])
            return context.get_dummy_value()

        return types.void(cfg), codegen

    @intrinsic
    def amx_end_native(typingctx):
        def codegen(context, builder, signature, args):
            builder.call(function(builder, "llvm.x86.tilerelease", []), [])
            return context.get_dummy_value()

        return types.void(), codegen

    return amx_tile_native, amx_begin_native, amx_end_native


def _amx_tile_ir():
    return _build_amx()[0]


def _amx_begin_ir():
    return _build_amx()[1]


def _amx_end_ir():
    return _build_amx()[2]


@native(_amx_begin_ir)
def amx_begin(cfg):
    """Compiled: ``ldtilecfg`` with ``cfg`` (:func:`amx_config`) on this thread; here, nothing."""


@native(_amx_end_ir)
def amx_end():
    """Compiled: ``tilerelease`` (the thread's tiles back to their initial state); here, nothing."""


@native(_amx_tile_ir)
def amx_tile(cfg, a, r0, packed, nb0, kg, out, blocks):
    """out[r, 16·c + j] = Σ_k a[r0 + r, k] · w[16·(nb0 + c) + j, k] for r < 16, c < blocks.

    Like :func:`tile` with 16 rows (``a`` must hold rows r0..r0+15, read whatever they hold) and
    ``kg`` a multiple of 16, between :func:`amx_begin` and :func:`amx_end` on the same thread.
    Compiled: zeroed sum tiles, per 64 k one ``tileloadd`` of 16 unsigned rows and per block one of
    the filter tile and one ``tdpbusd``, the sum tiles stored.  Here, numpy (``cfg`` unused).
    """
    x = a[r0:r0 + 16, :4 * kg].astype(np.int64)
    for c in range(blocks):
        w = block_of(packed, nb0 + c).reshape(kg, 16, 4).transpose(1, 0, 2).reshape(16, 4 * kg).astype(np.int64)
        out[:, 16 * c:16 * c + 16] = x @ w.T


# ----------------------------------------------------------------------------------------------
# the whole int8 convolution, rows m0..m1 of the output


@njit(nogil=True)
def shift_parts(shift):
    """(left, right, mask, nudge) per channel of TFLite's signed requantization shift: the left shift
    before the multiply, the right shift after it, the mask of the bits that shift drops, and 2^(right-1)
    (0 when right == 0), the nudge of a rounding shift whose ties go up."""
    o = shift.shape[0]
    left = np.empty(o, np.int64)
    right = np.empty(o, np.int64)
    mask = np.empty(o, np.int64)
    nudge = np.empty(o, np.int64)
    for n in range(o):
        s = shift[n]
        left[n] = s if s > 0 else 0
        right[n] = -s if s < 0 else 0
        mask[n] = (np.int64(1) << right[n]) - 1
        nudge[n] = mask[n] - (mask[n] >> 1)
    return left, right, mask, nudge


@njit(nogil=True)
def requantize_wide(sums, dst, bias, mult, left, right, mask, nudge, out_zp, lo, hi, half_up):
    """dst[j] = clamp(MultiplyByQuantizedMultiplier(sums[j] + bias[j]) + out_zp) in int64, the final
    rounding shift's ties up (``half_up``) or away from zero; ``left`` … ``nudge`` from :func:`shift_parts`."""
    if half_up:
        for j in range(dst.shape[0]):
            v = (np.int64(sums[j]) + bias[j]) << left[j]
            v = (v * mult[j] + 1073741824) >> 31
            v = ((v + nudge[j]) >> right[j]) + out_zp
            dst[j] = min(max(v, lo), hi)
    else:
        for j in range(dst.shape[0]):
            v = (np.int64(sums[j]) + bias[j]) << left[j]
            v = (v * mult[j] + 1073741824) >> 31
            v = (v >> right[j]) + ((v & mask[j]) > ((mask[j] >> 1) + (v < 0))) + out_zp
            dst[j] = min(max(v, lo), hi)


@njit(nogil=True)
def gather_unsigned(x, a, start, rows, pad, ow, per_image, kh, kw, sh, sw, dh, dw, pt, pl):
    """Rows ``start`` … ``start + rows`` of the convolution's im2col matrix into ``a``, int8 input made
    unsigned (+128, as VNNI's u8 × s8 product needs), ``pad`` where a tap falls outside the image.

    Plain index loops (a slice per tap made this copy cost more than the product for a first layer with
    C = 3); where a filter row lies inside the image with no dilation along x, its KW·C bytes are one
    run of the input row."""
    _, h, w, c = x.shape
    run = kw * c
    for i in range(rows):
        m = start + i
        b = m // per_image
        oy = (m % per_image) // ow
        ox = m % ow
        ix0 = ox * sw - pl
        whole = dw == 1 and ix0 >= 0 and ix0 + kw <= w
        for ky in range(kh):
            iy = oy * sh - pt + ky * dh
            k0 = ky * run
            if not 0 <= iy < h:
                for t in range(run):
                    a[i, k0 + t] = pad
            elif whole:
                for kx in range(kw):
                    for ch in range(c):
                        a[i, k0 + kx * c + ch] = np.uint8(np.int32(x[b, iy, ix0 + kx, ch]) + 128)
            else:
                for kx in range(kw):
                    ix = ix0 + kx * dw
                    if 0 <= ix < w:
                        for ch in range(c):
                            a[i, k0 + kx * c + ch] = np.uint8(np.int32(x[b, iy, ix, ch]) + 128)
                    else:
                        for ch in range(c):
                            a[i, k0 + kx * c + ch] = pad


def _build_flip16():
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def flip16_native(typingctx, dst, d, src, s):
        if not (_is_c(dst, 2, types.uint8) and _is_c(src, 2, types.uint8, types.int8)):
            return None
        sig = types.void(dst, d, src, s)

        def codegen(context, builder, signature, args):
            i64, v16b = ir.IntType(64), ir.VectorType(ir.IntType(8), 16)
            tys = signature.args

            def at(k, offset):      # the array's data + offset bytes (one byte a value)
                base = builder.ptrtoint(context.make_array(tys[k])(context, builder, args[k]).data, i64)
                off = context.cast(builder, args[offset], tys[offset], types.int64)
                return builder.inttoptr(builder.add(base, off), v16b.as_pointer())

            v = builder.xor(builder.load(at(2, 3), align=1), ir.Constant(v16b, [0x80] * 16))
            builder.store(v, at(0, 1), align=1)
            return context.get_dummy_value()

        return sig, codegen

    return flip16_native


@native(_build_flip16)
def flip16(dst, d, src, s):
    """The 16 bytes from flat offset ``d`` of 2-D byte array ``dst`` = those from flat offset ``s`` of ``src``
    with their top bits flipped (int8 x made the unsigned x + 128).  Compiled: one unaligned 16-byte load,
    XOR, store; the caller makes sure that all 16 bytes lie in both arrays (flat offsets: no reshape,
    which would need numba's runtime, which the precompiled library does not have)."""
    dst.reshape(-1)[d:d + 16] = src.reshape(-1)[s:s + 16].view(np.uint8) ^ np.uint8(0x80)


GATHER_SLACK = 16
"""Bytes past the K of each row of the gather's buffer: :func:`gather_rows` copies a filter row of up to 16
bytes as 16, and the last one's tail lands there."""


@njit(nogil=True)
def gather_rows(x, xr, a, start, rows, pad, ow, per_image, kh, kw, sh, sw, dh, dw, pt, pl):
    """:func:`gather_unsigned` reading the input also as ``xr`` = [N·H, W·C] (the same bytes), one output
    row's pixels at a time.  Where a filter row lies inside the image with no dilation along x (the
    pixels between ``inner0`` and ``inner1`` of an output row), its KW·C bytes are one run of ``xr``'s row,
    copied 16 bytes at a time by :func:`flip16`: a run longer than 16 bytes as 16-byte pieces, the last one
    overlapping the one before (it writes the same bytes again); a shorter run as one 16-byte copy where
    ``a``'s rows leave room for the last tail (:data:`GATHER_SLACK`) — each filter row's copy overwrites
    the previous one's tail, the tail after the last lies past K.  The loop over a row's pixels holds no
    test and no division (a first layer's 3 runs of 9 bytes for MobileNet's 112 x 112 rows: 200 -> 76 ->
    26 µs); the pixels at the image's edges, and every pixel of a dilated row, go through
    :func:`gather_unsigned`."""
    _, h, w, c = x.shape
    run = kw * c
    oh = per_image // ow
    lda = a.shape[1]
    nx = xr.size
    pitch = sw * c                          # bytes between the runs of two neighbouring output pixels
    if dw == 1:
        inner0 = min(-(-pl // sw), ow)      # the first ox whose filter row starts inside the image
        inner1 = max(min((w - kw + pl) // sw + 1, ow), inner0)  # past the last whose row ends inside it
    else:
        inner0 = inner1 = 0
    # 16-byte copies: a run of at most 16 bytes needs room for the tail of the last filter row
    pieces = run >= 16 or (kh - 1) * run + 16 <= lda
    b = start // per_image
    oy = (start % per_image) // ow
    ox = start % ow
    i = 0
    while i < rows:
        n = min(rows - i, ow - ox)          # this output row's pixels in rows start + i …
        lo = min(max(ox, inner0), ox + n)
        hi = max(min(ox + n, inner1), lo)
        for j in range(ox, lo):
            gather_unsigned(x, a[i + j - ox:], start + i + j - ox, 1, pad, ow, per_image, kh, kw, sh, sw, dh, dw,
                            pt, pl)
        if hi > lo:
            r0 = i + lo - ox                # a's row of pixel lo
            for ky in range(kh):
                iy = oy * sh - pt + ky * dh
                k0 = ky * run
                if not 0 <= iy < h:
                    for r in range(r0, r0 + hi - lo):
                        a[r, k0:k0 + run] = pad
                    continue
                s0 = (b * h + iy) * w * c + (lo * sw - pl) * c
                if pieces and s0 + (hi - lo - 1) * pitch + max(run, 16) <= nx:
                    d0 = r0 * lda + k0
                    if run <= 16:
                        for j in range(hi - lo):
                            flip16(a, d0 + j * lda, xr, s0 + j * pitch)
                    else:
                        for j in range(hi - lo):
                            d, s = d0 + j * lda, s0 + j * pitch
                            for t in range(0, run - 16, 16):
                                flip16(a, d + t, xr, s + t)
                            flip16(a, d + run - 16, xr, s + run - 16)
                else:                       # the input's last bytes: no 16 bytes to read from there
                    row = xr[b * h + iy]
                    for j in range(hi - lo):
                        dst = a[r0 + j, k0:k0 + run]    # slices first: with an index like k0 + t numba checks
                        src = row[(lo * sw - pl) * c + j * pitch:]  # for a negative one at every step
                        for t in range(run):
                            dst[t] = np.uint8(np.int32(src[t]) + 128)
        for j in range(hi, ox + n):
            gather_unsigned(x, a[i + j - ox:], start + i + j - ox, 1, pad, ow, per_image, kh, kw, sh, sw, dh, dw,
                            pt, pl)
        i += n
        ox += n
        if ox == ow:
            ox = 0
            oy += 1
            if oy == oh:
                oy = 0
                b += 1


@njit(nogil=True)
def narrow_requantize(bias, mult, left, bound):
    """(narrow, bias as int32, multipliers as int32) for the requantization's fast form.

    ``narrow`` is True when no left shift is used and every |sum + bias| stays below 2^31 (``bound``:
    the largest |sum| the product can make): then sum + bias computed in int32 is exact, and its
    product with an int32 multiplier is a 32 × 32 → 64-bit multiply (``vpmuldq``), which the compiler
    can put in vectors, where int64 × int64 cannot be.  The bits are the same either way."""
    o = bias.shape[0]
    bias32 = np.zeros(o, np.int32)
    mult32 = np.zeros(o, np.int32)
    narrow = True
    for n in range(o):
        if left[n] != 0 or abs(bias[n]) + bound >= 2147483647 or mult[n] > 2147483647 or mult[n] < 0:
            narrow = False
        else:
            bias32[n] = bias[n]
            mult32[n] = mult[n]
    return narrow, bias32, mult32


@njit(nogil=True)
def conv_rows(x, packed, bias, mult, shift, out_zp, lo, hi, half_up, out, pad, oh, ow, kh, kw, sh, sw, dh, dw,
              pt, pl, m0, m1):
    """Output rows m0..m1 (pixels in N·OH·OW order) of an int8 convolution into ``out`` int8 [M, O].

    For every chunk of rows: write the rows of unsigned inputs (im2col: tap by tap, C bytes each;
    ``pad`` = input_zero_point + 128 outside the image), then for every 4-row × 64-channel block
    call :func:`tile` and requantize the block at once: ``bias`` is :func:`folded_bias`, then
    MultiplyByQuantizedMultiplier with ``mult`` / ``shift`` (ties of the final rounding shift up
    when ``half_up``, else away from zero), + ``out_zp``, clamped to [lo, hi].
    """
    nblocks, kg, _ = packed.shape
    o = out.shape[1]
    left, right, mask, nudge = shift_parts(shift)
    a = np.zeros((CHUNK, 4 * kg), np.uint8)
    acc = np.empty((ROWS, 16 * BLOCKS), np.int32)
    per_image = oh * ow
    for start in range(m0, m1, CHUNK):
        rows = min(CHUNK, m1 - start)
        gather_unsigned(x, a, start, rows, pad, ow, per_image, kh, kw, sh, sw, dh, dw, pt, pl)
        for nb0 in range(0, nblocks, BLOCKS):
            blocks = min(BLOCKS, nblocks - nb0)
            first = 16 * nb0
            end = min(first + 16 * blocks, o)
            bias_, mult_, left_, right_ = bias[first:end], mult[first:end], left[first:end], right[first:end]
            mask_, nudge_ = mask[first:end], nudge[first:end]
            for r0 in range(0, rows, ROWS):
                count = min(ROWS, rows - r0)
                tile(a, r0, packed, nb0, kg, acc, count, blocks)
                for r in range(count):
                    sums = acc[r]
                    dst = out[start + r0 + r, first:end]
                    requantize_wide(sums, dst, bias_, mult_, left_, right_, mask_, nudge_, out_zp, lo, hi,
                                    half_up)


@njit(nogil=True)
def conv_rows_amx(x, packed, bias, mult, shift, out_zp, lo, hi, half_up, out, pad, oh, ow, kh, kw, sh, sw, dh,
                  dw, pt, pl, cfg, m0, m1):
    """:func:`conv_rows` with the 16-row AMX block :func:`amx_tile` (``cfg``: :func:`amx_config`) in place of
    the 4-row VNNI block; ``packed`` with its k-groups a multiple of 16 (:func:`pack_filter` pads them)."""
    nblocks, kg, _ = packed.shape
    o = out.shape[1]
    left, right, mask, nudge = shift_parts(shift)
    a = np.zeros((CHUNK, 4 * kg), np.uint8)
    acc = np.empty((AMX_ROWS, 16 * BLOCKS), np.int32)
    narrow, bias32, mult32 = narrow_requantize(bias, mult, left, 255 * 128 * 4 * kg)
    amx_begin(cfg)
    per_image = oh * ow
    for start in range(m0, m1, CHUNK):
        rows = min(CHUNK, m1 - start)
        gather_unsigned(x, a, start, rows, pad, ow, per_image, kh, kw, sh, sw, dh, dw, pt, pl)
        for nb0 in range(0, nblocks, BLOCKS):
            blocks = min(BLOCKS, nblocks - nb0)
            first = 16 * nb0
            end = min(first + 16 * blocks, o)
            bias_, mult_, left_, right_ = bias[first:end], mult[first:end], left[first:end], right[first:end]
            mask_, nudge_ = mask[first:end], nudge[first:end]
            for r0 in range(0, rows, AMX_ROWS):
                count = min(AMX_ROWS, rows - r0)
                amx_tile(cfg, a, r0, packed, nb0, kg, acc, blocks)
                for r in range(count):
                    sums = acc[r]
                    dst = out[start + r0 + r, first:end]
                    if narrow and half_up:
                        b32, m32 = bias32[first:end], mult32[first:end]
                        for j in range(end - first):
                            v = np.int64(np.int32(sums[j] + b32[j])) * np.int64(m32[j])
                            v = ((v + 1073741824) >> 31) + nudge_[j]
                            dst[j] = min(max((v >> right_[j]) + out_zp, lo), hi)
                    else:
                        requantize_wide(sums, dst, bias_, mult_, left_, right_, mask_, nudge_, out_zp, lo, hi,
                                        half_up)

    amx_end()


# ----------------------------------------------------------------------------------------------
# the micro-kernel with its requantization: int8 out of the registers


class _Epilogue:
    """IR of the requantization of 16-lane blocks of int32 sums (:func:`tile_rq`, :func:`requantize_block`,
    :func:`depthwise_rq`): + bias, × multiplier (32 × 32 → 64 bits: ``vpmuldq`` on the even channels and
    on the odd ones), the rounding shift (ties up, or away from zero), + zero point, clamp, int8
    stores; per-channel values from :func:`requant_tables`.

    A kernel emits its stores once per variant (:meth:`variants`): the rounding ``mode`` of the tables
    (``MODE_*``) and whether the clamp is int8's own range (``sat``: the narrowing store saturates, no
    min / max), so each loop carries one rounding and no test per store."""

    def __init__(self, context, builder, q32, q32_ty, q64, q64_ty, scalars, scalars_ty, out, out_ty, o0):
        from llvmlite import ir

        self.ir, self.builder = ir, builder
        i32, i64 = ir.IntType(32), ir.IntType(64)
        self.i8, self.i32, self.i64 = ir.IntType(8), i32, i64
        self.v16, self.v8q, self.v16b = ir.VectorType(i32, 16), ir.VectorType(i64, 8), ir.VectorType(self.i8, 16)
        q32a = context.make_array(q32_ty)(context, builder, q32)
        q64a = context.make_array(q64_ty)(context, builder, q64)
        self.n16 = builder.extract_value(q32a.shape, 1)
        self.q32d, self.q64d = builder.ptrtoint(q32a.data, i64), builder.ptrtoint(q64a.data, i64)
        sd = builder.ptrtoint(context.make_array(scalars_ty)(context, builder, scalars).data, i64)
        out_zp, lo, hi, self.mode, self.width = (
            builder.load(builder.inttoptr(builder.add(sd, ir.Constant(i64, 8 * i)), i64.as_pointer()))
            for i in range(5))
        out_arr = context.make_array(out_ty)(context, builder, out)
        self.ldo = builder.extract_value(out_arr.shape, 1)
        self.out0 = builder.add(builder.ptrtoint(out_arr.data, i64), builder.mul(o0, self.ldo))
        self.zp = self.splat(builder.trunc(out_zp, i32), self.v16)
        self.lo_s, self.hi_s = lo, hi
        self.lo, self.hi = self.splat(builder.trunc(lo, i32), self.v16), self.splat(builder.trunc(hi, i32), self.v16)

    def const(self, v, ty=None):
        return self.ir.Constant(ty or self.i64, v)

    def splat(self, v, vty):
        ir, b = self.ir, self.builder
        vec = b.insert_element(ir.Constant(vty, ir.Undefined), v, self.const(0, self.i32))
        return b.shuffle_vector(vec, ir.Constant(vty, ir.Undefined),
                                ir.Constant(ir.VectorType(self.i32, vty.count), None))

    def load_vec(self, address, vty):
        return self.builder.load(self.builder.inttoptr(address, vty.as_pointer()), align=1)

    def variants(self, emit):
        """``emit(mode, sat)`` once per variant, each in its own branch of a switch on the tables' mode
        and on the clamp (the mixed rounding with min / max, which is right for any tables, is the default)."""
        b, c = self.builder, self.const
        sat = b.zext(b.and_(b.icmp_signed("==", self.lo_s, c(-128)), b.icmp_signed("==", self.hi_s, c(127))),
                     self.i64)
        key = b.add(b.mul(self.mode, c(2)), sat)
        end = b.append_basic_block("epilogue_end")
        default = b.append_basic_block("epilogue_any")
        switch = b.switch(key, default)
        for mode in (MODE_AWAY, MODE_UP, MODE_UP_FAST, MODE_MIXED):
            for sat_ in (0, 1):
                if (mode, sat_) == (MODE_MIXED, 0):
                    continue
                block = b.append_basic_block(f"epilogue_{mode}_{sat_}")
                switch.add_case(c(2 * mode + sat_), block)
                b.position_at_end(block)
                emit(mode, sat_)
                b.branch(end)
        b.position_at_end(default)
        emit(MODE_MIXED, 0)
        b.branch(end)
        b.position_at_end(end)

    def channels(self, ch):
        """The per-channel vectors of the 16 channels from ``ch`` (an i64 value), and how many are real."""
        b, c = self.builder, self.const
        q32 = [self.load_vec(b.add(self.q32d, b.mul(b.add(b.mul(self.n16, c(i)), ch), c(4))), self.v16)
               for i in range(6)]
        # the 64-bit rows 4..6 hold the even channels, then the odd ones: the lanes 0, 2, ... of a block
        # from ch are channels ch, ch + 2, ..., which are the odd ones when ch is odd
        half, odd, low = b.udiv(self.n16, c(2)), b.and_(ch, c(1)), b.lshr(ch, c(1))
        first = b.select(b.icmp_signed("!=", odd, c(0)), b.add(half, low), low)
        second = b.select(b.icmp_signed("!=", odd, c(0)), b.add(low, c(1)), b.add(half, low))
        pairs = [tuple(self.load_vec(b.add(self.q64d, b.mul(b.add(b.mul(self.n16, c(i)), at), c(8))), self.v8q)
                       for at in (first, second)) for i in (4, 5, 6)]
        left = b.sub(self.width, ch)
        valid = b.select(b.icmp_signed("<", left, c(16)), left, c(16))
        up = b.icmp_signed("!=", q32[2], self.ir.Constant(self.v16, None))
        mult = b.bitcast(q32[1], self.v8q)
        thirty_two = self.splat(c(32), self.v8q)
        return {"bias": q32[0], "mult": b.ashr(b.shl(mult, thirty_two), thirty_two),   # even channels, odd ones
                "mult_odd": b.ashr(mult, thirty_two), "shr32": q32[3], "right": q32[4], "mask": q32[5], "rnd": pairs[0],
                "shr": pairs[1], "rnd_fast": pairs[2], "valid": valid, "up": up}

    def _pick(self, even, odd, high):
        """16 int32 from the 64-bit lanes of ``even`` (channels 0, 2, ...) and ``odd``: their low or high halves."""
        b, ir = self.builder, self.ir
        order = [2 * (j // 2) + (16 if j % 2 else 0) + (1 if high else 0) for j in range(16)]
        return b.shuffle_vector(b.bitcast(even, self.v16), b.bitcast(odd, self.v16),
                                ir.Constant(ir.VectorType(self.i32, 16), order))

    def store(self, sums, k, row, ch, mode, sat):
        """Requantize the 16 sums ``sums`` of channels ``k`` (from :meth:`channels`) and store them in
        output row ``row`` (relative to o0), channels ch … ch + valid, as variant (``mode``, ``sat``)."""
        from numba.core import cgutils

        b, c, v16, v8q = self.builder, self.const, self.v16, self.v8q
        s = b.bitcast(b.add(sums, k["bias"]), v8q)
        thirty_two = self.splat(c(32), v8q)
        # 64-bit products of the low 32 bits of each lane, sign-extended (vpmuldq's operands): the even
        # channels, then the odd ones shifted down
        pe = b.mul(b.ashr(b.shl(s, thirty_two), thirty_two), k["mult"])
        po = b.mul(b.ashr(s, thirty_two), k["mult_odd"])
        if mode == MODE_UP_FAST:    # (p + rnd + zp·2^shr) >> shr: the high halves, then 0..22 bits more
            q = b.ashr(self._pick(b.add(pe, k["rnd_fast"][0]), b.add(po, k["rnd_fast"][1]), True), k["shr32"])
        else:
            if mode != MODE_AWAY:   # one rounding: (p + 2^30 + nudge·2^31) >> (31 + right)
                q_up = self._pick(b.ashr(b.add(pe, k["rnd"][0]), k["shr"][0]),
                                  b.ashr(b.add(po, k["rnd"][1]), k["shr"][1]), False)
            if mode != MODE_UP:     # v = (p + 2^30) >> 31 fits 32 bits; then v / 2^right, ties away from zero
                half, thirty_one = self.splat(c(1 << 30), v8q), self.splat(c(31), v8q)
                v = self._pick(b.ashr(b.add(pe, half), thirty_one), b.ashr(b.add(po, half), thirty_one), False)
                mask = k["mask"]
                negative = b.zext(b.icmp_signed("<", v, self.ir.Constant(v16, None)), v16)
                threshold = b.add(b.ashr(mask, self.splat(c(1, self.i32), v16)), negative)
                more = b.zext(b.icmp_signed(">", b.and_(v, mask), threshold), v16)
                q_away = b.add(b.ashr(v, k["right"]), more)
            q = q_up if mode == MODE_UP else q_away if mode == MODE_AWAY else b.select(k["up"], q_up, q_away)
            q = b.add(q, self.zp)
        lo, hi = (self.splat(c(-128, self.i32), v16), self.splat(c(127, self.i32), v16)) if sat else (self.lo, self.hi)
        q = b.select(b.icmp_signed("<", q, lo), lo, q)
        q = b.select(b.icmp_signed(">", q, hi), hi, q)
        b8 = b.trunc(q, self.v16b)
        at = b.add(b.add(self.out0, b.mul(row, self.ldo)), ch)
        valid = k["valid"]
        with b.if_else(b.icmp_signed("==", valid, c(16)), likely=True) as (then, otherwise):
            with then:
                b.store(b8, b.inttoptr(at, self.v16b.as_pointer()), align=1)
            with otherwise:
                with cgutils.for_range(b, valid) as tail:
                    j = tail.index
                    b.store(b.extract_element(b8, j), b.inttoptr(b.add(at, j), self.i8.as_pointer()))


def _is_c(t, ndim, *dtypes):
    from numba import types

    return isinstance(t, types.Array) and t.ndim == ndim and t.layout == "C" and t.dtype in dtypes


def _build_tile_rq(nrows: int = ROWS, nblocks: int = BLOCKS, chains: int = 1):
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def tile_rq_native(typingctx, a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars,
                     pf):
        ok = (_is_c(a, 2, types.uint8, types.int8) and _is_c(packed, 3, types.int8) and _is_c(out, 2, types.int8)
              and _is_c(q32, 2, types.int32) and _is_c(q64, 2, types.int64) and _is_c(scalars, 1, types.int64)
              and isinstance(pf, types.Integer))
        if not ok:
            return None
        sig = types.void(a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars, pf)

        def codegen(context, builder, signature, args):
            i32, i64 = ir.IntType(32), ir.IntType(64)
            v16 = ir.VectorType(i32, 16)
            tys = signature.args
            (a_v, lda_v, flip_v, r0_v, p_v, nb0_v, kg_v, o_v, o0_v, rows_v, blocks_v, q32_v, q64_v,
             s_v, pf_v) = args

            def as_i64(v, ty):
                return context.cast(builder, v, ty, types.int64)

            def data(v, ty):
                return builder.ptrtoint(context.make_array(ty)(context, builder, v).data, i64)

            lda, r0_, nb0_, kg_ = (as_i64(lda_v, tys[1]), as_i64(r0_v, tys[3]), as_i64(nb0_v, tys[5]),
                                   as_i64(kg_v, tys[6]))
            rows_, blocks_ = as_i64(rows_v, tys[9]), as_i64(blocks_v, tys[10])
            pf_ = as_i64(pf_v, tys[14])
            ep = _Epilogue(context, builder, q32_v, tys[11], q64_v, tys[12], s_v, tys[13], o_v, tys[7],
                           as_i64(o0_v, tys[8]))
            const = ep.const
            flip = builder.trunc(as_i64(flip_v, tys[2]), i32)
            wstride = builder.mul(kg_, const(64))
            a0 = builder.add(data(a_v, tys[0]), builder.mul(r0_, lda))
            w0 = builder.add(data(p_v, tys[4]), builder.mul(nb0_, wstride))
            one = const(1)

            def clamped(i, count):        # rows / blocks past the end re-read the last one (no stores)
                c = const(i)
                return builder.select(builder.icmp_signed("<", c, count), c, builder.sub(count, one))

            arow = [builder.add(a0, builder.mul(clamped(r, rows_), lda)) for r in range(nrows)]
            cstride, gstride = _group_strides(context, builder, p_v, tys[4], nb0_)
            wcol = [builder.add(w0, builder.mul(clamped(c, blocks_), cstride)) for c in range(nblocks)]
            dp = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v16, [v16, v16, v16]),
                                                "llvm.x86.avx512.vpdpbusd.512")
            # `chains` sets of sums, each over every chains-th group of k: one row's few sums would each
            # wait for its last vpdpbusd (a chain of latencies) where the whole block's keep the unit busy
            accs = [[[cgutils.alloca_once_value(builder, ir.Constant(v16, None)) for _ in range(nblocks)]
                     for _ in range(nrows)] for _ in range(chains)]

            i8p = ir.IntType(8).as_pointer()
            prefetch = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0i8")
            pf_block = builder.add(data(p_v, tys[4]), builder.mul(pf_, wstride))

            def step(g, acc, fetch):
                if fetch:               # one line of block pf a step, the line this step reads of its own
                    builder.call(prefetch, [builder.inttoptr(builder.add(pf_block, builder.mul(g, const(64))), i8p),
                                            ir.Constant(i32, 0), ir.Constant(i32, PREFETCH_LOCALITY),
                                            ir.Constant(i32, 1)])
                ws = [ep.load_vec(builder.add(wcol[c], builder.mul(g, gstride)), v16) for c in range(nblocks)]
                for r in range(nrows):
                    four = builder.load(builder.inttoptr(builder.add(arow[r], builder.mul(g, const(4))),
                                                         i32.as_pointer()), align=1)
                    vec = ep.splat(builder.xor(four, flip), v16)
                    for c in range(nblocks):
                        builder.store(builder.call(dp, [builder.load(acc[r][c]), vec, ws[c]]), acc[r][c])

            rounds = builder.udiv(kg_, const(chains))

            def walk(fetch):
                with cgutils.for_range(builder, rounds) as loop:
                    for j in range(chains):
                        step(builder.add(builder.mul(loop.index, const(chains)), const(j)), accs[j], fetch)
                with cgutils.for_range_slice(builder, builder.mul(rounds, const(chains)), kg_, const(1)) as (g, _):
                    step(g, accs[0], fetch)

            # two copies of the loop, with a block to prefetch (pf >= 0) and without: no test inside either
            with builder.if_else(builder.icmp_signed(">=", pf_, const(0))) as (fetching, plain):
                with fetching:
                    walk(True)
                with plain:
                    walk(False)
            sums = [[builder.load(accs[0][r][c]) for c in range(nblocks)] for r in range(nrows)]
            for j in range(1, chains):
                sums = [[builder.add(sums[r][c], builder.load(accs[j][r][c])) for c in range(nblocks)]
                        for r in range(nrows)]

            def emit(mode, sat):
                for c in range(nblocks):
                    with builder.if_then(builder.icmp_signed("<", const(c), blocks_), likely=True):
                        ch = builder.mul(builder.add(nb0_, const(c)), const(16))     # first channel of the block
                        chans = ep.channels(ch)
                        for r in range(nrows):
                            with builder.if_then(builder.icmp_signed("<", const(r), rows_), likely=True):
                                ep.store(sums[r][c], chans, const(r), ch, mode, sat)

            ep.variants(emit)
            return context.get_dummy_value()

        return sig, codegen

    return tile_rq_native


def _build_requantize_block():
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def requantize_block_native(typingctx, acc, acol, rows, nb0, blocks, out, o0, q32, q64, scalars):
        ok = (_is_c(acc, 2, types.int32, types.float32) and _is_c(out, 2, types.int8) and _is_c(q32, 2, types.int32)
              and _is_c(q64, 2, types.int64) and _is_c(scalars, 1, types.int64))
        if not ok:
            return None
        sig = types.void(acc, acol, rows, nb0, blocks, out, o0, q32, q64, scalars)
        is_float = acc.dtype == types.float32

        def codegen(context, builder, signature, args):
            tys = signature.args
            acc_v, acol_v, rows_v, nb0_v, blocks_v, o_v, o0_v, q32_v, q64_v, s_v = args

            def as_i64(v, ty):
                return context.cast(builder, v, ty, types.int64)

            ep = _Epilogue(context, builder, q32_v, tys[7], q64_v, tys[8], s_v, tys[9], o_v, tys[5],
                           as_i64(o0_v, tys[6]))
            const, i64 = ep.const, ep.i64
            acc_arr = context.make_array(tys[0])(context, builder, acc_v)
            lda = builder.mul(builder.extract_value(acc_arr.shape, 1), const(4))
            acc0 = builder.add(builder.ptrtoint(acc_arr.data, i64), builder.mul(as_i64(acol_v, tys[1]), const(4)))
            rows_, nb0_, blocks_ = as_i64(rows_v, tys[2]), as_i64(nb0_v, tys[3]), as_i64(blocks_v, tys[4])
            f16 = ep.ir.VectorType(ep.ir.FloatType(), 16)

            def emit(mode, sat):
                for c in range(BLOCKS):
                    with builder.if_then(builder.icmp_signed("<", const(c), blocks_), likely=True):
                        ch = builder.mul(builder.add(nb0_, const(c)), const(16))
                        chans = ep.channels(ch)
                        with cgutils.for_range(builder, rows_) as loop:
                            r = loop.index
                            at = builder.add(acc0, builder.add(builder.mul(r, lda), const(64 * c)))
                            if is_float:        # float32 sums that hold integers exactly
                                sums = builder.fptosi(ep.load_vec(at, f16), ep.v16)
                            else:
                                sums = ep.load_vec(at, ep.v16)
                            ep.store(sums, chans, r, ch, mode, sat)

            ep.variants(emit)
            return context.get_dummy_value()

        return sig, codegen

    return requantize_block_native


@native(_build_requantize_block)
def requantize_block(acc, acol, rows, nb0, blocks, out, o0, q32, q64, scalars):
    """Rows 0..rows of the sums ``acc`` (int32, or float32 holding integers; ``acol``: the flat element
    offset in ``acc`` of row 0's channel 16·nb0), channels 16·nb0 … 16·(nb0 + blocks) requantized into
    ``out`` rows o0..o0+rows as :func:`tile_rq`'s epilogue does (compiled: the same IR); here, numpy."""
    o = int(scalars[4])
    first, end = 16 * nb0, min(16 * (nb0 + blocks), o)
    flat, lda = acc.reshape(-1), acc.shape[1]
    sums = np.stack([flat[acol + r * lda:acol + r * lda + end - first] for r in range(rows)]).astype(np.int64)
    out[o0:o0 + rows, first:end] = _requantize_np(sums, first, end, q32, q64, scalars)


def _build_depthwise_rq():
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def depthwise_rq_native(typingctx, x, pix0, pstep, tstep, rstep, count, w, wz, out, o0, q32, q64, scalars):
        ok = (isinstance(x, types.Array) and x.layout == "C" and x.dtype == types.int8
              and _is_c(w, 2, types.float32) and _is_c(wz, 1, types.float32) and _is_c(out, 2, types.int8)
              and _is_c(q32, 2, types.int32) and _is_c(q64, 2, types.int64) and _is_c(scalars, 1, types.int64))
        if not ok:
            return None
        sig = types.void(x, pix0, pstep, tstep, rstep, count, w, wz, out, o0, q32, q64, scalars)

        def codegen(context, builder, signature, args):
            tys = signature.args
            x_v, pix0_v, pstep_v, tstep_v, rstep_v, count_v, w_v, wz_v, o_v, o0_v, q32_v, q64_v, s_v = args

            def as_i64(k):
                return context.cast(builder, args[k], tys[k], types.int64)

            def data(k):
                return builder.ptrtoint(context.make_array(tys[k])(context, builder, args[k]).data, ir.IntType(64))

            ep = _Epilogue(context, builder, q32_v, tys[10], q64_v, tys[11], s_v, tys[12], o_v, tys[8], as_i64(9))
            const, v16 = ep.const, ep.v16
            f32 = ir.FloatType()
            f16 = ir.VectorType(f32, 16)
            fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(f16, [f16, f16, f16]),
                                                 "llvm.fma.v16f32")
            x0 = builder.add(data(0), as_i64(1))
            pstep, tstep, rstep, count = as_i64(2), as_i64(3), as_i64(4), as_i64(5)
            w0, wz0 = data(6), data(7)
            c = ep.ldo                                   # channels: the output's row length
            taps = [builder.add(builder.mul(const(ky), rstep), builder.mul(const(kx), tstep))
                    for ky in range(3) for kx in range(3)]
            blocks = builder.udiv(builder.add(c, const(15)), const(16))

            def emit(mode, sat):
                with cgutils.for_range(builder, blocks) as outer:
                    # the last block ends at channel C (it overlaps the one before when C % 16 != 0: the same
                    # values are stored twice), so no load or store runs past a pixel's channels
                    ch = builder.mul(outer.index, const(16))
                    past = builder.icmp_signed(">", builder.add(ch, const(16)), c)
                    ch = builder.select(past, builder.sub(c, const(16)), ch)
                    ws = [ep.load_vec(builder.add(w0, builder.mul(builder.add(builder.mul(const(t), c), ch), const(4))),
                                      f16) for t in range(9)]
                    bias = ep.load_vec(builder.add(wz0, builder.mul(ch, const(4))), f16)
                    chans = ep.channels(ch)
                    def pixels(first, n):
                        # two chains of multiply-adds per pixel (even and odd taps), n pixels side by side: the
                        # chains are independent, so their latencies overlap
                        sums = []
                        for j in range(n):
                            p = builder.add(first, const(j))
                            base = builder.add(builder.add(x0, builder.mul(p, pstep)), ch)
                            acc = [bias, ir.Constant(f16, None)]
                            for t in range(9):
                                xv = ep.load_vec(builder.add(base, taps[t]), ep.v16b)
                                acc[t % 2] = builder.call(fma, [builder.sitofp(builder.sext(xv, v16), f16), ws[t],
                                                                acc[t % 2]])
                            sums.append((p, builder.fadd(acc[0], acc[1])))
                        for p, total in sums:
                            ep.store(builder.fptosi(total, v16), chans, p, ch, mode, sat)

                    pairs = builder.udiv(count, const(2))
                    with cgutils.for_range(builder, pairs) as inner:
                        pixels(builder.mul(inner.index, const(2)), 2)
                    with builder.if_then(builder.icmp_signed("!=", builder.mul(pairs, const(2)), count)):
                        pixels(builder.sub(count, const(1)), 1)

            ep.variants(emit)
            return context.get_dummy_value()

        return sig, codegen

    return depthwise_rq_native


@native(_build_depthwise_rq)
def depthwise_rq(x, pix0, pstep, tstep, rstep, count, w, wz, out, o0, q32, q64, scalars):
    """``count`` output pixels of a 3x3 depthwise convolution (depth multiplier 1, C ≥ 16 channels) whose nine
    taps all lie inside the image, requantized as :func:`tile_rq`'s epilogue does, into ``out`` [*, C] rows
    o0 … o0 + count.

    Byte offsets into ``x`` (int8, C-contiguous): ``pix0`` of the first pixel's top-left tap, ``pstep`` from
    one output pixel to the next, ``tstep`` from a tap to the next in a filter row, ``rstep`` from a filter
    row to the next.  ``w`` float32 [9, C], ``wz`` float32 [C] (−input_zero_point·Σ w: the sums start
    there, so no subtraction per tap).  Compiled: 16 channels at a time, the nine taps as float32 fused
    multiply-adds (exact: every value is an integer below 2^24), then the epilogue in registers; here, numpy.
    """
    c = out.shape[1]
    flat = x.reshape(-1).astype(np.int64)
    offs = [ky * rstep + kx * tstep for ky in range(3) for kx in range(3)]
    for p in range(count):
        base = pix0 + p * pstep
        sums = wz.astype(np.int64) + sum(flat[base + o:base + o + c] * w[t].astype(np.int64)
                                         for t, o in enumerate(offs))
        out[o0 + p] = _requantize_np(sums[None, :], 0, c, q32, q64, scalars)[0]


def _requantize_np(sums, first, end, q32, q64, scalars):
    """The epilogue's arithmetic in numpy (the Python twins of :func:`tile_rq` and :func:`requantize_block`)."""
    p = (sums + q32[0, first:end]) * q32[1, first:end].astype(np.int64)
    up = (p + q64[0, first:end]) >> q64[1, first:end]
    v = (p + (1 << 30)) >> 31
    mask = q64[3, first:end]
    away = (v >> q64[2, first:end]) + ((v & mask) > (mask >> 1) + (v < 0))
    mode = scalars[3]
    q = up if mode in (MODE_UP, MODE_UP_FAST) else away if mode == MODE_AWAY else np.where(
        q32[2, first:end] != 0, up, away)
    return np.clip(q + scalars[0], scalars[1], scalars[2])


@native(_build_tile_rq)
def tile_rq(a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars, pf=-1):
    """:func:`tile` with the requantization in its epilogue: int8 straight into ``out`` rows o0..o0+rows,
    channels 16·nb0 … 16·(nb0 + blocks), none at or past ``scalars[4]`` (the output's channel count).

    ``a`` holds the product's rows of ``lda`` bytes from row r0, each 4-byte group XOR ``flip`` (0 for
    unsigned rows; 0x80808080 turns int8 bytes into the unsigned x + 128).  ``q32``, ``q64`` and
    ``scalars`` come from :func:`requant_tables`: per channel (padded to 16) the folded bias, the
    multiplier, the rounding term and the shift of ties-up rounding, and the shift and mask of
    ties-away rounding; (output zero point, lo, hi, half_up, channels).  Only for narrow
    requantizations (:func:`narrow_requantize`): sum + bias is an exact int32.  ``pf`` ≥ 0: while it walks
    k, the block also asks for the packed filter's bytes from 64·kg·pf on, one line a step (a software
    prefetch; the sums do not change): see :func:`tiles_rq`.  Compiled: the ``vpdpbusd``
    loop, then each 16-lane block of sums requantized in registers; here, numpy (``pf`` has nothing to do).
    """
    o = int(scalars[4])
    x = a.reshape(-1)[r0 * lda:(r0 + rows) * lda].reshape(rows, lda)[:, :4 * kg].view(np.uint8)
    x = x ^ np.uint8(int(flip) & 0x80)
    x = x.astype(np.int64)
    for c in range(blocks):
        first = 16 * (nb0 + c)
        end = min(first + 16, o)
        if end <= first:
            continue
        w = block_of(packed, nb0 + c).reshape(kg, 16, 4).transpose(1, 0, 2).reshape(16, 4 * kg).astype(np.int64)
        out[o0:o0 + rows, first:end] = _requantize_np((x @ w.T)[:, :end - first], first, end, q32, q64, scalars)


def _build_tile_rq_tall():
    return _build_tile_rq(TALL_ROWS, 2)


@native(_build_tile_rq_tall)
def tile_rq_tall(a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars, pf=-1):
    """:func:`tile_rq` on a block of up to ``TALL_ROWS`` rows × 2 channel blocks (16 sums in registers as
    well): for products with at most 32 output channels (a network's first layer), where the 4-row ×
    4-block one would spend half its ``vpdpbusd`` on blocks past the last.  Here, the same numpy."""
    tile_rq.py_func(a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars)


def _build_tile_rq_row():
    return _build_tile_rq(1, BLOCKS, 2)


@native(_build_tile_rq_row)
def tile_rq_row(a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars, pf=-1):
    """:func:`tile_rq` on one row × up to 4 channel blocks, its sums in two sets (even and odd groups of k,
    added at the end) so that they do not wait on each other: the rows left after the last whole block of
    rows.  The block of ``ROWS`` rows runs every row it has, the missing ones on the last row's bytes (stores
    skipped), so a 7x7 layer's 49th row, or a fully connected layer's only one, cost a whole block; one row
    costs about half of it where the filter comes from the L2 cache (MobileNet v1's 7x7x1024 -> 1024: 49 rows
    took 18.6 µs more than 48, now 10), about 70 % where it comes from memory (1 x 1024 -> 1000: 23 -> 16 µs).
    Here, the same numpy."""
    tile_rq.py_func(a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars)


def _build_tile_rq_tall_row():
    return _build_tile_rq(1, 2, 4)


@native(_build_tile_rq_tall_row)
def tile_rq_tall_row(a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars, pf=-1):
    """:func:`tile_rq_row` with up to 2 channel blocks and 4 sets of sums, after :func:`tile_rq_tall`'s rows.
    Here, numpy."""
    tile_rq.py_func(a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars)


FLIP = 0x80808080    # XOR on 4 int8 bytes: the unsigned x + 128 of each


MODE_AWAY, MODE_UP, MODE_MIXED, MODE_UP_FAST = 0, 1, 2, 3
"""How a node's final shift rounds (``scalars[3]`` of :func:`requant_tables`): ties away from zero in
every channel; up in every channel; up in some; up in every channel with every shift, after the 32 × 32
→ 64-bit product, between 32 and 54 bits — then the output zero point rides in the rounding term
(adding zp·2^shift to the dividend moves the floor of the quotient by exactly zp, and stays far from
int64's end), and the high halves of the products need a 32-bit shift of 0..22 bits only."""


def requant_tables(bias, mult, shift, out_zp: int, lo: int, hi: int, half_up: bool, n16: int, bound: int,
                   n_up: int | None = None):
    """(q32, q64, scalars) of :func:`tile_rq` / :func:`requantize_block` for channels padded to ``n16``, or None
    where the requantization is not narrow (a left shift, or sum + bias could leave int32 for sums up to
    ``bound``: then the general :func:`requantize_wide` runs).  Made once, at prepare.

    The final shift's ties go up in every channel (``half_up``) or none; with ``n_up`` given, up in the
    channels below it and away from zero in the others (litert-x86's depthwise vector loop and scalar tail).
    q32: [bias, multiplier, ties-up flag, shift of the fast form − 32, shift and mask of ties-away rounding];
    q64: [rounding term and shift of ties-up rounding (the two rounding steps in one:
    ((p + 2^30) >> 31 + nudge) >> right = (p + 2^30 + nudge·2^31) >> (31 + right)), shift and mask of
    ties-away rounding, then three rows with the even channels first and the odd ones after (as the
    even and odd lanes of the vector multiply take them): the rounding term, its shift, and the
    rounding term plus out_zp·2^shift of the fast form]; scalars: (output zero point, lo, hi, mode
    (``MODE_*``), channels)."""
    bias, mult = np.asarray(bias, np.int64), np.asarray(mult, np.int64)
    shift = np.broadcast_to(np.asarray(shift, np.int64), bias.shape)
    mult = np.broadcast_to(mult, bias.shape)
    if (shift > 0).any() or (shift < -31).any() or (np.abs(bias) + bound >= 2 ** 31 - 1).any() or (
            mult < 0).any() or (mult > 2 ** 31 - 1).any() or n16 % 2:
        return None
    o = bias.shape[0]
    n_up = (o if half_up else 0) if n_up is None else max(0, min(int(n_up), o))
    right = -shift
    mask = (np.int64(1) << right) - 1
    nudge = mask - (mask >> 1)
    q32 = np.zeros((6, n16), np.int32)
    q64 = np.zeros((7, n16), np.int64)
    q64[1] = 31
    q32[0, :o], q32[1, :o], q32[2, :n_up] = bias, mult, 1
    q64[0, :o] = (1 << 30) + (nudge << 31)
    q64[1, :o] = 31 + right
    q64[2, :o], q64[3, :o] = right, mask
    q32[4, :o], q32[5, :o] = right, mask
    fast = n_up == o and bool(((q64[1, :o] >= 32) & (q64[1, :o] <= 54)).all())
    if fast:
        q32[3, :o] = q64[1, :o] - 32
    rnd_fast = q64[0] + (np.int64(out_zp) << q64[1]) if fast else q64[0]
    for row, values in ((4, q64[0]), (5, q64[1]), (6, rnd_fast)):
        q64[row] = np.concatenate([values[0::2], values[1::2]])
    mode = MODE_UP_FAST if fast else MODE_UP if n_up == o else MODE_AWAY if n_up == 0 else MODE_MIXED
    return q32, q64, np.array([out_zp, lo, hi, mode, o], np.int64)


ROW_TILES_BELOW = (2, 5)
"""The rows left after the last whole block that run as one-row blocks rather than as one more block of
``ROWS`` (``TALL_ROWS``) rows: fewer than 2 (5).  One row of 4 channel blocks cost about half the whole
block, measured (its filter comes from the cache or from memory once a row, so two rows cost as much as the
block); one row of 2 blocks (a first layer, whose small filter stays in the L1 cache) does an eighth of the
8-row block's ``vpdpbusd``, its 4 sets of sums keeping them from waiting on each other."""


@njit(nogil=True)
def tiles_rq(a, lda, flip, r0, packed, nb0, kg, out, o0, rows, blocks, q32, q64, scalars, tall, next_nb, next_blocks):
    """Rows r0 … r0 + rows of ``a`` (output rows from o0), channel blocks nb0 … nb0 + blocks, by the
    micro-kernel's blocks of rows (:func:`tile_rq`, or :func:`tile_rq_tall` where ``tall``); a short
    remainder row by row (:func:`tile_rq_row`, :func:`tile_rq_tall_row`: :data:`ROW_TILES_BELOW`).
    The first ``next_blocks`` blocks of rows each prefetch a block's worth (64·kg bytes) of the group the
    caller runs next, the group of blocks next_nb … next_nb + next_blocks − 1 (see :func:`conv_rq`)."""
    step = TALL_ROWS if tall else ROWS
    whole = rows - rows % step
    left = rows - whole
    if 0 < left < ROW_TILES_BELOW[1 if tall else 0]:
        rows = whole
    else:
        left = 0
    t = 0
    for r in range(0, rows, step):
        pf = next_nb + t if t < next_blocks else -1
        t += 1
        if tall:
            tile_rq_tall(a, lda, flip, r0 + r, packed, nb0, kg, out, o0 + r, min(step, rows - r), blocks, q32, q64,
                         scalars, pf)
        else:
            tile_rq(a, lda, flip, r0 + r, packed, nb0, kg, out, o0 + r, min(step, rows - r), blocks, q32, q64,
                    scalars, pf)
    for r in range(rows, rows + left):
        pf = next_nb + t if t < next_blocks else -1
        t += 1
        if tall:
            tile_rq_tall_row(a, lda, flip, r0 + r, packed, nb0, kg, out, o0 + r, 1, blocks, q32, q64, scalars, pf)
        else:
            tile_rq_row(a, lda, flip, r0 + r, packed, nb0, kg, out, o0 + r, 1, blocks, q32, q64, scalars, pf)


@njit(nogil=True)
def cut_ranges(by_groups, start, end, rows, nblocks):
    """(m0, m1, g0, g1): the output rows and channel groups one call of :func:`conv_rq` or :func:`conv_amx_rq`
    computes — rows start..end and every group, or with ``by_groups`` every row and groups start..end."""
    if by_groups:
        return 0, rows, start, end
    return start, end, 0, -(-nblocks // BLOCKS)


@njit(nogil=True)
def conv_rq(x, xr, packed, q32, q64, scalars, out, pad, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, direct, by_groups,
            start, end):
    """An int8 convolution like :func:`conv_rows`, with the requantization in the micro-kernel
    (:func:`tile_rq`): output rows start..end, every output channel; or with ``by_groups`` every row, output
    channel groups start..end (``BLOCKS`` 16-channel blocks a group), so that threads share a product with
    few rows each reading its share of the filter only.  ``xr`` is the input as [N·H, W·C].  ``direct`` (a
    1x1 convolution, stride 1, no padding, C a multiple of 4): the micro-kernel reads the input pixels
    themselves (C bytes apart in ``xr``), made unsigned as it loads them — no im2col copy at all — and each
    group of output channels walks all the call's rows at once; otherwise the unsigned rows are gathered
    as many at a time as fit in ``GATHER_BYTES`` (:func:`gather_rows`) and every group walks each chunk.

    One function for both cuts, not one calling the other: numba optimises a callee's code again inside
    each caller, and these blocks' code is most of the kernel library's build time."""
    nblocks, kg, _ = packed.shape
    m0, m1, g0, g1 = cut_ranges(by_groups, start, end, out.shape[0], nblocks)
    tall = nblocks <= 2                 # one group of at most 2 blocks: 8-row blocks (tile_rq_tall)
    # not zeroed: the gather writes every row's K bytes, and the bytes past K (up to the packing's
    # multiple of 4) meet the packed filter's zeros; seen as int8, as the input is (one call of the blocks)
    row_bytes = 4 * kg + GATHER_SLACK
    gathered = min(MAX_CHUNK, max(CHUNK, GATHER_BYTES // row_bytes // TALL_ROWS * TALL_ROWS))
    rows_u8 = np.empty((0 if direct else gathered, row_bytes), np.uint8)
    a = rows_u8.view(np.int8)
    per_image = oh * ow
    # read in place, all the call's rows are one pass of each group: nothing gathered has to stay in the
    # cache, and each pass of 32 rows had cost a call of tiles_rq and its set-up again (MobileNet v1 int8,
    # 112x112x32 -> 64 inside the network, one thread: 219 -> 191 µs; the whole invoke 3.76 -> 3.66 ms)
    chunk = max(1, m1 - m0) if direct else gathered
    for first in range(m0, m1, chunk):
        rows = min(chunk, m1 - first)
        if direct:                      # the input's pixels in place, made unsigned as they are loaded
            src, lda, flip, r0 = xr, x.shape[3], FLIP, first
        else:
            gather_rows(x, xr, rows_u8, first, rows, pad, ow, per_image, kh, kw, sh, sw, dh, dw, pt, pl)
            src, lda, flip, r0 = a, a.shape[1], 0, 0
        for g in range(g0, g1):
            nb0 = g * BLOCKS
            # cut by groups (few rows; a filter read once, from the last-level cache or memory), the first
            # blocks of rows fetch the next group's filter while they walk this one's: the hardware's
            # prefetchers, four streams of weights at once, left each group's first block waiting (v1 int8
            # inside the network, one thread: 7x7x512 -> 1024 130-134 -> 125-126 µs, 7x7x1024 -> 1024
            # 251-257 -> 243-245; two threads 66 -> 63, 127 -> 121)
            nxt = g + 1 if by_groups and g + 1 < g1 else g
            tiles_rq(src, lda, flip, r0, packed, nb0, kg, out, first, rows, min(BLOCKS, nblocks - nb0), q32, q64,
                     scalars, tall, nxt * BLOCKS, min(BLOCKS, nblocks - nxt * BLOCKS) if nxt != g else 0)


@njit(nogil=True)
def conv_amx_rq(x, xr, packed, q32, q64, scalars, out, pad, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, cfg, by_groups,
                start, end):
    """:func:`conv_rows_amx` with :func:`conv_rq`'s requantization and its two cuts (rows start..end, or
    with ``by_groups`` output channel groups start..end, each thread gathering every row itself: a 7x7
    layer's 49 rows are a few tens of kilobytes).  Each 16-row block of sums from the AMX tiles is
    requantized by :func:`requantize_block` (the epilogue of :func:`tile_rq`).

    The loops run filter-block first: all the unsigned rows are gathered once (:func:`gather_rows`, M·K
    bytes, in the L2 cache), then for each group of 64 output channels the tiles walk every row, so that
    group's filter tiles (K·64 bytes) are read from the L1 cache again and again while the rows come from
    L2 — the other way round, every 16 rows read the whole filter from L2."""
    nblocks, kg, _ = packed.shape
    m0, m1, g0, g1 = cut_ranges(by_groups, start, end, out.shape[0], nblocks)
    rows = m1 - m0
    # not zeroed (as in conv_rq): the rows past the last are summed but never stored
    a = np.empty((-(-rows // AMX_ROWS) * AMX_ROWS, 4 * kg), np.uint8)
    acc = np.empty((AMX_ROWS, 16 * BLOCKS), np.int32)
    gather_rows(x, xr, a, m0, rows, pad, ow, oh * ow, kh, kw, sh, sw, dh, dw, pt, pl)
    amx_begin(cfg)
    for g in range(g0, g1):
        nb0 = g * BLOCKS
        blocks = min(BLOCKS, nblocks - nb0)
        for r0 in range(0, rows, AMX_ROWS):
            amx_tile(cfg, a, r0, packed, nb0, kg, acc, blocks)
            requantize_block(acc, 0, min(AMX_ROWS, rows - r0), nb0, blocks, out, m0 + r0, q32, q64, scalars)
    amx_end()


def conv(x, packed, bias, mult, shift, out_zp, lo, hi, half_up, out2d, geometry, threads: int = 1,
         tables=None) -> None:
    """Run :func:`conv_rows` over all output rows, split between ``threads`` threads when > 1
    (:func:`workbench.perf.jit.run_rows`).

    ``geometry`` = (oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left, pad byte).  ``tables``: what
    :func:`requant_tables` made at prepare (None where the requantization is not narrow); with them the
    VNNI block requantizes in its epilogue (:func:`conv_rq`).
    """
    run_plan(conv_plan(x, packed, bias, mult, shift, out_zp, lo, hi, half_up, out2d, geometry, threads, tables),
             threads)


def run_plan(plan, threads: int) -> None:
    """Run what :func:`conv_plan` chose (a fast path keeps the plan while its arrays stay the same)."""
    kernel, total, args, align, work = plan
    run_rows(kernel, total, threads, *args, align=align, work=work)


def plan_call(plan, threads: int):
    """:func:`run_plan` as one call of the kernel library (``jit.rows_call``), or None."""
    kernel, total, args, align, work = plan
    return rows_call(kernel, total, threads, *args, align=align, work=work)


def conv_plan(x, packed, bias, mult, shift, out_zp, lo, hi, half_up, out2d, geometry, threads: int = 1,
              tables=None) -> tuple:
    """(kernel, rows, arguments, align, multiply-adds): the loop :func:`conv` runs for these arrays — by
    output channel groups, or rows of the AMX or VNNI block, with or without the epilogue's tables."""
    oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, pad = geometry
    nblocks, kg = packed.shape[:2]
    work = out2d.size * kh * kw * x.shape[3]
    n, h, w, c = x.shape
    m = out2d.shape[0]
    amx = m >= AMX_ROWS and kg % 16 == 0 and 4 * kg >= AMX_MIN_K and amx_available()
    groups = -(-nblocks // BLOCKS)
    direct = kh == kw == sh == sw == 1 and pt == pl == 0 and (oh, ow) == (h, w) and c == 4 * kg and x.flags.c_contiguous
    shape = (pad, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl)
    xr = x.reshape(n * h, w * c)
    last = _AMX_CONFIG if amx else direct
    if tables is not None and m < COLS_BELOW and out2d.shape[1] > m and groups >= 4:
        # too few rows to share (7x7 layers, a 1x1 image) and more output channels: each thread takes one
        # share of the channels, gathers the rows itself and reads only its share of the filter, which
        # comes from memory, not cache (on one thread the same loops as the row kernels, so the library
        # compiled for one thread serves two)
        return ((conv_amx_rq if amx else conv_rq), groups, (x, xr, packed, *tables, out2d, *shape, last, True),
                -(-groups // (2 * max(1, threads))), work)
    if tables is not None:
        return ((conv_amx_rq, m, (x, xr, packed, *tables, out2d, *shape, last, False), AMX_ROWS, work) if amx else
                (conv_rq, m, (x, xr, packed, *tables, out2d, *shape, last, False), ROWS, work))
    if amx:
        return (conv_rows_amx, m, (x, packed, bias, mult, shift, out_zp, lo, hi, half_up, out2d, *shape,
                                   _AMX_CONFIG), AMX_ROWS, work)
    return conv_rows, m, (x, packed, bias, mult, shift, out_zp, lo, hi, half_up, out2d, *shape), ROWS, work


def tables_for(packed, bias_folded, mult, shift, out_zp: int, lo: int, hi: int, half_up: bool):
    """:func:`requant_tables` for a filter packed by :func:`pack_filter` (None: not narrow)."""
    nblocks, kg, _ = packed.shape
    return requant_tables(bias_folded, mult, shift, out_zp, lo, hi, half_up, 16 * nblocks, 255 * 128 * 4 * kg)
