"""Builtin options → typed, explained parameters; custom options → decoded FlexBuffers.

``parse(model, op)`` answers, for every options field of an operator: its value, whether the file
stored it or the schema default applies, which op version introduced it, and what TFLite's own C
parser would put in its params struct.  Those two can differ: when an operator has NO options
table at all, TFLite leaves its params struct zero-filled (dilation 0, padding "unknown", softmax
beta 0) instead of applying the schema defaults (dilation 1, padding SAME, ...).  The workbench
shows both rather than hiding the difference.
"""

from __future__ import annotations

import functools
import html
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from ..schema import CLASSES, UNIONS, builtin_code, op_name
from ..schema.declare import Enum, FlatTable, UnionRef, _short
from ..schema.enums import BuiltinOperator, Padding, TensorType
from .custom import CustomOptions, decode_custom

__all__ = ["parse", "Options", "OptionField", "CustomOptions", "decode_custom", "options_table_for",
           "C_STRUCT", "TFLITE_PADDING", "TFLITE_TYPE"]

# operators whose options table is not "<OpName>Options" (case-insensitive)
_TABLE_OVERRIDES = {
    BuiltinOperator.AVERAGE_POOL_2D: "Pool2DOptions",
    BuiltinOperator.MAX_POOL_2D: "Pool2DOptions",
    BuiltinOperator.L2_POOL_2D: "Pool2DOptions",
    BuiltinOperator.L2_NORMALIZATION: "L2NormOptions",
    BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_RNN: "SequenceRNNOptions",
    BuiltinOperator.MEAN: "ReducerOptions",
    BuiltinOperator.SUM: "ReducerOptions",
    BuiltinOperator.REDUCE_PROD: "ReducerOptions",
    BuiltinOperator.REDUCE_MAX: "ReducerOptions",
    BuiltinOperator.REDUCE_MIN: "ReducerOptions",
    BuiltinOperator.REDUCE_ANY: "ReducerOptions",
    BuiltinOperator.REDUCE_ALL: "ReducerOptions",
    BuiltinOperator.MAXIMUM: "MaximumMinimumOptions",
    BuiltinOperator.MINIMUM: "MaximumMinimumOptions",
    BuiltinOperator.CONV_3D_TRANSPOSE: "Conv3DOptions",
    BuiltinOperator.RANDOM_STANDARD_NORMAL: "RandomOptions",
    BuiltinOperator.RANDOM_UNIFORM: "RandomOptions",
    BuiltinOperator.MULTINOMIAL: "RandomOptions",
}

# TFLite's params struct for the common ops (tensorflow/lite/core/c/builtin_op_data.h)
C_STRUCT = {
    "Conv2DOptions": "TfLiteConvParams", "DepthwiseConv2DOptions": "TfLiteDepthwiseConvParams",
    "Pool2DOptions": "TfLitePoolParams", "FullyConnectedOptions": "TfLiteFullyConnectedParams",
    "SoftmaxOptions": "TfLiteSoftmaxParams", "ConcatenationOptions": "TfLiteConcatenationParams",
    "AddOptions": "TfLiteAddParams", "SubOptions": "TfLiteSubParams", "MulOptions": "TfLiteMulParams",
    "DivOptions": "TfLiteDivParams", "ReshapeOptions": "TfLiteReshapeParams",
    "ResizeBilinearOptions": "TfLiteResizeBilinearParams",
    "ResizeNearestNeighborOptions": "TfLiteResizeNearestNeighborParams",
    "L2NormOptions": "TfLiteL2NormParams", "LeakyReluOptions": "TfLiteLeakyReluParams",
    "TransposeConvOptions": "TfLiteTransposeConvParams", "StridedSliceOptions": "TfLiteStridedSliceParams",
    "ReducerOptions": "TfLiteReducerParams", "PackOptions": "TfLitePackParams",
    "UnpackOptions": "TfLiteUnpackParams", "SplitOptions": "TfLiteSplitParams",
    "SplitVOptions": "TfLiteSplitVParams", "SqueezeOptions": "TfLiteSqueezeParams",
    "GatherOptions": "TfLiteGatherParams", "BatchMatMulOptions": "TfLiteBatchMatMulParams",
    "SpaceToDepthOptions": "TfLiteSpaceToDepthParams", "DepthToSpaceOptions": "TfLiteDepthToSpaceParams",
    "MirrorPadOptions": "TfLiteMirrorPaddingParams", "CastOptions": "TfLiteCastParams",
    "ShapeOptions": "TfLiteShapeParams", "CumsumOptions": "TfLiteCumsumParams",
    "GeluOptions": "TfLiteGeluParams", "IfOptions": "TfLiteIfParams", "WhileOptions": "TfLiteWhileParams",
    "CallOnceOptions": "TfLiteCallOnceParams", "VarHandleOptions": "TfLiteVarHandleParams",
}

