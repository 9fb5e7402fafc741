"""Operator version rules as data: one table per op, evaluated top to bottom, first match wins.

Each op has a tuple of :class:`Rule` rows ``Rule(version, predicate, reason_template)`` in the
order TFLite's ``op_version.cc`` evaluates its tests — mostly highest version first, but not
always (CONV_2D tests int8 → 3 before int8/int4 → 7; FULLY_CONNECTED tests "no bias" → 6 before
int8 → 4).  When no row matches the version is 1 ("v1: no rule applies").

Predicates are small named objects over an :class:`OpSignature` that can be combined with ``&``
and ``|`` (both short-circuit like C++'s ``&&``/``||``) and that *explain themselves* with the
concrete values they saw::

    >>> v = op_version(model, 0, 2)
    >>> v.number, v.reason
    (2, 'v2: dilation_w_factor=2 ≠ 1')
    >>> v.rule                                    # the row that decided
    >>> print(v.explain())                        # every row tried, in order

Facts only were taken from upstream (tensorflow/compiler/mlir/lite/tools/versioning/op_version.cc,
GetBuiltinOperatorVersion); the traps found there are ported faithfully and listed in :data:`TRAPS`.
The float16 rows of SIN, COS, TRANSPOSE, SLICE, CONCATENATION and SOFTMAX come from LiteRT's newer
copy of the same file (google-ai-edge/LiteRT tflite/converter/tools/versioning/op_version.cc
@119ae633), whose kernels ai-edge-litert 2.3 registers.
CUSTOM operators get no computed version: their version belongs to the op's author.
"""

from __future__ import annotations

import dataclasses
import enum
import html
from dataclasses import dataclass
from typing import Callable, Iterable

from ..schema.enums import BuiltinOperator as B
from ..schema.enums import TensorType as T
from .signature import TFLITE_TYPE_NAMES, OpSignature, probe_accesses, signature_of, type_name

__all__ = ["Pred", "Rule", "Trap", "Version", "RULES", "TRAPS", "op_version", "version_of",
           "update_versions", "computed_versions", "covered_ops", "int8_op", "hybrid", "is_16x8",
           "in0", "in1", "in2", "in3", "out0", "out1", "ALWAYS"]


# ============================================================================================
# Predicates
# ============================================================================================
class Pred:
    """A named test over an :class:`OpSignature` that can explain, with values, why it held."""

    __slots__ = ("name", "_test", "_explain")

    def __init__(self, name: str, test: Callable[[OpSignature], bool],
                 explain: Callable[[OpSignature], str] | None = None):
        self.name = name
        self._test = test
        self._explain = explain

    def __call__(self, sig: OpSignature) -> bool:
        return bool(self._test(sig))

    def explain(self, sig: OpSignature) -> str:
        """The concrete facts behind this predicate for ``sig`` (e.g. 'dilation_w_factor=2 ≠ 1')."""
        return self._explain(sig) if self._explain else self.name

    def __and__(self, other: "Pred") -> "Pred":
        parts = (*_parts(self, _And), *_parts(other, _And))
        return _And(parts)

    def __or__(self, other: "Pred") -> "Pred":
        parts = (*_parts(self, _Or), *_parts(other, _Or))
        return _Or(parts)

    def named(self, name: str) -> "Pred":
        """The same test under a short name; the explanation keeps the values: 'int8 op (in0=INT8, ...)'."""
        inner = self
        return Pred(name, inner._test, lambda s: f"{name} ({inner.explain(s)})")

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _parts(p: Pred, kind) -> tuple[Pred, ...]:
    return p.parts if isinstance(p, kind) else (p,)


class _And(Pred):
    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Pred, ...]):
        self.parts = parts
        super().__init__(" and ".join(p.name for p in parts), self._all, self._why)

    def _all(self, sig):
        return all(p(sig) for p in self.parts)  # short-circuits like C++ &&

    def _why(self, sig):
        return ", ".join(p.explain(sig) for p in self.parts)


class _Or(Pred):
    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Pred, ...]):
        self.parts = parts
        super().__init__(" or ".join(p.name for p in parts), self._any, self._why)

    def _any(self, sig):
        return any(p(sig) for p in self.parts)  # short-circuits like C++ ||

    def _why(self, sig):
        for p in self.parts:  # the first alternative that held decided it
            if p(sig):
                return p.explain(sig)
        return " or ".join(p.explain(sig) for p in self.parts)


ALWAYS = Pred("always", lambda s: True, lambda s: "always")


def _tensor(kind: str, slot: int, *types) -> Pred:
    label = ("in" if kind == "inputs" else "out") + str(slot)
    names = "/".join(type_name(t) for t in types)

    def get(sig):
        return sig.input(slot) if kind == "inputs" else sig.output(slot)

    def explain(sig):
        t = get(sig)
        return f"{label}=" + (t.type_name if t.exists else f"NoType (no {kind}[{slot}])")

    return Pred(f"{label} is {names}", lambda s: get(s).type in types, explain)


def in0(*types) -> Pred:
    return _tensor("inputs", 0, *types)


def in1(*types) -> Pred:
    return _tensor("inputs", 1, *types)


def in2(*types) -> Pred:
    return _tensor("inputs", 2, *types)


def in3(*types) -> Pred:
    return _tensor("inputs", 3, *types)


