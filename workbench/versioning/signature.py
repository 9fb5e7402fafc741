"""What the version rules look at: an operator's signature, extracted from a model.

``signature_of(model, subgraph, op_index)`` gathers, for one operator, exactly the facts TFLite's
``op_version.cc`` decides on (``op_signature.cc`` GetOpSignature): the type, shape and constness of every input
and output, the quantization of each tensor, the options *as TFLite's C parser sees them*, and a
few derived "ext" facts (is the filter per-channel quantized? is the convolution grouped? ...).

Extraction is kept apart from decision (:mod:`workbench.versioning.rules`), so a notebook can
stop here and look::

    >>> sig = signature_of(model, 0, 3)
    >>> sig                       # op, stored version, one line per tensor, options, ext facts
    >>> sig.input(1).scales       # the filter's per-channel scales

Two views of the options are kept side by side:

* ``sig.options`` — the C parser's params struct, field by field (schema names).  When the
  operator has *no* options table, TFLite zero-fills the struct (dilation 0, ``pot_scale_int16``
  false); when the table is present but a ``quantized_bias_type`` field is absent, the parser
  stores kTfLiteFloat32 = 1 — *non-zero*.  The rules test these values, as upstream does.
* ``sig.schema_options`` — the :class:`workbench.options.Options` object (schema defaults,
  present / defaulted / table absent), for explanations.

Where upstream's extraction would read past the end of a vector (a filter without four
dimensions, an input index that does not exist) the workbench does not crash: it records a note
in ``sig.notes`` and treats the fact as false, as upstream's zero-initialised ``ext_options``.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import ModelError
from ..options import (
    TFLITE_PADDING_NAMES,
    TFLITE_TYPE,
    Options,
    _runtime_value,  # the C parser's value of one field (shared with options)
    options_table_for,
)
from ..options import parse as parse_options
from ..schema import TABLES, builtin_code, op_name
from ..schema.declare import UnionRef
from ..schema.enums import BuiltinOperator, TensorType

__all__ = ["TensorSig", "ExtOptions", "OpSignature", "signature_of", "signatures", "TFLITE_TYPE_NAMES",
           "NO_SLOT", "type_name"]

# runtime TfLiteType numbers → names (what the C parser stores for TensorType-valued options)
TFLITE_TYPE_NAMES = {
    0: "kTfLiteNoType", 1: "kTfLiteFloat32", 2: "kTfLiteInt32", 3: "kTfLiteUInt8", 4: "kTfLiteInt64",
    5: "kTfLiteString", 6: "kTfLiteBool", 7: "kTfLiteInt16", 8: "kTfLiteComplex64", 9: "kTfLiteInt8",
    10: "kTfLiteFloat16", 11: "kTfLiteFloat64", 12: "kTfLiteComplex128", 13: "kTfLiteUInt64",
    14: "kTfLiteResource", 15: "kTfLiteVariant", 16: "kTfLiteUInt32", 17: "kTfLiteUInt16",
    18: "kTfLiteInt4", 19: "kTfLiteBFloat16", 20: "kTfLiteInt2", 21: "kTfLiteUInt4",
    22: "kTfLiteFloat8e4m3fn", 23: "kTfLiteFloat8e5m2",
}
assert set(TFLITE_TYPE.values()) <= set(TFLITE_TYPE_NAMES)


def type_name(t: TensorType | None) -> str:
    """'INT8', or 'NoType' for an omitted tensor (upstream's kTfLiteNoType)."""
    return "NoType" if t is None else (t.name if isinstance(t, TensorType) else str(t))


@dataclass(frozen=True)
class TensorSig:
    """One input or output of an operator as the version rules see it.

    ``index`` is the tensor index in the subgraph; -1 marks an omitted optional input (its type is
    None, upstream's kTfLiteNoType).  ``slot`` is the position in the operator's input/output list.
    """

    slot: int
    index: int
    type: TensorType | None
    shape: tuple[int, ...] = ()
    shape_signature: tuple[int, ...] | None = None
    is_const: bool = False
    is_shape_dynamic: bool = False
    has_quantization: bool = False  # a QuantizationParameters table is present (even an empty one)
    scales: tuple[float, ...] = ()
    zero_points: tuple[int, ...] = ()
    quantized_dimension: int = 0
    sparse: bool = False
    name: str = ""
    exists: bool = True  # False for a slot past the end of the operator's list (see NO_SLOT)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def omitted(self) -> bool:
        return self.index == -1

    @property
    def per_channel(self) -> bool:
        """More than one scale (per-axis quantization along ``quantized_dimension``)."""
        return len(self.scales) > 1

    @property
    def type_name(self) -> str:
        return type_name(self.type)

    def __repr__(self) -> str:
        if not self.exists:
            return f"[{self.slot}] (no such slot)"
        if self.omitted:
            return f"[{self.slot}] omitted (-1) → NoType"
        bits = [f"[{self.slot}] t{self.index} {self.type_name} {list(self.shape)}"]
        if self.is_const:
            bits.append("const")
        if self.is_shape_dynamic:
            bits.append(f"dynamic {list(self.shape_signature or ())}")
        if self.has_quantization:
            if self.scales:
                q = f"scale={self.scales[0]:.6g}" if len(self.scales) == 1 else (
                    f"{len(self.scales)} scales (axis {self.quantized_dimension})")
                zp = f" zp={self.zero_points[0]}" if len(self.zero_points) == 1 else ""
                bits.append(f"quant {q}{zp}")
            else:
                bits.append("quant table (no scales)")
        if self.sparse:
            bits.append("sparse")
        if self.name:
            bits.append(f"'{self.name}'")
        return " ".join(bits)


def _no_slot(slot: int) -> TensorSig:
    return TensorSig(slot=slot, index=-1, type=None, exists=False)


NO_SLOT = _no_slot(-1)


@dataclass(frozen=True)
class ExtOptions:
    """Upstream's ``ext_options``: facts derived per op (zero for every other op, like its memset).

    * CONV_2D: ``is_per_channel_quantized`` (filter scale count == filter.shape[0]),
      ``is_grouped_convolution`` (input.shape[3] ≠ filter.shape[3]).
    * DEPTHWISE_CONV_2D: ``is_per_channel_quantized`` (filter scale count == filter.shape[3]).
    * FULLY_CONNECTED: ``sparse_weight``, ``is_per_channel_quantized`` (scale count == shape[0]).
    * MUL: ``input1_scale``/``input2_scale``/``output_scale`` (first scale of each, when all three
      have one), ``input_quantized`` (either input has a quantization table).
    * ADD, ABS: ``input_quantized`` (input 0 has a quantization table, even an empty one).
    * QUANTIZE (output) / DEQUANTIZE (input): ``is_per_channel_quantized`` = more than one scale and
      as many as the quantized dimension's size.
    * EMBEDDING_LOOKUP: ``is_per_channel_quantized`` on the table (input 1) along dim 0.
    * STRIDED_SLICE: ``num_dims`` = rank of input 0.
    """

    is_per_channel_quantized: bool = False
    is_grouped_convolution: bool = False
    sparse_weight: bool = False
    input_quantized: bool = False
    input1_scale: float = 0.0
    input2_scale: float = 0.0
    output_scale: float = 0.0
    num_dims: int = 0

    def non_zero(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v}


# -- probing out-of-range accesses -------------------------------------------------------------
# Upstream reads ``op_sig.outputs.at(1)`` etc.; past the end, C++'s .at() throws.  The workbench
# answers "no such slot" (type NoType) and, while a rule is being evaluated, records the access
# so the verdict can say which test would have thrown upstream.
_PROBE: contextvars.ContextVar[list | None] = contextvars.ContextVar("_PROBE", default=None)


@contextlib.contextmanager
def probe_accesses():
    """Collect ('inputs'|'outputs', slot) for every out-of-range access inside the block."""
    log: list[tuple[str, int]] = []
    token = _PROBE.set(log)
    try:
        yield log
    finally:
        _PROBE.reset(token)


@dataclass(frozen=True, repr=False)
class OpSignature:
    """Everything ``op_version.cc`` decides on for one operator (``op_signature.cc`` GetOpSignature)."""

    op: BuiltinOperator | int
    name: str
    version: int  # the version stored in the file (OperatorCode.version)
    inputs: tuple[TensorSig, ...]
    outputs: tuple[TensorSig, ...]
    options: Mapping[str, Any]  # the C parser's params struct (zero-filled when the table is absent)
    schema_options: Options | None  # the schema view (defaults, present / defaulted / absent)
    ext: ExtOptions
    need_broadcast: bool  # NeedBroadcastForBinaryInputs: ≥ 2 inputs and shapes of 0 and 1 differ
    max_input_rank: int  # GetInputMaxDims: largest input rank
    subgraph: int = 0
    op_index: int = 0
    custom_name: str | None = None
    notes: tuple[str, ...] = ()
    options_table_present: bool = False

    # -- accessors the rules use ---------------------------------------------------------------
    def input(self, i: int) -> TensorSig:
        return self._slot(self.inputs, "inputs", i)

    def output(self, i: int) -> TensorSig:
        return self._slot(self.outputs, "outputs", i)

    @staticmethod
    def _slot(seq, kind: str, i: int) -> TensorSig:
        if 0 <= i < len(seq):
            return seq[i]
        log = _PROBE.get()
        if log is not None:
            log.append((kind, i))
        return _no_slot(i)

    def option(self, name: str, default: Any = 0) -> Any:
        """A field of the C parser's params struct (``default`` for ops without that field)."""
        return self.options.get(name, default)

    @property
    def is_custom(self) -> bool:
        return self.op == BuiltinOperator.CUSTOM

    def types(self) -> str:
        ins = ", ".join(t.type_name for t in self.inputs)
        outs = ", ".join(t.type_name for t in self.outputs)
        return f"({ins}) → ({outs})"

    def __repr__(self) -> str:
        lines = [f"OpSignature {self.name} (subgraph {self.subgraph}, op {self.op_index}; stored v{self.version})"]
        for label, seq in (("inputs", self.inputs), ("outputs", self.outputs)):
            lines.append(f"  {label}:")
            lines.extend(f"    {t!r}" for t in seq)
        if self.schema_options is not None and self.schema_options.table:
            state = "present" if self.options_table_present else "ABSENT → zero-filled params"
            opts = ", ".join(f"{k}={_fmt_option(k, v)}" for k, v in self.options.items())
            lines.append(f"  options ({self.schema_options.table}, {state}): {opts}")
        ext = self.ext.non_zero()
        if ext:
            lines.append("  ext: " + ", ".join(f"{k}={v}" for k, v in ext.items()))
        lines.append(f"  need_broadcast={self.need_broadcast}, max_input_rank={self.max_input_rank}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)


def _fmt_option(name: str, value: Any) -> str:
    if name == "quantized_bias_type" and isinstance(value, int):
        return f"{TFLITE_TYPE_NAMES.get(value, value)} ({value})"
    if name == "padding" and isinstance(value, int):
        return f"{TFLITE_PADDING_NAMES.get(value, value)} ({value})"
    return repr(value)


# -- extraction --------------------------------------------------------------------------------
def _tensor_sig(model, sg, slot: int, index: int) -> TensorSig:
    tensors = sg.tensors or ()
    if index < 0 or index >= len(tensors):
        # -1 (omitted) or an index past the tensor list: upstream keeps kTfLiteNoType
        return TensorSig(slot=slot, index=index, type=None)
    t = tensors[index]
    is_const = False
    buffers = model.buffers or ()
    if t.buffer != 0 and t.buffer < len(buffers):
        b = buffers[t.buffer]
        # upstream tests buffer->data() only; data stored outside the FlatBuffer (offset/size) is
        # invisible to it (see TRAPS in rules.py)
        is_const = b.data is not None and len(b.data) != 0
    sig = tuple(t.shape_signature) if t.shape_signature is not None else None
    q = t.quantization
    ttype = t.type if isinstance(t.type, TensorType) else None
    return TensorSig(
        slot=slot, index=index, type=ttype, shape=tuple(t.shape or ()), shape_signature=sig,
        is_const=is_const, is_shape_dynamic=bool(sig) and any(d == -1 for d in sig),
        has_quantization=q is not None, scales=tuple(q.scale or ()) if q is not None else (),
        zero_points=tuple(q.zero_point or ()) if q is not None else (),
        quantized_dimension=int(q.quantized_dimension) if q is not None else 0,
        sparse=t.sparsity is not None, name=t.name or "")


def _c_params(code, opts: Options | None) -> tuple[dict[str, Any], bool, list[str]]:
    """The C parser's params struct as a dict, whether the table it reads is present, notes."""
    notes: list[str] = []
    expected = options_table_for(code)
    if expected is None or opts is None or opts.table is None:
        return {}, False, notes
    _, want = expected
    if opts.table == want:
        return dict(opts.runtime()), opts.table_present, notes
    if opts.table_present:
        notes.append(f"the file stores {opts.table} but {op_name_of(code)} reads {want}: TFLite's parser "
                     "finds no table of its type and zero-fills its params")
    out = {}
    for f in TABLES[want].fields:
        if isinstance(f.type, UnionRef):
            continue
        out[f.name] = _runtime_value(f, f.resolved_default(), False)
    return out, False, notes


def op_name_of(code) -> str:
    return code.name if isinstance(code, BuiltinOperator) else f"BUILTIN_{code}"


def _ext(code, inputs, outputs, notes: list[str]) -> ExtOptions:
    def tin(i):
        return inputs[i] if i < len(inputs) else None

    def tout(i):
        return outputs[i] if i < len(outputs) else None

    def dim(t: TensorSig, d: int, what: str):
        if 0 <= d < len(t.shape):
            return t.shape[d]
        notes.append(f"{what}: tensor t{t.index} has shape {list(t.shape)}, no dimension {d} "
                     "(upstream would read past the end); treated as false")
        return None

    def real(t):  # a tensor that exists in the subgraph
        return t is not None and t.index >= 0 and t.type is not None

    kw: dict[str, Any] = {}
    if code == BuiltinOperator.CONV_2D:
        x, w = tin(0), tin(1)
        if real(w):
            n = dim(w, 0, "CONV_2D per-channel test")
            kw["is_per_channel_quantized"] = bool(w.has_quantization and n is not None and n > 0
                                                  and len(w.scales) == n)
            if real(x) and x.shape:
                a, b = dim(x, 3, "CONV_2D grouped test"), dim(w, 3, "CONV_2D grouped test")
                kw["is_grouped_convolution"] = a is not None and b is not None and a != b
    elif code == BuiltinOperator.DEPTHWISE_CONV_2D:
        w = tin(1)
        if real(w):
            n = dim(w, 3, "DEPTHWISE_CONV_2D per-channel test")
            kw["is_per_channel_quantized"] = bool(w.has_quantization and n is not None and n > 0
                                                  and len(w.scales) == n)
    elif code == BuiltinOperator.FULLY_CONNECTED:
        w = tin(1)
        if real(w):
            kw["sparse_weight"] = w.sparse
            if w.has_quantization and w.scales and w.shape:
                kw["is_per_channel_quantized"] = w.shape[0] >= 0 and len(w.scales) == w.shape[0]
    elif code == BuiltinOperator.MUL:
        if len(inputs) >= 2 and len(outputs) >= 1:
            a, b, o = inputs[0], inputs[1], outputs[0]
            if all(real(t) and t.has_quantization and t.scales for t in (a, b, o)):
                kw.update(input1_scale=a.scales[0], input2_scale=b.scales[0], output_scale=o.scales[0])
            kw["input_quantized"] = (real(a) and a.has_quantization) or (real(b) and b.has_quantization)
    elif code in (BuiltinOperator.ADD, BuiltinOperator.ABS):
        a = tin(0)
        kw["input_quantized"] = bool(real(a) and a.has_quantization)
    elif code == BuiltinOperator.STRIDED_SLICE:
        a = tin(0)
        kw["num_dims"] = a.rank if real(a) else 0
    elif code in (BuiltinOperator.DEQUANTIZE, BuiltinOperator.QUANTIZE):
        t = tin(0) if code == BuiltinOperator.DEQUANTIZE else tout(0)
        if real(t) and t.has_quantization and len(t.scales) > 1:
            n = dim(t, t.quantized_dimension, f"{code.name} per-channel test")
            kw["is_per_channel_quantized"] = n is not None and n >= 0 and len(t.scales) == n
    elif code == BuiltinOperator.EMBEDDING_LOOKUP:
        t = tin(1)
        if real(t) and t.has_quantization and t.scales and t.shape:
            kw["is_per_channel_quantized"] = len(t.scales) > 1 and t.shape[0] >= 0 and len(t.scales) == t.shape[0]
    return ExtOptions(**kw)


def signature_of(model, subgraph: int, op_index: int) -> OpSignature:
    """The :class:`OpSignature` of operator ``op_index`` of subgraph ``subgraph``."""
    subgraphs = model.subgraphs or ()
    if not 0 <= subgraph < len(subgraphs):
        raise ModelError(f"subgraph {subgraph} does not exist (there are {len(subgraphs)})", "model.subgraphs")
    sg = subgraphs[subgraph]
    ops = sg.operators or ()
    if not 0 <= op_index < len(ops):
        raise ModelError(f"operator {op_index} does not exist (subgraph {subgraph} has {len(ops)})",
                         f"model.subgraphs[{subgraph}].operators")
    op = ops[op_index]
    codes = model.operator_codes or ()
    if not 0 <= op.opcode_index < len(codes):
        raise ModelError(f"operator code {op.opcode_index} does not exist",
                         f"model.subgraphs[{subgraph}].operators[{op_index}].opcode_index")
    opcode = codes[op.opcode_index]
    code = builtin_code(opcode)
    inputs = tuple(_tensor_sig(model, sg, i, int(t)) for i, t in enumerate(op.inputs or ()))
    outputs = tuple(_tensor_sig(model, sg, i, int(t)) for i, t in enumerate(op.outputs or ()))
    notes: list[str] = []
    custom_name = None
    schema_opts = None
    params: dict[str, Any] = {}
    present = False
    if code == BuiltinOperator.CUSTOM:
        custom_name = opcode.custom_code or ""
    else:
        schema_opts = parse_options(model, op)
        params, present, more = _c_params(code, schema_opts)
        notes.extend(more)
    ext = _ext(code, inputs, outputs, notes)
    need_broadcast = len(inputs) >= 2 and inputs[0].shape != inputs[1].shape
    max_rank = max((t.rank for t in inputs), default=0)
    return OpSignature(
        op=code, name=op_name(opcode), version=int(opcode.version), inputs=inputs, outputs=outputs,
        options=MappingProxyType(params), schema_options=schema_opts, ext=ext,
        need_broadcast=need_broadcast, max_input_rank=max_rank, subgraph=subgraph, op_index=op_index,
        custom_name=custom_name, notes=tuple(notes), options_table_present=present)


def signatures(model):
    """Every operator's signature, subgraph by subgraph, in execution order."""
    for s, sg in enumerate(model.subgraphs or ()):
        for i in range(len(sg.operators or ())):
            yield signature_of(model, s, i)
