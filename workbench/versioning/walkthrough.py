"""Why operators have versions, told with one op: DEPTHWISE_CONV_2D gaining dilation in version 2.

The library side of ``notebooks/02_op_versions.ipynb``; each function returns a small result
object with a readable ``repr`` and an HTML view, so the notebook stays a few lines per step::

    >>> from workbench.versioning import walkthrough as wt
    >>> wt.declarations()                      # the options table before and after version 2
    >>> data = wt.build_depthwise(dilation=2)  # a tiny real model (bytes), stamped like the converter
    >>> wt.forward_compatibility()             # (a) a version-1 reader meets a version-2 file
    >>> wt.backward_compatibility()            # (b) a version-2 reader meets a version-1 file
    >>> wt.version_bump()                      # (c) version 2 → minimum runtime 1.12.0 → refusals

Two declarations of ``DepthwiseConv2DOptions`` are made with :func:`workbench.schema.declare.variant`:
:data:`DEPTHWISE_V1` (the five fields of op version 1) and :data:`DEPTHWISE_V2` (plus the two
dilation factors, default 1).  ``workbench.load(data, declarations={"DepthwiseConv2DOptions":
DEPTHWISE_V1})`` reads a file the way a reader built before version 2 would.

:class:`OpConfig` and :func:`build_op_model` make a one-operator model for any of the ops the
version explorer offers (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, MUL, TRANSPOSE_CONV,
RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR), from dtypes and options, in about a millisecond.
"""

from __future__ import annotations

import html
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import LossyWriteError
from ..schema import CLASSES, dump, load, metadata
from ..schema.builder import ModelBuilder
from ..schema.declare import INT32, Field, declaration, table_class, variant
from ..schema.enums import ActivationFunctionType, Padding, TensorType
from ..schema.enums import BuiltinOperator as B
from ..schema.options_tables import ACTIVATION, PADDING
from .rules import Version, op_version, update_versions
from .runtime import (
    MIN_RUNTIME_KEY,
    Finding,
    MinRuntime,
    check,
    check_delegate,
    min_runtime,
    write_min_runtime_metadata,
)

__all__ = ["DEPTHWISE_V1", "DEPTHWISE_V2", "declarations", "build_depthwise", "read_as",
           "forward_compatibility", "backward_compatibility", "version_bump", "ForwardCompat",
           "BackwardCompat", "VersionBump", "UnknownSlot", "DeclarationDiff", "OpConfig", "build_op_model",
           "EXPLORER_OPS", "DTYPES", "stamp_like_converter", "default_filter", "DEFAULT_BIAS"]

TABLE = "DepthwiseConv2DOptions"

# ---------------------------------------------------------------------------------------------
# The two declarations (slot ids as in the real schema, tensorflow/compiler/mlir/lite/schema/schema.fbs)
# ---------------------------------------------------------------------------------------------
_V1_FIELDS = (
    Field(0, "padding", PADDING, Padding.SAME),
    Field(1, "stride_w", INT32),
    Field(2, "stride_h", INT32),
    Field(3, "depth_multiplier", INT32),
    Field(4, "fused_activation_function", ACTIVATION, ActivationFunctionType.NONE),
)
DEPTHWISE_V1 = variant(TABLE, "v1", *_V1_FIELDS,
                       doc="DepthwiseConv2DOptions as of op version 1: no dilation fields yet")
DEPTHWISE_V2 = variant(TABLE, "v2", *_V1_FIELDS,
                       Field(5, "dilation_w_factor", INT32, 1, since=2),
                       Field(6, "dilation_h_factor", INT32, 1, since=2),
                       doc="DepthwiseConv2DOptions as of op version 2: dilation added, default 1")
READERS = {1: DEPTHWISE_V1, 2: DEPTHWISE_V2}


def _tick(flag: bool) -> str:
    return "✓" if flag else "—"