def out0(*types) -> Pred:
    return _tensor("outputs", 0, *types)


def out1(*types) -> Pred:
    return _tensor("outputs", 1, *types)


def in_present(slot: int) -> Pred:
    """Input ``slot`` has a type (upstream: ``inputs.at(slot).type != kTfLiteNoType``)."""
    return Pred(f"in{slot} is not NoType", lambda s: s.input(slot).type is not None,
                lambda s: f"in{slot}={s.input(slot).type_name} (present)")


def n_inputs_eq(n: int, note: str = "") -> Pred:
    return Pred(f"exactly {n} inputs", lambda s: len(s.inputs) == n,
                lambda s: f"{len(s.inputs)} inputs{note}")


def n_inputs_ge(n: int) -> Pred:
    return Pred(f"at least {n} inputs", lambda s: len(s.inputs) >= n, lambda s: f"{len(s.inputs)} inputs")


def rank(slot: int, op: str, n: int) -> Pred:
    tests = {">": lambda r: r > n, "!=": lambda r: r != n, "==": lambda r: r == n}
    sym = {">": ">", "!=": "≠", "==": "="}[op]
    return Pred(f"in{slot} rank {sym} {n}", lambda s: tests[op](s.input(slot).rank),
                lambda s: f"in{slot} rank {s.input(slot).rank} {sym} {n}")


def _field_state(sig: OpSignature, name: str) -> str | None:
    """'present' | 'defaulted' | 'table absent' for an options field (None if the op has no such field)."""
    so = sig.schema_options
    try:
        return so.field(name).state if so is not None else None
    except KeyError:
        return None


def _absent_note(sig: OpSignature, name: str) -> str:
    if not sig.options_table_present:
        return " (no options table: TFLite zero-fills its params)"
    if _field_state(sig, name) == "defaulted":
        return " (field absent: the schema default applies)"
    return ""


def _opt_text(sig: OpSignature, name: str, compare: str = "") -> str:
    """'name=value<compare>' plus a note when the value comes from zero-filling or a default."""
    value = sig.option(name)
    if name == "quantized_bias_type":
        text = f"{name}={TFLITE_TYPE_NAMES.get(value, value)} ({value}){compare}"
        if sig.options_table_present and _field_state(sig, name) == "defaulted":
            return text + " — field absent, TFLite's parser stores kTfLiteFloat32"
        return text + (_absent_note(sig, name) if not sig.options_table_present else "")
    shown = repr(value)
    so = sig.schema_options
    if sig.options_table_present and so is not None:
        try:
            schema_value = so.field(name).value
        except KeyError:
            schema_value = None
        if isinstance(schema_value, enum.IntEnum) and int(schema_value) == value:
            shown = f"{value} ({schema_value.name})"
    return f"{name}={shown}{compare}" + _absent_note(sig, name)


def opt_ne(name: str, value) -> Pred:
    return Pred(f"{name} ≠ {value}", lambda s: s.option(name) != value,
                lambda s: _opt_text(s, name, f" ≠ {value}"))


def opt_true(name: str) -> Pred:
    """The C params field is truthy (for ``quantized_bias_type``: non-zero)."""
    return Pred(f"{name} set", lambda s: bool(s.option(name)), lambda s: _opt_text(s, name))


def opt_false(name: str) -> Pred:
    return Pred(f"{name} false", lambda s: not s.option(name), lambda s: _opt_text(s, name))


def opt_eq(name: str, value, label: str = "") -> Pred:
    shown = label or repr(value)
    return Pred(f"{name} = {shown}", lambda s: s.option(name) == value,
                lambda s: _opt_text(s, name, f" ({shown})" if label else ""))


def ext(name: str) -> Pred:
    return Pred(name, lambda s: bool(getattr(s.ext, name)), lambda s: f"{name}={getattr(s.ext, name)!r}")


def not_ext(name: str) -> Pred:
    return Pred(f"not {name}", lambda s: not getattr(s.ext, name), lambda s: f"{name}={getattr(s.ext, name)!r}")


def _per_channel_text(sig: OpSignature) -> str:
    w = sig.input(1)
    return f"is_per_channel_quantized ({len(w.scales)} scales on in1)"


per_channel = Pred("is_per_channel_quantized", lambda s: s.ext.is_per_channel_quantized, _per_channel_text)

grouped = Pred("is_grouped_convolution", lambda s: s.ext.is_grouped_convolution,
               lambda s: (f"is_grouped_convolution (input channels {s.input(0).shape[3]} ≠ filter "
                          f"channels {s.input(1).shape[3]})") if s.ext.is_grouped_convolution else
               "is_grouped_convolution=False")

sparse_weight = Pred("sparse_weight", lambda s: s.ext.sparse_weight,
                     lambda s: f"sparse weights (t{s.input(1).index} has sparsity)")

broadcast_rank_gt4 = Pred(
    "inputs need broadcasting and max input rank > 4",
    lambda s: s.need_broadcast and s.max_input_rank > 4,
    lambda s: (f"inputs need broadcasting ({list(s.input(0).shape)} vs {list(s.input(1).shape)}) "
               f"and max input rank {s.max_input_rank} > 4"))


def _rescale(s: OpSignature) -> float:
    e = s.ext
    return e.input1_scale * e.input2_scale / e.output_scale