# schema Padding → TfLitePadding (0 = kTfLitePaddingUnknown, what a zero-filled struct holds)
TFLITE_PADDING = {Padding.SAME: 1, Padding.VALID: 2}
TFLITE_PADDING_NAMES = {0: "kTfLitePaddingUnknown", 1: "kTfLitePaddingSame", 2: "kTfLitePaddingValid"}

# schema TensorType → runtime TfLiteType (0 = kTfLiteNoType)
TFLITE_TYPE = {
    TensorType.FLOAT32: 1, TensorType.FLOAT16: 10, TensorType.INT32: 2, TensorType.UINT8: 3,
    TensorType.INT64: 4, TensorType.STRING: 5, TensorType.BOOL: 6, TensorType.INT16: 7,
    TensorType.COMPLEX64: 8, TensorType.INT8: 9, TensorType.FLOAT64: 11, TensorType.COMPLEX128: 12,
    TensorType.UINT64: 13, TensorType.RESOURCE: 14, TensorType.VARIANT: 15, TensorType.UINT32: 16,
    TensorType.UINT16: 17, TensorType.INT4: 18, TensorType.BFLOAT16: 19, TensorType.INT2: 20,
    TensorType.UINT4: 21, TensorType.FLOAT8_E4M3FN: 22, TensorType.FLOAT8_E5M2: 23,
}


@functools.cache
def _table_index() -> dict[str, tuple[str, str]]:
    """lower-cased table name → (union name, table name) over both options unions (built once: the
    unions are fixed by the schema)."""
    out = {}
    for uname in ("BuiltinOptions", "BuiltinOptions2"):
        for table in UNIONS[uname].members.values():
            out[table.lower()] = (uname, table)
    return out


def options_table_for(code) -> tuple[str, str] | None:
    """(union, table) an operator code's options live in, or None for ops without options."""
    if not isinstance(code, BuiltinOperator):
        return None
    index = _table_index()
    name = _TABLE_OVERRIDES.get(code)
    if name is not None:
        return index[name.lower()]
    return index.get(code.name.replace("_", "").lower() + "options")


@dataclass(frozen=True)
class OptionField:
    """One options field with its whole story."""

    name: str
    value: Any  # what the schema says (stored value, or the schema default)
    state: str  # "present" | "defaulted" | "table absent"
    default: Any
    since: int | None
    runtime: Any  # what TFLite's C parser puts in its params struct
    offset: int | None
    doc: str = ""
    differs_at_runtime: bool = False  # TFLite's struct holds another value than the schema implies
    runtime_name: str = ""  # e.g. "kTfLitePaddingSame" where the runtime renumbers an enum


def _runtime_value(f, value, table_present: bool):
    """The value TFLite's parser stores for one field (zero-filled when the table is absent)."""
    t = f.type
    if isinstance(t, Enum) and t.enum is Padding:
        return TFLITE_PADDING.get(value, 0) if table_present else 0
    if isinstance(t, Enum) and t.enum is TensorType:
        return TFLITE_TYPE.get(value, 0) if table_present else 0
    if table_present:
        return int(value) if isinstance(t, Enum) else value
    if isinstance(t, Enum):
        return 0
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return 0.0
    if isinstance(value, int):
        return 0
    return None


def _runtime_name(f, runtime) -> str:
    t = f.type
    if isinstance(t, Enum) and t.enum is Padding:
        return TFLITE_PADDING_NAMES.get(runtime, "")
    if isinstance(t, Enum) and t.enum is TensorType:
        return "kTfLiteNoType" if runtime == 0 else f"TfLiteType {runtime}"
    return ""


