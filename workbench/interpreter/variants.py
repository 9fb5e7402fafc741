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
    # Reference: one rounding per output.  The optimized uint8/int8 depthwise kernels on x86 work in
    # chunks whose partial results are rounded on their own (True).
    depthwise_chunks: bool = False

    # -- QUANTIZE / DEQUANTIZE ---------------------------------------------------------------
    # Reference: every element the same way (0).  The optimized kernels handle blocks of 8 with
    # NEON (emulated by NEON_2_SSE on x86) and the tail with scalar code (8).
    quantize_block: int = 0

    # -- ADD / SUB / MUL and other element-wise int8 ops --------------------------------------
    # Reference: scalar saturating arithmetic (False).  The optimized kernels narrow their int32
    # lanes through NEON's saturating narrowing, as NEON_2_SSE emulates it (True).
    neon_narrowing: bool = False

    # -- float reductions ------------------------------------------------------------------------
    # Reference: one accumulator, in index order ("sequential").  Eigen sums in packets of SIMD lanes
    # ("eigen-packets"), which changes the float rounding of long sums.
    float_sum_order: str = "sequential"

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
    quantize_block=8,
    neon_narrowing=True,
    float_sum_order="eigen-packets",
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