mul_rescale_ge1 = Pred(
    "input1_scale·input2_scale/output_scale ≥ 1",
    lambda s: (s.ext.input1_scale != 0 and s.ext.input2_scale != 0 and s.ext.output_scale != 0
               and _rescale(s) >= 1.0),
    lambda s: (f"input1_scale·input2_scale/output_scale = {s.ext.input1_scale:.6g}·{s.ext.input2_scale:.6g}"
               f"/{s.ext.output_scale:.6g} = {_rescale(s):.6g} ≥ 1"))

num_dims_gt4 = Pred("num_dims > 4", lambda s: s.ext.num_dims > 4, lambda s: f"num_dims={s.ext.num_dims} > 4")

not_input_quantized = Pred("input not quantized", lambda s: not s.ext.input_quantized,
                           lambda s: "input_quantized=False (no quantization table)")
input_quantized = Pred("input quantized", lambda s: s.ext.input_quantized,
                       lambda s: "input_quantized=True")

# the type words: int8 op, hybrid (float32 in, int8 weights), 16x8 (int16 activations, int8 weights)
int8_op = (in0(T.INT8) & in1(T.INT8) & out0(T.INT8)).named("int8 op")
hybrid = (in0(T.FLOAT32) & in1(T.INT8) & out0(T.FLOAT32)).named("hybrid")
is_16x8 = (in0(T.INT16) & in1(T.INT8) & out0(T.INT16)).named("16x8")
int16_op = (in0(T.INT16) & in1(T.INT16) & out0(T.INT16)).named("int16 op")
i8_int4 = (in0(T.INT8) & in1(T.INT4) & out0(T.INT8)).named("int8 × int4")
i16_int4 = (in0(T.INT16) & in1(T.INT4) & out0(T.INT16)).named("int16 × int4")
io_int16 = (in0(T.INT16) & out0(T.INT16)).named("int16 in/out")
hybrid_lstm = (in0(T.FLOAT32) & in2(T.INT8) & out0(T.FLOAT32)).named("hybrid (float input, int8 weights at input 2)")
full_kernel = opt_eq("kernel_type", 0, "FULL")


# ============================================================================================
# Rules and traps
# ============================================================================================
@dataclass(frozen=True)
class Rule:
    """One row of an op's version table: if ``predicate`` holds (and no earlier row did) → ``version``.

    ``reason_template`` is formatted with ``version``, ``op`` and ``why`` (the predicate's own
    explanation with concrete values).  ``trap`` names an entry of :data:`TRAPS` this row is
    involved in.
    """

    version: int
    predicate: Pred
    reason_template: str = "v{version}: {why}"
    trap: str | None = None

    def matches(self, sig: OpSignature) -> bool:
        return self.predicate(sig)

    def reason(self, sig: OpSignature) -> str:
        return self.reason_template.format(version=self.version, op=sig.name, why=self.predicate.explain(sig))

    def __repr__(self) -> str:
        trap = f", trap={self.trap!r}" if self.trap else ""
        return f"Rule(v{self.version} ← {self.predicate.name}{trap})"


@dataclass(frozen=True)
class Trap:
    """A surprise in upstream's rules, ported faithfully and shown where it bites.

    ``applies`` (optional) tells whether this trap shapes the verdict for a given signature;
    when it does, :func:`op_version` adds ``text`` to the verdict's ``traps``.  ``text`` gives the
    detail in the terms of upstream's code; ``plain`` says what goes wrong in plain words, for a
    learner's first reading (notebook 02's table of traps).
    """

    id: str
    ops: tuple[str, ...]
    text: str
    applies: Pred | None = None
    plain: str = ""

    def __repr__(self) -> str:
        return f"Trap({self.id}: {self.text})"


def _ops(*codes) -> tuple[str, ...]:
    return tuple(c.name for c in codes)