@dataclass(frozen=True, repr=False)
class DeclarationDiff:
    """The fields of one table as two declarations know them."""

    table: str
    labels: tuple[str, str]
    rows: tuple[tuple[int, str, bool, bool, Any, int | None], ...]  # slot, name, in a, in b, default, since

    def __repr__(self) -> str:
        a, b = self.labels
        lines = [f"{self.table}: slot  field                       {a:>8} {b:>8}  default  added in"]
        for slot, name, in_a, in_b, default, since in self.rows:
            d = default.name if hasattr(default, "name") else repr(default)
            lines.append(f"  {slot:>4}  {name:<27} {_tick(in_a):>8} {_tick(in_b):>8}  {d:<8} "
                         f"{'v' + str(since) if since else ''}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        a, b = self.labels
        body = []
        for slot, name, in_a, in_b, default, since in self.rows:
            d = default.name if hasattr(default, "name") else repr(default)
            bg = "#fff3e0" if in_a != in_b else "#fff"
            cells = (str(slot), f"<code>{html.escape(name)}</code>", _tick(in_a), _tick(in_b),
                     f"<code>{html.escape(d)}</code>", f"v{since}" if since else "")
            body.append(f"<tr style='background:{bg};color:#111'>"
                        + "".join(f"<td style='text-align:left'>{c}</td>" for c in cells) + "</tr>")
        return (f"<div><b>{html.escape(self.table)}</b><table><tr><th>slot</th><th>field</th>"
                f"<th>{html.escape(a)}</th><th>{html.escape(b)}</th><th>default</th><th>added in</th></tr>"
                + "".join(body) + "</table></div>")


def declarations(a: str = DEPTHWISE_V1, b: str = DEPTHWISE_V2) -> DeclarationDiff:
    """Which slots two declarations of a table know (default: depthwise as of version 1 and 2)."""
    da, db = declaration(a), declaration(b)
    fields: dict[int, Field] = {}
    for f in (*da.fields, *db.fields):
        fields.setdefault(f.id, f)
    names_a = {f.id for f in da.fields}
    names_b = {f.id for f in db.fields}
    rows = tuple((i, f.name, i in names_a, i in names_b, f.resolved_default(), f.since)
                 for i, f in sorted(fields.items()))
    label = lambda k: k.split("@", 1)[1] + " reader" if "@" in k else "schema"  # noqa: E731
    return DeclarationDiff(db.name.split("@")[0], (label(a), label(b)), rows)


# ---------------------------------------------------------------------------------------------
# Building the depthwise model
# ---------------------------------------------------------------------------------------------
INPUT_SHAPE = (1, 8, 8, 2)


DEFAULT_BIAS = (0.25, -0.25)


def default_filter() -> np.ndarray:
    """The walkthrough's 1x3x3x2 filter: distinct values, so dilation visibly changes the result."""
    return (np.arange(18, dtype=np.float32).reshape(1, 3, 3, 2) - 8.0) / 8.0


def stamp_like_converter(model):
    """What the converter does last: raise each op code to its computed version, then write the
    ``min_runtime_version`` metadata (16 zero-padded bytes) from the stored versions."""
    return write_min_runtime_metadata(update_versions(model))


def build_depthwise(dilation: int = 1, *, stride: int = 1, writer: int = 2, weights=None, bias=None,
                    stamp: bool = True, padding: Padding = Padding.SAME) -> bytes:
    """A one-operator float32 DEPTHWISE_CONV_2D model (input 1x8x8x2, 3x3 filter, bias), as bytes.

    ``writer`` picks the declaration its options table is written with: 2 (today's fields) or 1
    (no dilation fields — a file as a tool from before version 2 wrote it).  With ``stamp`` the
    model is finished like the converter finishes one: op versions computed, minimum runtime
    written to the metadata.  Without it, the operator code keeps version 1.
    """
    if writer not in READERS:
        raise ValueError(f"writer must be 1 or 2, not {writer!r}")
    if writer == 1 and dilation != 1:
        raise ValueError("a version-1 writer has no dilation fields: it can only write dilation 1")
    w = default_filter() if weights is None else np.asarray(weights, np.float32)
    bvec = np.array(DEFAULT_BIAS, np.float32) if bias is None else np.asarray(bias, np.float32)
    channels = w.shape[3]
    b = ModelBuilder("DEPTHWISE_CONV_2D walkthrough model")
    x = b.input("input", INPUT_SHAPE[:3] + (channels,))
    wt = b.constant("filter", w)
    bt = b.constant("bias", bvec)
    out_hw = [-(-INPUT_SHAPE[1] // stride), -(-INPUT_SHAPE[2] // stride)]
    if padding == Padding.VALID:
        span = 2 * dilation + 1
        out_hw = [(INPUT_SHAPE[1] - span) // stride + 1, (INPUT_SHAPE[2] - span) // stride + 1]
    y = b.tensor("output", [1, *out_hw, channels])
    fields = dict(padding=padding, stride_w=stride, stride_h=stride, depth_multiplier=1)
    if writer == 2:
        fields.update(dilation_w_factor=dilation, dilation_h_factor=dilation)
    options = table_class(READERS[writer])(**fields)
    b.op(B.DEPTHWISE_CONV_2D, [x, wt, bt], [y], options)
    b.output(y)
    model = load(dump(b.build()))
    if stamp:
        model = stamp_like_converter(model)
    return dump(model)


def read_as(data: bytes, reader: int):
    """Load ``data`` the way a reader that knows DepthwiseConv2DOptions as of version ``reader`` would."""
    return load(data, declarations={TABLE: READERS[reader]})


def _depthwise(model):
    return model.subgraphs[0].operators[0]


def _stored_version(model) -> int:
    return int(model.operator_codes[_depthwise(model).opcode_index].version)


# ---------------------------------------------------------------------------------------------
# (a) forward compatibility: an old reader meets a new file
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class UnknownSlot:
    """A vtable slot the reader has no declaration for: it sees that bytes are there, not what they mean."""

    slot: int
    offset: int  # absolute byte position of the stored value
    raw: bytes  # the four bytes found there
    newer_name: str  # what today's schema calls that slot

    @property
    def as_int32(self) -> int:
        return struct.unpack("<i", self.raw)[0]

    def __str__(self) -> str:
        return (f"slot {self.slot} at byte {self.offset}: {self.raw.hex(' ')} "
                f"(today's schema: {self.newer_name} = {self.as_int32})")


@dataclass(frozen=True, repr=False)
class ForwardCompat:
    """(a) A file written with dilation, read by a reader that predates the dilation fields."""

    dilation: int  # what the file says (today's reader)
    file_version: int  # OperatorCode.version stored in the file
    old_view: Any  # DepthwiseConv2DOptions as the version-1 reader decodes it
    notes: tuple  # the version-1 reader's load notes (one per unknown slot)
    unknown: tuple[UnknownSlot, ...]
    rewrite_error: str  # what dump() says when asked to write the old reader's model back
    rewritten_dilation: int  # dilation after an old tool rewrote the file (dropping what it did not know)
    rewritten_stored: int  # op version stored in the rewritten file
    rewritten_computed: int  # version today's rules give the rewritten operator

    def __repr__(self) -> str:
        lines = [f"(a) forward compatibility: a DEPTHWISE_CONV_2D v{self.file_version} file with dilation "
                 f"{self.dilation}, read by a version-1 reader",
                 f"  the old reader decodes: {self.old_view!r}  (no dilation attribute at all)",
                 "  and keeps notes on what it skipped:"]
        lines += [f"    {n}" for n in self.notes]
        lines += [f"    {u}" for u in self.unknown]
        lines.append(f"  writing the old reader's model back: {self.rewrite_error}")
        lines.append(f"  if an old tool drops the unknown fields anyway: dilation becomes {self.rewritten_dilation}, "
                     f"the op code still says v{self.rewritten_stored}, today's rules compute "
                     f"v{self.rewritten_computed}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        notes = "".join(f"<li><code>{html.escape(str(n))}</code></li>" for n in self.notes)
        unk = "".join(f"<li>{html.escape(str(u))}</li>" for u in self.unknown)
        return (f"<div style='line-height:1.5'><b>(a) forward compatibility</b>: a DEPTHWISE_CONV_2D "
                f"v{self.file_version} file with dilation {self.dilation}, read by a version-1 reader<br>"
                f"old reader decodes <code>{html.escape(repr(self.old_view))}</code> — no dilation at all"
                f"<br>load notes:<ul style='margin:2px 0'>{notes}</ul>bytes it skipped:"
                f"<ul style='margin:2px 0'>{unk}</ul>"
                f"writing it back: <i>{html.escape(self.rewrite_error)}</i><br>"
                f"if an old tool drops the unknown fields anyway: dilation becomes "
                f"<b>{self.rewritten_dilation}</b>; the op code still says v{self.rewritten_stored}; "
                f"today's rules compute v{self.rewritten_computed}</div>")


def forward_compatibility(dilation: int = 2) -> ForwardCompat:
    """Read a dilated depthwise file with the version-1 declaration and see what is lost."""
    data = build_depthwise(dilation)
    new = load(data)
    old = read_as(data, 1)
    old_opts = _depthwise(old).builtin_options
    origin = old_opts.origin
    src = bytes(data)
    today = declaration(TABLE)
    unknown = []
    for slot in origin.unknown_slots:
        pos = origin.pos + origin.slot_offsets[slot]
        unknown.append(UnknownSlot(slot, pos, src[pos:pos + 4], today.fields[slot].name))
    try:
        dump(old)
        rewrite_error = "written without complaint"
    except LossyWriteError as exc:
        rewrite_error = str(exc)
    rewritten = load(dump(old, drop_unknown=True))
    return ForwardCompat(
        dilation=int(_depthwise(new).builtin_options.dilation_w_factor), file_version=_stored_version(new),
        old_view=old_opts, notes=tuple(old.load_notes), unknown=tuple(unknown), rewrite_error=rewrite_error,
        rewritten_dilation=int(_depthwise(rewritten).builtin_options.dilation_w_factor),
        rewritten_stored=_stored_version(rewritten), rewritten_computed=op_version(rewritten, 0, 0).number)


# ---------------------------------------------------------------------------------------------
# (b) backward compatibility: a new reader meets an old file
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class BackwardCompat:
    """(b) A file written before dilation existed, read by today's (version-2) reader."""

    vtable_slots: int  # slots in the old file's vtable for the options table
    options: Any  # DepthwiseConv2DOptions as the version-2 reader decodes it
    dilation_xray: Any  # FieldXRay of dilation_w_factor: absent → default 1
    version: Version  # what today's rules compute for the old operator

    @property
    def dilation(self) -> tuple[int, int]:
        return int(self.options.dilation_w_factor), int(self.options.dilation_h_factor)

    def __repr__(self) -> str:
        return (f"(b) backward compatibility: a version-1 file, read by a version-2 reader\n"
                f"  the options vtable has {self.vtable_slots} slots (the writer knew 5 fields, stores none "
                f"that equals its default and trims the vtable after the last stored one)\n"
                f"  decoded: {self.options!r}  → dilation {self.dilation[0]} x {self.dilation[1]}\n"
                f"  {self.dilation_xray}\n"
                f"  computed version: {self.version.reason}")

    def _repr_html_(self) -> str:
        return (f"<div style='line-height:1.5'><b>(b) backward compatibility</b>: a version-1 file read by a "
                f"version-2 reader; its options vtable has {self.vtable_slots} slots<br>"
                f"dilation {self.dilation[0]} x {self.dilation[1]}: {self.dilation_xray._repr_html_()}<br>"
                f"computed version: <b>v{self.version.number}</b> — {html.escape(self.version.reason)}</div>")


def backward_compatibility() -> BackwardCompat:
    """Write the options with the version-1 declaration, read them with the version-2 one."""
    data = build_depthwise(1, writer=1)
    model = read_as(data, 2)
    opts = _depthwise(model).builtin_options
    return BackwardCompat(len(opts.origin.slot_offsets), opts, opts.xray("dilation_w_factor"),
                          op_version(load(data), 0, 0))


# ---------------------------------------------------------------------------------------------
# (c) the version bump and its consequences
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class VersionBump:
    """(c) dilation 2 → version 2 → a newer minimum runtime → old runtimes and delegates refuse."""

    before: Version  # dilation 1
    after: Version  # dilation 2
    runtime_before: MinRuntime
    runtime_after: MinRuntime
    metadata: str  # the min_runtime_version string written into the dilated file
    old_release: str
    old_findings: tuple[Finding, ...]  # check(dilated model, old_release)
    new_findings: tuple[Finding, ...]  # check(dilated model, runtime_after.version): nothing
    delegate_limits: dict
    delegate_findings: tuple[Finding, ...]

    def __repr__(self) -> str:
        lines = ["(c) the version bump",
                 f"  dilation 1: {self.before.reason} → minimum runtime {self.runtime_before.version}",
                 f"  dilation 2: {self.after.reason} → minimum runtime {self.runtime_after.version} "
                 f"(metadata min_runtime_version = {self.metadata!r})",
                 f"  TFLite {self.old_release} refuses it:"]
        lines += [f"    [{f.kind}] {f.message}" for f in self.old_findings]
        lines.append(f"  TFLite {self.runtime_after.version}: "
                     + ("no findings, it runs" if not self.new_findings else f"{len(self.new_findings)} findings"))
        limits = ", ".join(f"{B(k).name} ≤ v{v}" for k, v in self.delegate_limits.items())
        lines.append(f"  a delegate that knows {limits}:")
        lines += [f"    [{f.kind}] {f.message}" for f in self.delegate_findings]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        def items(fs):
            return "".join(f"<li><small>[{html.escape(f.kind)}]</small> <code>{html.escape(f.message)}</code></li>"
                           for f in fs) or "<li>no findings</li>"
        limits = ", ".join(f"{B(k).name} ≤ v{v}" for k, v in self.delegate_limits.items())
        return (f"<div style='line-height:1.5'><b>(c) the version bump</b><table>"
                f"<tr><th></th><th>computed version</th><th>minimum runtime</th></tr>"
                f"<tr><td>dilation 1</td><td>{html.escape(self.before.reason)}</td>"
                f"<td>{self.runtime_before.version}</td></tr>"
                f"<tr><td>dilation 2</td><td><b>{html.escape(self.after.reason)}</b></td>"
                f"<td><b>{self.runtime_after.version}</b></td></tr></table>"
                f"TFLite {html.escape(self.old_release)}:<ul style='margin:2px 0'>{items(self.old_findings)}</ul>"
                f"TFLite {self.runtime_after.version}:<ul style='margin:2px 0'>{items(self.new_findings)}</ul>"
                f"a delegate that knows {html.escape(limits)}:<ul style='margin:2px 0'>"
                f"{items(self.delegate_findings)}</ul></div>")


def version_bump(old_release: str = "1.11.0", delegate_max: int = 1) -> VersionBump:
    """Compare the undilated and the dilated model: version, minimum runtime, who refuses it."""
    plain, dilated = load(build_depthwise(1)), load(build_depthwise(2))
    limits = {int(B.DEPTHWISE_CONV_2D): delegate_max}
    rt_after = min_runtime(dilated)
    meta = metadata(dilated).get(MIN_RUNTIME_KEY, b"").split(b"\0", 1)[0].decode("ascii")
    return VersionBump(
        before=op_version(plain, 0, 0), after=op_version(dilated, 0, 0),
        runtime_before=min_runtime(plain), runtime_after=rt_after, metadata=meta, old_release=old_release,
        old_findings=tuple(check(dilated, old_release)), new_findings=tuple(check(dilated, rt_after.version)),
        delegate_limits=limits, delegate_findings=tuple(check_delegate(dilated, limits)))


# ---------------------------------------------------------------------------------------------
# One-operator models for the version explorer
# ---------------------------------------------------------------------------------------------
EXPLORER_OPS = (B.CONV_2D, B.DEPTHWISE_CONV_2D, B.FULLY_CONNECTED, B.ADD, B.MUL, B.TRANSPOSE_CONV,
                B.RESIZE_BILINEAR, B.RESIZE_NEAREST_NEIGHBOR)
DTYPES = {"float32": TensorType.FLOAT32, "int8": TensorType.INT8, "int16": TensorType.INT16,
          "uint8": TensorType.UINT8, "float16": TensorType.FLOAT16}
_FLOATS = (TensorType.FLOAT32, TensorType.FLOAT16)
_NP = {TensorType.FLOAT32: np.float32, TensorType.FLOAT16: np.float16, TensorType.INT8: np.int8,
       TensorType.INT16: np.int16, TensorType.UINT8: np.uint8, TensorType.INT32: np.int32, TensorType.INT64: np.int64}
_CONVS = (B.CONV_2D, B.DEPTHWISE_CONV_2D, B.TRANSPOSE_CONV)
_WEIGHTED = (B.CONV_2D, B.DEPTHWISE_CONV_2D, B.FULLY_CONNECTED, B.TRANSPOSE_CONV)
_RESIZE = (B.RESIZE_BILINEAR, B.RESIZE_NEAREST_NEIGHBOR)
_ACTIVATED = (B.CONV_2D, B.DEPTHWISE_CONV_2D, B.FULLY_CONNECTED, B.ADD, B.MUL, B.TRANSPOSE_CONV)


@dataclass(frozen=True)
class OpConfig:
    """The knobs of a one-operator model.  Knobs an op does not have are ignored (see :meth:`knobs`).

    ``weights`` is the filter / weights dtype of the weighted ops and the second operand of ADD
    and MUL.  ``quantization``: "per-tensor", "per-channel" (weights get one scale per output
    channel) or "none" (integer tensors without quantization parameters).  ``bias``: "present",
    "omitted" (index -1) or "no slot" (the input list simply ends).  ``options_table=False``
    writes no builtin options table at all (TFLite then zero-fills the op's params).
    """

    op: B = B.DEPTHWISE_CONV_2D
    input: str = "float32"
    weights: str = "float32"
    output: str = "float32"
    quantization: str = "per-tensor"
    dilation: int = 1
    stride: int = 1
    activation: str = "NONE"
    bias: str = "present"
    keep_num_dims: bool = False
    half_pixel_centers: bool = False
    align_corners: bool = False
    pot_scale_int16: bool = True
    options_table: bool = True

    def knobs(self) -> tuple[str, ...]:
        """The fields of this config that matter for its op."""
        op = self.op
        out = ["input", "output", "options_table"]
        if op not in _RESIZE:
            out += ["weights", "quantization"]
        if op in (B.CONV_2D, B.DEPTHWISE_CONV_2D):
            out.append("dilation")
        if op in _CONVS:
            out.append("stride")
        if op in _ACTIVATED:
            out.append("activation")
        if op in _WEIGHTED:
            out.append("bias")
        if op == B.FULLY_CONNECTED:
            out.append("keep_num_dims")
        if op in _RESIZE:
            out += ["half_pixel_centers", "align_corners"]
        if op == B.ADD:
            out.append("pot_scale_int16")
        return tuple(out)

    def describe(self) -> str:
        parts = [f"{k}={getattr(self, k)}" for k in self.knobs()]
        return f"{self.op.name}(" + ", ".join(parts) + ")"


_ZERO_POINT = {TensorType.UINT8: 128}


def _q(b: ModelBuilder, ttype: TensorType, cfg: OpConfig, channels: int | None = None, axis: int = 0,
       scale: float = 0.05):
    """Quantization parameters for an integer tensor (None for floats or quantization 'none')."""
    if ttype in _FLOATS or cfg.quantization == "none":
        return None
    zp = _ZERO_POINT.get(ttype, 0)
    if channels is not None and cfg.quantization == "per-channel":
        scales = [scale * (1 + 0.1 * k) for k in range(channels)]
        return b.quant(scales, [zp] * channels, quantized_dimension=axis)
    return b.quant(scale, zp)


def _const(b: ModelBuilder, name: str, shape, ttype: TensorType, quantization=None) -> int:
    n = int(np.prod(shape))
    values = (np.arange(n) % 7 - 3).reshape(shape)
    return b.constant(name, values.astype(_NP[ttype]), quantization=quantization)


def _bias_type(x: TensorType, w: TensorType) -> TensorType:
    if x in _FLOATS:
        return x  # float, or hybrid (float input, integer weights): a float bias
    return TensorType.INT64 if x == TensorType.INT16 else TensorType.INT32


def build_op_model(cfg: OpConfig, *, stamp: bool = True):
    """A one-operator :class:`~workbench.schema.Model` for ``cfg``, read back from its bytes.

    With ``stamp`` the operator code carries the computed version and the metadata the minimum
    runtime, as the converter leaves them.
    """
    op = B(cfg.op)
    x_t, w_t, y_t = DTYPES[cfg.input], DTYPES[cfg.weights], DTYPES[cfg.output]
    act = ActivationFunctionType[cfg.activation]
    b = ModelBuilder(f"one {op.name}")
    opts = None
    C = CLASSES
    if op in (B.CONV_2D, B.DEPTHWISE_CONV_2D):
        cin, cout = 2, (4 if op == B.CONV_2D else 2)
        x = b.input("input", [1, 8, 8, cin], x_t, quantization=_q(b, x_t, cfg))
        wshape, axis = ([cout, 3, 3, cin], 0) if op == B.CONV_2D else ([1, 3, 3, cout], 3)
        w = _const(b, "filter", wshape, w_t, _q(b, w_t, cfg, cout, axis))
        hw = -(-8 // cfg.stride)
        y = b.tensor("output", [1, hw, hw, cout], y_t, quantization=_q(b, y_t, cfg))
        common = dict(padding=Padding.SAME, stride_w=cfg.stride, stride_h=cfg.stride, fused_activation_function=act,
                      dilation_w_factor=cfg.dilation, dilation_h_factor=cfg.dilation)
        opts = (C["Conv2DOptions"](**common) if op == B.CONV_2D
                else C["DepthwiseConv2DOptions"](depth_multiplier=1, **common))
        inputs = [x, w]
    elif op == B.TRANSPOSE_CONV:
        cin, cout, hw_in = 2, 4, 4
        hw = hw_in * cfg.stride
        shape = b.constant("output_shape", np.array([1, hw, hw, cout], np.int32))
        w = _const(b, "filter", [cout, 3, 3, cin], w_t, _q(b, w_t, cfg, cout, 0))
        x = b.input("input", [1, hw_in, hw_in, cin], x_t, quantization=_q(b, x_t, cfg))
        y = b.tensor("output", [1, hw, hw, cout], y_t, quantization=_q(b, y_t, cfg))
        opts = C["TransposeConvOptions"](padding=Padding.SAME, stride_w=cfg.stride, stride_h=cfg.stride,
                                         fused_activation_function=act)
        inputs = [shape, w, x]
    elif op == B.FULLY_CONNECTED:
        cout = 4
        x = b.input("input", [1, 8], x_t, quantization=_q(b, x_t, cfg))
        w = _const(b, "weights", [cout, 8], w_t, _q(b, w_t, cfg, cout, 0))
        y = b.tensor("output", [1, cout], y_t, quantization=_q(b, y_t, cfg))
        opts = C["FullyConnectedOptions"](fused_activation_function=act, keep_num_dims=cfg.keep_num_dims)
        inputs = [x, w]
    elif op in (B.ADD, B.MUL):
        x = b.input("x", [1, 4, 4, 2], x_t, quantization=_q(b, x_t, cfg))
        x2 = b.input("y", [1, 4, 4, 2], w_t, quantization=_q(b, w_t, cfg))
        y = b.tensor("output", [1, 4, 4, 2], y_t, quantization=_q(b, y_t, cfg))
        if op == B.ADD:
            opts = C["AddOptions"](fused_activation_function=act, pot_scale_int16=cfg.pot_scale_int16)
        else:
            opts = C["MulOptions"](fused_activation_function=act)
        inputs = [x, x2]
    elif op in _RESIZE:
        x = b.input("input", [1, 4, 4, 2], x_t, quantization=_q(b, x_t, cfg))
        size = b.constant("size", np.array([8, 8], np.int32))
        y = b.tensor("output", [1, 8, 8, 2], y_t, quantization=_q(b, y_t, cfg))
        table = "ResizeBilinearOptions" if op == B.RESIZE_BILINEAR else "ResizeNearestNeighborOptions"
        opts = C[table](align_corners=cfg.align_corners, half_pixel_centers=cfg.half_pixel_centers)
        inputs = [x, size]
    else:
        raise ValueError(f"no one-operator recipe for {op.name}; choose one of "
                         + ", ".join(o.name for o in EXPLORER_OPS))
    if op in _WEIGHTED:
        if cfg.bias == "present":
            bt = _bias_type(x_t, w_t)
            n = {B.FULLY_CONNECTED: 4, B.TRANSPOSE_CONV: 4, B.CONV_2D: 4}.get(op, 2)
            bq = None
            if bt not in _FLOATS and cfg.quantization != "none":
                bq = _q(b, TensorType.INT32, cfg, n, 0, scale=0.0025)
            inputs.append(_const(b, "bias", [n], bt, bq))
        elif cfg.bias == "omitted":
            inputs.append(-1)
        elif cfg.bias != "no slot":
            raise ValueError(f"bias must be 'present', 'omitted' or 'no slot', not {cfg.bias!r}")
    b.op(op, inputs, [y], opts if cfg.options_table else None)
    b.output(y)
    model = load(dump(b.build()))
    return stamp_like_converter(model) if stamp else model