@dataclass(frozen=True)
class Options:
    """The parsed options of one operator (see :func:`parse`)."""

    op: str
    table: str | None
    union: str | None
    params: FlatTable | None  # the schema table, defaults filled in (also when the table is absent)
    table_present: bool
    fields: tuple[OptionField, ...]
    custom: CustomOptions | None = None
    path: str = ""

    @property
    def c_struct(self) -> str | None:
        return C_STRUCT.get(self.table or "")

    def __getattr__(self, name: str):
        params = self.__dict__.get("params")
        if params is not None and name in params.__dataclass_fields__:
            return getattr(params, name)
        raise AttributeError(name)

    def field(self, name: str) -> OptionField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.table} has no field {name!r}")

    def non_default(self) -> dict[str, Any]:
        """Fields whose value differs from the schema default."""
        return {f.name: f.value for f in self.fields if f.value != f.default}

    def runtime(self) -> dict[str, Any]:
        """What TFLite's C parser fills in (zeros for every field when the table is absent)."""
        return {f.name: f.runtime for f in self.fields}

    def explain(self) -> str:
        lines = [f"{self.op}: " + (f"{self.table}" + ("" if self.table_present else " (table ABSENT in the file)")
                                   if self.table else "no builtin options table")]
        for f in self.fields:
            since = f" [since v{f.since}]" if f.since else ""
            rt = ""
            if f.differs_at_runtime:
                rt = f"; but TFLite's parser stores {f.runtime!r}" + (f" ({f.runtime_name})" if f.runtime_name else "")
            elif f.runtime_name:
                rt = f"; runtime enum {f.runtime_name} = {f.runtime}"
            lines.append(f"  {f.name} = {_short(f.value)} ({f.state}{since}{rt})")
        if not self.table_present and self.table:
            lines.append("  Note: with no options table TFLite zero-fills its params struct instead of "
                         "applying the schema defaults.")
        if self.custom is not None:
            lines.append("  " + self.custom.explain())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.explain()

    def _repr_html_(self) -> str:
        rows = []
        colours = {"present": "#e8f5e9", "defaulted": "#fff8e1", "table absent": "#ffebee"}
        for f in self.fields:
            rows.append(
                f"<tr style='background:{colours[f.state]}'><td><code>{html.escape(f.name)}</code></td>"
                f"<td><code>{html.escape(_short(f.value))}</code></td><td>{f.state}</td>"
                f"<td><code>{html.escape(_short(f.default))}</code></td>"
                f"<td>{'v' + str(f.since) if f.since else ''}</td>"
                f"<td><code>{html.escape(f.runtime_name or repr(f.runtime))}</code>"
                f"{' ⚠ zero-filled' if f.differs_at_runtime else ''}</td></tr>")
        head = f"<b>{html.escape(self.op)}</b> — {html.escape(self.table or 'no options table')}"
        if self.table and not self.table_present:
            head += " <span style='color:#b71c1c'>(absent: TFLite zero-fills its params)</span>"
        custom = f"<div>{html.escape(self.custom.explain())}</div>" if self.custom else ""
        struct = f" → <code>{self.c_struct}</code>" if self.c_struct else ""
        return (f"<div>{head}{struct}<table><tr><th>field</th><th>value</th><th>stored?</th><th>default</th>"
                f"<th>added in</th><th>TFLite parser</th></tr>{''.join(rows)}</table>{custom}</div>")


def _op_location(model, op) -> tuple[int, int] | None:
    for s, sg in enumerate(model.subgraphs or ()):
        for i, o in enumerate(sg.operators or ()):
            if o is op:
                return s, i
    return None


def parse(model, op, subgraph: int | None = None) -> Options:
    """Parse an operator's options.

    ``op`` is an :class:`Operator` of ``model`` or an operator index (of ``subgraph``, default 0).
    """
    if isinstance(op, int):
        sg = model.subgraphs[subgraph or 0]
        if not 0 <= op < len(sg.operators or ()):
            raise ModelError(f"operator {op} does not exist", f"model.subgraphs[{subgraph or 0}].operators")
        op = sg.operators[op]
    codes = model.operator_codes or ()
    if not 0 <= op.opcode_index < len(codes):
        raise ModelError(f"operator code {op.opcode_index} does not exist", "operator.opcode_index")
    opcode = codes[op.opcode_index]
    code = builtin_code(opcode)
    name = op_name(opcode)
    path = op.origin.path if op.origin else ""
    custom = None
    if code == BuiltinOperator.CUSTOM:
        custom = decode_custom(name, op.custom_options)
    # which table does the file carry, and which does the op expect?
    stored = None
    union_name = None
    for uname, attr in (("BuiltinOptions", "builtin_options"), ("BuiltinOptions2", "builtin_options_2")):
        value = getattr(op, attr)
        if isinstance(value, FlatTable):
            stored, union_name = value, uname
            break
    expected = options_table_for(code)
    if stored is not None:
        table_name = type(stored).__name__
    elif expected is not None:
        union_name, table_name = expected
    else:
        return Options(name, None, None, None, False, (), custom, path)
    present = stored is not None
    params = stored if present else CLASSES[table_name]()
    fields = []
    # a table read with another declaration (schema.declare.variant) carries its own
    decl = type(params).__decl__
    for f in decl.fields:
        if isinstance(f.type, UnionRef):
            continue
        value = getattr(params, f.name)
        default = f.resolved_default()
        if not present:
            state = "table absent"
        else:
            stored = params.present(f.name)
            if stored is None:  # built in code: the writer will store exactly the non-defaults
                stored = value != default
            state = "present" if stored else "defaulted"
        x = params.xray(f.name)
        runtime = _runtime_value(f, value, present)
        # a renumbered enum (Padding SAME 0 -> kTfLitePaddingSame 1) is no difference in meaning;
        # zero-filling of an absent table is
        differs = runtime != _runtime_value(f, value, True)
        fields.append(OptionField(f.name, value, state, default, f.since, runtime, x.offset, f.doc,
                                  differs, _runtime_name(f, runtime)))
    return Options(name, table_name, union_name, params, present, tuple(fields), custom, path)