TRAPS: tuple[Trap, ...] = (
    Trap("conv2d-outputs1", _ops(B.CONV_2D),
         "CONV_2D v4 tests in0 INT16, in1 INT16 and outputs[1] INT16 — a second output that a CONV_2D "
         "does not have. Upstream's outputs.at(1) would throw; the workbench treats the test as not "
         "matching, so an int16×int16 convolution never gets v4 from these rules.",
         in0(T.INT16) & in1(T.INT16) & Pred("one output", lambda s: len(s.outputs) < 2),
         plain="The row meant for int16 convolutions with int16 weights checks a second output, which a "
               "convolution never has, so the row never fires."),
    Trap("depthwise-outputs1", _ops(B.DEPTHWISE_CONV_2D),
         "DEPTHWISE_CONV_2D v5 tests outputs[1] (a second output the op does not have): as for "
         "CONV_2D v4, treated as not matching, so int16×int16 depthwise never gets v5 here.",
         in0(T.INT16) & in1(T.INT16) & Pred("one output", lambda s: len(s.outputs) < 2),
         plain="The same slip in DEPTHWISE_CONV_2D: its int16-with-int16-weights row checks an output that "
               "does not exist, so it never fires."),
    Trap("depthwise-no-16x8", _ops(B.DEPTHWISE_CONV_2D),
         "There is no 16x8 rule for DEPTHWISE_CONV_2D: int16 input with int8 filter falls through to "
         "the dilation test and gets v1 or v2.",
         in0(T.INT16) & in1(T.INT8),
         plain="No row was written for a depthwise convolution with int16 activations and int8 weights, so "
               "it gets the version of a plain float one."),
    Trap("quantized-bias-type-from-disk", _ops(B.CONV_2D, B.FULLY_CONNECTED, B.TRANSPOSE_CONV),
         "CONV_2D v8 / FULLY_CONNECTED v11 / TRANSPOSE_CONV v5 test 'quantized_bias_type is non-zero'. "
         "Read from a file whose options table lacks the field, TFLite's parser stores kTfLiteFloat32 "
         "(= 1, non-zero), so a 16x8 op read back from disk computes the higher version even "
         "without an explicit bias type (upstream's unit test uses a zeroed struct instead).",
         is_16x8 & Pred("options table present, quantized_bias_type absent",
                        lambda s: s.options_table_present and s.option("quantized_bias_type") == 1
                        and _field_state(s, "quantized_bias_type") == "defaulted"),
         plain='A field the file leaves out is read back as 1, not 0, and the rule takes "not 0" to mean '
               '"set": a 16x8 layer loaded from a file gets a higher version than it needs.'),
    Trap("fc-no-bias-before-int8", _ops(B.FULLY_CONNECTED),
         "FULLY_CONNECTED tests 'exactly 2 inputs' (no bias slot) → v6 and keep_num_dims → v5 BEFORE "
         "the int8 test → v4: a bias-less int8 FC is v6, an int8 FC with keep_num_dims is v5.",
         int8_op & (n_inputs_eq(2) | opt_true("keep_num_dims")),
         plain='The "no bias" and `keep_num_dims` rows come before the int8 row, so an int8 layer without a '
               "bias gets a higher version than one with a bias."),
    Trap("depthwise-dilation-int8", _ops(B.DEPTHWISE_CONV_2D),
         "Depthwise dilation only bumps float/uint8 graphs: the int8 test (→ v3) comes first, so a "
         "dilated int8 depthwise stays v3.",
         int8_op & (opt_ne("dilation_w_factor", 1) | opt_ne("dilation_h_factor", 1)),
         plain="The int8 row comes first, so a dilated int8 depthwise convolution keeps the int8 version: "
               "its version does not show the dilation."),
    Trap("mul-v3-any-quantized", _ops(B.MUL),
         "MUL v3 ('rescale ≥ 1') applies to any quantized type, uint8 included — not only int8.",
         mul_rescale_ge1 & Pred("input not INT8", lambda s: s.input(0).type != T.INT8),
         plain="A row meant for int8 MUL also fires for uint8."),
    Trap("resize-bilinear-align-corners", _ops(B.RESIZE_BILINEAR),
         "RESIZE_BILINEAR: align_corners alone does not bump the version (only half_pixel_centers → v3), "
         "unlike RESIZE_NEAREST_NEIGHBOR.",
         opt_true("align_corners") & opt_false("half_pixel_centers"),
         plain="`align_corners` alone does not raise RESIZE_BILINEAR's version, though it does raise "
               "RESIZE_NEAREST_NEIGHBOR's."),
    Trap("broadcast-to-starts-at-2", _ops(B.BROADCAST_TO),
         "BROADCAST_TO never computes v1: version 1 was rolled back when the op code changed, so the "
         "rules return 2 by default (and the runtime table has no v1).",
         plain="BROADCAST_TO never gets version 1: that version was withdrawn, so the rules start at 2."),
    Trap("version-not-in-runtime-table", _ops(B.LSTM, B.UNIDIRECTIONAL_SEQUENCE_LSTM),
         "LSTM / UNIDIRECTIONAL_SEQUENCE_LSTM v5 (int16 activations, int8 weights) is computed by the rules "
         "but missing from the runtime table (which stops at v4): the converter's minimum runtime skips it.",
         in0(T.INT16) & in2(T.INT8) & out0(T.INT16),
         plain="The rules give some LSTMs a version that the table of first releases does not list, so the "
               "model's minimum runtime leaves it out."),
    Trap("never-produced", _ops(B.DEQUANTIZE, B.QUANTIZE),
         "The runtime table lists DEQUANTIZE v4 and QUANTIZE v6, but no rule produces them.",
         plain="The runtime table lists DEQUANTIZE and QUANTIZE versions that no rule ever gives."),
    Trap("transpose-conv-in0-is-output-shape", _ops(B.TRANSPOSE_CONV),
         "TRANSPOSE_CONV v5 tests in0 INT16, in1 INT8, out0 INT16 — but input 0 of TRANSPOSE_CONV is the "
         "output_shape tensor (INT32) and the activations are input 2, so a real 16x8 transpose "
         "convolution never matches v5 (it falls through to v4/v3/v2/v1).",
         in0(T.INT32) & in1(T.INT8) & in2(T.INT16) & out0(T.INT16),
         plain="The 16x8 row checks input 0, but TRANSPOSE_CONV's input 0 is the output shape, not the "
               "activations: a real 16x8 layer never matches."),
    Trap("zero-filled-params", _ops(B.DEPTHWISE_CONV_2D, B.ADD, B.SUB),
         "With NO options table TFLite's parser zero-fills the params struct instead of applying the schema "
         "defaults: a float DEPTHWISE_CONV_2D sees dilation 0 ≠ 1 and computes v2; an int16 ADD/SUB sees "
         "pot_scale_int16 = false and computes v3/v5.",
         Pred("options table absent", lambda s: not s.options_table_present),
         plain="With no options table every option reads as 0, not as its default, and a 0 can raise the "
               "version (a float DEPTHWISE_CONV_2D looks dilated)."),
    Trap("slot-past-the-end", ("*",),
         "A rule that reads an input or output slot the operator does not have (C++ .at() past the "
         "end) would throw upstream; the workbench reads it as NoType and notes it in the verdict.",
         plain="A rule may look at an input or output the operator does not have: upstream would crash; the "
               'workbench reads "no type" and says so.'),
    Trap("external-buffer-not-const", ("*",),
         "is_const looks only at Buffer.data: a constant stored after the FlatBuffer (offset/size, "
         "models > 2 GB) counts as not constant.",
         plain="A constant stored outside the FlatBuffer (models over 2 GB) does not count as a constant."),
)
TRAP_BY_ID = {t.id: t for t in TRAPS}


def R(version: int, predicate: Pred, template: str = "v{version}: {why}", trap: str | None = None) -> Rule:
    return Rule(version, predicate, template, trap)


I8, U8, I16, I32, I64, F16, F32 = T.INT8, T.UINT8, T.INT16, T.INT32, T.INT64, T.FLOAT16, T.FLOAT32
I4, I2, U4, U32, BF16, BOOL, STR = T.INT4, T.INT2, T.UINT4, T.UINT32, T.BFLOAT16, T.BOOL, T.STRING
C64, F64, U16 = T.COMPLEX64, T.FLOAT64, T.UINT16

_i16_i8 = (in0(I16) & in1(I8)).named("int16 or int8")

_SOFTMAX_LIKE = (R(3, in0(I16)), R(2, in0(I8)))
_I8_ONLY = (R(2, in0(I8)),)
_POOL = (R(3, io_int16), R(2, in0(I8)))
_ACT = (R(3, io_int16), R(2, in0(I8)))
_PAD = (R(5, in0(BOOL)), R(4, rank(0, ">", 4)), R(3, in0(I16)), R(2, in0(I8)))
_MAXMIN = (R(4, io_int16), R(3, broadcast_rank_gt4), R(2, in0(I8)))
_S2B = (R(4, in0(I16)), R(3, rank(0, "!=", 4)), R(2, in0(I8)))
_EXP_LIKE = (R(2, in0(I8, I16)),)
_RNN_LIKE = (R(3, in1(I8) & out0(F32) & opt_true("asymmetric_quantize_inputs")),
             R(2, in1(I8) & out0(F32)))
_ARG = (R(3, in0(BOOL)), R(2, in0(I8)))
_CMP = (R(3, in0(I16)), R(2, in0(I8)))

RULES: dict[B, tuple[Rule, ...]] = {
    B.CONV_2D: (
        R(8, is_16x8 & opt_true("quantized_bias_type"), trap="quantized-bias-type-from-disk"),
        R(6, grouped),
        R(4, in0(I16) & in1(I16) & out1(I16), "v{version}: {why} (upstream tests outputs[1])",
          trap="conv2d-outputs1"),
        R(3, int8_op),
        R(7, i8_int4),
        R(5, hybrid & per_channel),
        R(2, hybrid),
    ),
    B.DEPTHWISE_CONV_2D: (
        R(5, in0(I16) & in1(I16) & out1(I16), "v{version}: {why} (upstream tests outputs[1])",
          trap="depthwise-outputs1"),
        R(6, hybrid & per_channel),
        R(4, hybrid),
        R(3, int8_op, trap="depthwise-dilation-int8"),
        R(7, i8_int4),
        R(2, opt_ne("dilation_w_factor", 1) | opt_ne("dilation_h_factor", 1)),
    ),
    B.EMBEDDING_LOOKUP: (R(4, in1(I4) | ext("is_per_channel_quantized")), R(5, in1(I2))),
    B.FAKE_QUANT: (R(2, opt_true("narrow_range")),),
    B.FULLY_CONNECTED: (
        R(14, in1(I2)),
        R(13, i16_int4),
        R(12, hybrid & per_channel),
        R(11, is_16x8 & opt_true("quantized_bias_type"), trap="quantized-bias-type-from-disk"),
        R(8, sparse_weight),
        R(7, int16_op),
        R(6, n_inputs_eq(2, " (no bias slot)"), trap="fc-no-bias-before-int8"),
        R(5, opt_true("keep_num_dims"), trap="fc-no-bias-before-int8"),
        R(4, int8_op),
        R(10, i8_int4),
        R(9, hybrid & opt_true("asymmetric_quantize_inputs")),
        R(3, hybrid),
        R(2, opt_eq("weights_format", 1, "SHUFFLED4x16INT8")),
    ),
    B.GATHER: (
        R(7, in0(I4)), R(6, in1(I16)), R(5, opt_ne("batch_dims", 0)), R(4, in0(I16)), R(3, in0(BOOL)),
        R(2, in0(I8)),
    ),
    B.SVDF: (
        R(3, in0(I8)),
        R(4, hybrid & opt_true("asymmetric_quantize_inputs")),
        R(2, hybrid),
    ),
    B.SIGN: (R(2, in0(I32)),),
    B.MUL: (
        R(8, in0(F16)),
        R(7, (in0(I16) & not_input_quantized) | in0(U32)),
        R(6, in0(C64)),
        R(5, in0(I64)),
        R(4, in0(I16)),
        R(3, mul_rescale_ge1, trap="mul-v3-any-quantized"),
        R(2, in0(I8)),
    ),
    B.MAX_POOL_2D: _POOL,
    B.AVERAGE_POOL_2D: _POOL,
    B.TRANSPOSE: (
        R(9, in0(F16)), R(8, rank(0, ">", 6) | in0(BF16)), R(7, in0(I4)), R(6, rank(0, ">", 5)), R(5, in0(I16)),
        R(4, rank(0, ">", 4)), R(3, in0(BOOL)), R(2, in0(I8)),
    ),
    B.TRANSPOSE_CONV: (
        R(5, is_16x8 & opt_true("quantized_bias_type"), trap="quantized-bias-type-from-disk"),
        R(4, opt_ne("fused_activation_function", 0)),
        R(3, n_inputs_eq(4) & in_present(3), "v{version}: bias input present ({why})"),
        R(2, in1(I8)),
    ),
    B.LSTM: (
        R(5, full_kernel & in0(I16) & in2(I8) & out0(I16)),
        R(4, full_kernel & hybrid_lstm & opt_true("asymmetric_quantize_inputs")),
        R(3, full_kernel & hybrid_lstm),
        R(2, opt_eq("kernel_type", 1, "BASIC")),
    ),
    B.SPLIT: (R(4, in1(I16)), R(3, in1(I32)), R(2, in1(I8))),
    B.SPARSE_TO_DENSE: (R(3, in2(I8, U8)), R(2, in2(I64))),
    B.SLICE: (
        R(8, in0(F16)), R(7, in0(I4)), R(6, in0(U32)), R(5, rank(0, ">", 4)),
        R(4, in0(I16)), R(3, in0(STR)), R(2, in0(I8)),
    ),
    B.UNPACK: (
        R(2, in0(I8, U8)), R(3, in0(BOOL)), R(4, io_int16), R(5, in0(F16, BF16)),
    ),
    B.DEQUANTIZE: (
        R(8, in0(U4)), R(7, in0(I2)), R(6, in0(I4)), R(3, in0(I16, F16)),
        R(5, in0(I8) & ext("is_per_channel_quantized")), R(2, in0(I8)),
    ),
    B.QUANTIZE: (
        R(5, in0(U4) | out0(U4)), R(4, in0(I4) | out0(I4)), R(3, ext("is_per_channel_quantized")),
        R(2, out0(I16)),
    ),
    B.FLOOR_DIV: (R(3, in0(I16, I8)), R(2, in0(F32))),
    B.FLOOR_MOD: (R(2, in0(I16, I8)),),
    B.L2_NORMALIZATION: (R(2, out0(I8)),),
    B.ABS: (R(5, in0(I32)), R(3, in0(I16) & input_quantized), R(4, in0(I16)), R(2, in0(I8, U8))),
    B.RELU: (R(3, in0(I16)), R(2, in0(I8, U8))),
    B.STRIDED_SLICE: (
        R(8, opt_true("offset")), R(7, in0(U32)),
        R(6, opt_ne("ellipsis_mask", 0) | opt_ne("new_axis_mask", 0)),
        R(5, in0(STR)), R(4, num_dims_gt4), R(3, in0(BOOL)), R(2, in0(I8)),
    ),
    B.REVERSE_V2: (R(3, in0(I8)), R(2, in0(BOOL))),
    B.RESIZE_BILINEAR: (
        R(4, in0(I16)), R(3, opt_true("half_pixel_centers"), trap="resize-bilinear-align-corners"),
        R(2, in0(I8)),
    ),
    B.RESIZE_NEAREST_NEIGHBOR: (
        R(4, in0(I16)), R(3, opt_true("half_pixel_centers") | opt_true("align_corners")), R(2, in0(I8)),
    ),
    B.MAXIMUM: _MAXMIN,
    B.MINIMUM: _MAXMIN,
    B.PACK: (R(2, in0(I8)), R(3, io_int16), R(4, in0(U32))),
    B.TILE: (R(3, in0(I8)), R(2, in0(STR))),
    B.SQUEEZE: (R(2, in0(STR)),),
    B.SPACE_TO_BATCH_ND: _S2B,
    B.BATCH_TO_SPACE_ND: _S2B,
    B.ADD: (
        R(6, in0(F16)),
        R(5, in0(I16) & not_input_quantized),
        R(4, in0(I64)),
        R(3, io_int16 & opt_false("pot_scale_int16")),
        R(2, in0(I8)),
    ),
    B.SUB: (
        R(5, io_int16 & opt_false("pot_scale_int16")),
        R(4, in0(I64)),
        R(3, broadcast_rank_gt4),
        R(2, in0(I8)),
    ),
    B.GATHER_ND: (R(5, in0(BOOL)), R(4, in1(I16)), R(3, in0(I16)), R(2, in0(STR))),
    B.DIV: (R(2, broadcast_rank_gt4),),
    B.TANH: _ACT,
    B.LOGISTIC: _ACT,
    B.FILL: (
        R(4, n_inputs_ge(2) & in1(F16)), R(3, n_inputs_ge(2) & in1(I8, I16)),
        R(2, n_inputs_ge(2) & in1(BOOL, STR)),
    ),
    B.EQUAL: (R(5, in0(I16)), R(3, in0(STR)), R(2, in0(I8))),
    B.NOT_EQUAL: (R(4, in0(I16)), R(3, in0(STR)), R(2, in0(I8))),
    B.LEAKY_RELU: (R(2, in0(I16)),),
    B.RANGE: (R(2, in0(I64)),),
    B.BATCH_MATMUL: (
        R(3, in0(I16)), R(2, in0(I8)), R(4, hybrid & opt_true("asymmetric_quantize_inputs")),
    ),
    B.PAD: _PAD,
    B.PADV2: _PAD,
    B.CONCATENATION: (R(6, in0(F16)), R(5, in0(I4)), R(4, in0(U32)), R(3, in0(I16)), R(2, in0(I8))),
    B.SOFTMAX: (R(4, in0(F16)),) + _SOFTMAX_LIKE,
    B.SIN: (R(2, in0(F16)),),
    B.COS: (R(2, in0(F16)),),
    B.MEAN: _SOFTMAX_LIKE,
    B.MIRROR_PAD: _SOFTMAX_LIKE,
    B.REDUCE_MAX: _SOFTMAX_LIKE,
    B.REDUCE_MIN: _SOFTMAX_LIKE,
    B.RELU6: _SOFTMAX_LIKE,
    B.RSQRT: _SOFTMAX_LIKE,
    B.RNN: _RNN_LIKE,
    B.UNIDIRECTIONAL_SEQUENCE_RNN: _RNN_LIKE,
    B.BIDIRECTIONAL_SEQUENCE_RNN: _RNN_LIKE,
    B.BIDIRECTIONAL_SEQUENCE_LSTM: _RNN_LIKE,
    B.UNIDIRECTIONAL_SEQUENCE_LSTM: (
        R(5, in0(I16) & in2(I8) & out0(I16)),
        R(4, opt_true("diagonal_recurrent_tensors")),
        R(3, hybrid_lstm & opt_true("asymmetric_quantize_inputs")),
        R(2, hybrid_lstm),
    ),
    B.ARG_MAX: _ARG,
    B.ARG_MIN: _ARG,
    B.SELECT: (
        R(4, in0(U32)),
        R(3, rank(0, "==", 5) | rank(1, "==", 5) | rank(2, "==", 5)),
        R(2, in0(I8)),
    ),
    B.LESS: _CMP,
    B.GREATER_EQUAL: _CMP,
    B.SELECT_V2: (R(2, in0(U32)),),
    B.SPACE_TO_DEPTH: _I8_ONLY,
    B.SPLIT_V: _I8_ONLY,
    B.SUM: _I8_ONLY,
    B.LOG_SOFTMAX: _I8_ONLY,
    B.GREATER: _I8_ONLY,
    B.LESS_EQUAL: _I8_ONLY,
    B.SQUARED_DIFFERENCE: _I8_ONLY,
    B.DEPTH_TO_SPACE: _I8_ONLY,
    B.TOPK_V2: (R(3, in0(I16) | in1(I16) | out1(I16)), R(2, in0(I8))),
    B.EXP: _EXP_LIKE,
    B.LOG: _EXP_LIKE,
    B.REDUCE_PROD: _EXP_LIKE,
    B.SQRT: _EXP_LIKE,
    B.DYNAMIC_UPDATE_SLICE: (
        R(6, in0(BF16)), R(5, in0(I4)), R(4, in0(I16)), R(3, in0(F16)), R(2, in2(I64)),
    ),
    B.BROADCAST_TO: (
        R(3, in0(I8, I16)),
        R(2, ALWAYS, "v{version}: BROADCAST_TO starts at version 2 (v1 was rolled back)",
          trap="broadcast-to-starts-at-2"),
    ),
    B.CAST: (
        R(8, in0(I2) | out0(I2) | in0(U4) | out0(U4)),
        R(7, in0(BF16) | out0(BF16)),
        R(6, in0(I4) & out0(F32)),
        R(5, in0(F64) | out0(F64) | in0(F16) | out0(F16)),
        R(4, in0(U16) | out0(U16)),
        R(3, in0(I8) | out0(I8)),
        R(2, in0(U32) | out0(U32)),
    ),
    B.WHERE: (
        R(1, in0(BOOL)),
        R(2, Pred("in0 is not BOOL", lambda s: s.input(0).type != BOOL,
                  lambda s: f"in0={s.input(0).type_name} (condition is not BOOL)")),
    ),
    B.GELU: (R(2, in0(I8, U8)),),
    # ops GetBuiltinOperatorVersion (op_version.cc) gives no rule: always version 1
    B.RESHAPE: (),
    B.HARD_SWISH: (),
    B.PRELU: (),
}


def covered_ops() -> tuple[str, ...]:
    """Names of the ops with a version table (including the op_version.cc ops whose table is empty)."""
    return tuple(sorted(op.name for op in RULES))


# ============================================================================================
# Verdicts
# ============================================================================================
@dataclass(frozen=True, repr=False)
class Version:
    """The computed version of one operator, with the row that decided it and why."""

    number: int
    reason: str  # "v2: dilation_w_factor=2 ≠ 1"
    rule: Rule | None  # None when no row matched (or for a CUSTOM op)
    op: str
    stored: int
    why: str = ""  # the reason without its "vN: " prefix
    traps: tuple[str, ...] = ()  # traps that shaped this verdict (texts)
    tried: tuple[tuple[Rule, bool], ...] = ()  # rows evaluated, in order, with their outcome
    signature: OpSignature | None = None

    @property
    def matches_stored(self) -> bool:
        return self.number == self.stored

    def explain(self) -> str:
        lines = [repr(self)]
        for rule, ok in self.tried:
            mark = "✔" if ok else "·"
            lines.append(f"  {mark} v{rule.version:<2} {rule.predicate.name}")
        for t in self.traps:
            lines.append(f"  trap: {t}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        where = ""
        if self.signature is not None:
            where = f" [subgraph {self.signature.subgraph}, op {self.signature.op_index}]"
        stored = "" if self.number == self.stored else f" (stored v{self.stored})"
        return f"{self.op}{where}: v{self.number}{stored} — {self.reason}"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr style='background:{'#e8f5e9' if ok else 'white'}'><td>v{r.version}</td>"
            f"<td><code>{html.escape(r.predicate.name)}</code></td><td>{'match' if ok else ''}</td></tr>"
            for r, ok in self.tried)
        traps = "".join(f"<li>{html.escape(t)}</li>" for t in self.traps)
        return (f"<div><b>{html.escape(self.op)}</b> → <b>v{self.number}</b> (stored v{self.stored}): "
                f"{html.escape(self.reason)}<table>{rows}</table>"
                + (f"<ul>{traps}</ul>" if traps else "") + "</div>")


CUSTOM_REASON = "custom op: version is the op author's"
DEFAULT_REASON = "v1: no rule applies"


def version_of(sig: OpSignature) -> Version:
    """Evaluate the op's rule table on a signature (first matching row wins; otherwise 1)."""
    if sig.op == B.CUSTOM:
        return Version(sig.version, CUSTOM_REASON, None, sig.name, sig.version, CUSTOM_REASON, signature=sig)
    rules = RULES.get(sig.op, ())
    tried: list[tuple[Rule, bool]] = []
    trap_notes: list[str] = []
    chosen: Rule | None = None
    for rule in rules:
        with probe_accesses() as log:
            ok = rule.matches(sig)
        for kind, slot in dict.fromkeys(log):
            n = len(sig.inputs if kind == "inputs" else sig.outputs)
            trap_notes.append(
                f"row v{rule.version} ({rule.predicate.name}) reads {kind}[{slot}] but the operator has "
                f"{n} {kind[:-1] if n == 1 else kind}: upstream's .at({slot}) would throw here; the workbench "
                "reads NoType, so "
                "the row does not match")
        tried.append((rule, ok))
        if ok:
            chosen = rule
            break
    seen = set()
    for trap in TRAPS:
        if sig.name in trap.ops and trap.applies is not None and trap.id not in seen and trap.applies(sig):
            seen.add(trap.id)
            trap_notes.append(f"[{trap.id}] {trap.text}")
    if chosen is None:
        number, reason, why = 1, DEFAULT_REASON, "no rule applies"
    else:
        number, reason, why = chosen.version, chosen.reason(sig), chosen.predicate.explain(sig)
    return Version(number, reason, chosen, sig.name, sig.version, why, tuple(trap_notes), tuple(tried), sig)


def op_version(model, subgraph: int, op_index: int) -> Version:
    """The version today's rules give operator ``op_index`` of ``subgraph``, and why."""
    return version_of(signature_of(model, subgraph, op_index))


def computed_versions(model) -> Iterable[Version]:
    """:func:`op_version` of every operator of every subgraph."""
    for s, sg in enumerate(model.subgraphs or ()):
        for i in range(len(sg.operators or ())):
            yield op_version(model, s, i)


def _rebuild(model, **changes):
    """dataclasses.replace for a Model, keeping the file it was read from (external buffers)."""
    new = dataclasses.replace(model, **changes)
    for attr in ("_source", "load_notes"):
        if attr in model.__dict__:
            object.__setattr__(new, attr, model.__dict__[attr])
    return new


def update_versions(model):
    """Like the converter's UpdateOpVersion: raise each OperatorCode.version to the highest version
    computed over the operators that use it — never lower it.  CUSTOM codes are left alone.

    Returns a new Model (the input is unchanged).
    """
    codes = list(model.operator_codes or ())
    best = {i: c.version for i, c in enumerate(codes)}
    for v in computed_versions(model):
        sig = v.signature
        if sig.op == B.CUSTOM:
            continue
        idx = model.subgraphs[sig.subgraph].operators[sig.op_index].opcode_index
        if v.number > best[idx]:
            best[idx] = v.number
    changed = False
    for i, c in enumerate(codes):
        if best[i] != c.version:
            codes[i] = dataclasses.replace(c, version=best[i])
            changed = True
    if not changed:
        return model
    return _rebuild(model, operator_codes=tuple(codes))
