"""Targets as data: which ops a simulated accelerator takes, under which constraints, at what cost.

A target is a JSON (or TOML) file::

    {"name": "tidl", "description": "...", "source": "where the facts come from",
     "defaults": {"dtypes": ["FLOAT32", "INT8", "UINT8"], "max_rank": 4},
     "ops": {"AVERAGE_POOL_2D": {"max_filter": [9, 9]},
             "CONV_2D": {"max_version": 3, "fused_activations": ["NONE", "RELU", "RELU6"]},
             "Convolution2DTransposeBias": {"custom": true}},
     "cost": {"macs_per_cycle": 64, "clock_mhz": 650, "bandwidth_mb_s": 1600,
              "op_overhead_us": 2, "transfer_overhead_us": 40}}

``"*"`` in ``ops`` stands for every builtin op.  Constraint keys (per op, or in ``defaults``):

=====================  ==============================================================================
max_version            highest op version (the version stored in the file, as a delegate sees it)
dtypes                 allowed types of the node's runtime tensors (non-constant inputs and outputs)
fused_activations      allowed ``fused_activation_function`` values
max_filter             [h, w]: pool window, or the spatial size of a convolution's weights
max_stride             largest stride (either direction)
max_dilation           largest dilation factor (either direction)
stride_filters         {"1": [[3, 3], [5, 5]], "2": [[3, 3]]}: the filter sizes taken at each stride (the larger
                       of the two strides); a stride not listed is not taken (TIDL: "Depthwise Separable
                       Convolution only supports 3x3, 5x5, 7x7 with stride 1 and 3x3 with stride 2")
dilation_stride_1      true: a dilated convolution must have stride 1 (TIDL: "Dilated Convolution is only
                       supported for non-strided convolution")
max_rank               highest rank of any tensor of the node
max_tensor_bytes       largest tensor (bytes) the node reads or writes
max_nonunit_dims       only the N innermost dimensions of the node's runtime tensors (activations) may be
                       > 1 (Edge TPU: "tensors are 3-D or less"; weights, such as a [32, 3, 3, 3] filter,
                       are parameters and are not checked)
const_inputs           input slots that must be static: constants, or DEQUANTIZE/DENSIFY of constants
reduce_axes            MEAN/SUM/PAD...: the (constant) axes must be among these
no_batch_axis          true: the op's axes (MEAN/SUM/REDUCE_* input 1, PAD's padded axes, PACK's axis,
                       SPLIT's axis) may not lie outside the 3 innermost dimensions (Edge TPU: "no
                       reduction / padding / packing in batch dimension")
z_reduction_multiple   N: a reduction over the innermost axis needs that axis to be a multiple of N
equal_dilation         true: the dilation factor must be the same in x and y
power_of_two_resize    true: RESIZE_*: each spatial size is the input's times or divided by a power of two
                       (1, 2, 4 ...): other ratios give interpolation weights that are not exact in
                       fixed point (Edge TPU: "depending on input/output size ... to avoid loss in
                       precision")
one_dimensional        ["input 1", "output 0"]: these tensors may be > 1 in their innermost dimension only
zero_constant_pair     true (CONCATENATION): a constant input is allowed only as one of exactly two
                       inputs, and must be all zeros (a zero padding)
option_values          {"weights_format": ["DEFAULT"]}: allowed values of options fields
min_inputs/max_inputs  how many inputs the node may have (XNNPACK: CONCATENATION of 2 to 5 tensors)
dtype_pairs            allowed [input 0, output 0] type pairs (QUANTIZE: FLOAT32→INT8 yes, INT8→UINT8 no)
input_dtypes           {"19": ["INT16"]}: the types one input slot may have instead of ``dtypes`` (the int8
                       LSTM's cell state is INT16)
unpack_with_consumers  (per op) true: a DEQUANTIZE / DENSIFY of constants (weights the delegate unpacks
                       itself) is taken only when every node reading its output is taken (XNNPACK)
subgraphs              (per op) true: the target also runs the subgraphs the op calls (IF / WHILE /
                       CALL_ONCE ...); they travel into the partition's sub-model, and every node in
                       them must pass the target's checks.  Without it such an op is refused: the
                       delegate sees one subgraph only ("calls subgraph 1 which the delegate would not
                       see"), as TFLite's delegates do unless they handle the called subgraphs
=====================  ==============================================================================

``"variables"`` (top level) says where a target keeps resource variables:

* ``"private"`` (default): in the device's own memory.  A variable's id only means something where
  it was made, so every node touching it — VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, and a
  CALL_ONCE whose init subgraph assigns it — goes to one place, a partition or the CPU ("shares
  resource variable 'x' with node 0 (CALL_ONCE), which stays on the CPU").
* ``"shared"``: the delegate reads and writes the interpreter's own variables, so a variable may be
  used on both sides (LiteRT's XNNPACK: a delegated READ_VARIABLE sees what a CALL_ONCE on the CPU
  assigned).  As in XNNPACK, a VAR_HANDLE is taken only when a READ/ASSIGN_VARIABLE of its variable
  is; the compiled partition's sub-model runs on the outer interpreter's variables.

``"sources"`` (top level) names where the facts come from, by a short label (``{"paper": "Gou & Varis,
…", "ti-doc": "TI edgeai-tidl-tools docs/supported_ops_rts_versions.md …", "simulated": "…"}``), and an
op's ``"sources"`` gives the label of each of its rules (``{"op": "paper", "max_filter": "paper",
"stride_filters": "ti-doc"}``; ``"op"``: that the op is taken at all).  :meth:`Target.source_of` reads
them back, so a view can say where a rule comes from.

``"static_shapes"`` (top level, optional): the target takes only tensor sizes fixed at compile time; its
value is what it says when a tensor's ``shape_signature`` holds a -1 (the whole graph is refused).

``"status"`` (top level, optional) puts a compiler's own status words before each reason, by the kind
of failing check: ``unsupported_op`` (the op is not in ``ops``), ``version`` (max_version), ``dtype``
(dtypes, dtype_pairs, input_dtypes), ``rank`` (max_rank, max_nonunit_dims) and ``limitation`` (every
other constraint); an op's ``status_of`` ({"dtype": "limitation"}) reports one kind as another, as a
compiler does for that op.  The Edge TPU target uses the compiler's log words: "Operation is working on
an unsupported data type: ARG_MAX: output 0 is INT64, not in [INT8, UINT8]".

Whatever the target, a partition is convex over data AND control edges (side-effect ops keep their
order; see :mod:`workbench.partition.strategies`).

Loading validates everything and names the place: ``tidl.json: ops.CONV_2D.max_filter: expected
[height, width] ...``.  :meth:`Target.check` returns None for a node the target takes, or the exact
failing constraint ("AVERAGE_POOL_2D: filter 33x33 > 9x9 limit").
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import WorkbenchError
from ..schema.enums import ActivationFunctionType, BuiltinOperator, TensorType
from .plan import Reason

__all__ = ["Target", "TargetError", "load_target", "list_targets", "TARGETS_DIR", "CONSTRAINT_KEYS"]

TARGETS_DIR = Path(__file__).resolve().parent / "targets"


class TargetError(WorkbenchError):
    """A target file is malformed: the message names the file, the key path and what is wrong."""


CONSTRAINT_KEYS = {
    "max_version", "dtypes", "fused_activations", "max_filter", "max_stride", "max_dilation", "max_rank",
    "max_tensor_bytes", "max_nonunit_dims", "const_inputs", "reduce_axes", "min_inputs", "max_inputs",
    "dtype_pairs", "input_dtypes", "no_batch_axis", "z_reduction_multiple", "equal_dilation", "power_of_two_resize",
    "one_dimensional", "zero_constant_pair", "option_values", "stride_filters", "dilation_stride_1",
}
STATUS_KINDS = ("unsupported_op", "version", "dtype", "rank", "limitation")
_KIND_CODES = {"unsupported_op": "unsupported-op", "version": "version", "dtype": "dtype", "rank": "constraint",
               "limitation": "constraint"}
OP_KEYS = CONSTRAINT_KEYS | {"custom", "note", "subgraphs", "unpack_with_consumers", "status_of", "sources"}
COST_KEYS = {"macs_per_cycle": True, "clock_mhz": True, "bandwidth_mb_s": True, "op_overhead_us": False,
             "memory_mb": False, "max_partition_mb": False, "shared_memory": False,
             "transfer_overhead_us": False, "cpu_macs_per_cycle": False, "cpu_clock_mhz": False,
             "conv_efficiency": False, "depthwise_efficiency": False, "other_efficiency": False,
             "memory_bandwidth_mb_s": False}
_POSITIVE_IF_GIVEN = {"conv_efficiency", "depthwise_efficiency", "other_efficiency"}   # divisors (cost.py)
TOP_KEYS = {"name", "description", "source", "defaults", "ops", "cost", "dtype_note", "variables", "status",
            "sources", "static_shapes", "devices"}
VARIABLES = ("private", "shared")

_FILTER_OPS = {BuiltinOperator.AVERAGE_POOL_2D, BuiltinOperator.MAX_POOL_2D, BuiltinOperator.L2_POOL_2D}
_WEIGHT_OPS = {BuiltinOperator.CONV_2D, BuiltinOperator.DEPTHWISE_CONV_2D, BuiltinOperator.TRANSPOSE_CONV}
_WEIGHT_SLOT = {BuiltinOperator.CONV_2D: 1, BuiltinOperator.DEPTHWISE_CONV_2D: 1, BuiltinOperator.TRANSPOSE_CONV: 1}


@dataclass(frozen=True)
class OpRule:
    op: str
    constraints: dict
    custom: bool = False
    sources: dict = field(default_factory=dict)    # rule ("op" or a constraint key) → source label


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    source: str
    ops: dict            # op name → OpRule ('*' for every builtin op)
    defaults: dict
    cost: dict
    path: str = ""
    variables: str = "private"   # "shared": the delegate reads and writes the interpreter's own resource variables
    status: dict = field(default_factory=dict)   # kind of failing check → the compiler's status words
    sources: dict = field(default_factory=dict)  # source label → citation
    static_shapes: str = ""  # non-empty: the words refusing a graph with a -1 in a shape signature (Edge TPU)
    devices: dict = field(default_factory=dict)  # the chip's compute cores, as written (workbench.partition.devices)
    _cache: dict = field(default_factory=dict, repr=False, compare=False, hash=False)

    # -- lookup --------------------------------------------------------------------------------
    def rule(self, op_name: str, is_custom: bool) -> OpRule | None:
        r = self.ops.get(op_name)
        if r is not None and r.custom == is_custom:
            return r
        if not is_custom and "*" in self.ops:
            return self.ops["*"]
        return None

    def constraints(self, op_name: str, is_custom: bool) -> dict | None:
        key = (op_name, is_custom)
        if key not in self._cache:
            r = self.rule(op_name, is_custom)
            self._cache[key] = None if r is None else {**self.defaults, **r.constraints}
        return self._cache[key]

    @property
    def op_names(self) -> list[str]:
        return sorted(self.ops)

    def source_of(self, op_name: str, rule: str = "op") -> str:
        """Where a rule of ``op_name`` comes from (the citation of its source label), or ""."""
        r = self.ops.get(op_name)
        label = r.sources.get(rule, r.sources.get("op", "")) if r is not None else ""
        return self.sources.get(label, label)

    def check(self, graph, i: int) -> str | None:
        """None if the target takes node ``i`` of ``graph`` (a GraphView), else the failing constraint."""
        n = graph.nodes[i]
        is_custom = n.op == BuiltinOperator.CUSTOM
        c = self.constraints(n.name, is_custom)
        if c is None:
            words = self.status.get("unsupported_op")
            if words:
                return Reason("unsupported-op", f"{words}: {n.name}" + (" (custom op)" if is_custom else ""))
            return Reason("unsupported-op", f"{n.name}: not supported")
        found = _check_kind(graph, n, c, self)
        if found is None:
            return None
        kind, why = found
        code = _KIND_CODES[kind]
        kind = c.get("status_of", {}).get(kind, kind)
        words = self.status.get(kind)
        return Reason(code, f"{words}: {why}" if words else why)

    def __repr__(self) -> str:
        return f"Target({self.name!r}: {len(self.ops)} ops, {self.description})"


# ------------------------------------------------------------------------------------------------
# checks


_NO_TABLE = object()
_DEFAULT_PARAMS: dict = {}   # op code → the schema-default options table (or None: the op has none)


def _default_params(code):
    p = _DEFAULT_PARAMS.get(code, _NO_TABLE)
    if p is _NO_TABLE:
        from ..options import options_table_for
        from ..schema import CLASSES

        where = options_table_for(code)
        p = _DEFAULT_PARAMS[code] = None if where is None else CLASSES[where[1]]()
    return p


def _opts(graph, n):
    """The node's options table: the stored one, else the schema defaults (``options.parse(...).params``
    without the per-field explanations, which the checks do not need)."""
    cache = graph.__dict__.get("_options_cache")
    if cache is None:
        cache = graph.__dict__["_options_cache"] = {}
    p = cache.get(n.index, _NO_TABLE)
    if p is _NO_TABLE:
        from ..schema.declare import FlatTable

        op = graph.model.subgraphs[graph.subgraph].operators[n.index]
        p = op.builtin_options
        if not isinstance(p, FlatTable):
            p = op.builtin_options_2
            if not isinstance(p, FlatTable):
                p = _default_params(n.op)
        cache[n.index] = p
    return p


def _opt(graph, n, name, default=None):
    p = _opts(graph, n)
    if p is None or name not in p.__dataclass_fields__:
        return default
    return getattr(p, name)


_TYPE_NAMES: dict = {}


def _type_name(t) -> str:
    name = _TYPE_NAMES.get(t)
    if name is None:
        try:
            name = TensorType(t).name
        except ValueError:
            name = f"type {int(t)}"
        _TYPE_NAMES[t] = name
    return name


def _plural(what: str, items) -> str:
    items = list(items)
    return f"{what}{'s' if len(items) != 1 else ''} {', '.join(str(x) for x in items)}"


def _check_calls(graph, n, c: dict, target) -> str | None:
    """The rule for ops that call subgraphs: refused unless the target runs them too (``subgraphs``)."""
    called = graph.calls.get(n.index, ())
    if not called:
        return None
    if not c.get("subgraphs") or target is None:
        return f"{n.name}: calls {_plural('subgraph', sorted(called))} which the delegate would not see"
    count = len(graph.model.subgraphs)
    for s in graph.reachable_subgraphs(n.index, checked=False):
        if s == graph.subgraph:
            return f"{n.name}: calls subgraph {s}, which calls back where the call came from"
        if not 0 <= s < count:
            return f"{n.name}: calls subgraph {s}, which this model does not have ({count} subgraphs)"
        key = (id(graph.model), s)
        if key in _CHECKING:           # subgraphs calling each other: TFLite refuses recursion, so do we
            return f"{n.name}: calls subgraph {s}, which calls back where the call came from"
        _CHECKING.add(key)
        try:
            v = graph.view(s)
            for j in range(v.num_nodes):
                why = target.check(v, j)
                if why is not None:
                    return f"{n.name}: calls subgraph {s}, whose node {j} the target does not take ({why})"
        finally:
            _CHECKING.discard(key)
    return None


_CHECKING: set = set()   # (model, subgraph) whose nodes are being checked, against mutual recursion


def _check(graph, n, c: dict, target=None) -> str | None:
    """None if the constraints ``c`` take node ``n``, else the failing constraint (without status words)."""
    found = _check_kind(graph, n, c, target)
    return None if found is None else found[1]


def _const_values(graph, t):
    """The values of constant tensor ``t`` as a flat list of ints (None if it has no data)."""
    if t < 0 or not graph.constant[t]:
        return None
    from ..schema.types import tensor_data

    data = tensor_data(graph.model, graph.subgraph, t)
    return None if data is None else [int(v) for v in data.reshape(-1)]


def _op_axes(graph, n) -> tuple | None:
    """(axes, rank) of an op that works along axes (reductions, PAD, PACK, SPLIT); None if it has none or
    they are not constant.  Axes are normalised to 0..rank-1 of the tensor they index."""
    op = n.op
    B = BuiltinOperator
    ins = n.inputs
    if op in (B.MEAN, B.SUM, B.REDUCE_MAX, B.REDUCE_MIN, B.REDUCE_PROD, B.REDUCE_ANY):
        if len(ins) < 2 or ins[0] < 0:
            return None
        vals = _const_values(graph, ins[1])
        rank = len(graph.shape(ins[0]))
    elif op in (B.PAD, B.PADV2, B.MIRROR_PAD):
        if len(ins) < 2 or ins[0] < 0:
            return None
        vals = _const_values(graph, ins[1])
        rank = len(graph.shape(ins[0]))
        if vals is not None:
            vals = [k for k in range(min(rank, len(vals) // 2)) if vals[2 * k] or vals[2 * k + 1]]
    elif op == B.PACK:
        if not n.outputs or n.outputs[0] < 0:
            return None
        rank = len(graph.shape(n.outputs[0]))
        vals = [_opt(graph, n, "axis", 0)]
    elif op in (B.SPLIT, B.SPLIT_V):
        slot, data = (0, 1) if op == B.SPLIT else (2, 0)
        if len(ins) <= max(slot, data) or ins[data] < 0:
            return None
        vals = _const_values(graph, ins[slot])
        rank = len(graph.shape(ins[data]))
    else:
        return None
    if vals is None:
        return None
    return sorted({int(a) % max(rank, 1) for a in vals}), rank


def _spatial(graph, t):
    """(height, width) of a 4-D NHWC tensor, else None."""
    shape = graph.shape(t) if t >= 0 else ()
    return (int(shape[1]), int(shape[2])) if len(shape) == 4 else None


def _power_of_two_ratio(a: int, b: int) -> bool:
    """b = a·2^k or a = b·2^k for some k ≥ 0."""
    if a <= 0 or b <= 0:
        return False
    big, small = max(a, b), min(a, b)
    if big % small:
        return False
    q = big // small
    return q & (q - 1) == 0


def _slot_tensor(n, spec: str):
    kind, _, k = spec.partition(" ")
    seq = n.inputs if kind == "input" else n.outputs
    k = int(k)
    return seq[k] if k < len(seq) else -1


def _filter_hw(graph, n) -> tuple | None:
    """(height, width) of a pool's window or of a convolution's weights (None if unknown)."""
    if n.op in _FILTER_OPS:
        return (_opt(graph, n, "filter_height", 0), _opt(graph, n, "filter_width", 0))
    if n.op in _WEIGHT_OPS or n.name == "Convolution2DTransposeBias":
        wt = n.inputs[1] if len(n.inputs) > 1 else -1
        shape = graph.shape(wt) if wt >= 0 else ()
        if len(shape) == 4:
            return (shape[1], shape[2])
    return None


def _check_kind(graph, n, c: dict, target=None):
    """None if the constraints ``c`` take node ``n``, else (kind, failing constraint); kind is one of
    ``STATUS_KINDS`` (what a compiler's status words are chosen by)."""
    name = n.name
    mv = c.get("max_version")
    if mv is not None and n.version > mv:
        return "version", f"{name} v{n.version} > max version {mv}"
    why = _check_calls(graph, n, c, target)
    if why is not None:
        return "limitation", why
    lo, hi = c.get("min_inputs"), c.get("max_inputs")
    if (lo is not None and len(n.inputs) < lo) or (hi is not None and len(n.inputs) > hi):
        limits = f"{lo or 0} to {hi}" if hi is not None else f"at least {lo}"
        return "limitation", f"{name}: {len(n.inputs)} inputs, the target takes {limits}"
    pairs = c.get("dtype_pairs")
    if pairs is not None and n.inputs and n.outputs and n.inputs[0] >= 0 and n.outputs[0] >= 0:
        pair = (_type_name(graph.tensors[n.inputs[0]].type), _type_name(graph.tensors[n.outputs[0]].type))
        if pair not in pairs:
            return "dtype", (f"{name}: {pair[0]} → {pair[1]} not among the type pairs it takes "
                             f"({', '.join(f'{a} → {b}' for a, b in pairs)})")
    static = graph.static
    dts = c.get("dtypes")
    if dts is not None:
        # the tensors the node reads and writes at run time (weights, constant or unpacked, are not checked)
        tensors = graph.tensors
        slot_dts = c.get("input_dtypes") or {}
        for kind, seq in (("input", n.inputs), ("output", n.outputs)):
            for k, t in enumerate(seq):
                if t >= 0 and not static[t]:
                    tn = _type_name(tensors[t].type)
                    allowed = slot_dts.get(k, dts) if kind == "input" else dts
                    if tn not in allowed:
                        return "dtype", f"{name}: {kind} {k} is {tn}, not in [{', '.join(allowed)}]"
    ins = n.inputs
    for slot in c.get("const_inputs", ()):
        if slot < len(ins) and ins[slot] >= 0 and not static[ins[slot]]:
            return "limitation", f"{name}: input {slot} must be a constant"
    mr = c.get("max_rank")
    mb = c.get("max_tensor_bytes")
    mnu = c.get("max_nonunit_dims")
    if mr is not None or mb is not None or mnu is not None:
        for kind, seq in (("input", n.inputs), ("output", n.outputs)):
            for k, t in enumerate(seq):
                if t < 0:
                    continue
                if mr is not None or mnu is not None:
                    shape = graph.shape(t)
                    if mr is not None and len(shape) > mr:
                        return "rank", f"{name}: {kind} {k} has rank {len(shape)} > {mr} limit"
                if mb is not None and graph.nbytes(t) > mb:
                    return "limitation", f"{name}: {kind} {k} is {graph.nbytes(t)} bytes > {mb} limit"
                # activations only: parameters (a conv filter [32, 3, 3, 3], a bias) are not tensors the
                # accelerator lays out as y, x, z
                if (mnu is not None and not static[t] and len(shape) > mnu
                        and any(d > 1 for d in shape[:-mnu])):
                    return "rank", (f"{name}: {kind} {k} shape {list(shape)} has a dimension > 1 outside the "
                                    f"{mnu} innermost (limit)")
    for spec in c.get("one_dimensional", ()):
        t = _slot_tensor(n, spec)
        if t >= 0:
            shape = graph.shape(t)
            if any(d > 1 for d in shape[:-1]):
                return "limitation", f"{name}: {spec} shape {list(shape)} is not one-dimensional (only the " \
                                     f"innermost dimension may be > 1)"
    acts = c.get("fused_activations")
    if acts is not None:
        a = _opt(graph, n, "fused_activation_function")
        if a is not None:
            an = ActivationFunctionType(a).name if int(a) in ActivationFunctionType._value2member_map_ else str(a)
            if an not in acts:
                return "limitation", f"{name}: fused activation {an} not allowed (allowed: {', '.join(acts)})"
    ov = c.get("option_values")
    if ov:
        for field_name, allowed in ov.items():
            v = _opt(graph, n, field_name)
            if v is None:
                continue
            label = getattr(v, "name", None) or str(v)
            if v not in allowed and label not in allowed:
                return "limitation", (f"{name}: {field_name} {label} not allowed (allowed: "
                                      f"{', '.join(str(a) for a in allowed)})")
    op = n.op
    mf = c.get("max_filter")
    if mf is not None:
        hw = _filter_hw(graph, n)
        if hw is not None and (hw[0] > mf[0] or hw[1] > mf[1]):
            return "limitation", f"{name}: filter {hw[0]}x{hw[1]} > {mf[0]}x{mf[1]} limit"
    sf = c.get("stride_filters")
    if sf is not None and (op in _WEIGHT_OPS or op in _FILTER_OPS):
        sh, sw = _opt(graph, n, "stride_h", 1), _opt(graph, n, "stride_w", 1)
        s = max(sh, sw)
        if s not in sf:
            return "limitation", f"{name}: stride {sh}x{sw} not taken (strides: {', '.join(map(str, sorted(sf)))})"
        hw = _filter_hw(graph, n)
        if hw is not None and tuple(hw) not in sf[s]:
            sizes = ", ".join(f"{h}x{w}" for h, w in sf[s])
            return "limitation", f"{name}: filter {hw[0]}x{hw[1]} at stride {s} not among {sizes}"
    if c.get("dilation_stride_1"):
        dh, dw = _opt(graph, n, "dilation_h_factor", 1), _opt(graph, n, "dilation_w_factor", 1)
        sh, sw = _opt(graph, n, "stride_h", 1), _opt(graph, n, "stride_w", 1)
        if max(dh, dw) > 1 and max(sh, sw) > 1:
            return "limitation", f"{name}: dilation {dh}x{dw} with stride {sh}x{sw} (dilated only at stride 1)"
    ms = c.get("max_stride")
    if ms is not None:
        sh, sw = _opt(graph, n, "stride_h"), _opt(graph, n, "stride_w")
        if sh is not None and max(sh, sw) > ms:
            return "limitation", f"{name}: stride {sh}x{sw} > {ms} limit"
    md = c.get("max_dilation")
    if md is not None:
        dh, dw = _opt(graph, n, "dilation_h_factor"), _opt(graph, n, "dilation_w_factor")
        if dh is not None and max(dh, dw) > md:
            return "limitation", f"{name}: dilation {dh}x{dw} > {md} limit"
    if c.get("equal_dilation"):
        dh, dw = _opt(graph, n, "dilation_h_factor"), _opt(graph, n, "dilation_w_factor")
        if dh is not None and dh != dw:
            return "limitation", f"{name}: dilation {dh}x{dw} differs in y and x"
    ra = c.get("reduce_axes")
    if ra is not None and len(n.inputs) > 1 and n.inputs[1] >= 0:
        from ..schema.types import tensor_data

        t = n.inputs[1]
        if not graph.constant[t]:
            return "limitation", f"{name}: axes (input 1) must be a constant"
        data = tensor_data(graph.model, graph.subgraph, t)
        if op == BuiltinOperator.PAD or op == BuiltinOperator.PADV2:
            rank = len(graph.shape(n.inputs[0]))
            axes = [k for k in range(rank) if any(int(v) for v in data.reshape(-1, 2)[k])] if data is not None else []
        else:
            rank = len(graph.shape(n.inputs[0]))
            axes = sorted({int(a) % max(rank, 1) for a in (data.reshape(-1) if data is not None else ())})
        bad = [a for a in axes if a not in ra]
        if bad:
            return "limitation", f"{name}: axes {axes} not within {list(ra)}"
    if c.get("no_batch_axis") or c.get("z_reduction_multiple"):
        found = _op_axes(graph, n)
        if found is not None:
            axes, rank = found
            outer = [a for a in axes if a < rank - 3]
            if c.get("no_batch_axis") and outer:
                return "limitation", (f"{name}: along axis {', '.join(map(str, outer))} of a rank-{rank} tensor, "
                                      f"outside the 3 innermost (the batch dimension)")
            zm = c.get("z_reduction_multiple")
            if zm and rank - 1 in axes and n.inputs and n.inputs[0] >= 0:
                z = int(graph.shape(n.inputs[0])[-1])
                if z % zm:
                    return "limitation", f"{name}: reduces the innermost axis of size {z}, not a multiple of {zm}"
    if c.get("power_of_two_resize") and n.inputs and n.outputs and n.inputs[0] >= 0 and n.outputs[0] >= 0:
        a, b = _spatial(graph, n.inputs[0]), _spatial(graph, n.outputs[0])
        if a is not None and b is not None:
            bad = [(x, y) for x, y in zip(a, b) if not _power_of_two_ratio(x, y)]
            if bad:
                x, y = bad[0]
                ratio = f"{y // x}" if y % x == 0 else (f"1/{x // y}" if x % y == 0 else f"{y / x:.4g}")
                return "limitation", (f"{name} {a[0]}x{a[1]} → {b[0]}x{b[1]}: size ratio {ratio} is not a power "
                                      f"of two (1, 2, 4 …), so its interpolation weights are not exact in fixed "
                                      f"point (left on the CPU to avoid loss in precision)")
    if c.get("zero_constant_pair"):
        consts = [t for t in n.inputs if t >= 0 and graph.constant[t]]
        if consts:
            if len(n.inputs) != 2:
                return "limitation", (f"{name}: a constant input among {len(n.inputs)} inputs (allowed only as one "
                                      f"of 2, all zeros: a zero padding)")
            t = consts[0]
            q = graph.tensors[t].quantization
            zp = 0
            if q is not None and q.zero_point:
                zp = int(q.zero_point[0])
            vals = _const_values(graph, t) or []
            if any(v != zp for v in vals):
                return "limitation", f"{name}: constant input {n.inputs.index(t)} is not all zeros"
    return None


# ------------------------------------------------------------------------------------------------
# loading and validation


def _fail(where: str, key: str, msg: str):
    raise TargetError(f"{where}: {key}: {msg}" if key else f"{where}: {msg}")


def _validate_constraints(where: str, prefix: str, raw: dict, allowed: set) -> dict:
    if not isinstance(raw, dict):
        _fail(where, prefix, f"expected a table of constraints, got {type(raw).__name__}")
    out = {}
    for k, v in raw.items():
        key = f"{prefix}.{k}" if prefix else k
        if k not in allowed:
            close = difflib.get_close_matches(k, sorted(allowed), 1)
            _fail(where, key, "unknown constraint" + (f" (did you mean {close[0]!r}?)" if close else
                                                      f"; known: {', '.join(sorted(allowed))}"))
        if k in ("max_version", "max_stride", "max_dilation", "max_rank", "max_tensor_bytes", "max_nonunit_dims",
                 "min_inputs", "max_inputs"):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                _fail(where, key, f"expected a positive integer, got {v!r}")
        elif k == "dtypes":
            if not isinstance(v, list) or not v:
                _fail(where, key, f"expected a non-empty list of TensorType names, got {v!r}")
            for d in v:
                if d not in TensorType.__members__:
                    close = difflib.get_close_matches(str(d), list(TensorType.__members__), 1)
                    _fail(where, key,
                          f"{d!r} is not a TensorType" + (f" (did you mean {close[0]!r}?)" if close else ""))
        elif k == "fused_activations":
            if not isinstance(v, list) or not v:
                _fail(where, key, f"expected a non-empty list of ActivationFunctionType names, got {v!r}")
            for a in v:
                if a not in ActivationFunctionType.__members__:
                    _fail(where, key, f"{a!r} is not an ActivationFunctionType "
                                      f"({', '.join(ActivationFunctionType.__members__)})")
        elif k == "max_filter":
            if (not isinstance(v, list) or len(v) != 2
                    or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v)):
                _fail(where, key, f"expected [height, width] of positive integers, got {v!r}")
            v = tuple(v)
        elif k in ("const_inputs", "reduce_axes"):
            if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0
                                                   for x in v):
                _fail(where, key, f"expected a list of non-negative integers, got {v!r}")
            v = tuple(v)
        elif k == "dtype_pairs":
            if (not isinstance(v, list) or not v
                    or not all(isinstance(p, list) and len(p) == 2 for p in v)):
                _fail(where, key, f"expected a non-empty list of [input type, output type] pairs, got {v!r}")
            for p in v:
                for d in p:
                    if d not in TensorType.__members__:
                        close = difflib.get_close_matches(str(d), list(TensorType.__members__), 1)
                        hint = f" (did you mean {close[0]!r}?)" if close else ""
                        _fail(where, key, f"{d!r} is not a TensorType{hint}")
            v = tuple(tuple(p) for p in v)
        elif k == "input_dtypes":
            if not isinstance(v, dict) or not v:
                _fail(where, key, f"expected a table input slot → list of TensorType names, got {v!r}")
            out_v = {}
            for slot, types in v.items():
                if not str(slot).isdigit():
                    _fail(where, f"{key}.{slot}", "expected an input slot number")
                if not isinstance(types, list) or not types:
                    _fail(where, f"{key}.{slot}", f"expected a non-empty list of TensorType names, got {types!r}")
                for d in types:
                    if d not in TensorType.__members__:
                        _fail(where, f"{key}.{slot}", f"{d!r} is not a TensorType")
                out_v[int(slot)] = tuple(types)
            v = out_v
        elif k == "status_of":
            if not isinstance(v, dict) or not all(a in STATUS_KINDS and b in STATUS_KINDS for a, b in v.items()):
                _fail(where, key, f"expected a table kind → kind (kinds: {', '.join(STATUS_KINDS)}), got {v!r}")
            v = dict(v)
        elif k == "z_reduction_multiple":
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                _fail(where, key, f"expected a positive integer, got {v!r}")
        elif k == "one_dimensional":
            if (not isinstance(v, list) or not all(isinstance(x, str) and x.partition(" ")[0] in ("input", "output")
                                                    and x.partition(" ")[2].isdigit() for x in v)):
                _fail(where, key, f"expected a list such as [\"input 1\", \"output 0\"], got {v!r}")
            v = tuple(v)
        elif k == "option_values":
            if not isinstance(v, dict) or not all(isinstance(a, list) and a for a in v.values()):
                _fail(where, key, f"expected a table options field → non-empty list of allowed values, got {v!r}")
            v = {f: tuple(a) for f, a in v.items()}
        elif k == "stride_filters":
            if not isinstance(v, dict) or not v or not all(str(s).isdigit() and int(s) >= 1 for s in v):
                _fail(where, key, f"expected a table stride → list of [height, width], got {v!r}")
            table = {}
            for stride, sizes in v.items():
                if (not isinstance(sizes, list) or not sizes or not all(
                        isinstance(hw, list) and len(hw) == 2 and all(isinstance(x, int) and x >= 1 for x in hw)
                        for hw in sizes)):
                    _fail(where, f"{key}.{stride}", f"expected a list of [height, width], got {sizes!r}")
                table[int(stride)] = tuple(tuple(hw) for hw in sizes)
            v = table
        elif k == "sources":
            if not isinstance(v, dict) or not all(isinstance(a, str) and isinstance(b, str) for a, b in v.items()):
                _fail(where, key, f"expected a table rule → source label, got {v!r}")
            v = dict(v)
        elif k in ("custom", "subgraphs", "unpack_with_consumers", "no_batch_axis", "equal_dilation",
                   "power_of_two_resize", "zero_constant_pair", "dilation_stride_1"):
            if not isinstance(v, bool):
                _fail(where, key, f"expected true or false, got {v!r}")
        elif k == "note":
            if not isinstance(v, str):
                _fail(where, key, f"expected a string, got {v!r}")
        out[k] = v
    return out


def parse_target(doc, where: str = "<target>") -> Target:
    """Validate a decoded target document (a dict) and build the :class:`Target`."""
    if not isinstance(doc, dict):
        _fail(where, "", f"expected a table at the top level, got {type(doc).__name__}")
    for k in doc:
        if k not in TOP_KEYS:
            _fail(where, k, f"unknown key (known: {', '.join(sorted(TOP_KEYS))})")
    for k in ("name", "ops", "cost"):
        if k not in doc:
            _fail(where, k, "missing (a target needs name, ops and cost)")
    name = doc["name"]
    if not isinstance(name, str) or not name:
        _fail(where, "name", f"expected a non-empty string, got {name!r}")
    defaults = _validate_constraints(where, "defaults", doc.get("defaults", {}), CONSTRAINT_KEYS)
    ops_raw = doc["ops"]
    if not isinstance(ops_raw, dict) or not ops_raw:
        _fail(where, "ops", "expected a non-empty table op name → constraints")
    sources = doc.get("sources", {})
    if not isinstance(sources, dict) or not all(isinstance(a, str) and isinstance(b, str) and b
                                                for a, b in sources.items()):
        _fail(where, "sources", f"expected a table label → citation, got {sources!r}")
    ops = {}
    for op, raw in ops_raw.items():
        cons = _validate_constraints(where, f"ops.{op}", raw, OP_KEYS)
        custom = bool(cons.pop("custom", False))
        cons.pop("note", None)
        op_sources = cons.pop("sources", {})
        for rule, label in op_sources.items():
            if rule != "op" and rule not in cons:
                _fail(where, f"ops.{op}.sources.{rule}", "names no rule of this op")
            if label not in sources:
                _fail(where, f"ops.{op}.sources.{rule}", f"unknown source {label!r} (top-level sources: "
                                                          f"{', '.join(sources) or 'none'})")
        if not custom and op != "*" and op not in BuiltinOperator.__members__:
            close = difflib.get_close_matches(op, list(BuiltinOperator.__members__), 1)
            _fail(where, f"ops.{op}", "not a builtin operator" + (f" (did you mean {close[0]!r}?" if close else " (")
                  + "; a custom op needs \"custom\": true)")
        ops[op] = OpRule(op, cons, custom, op_sources)
    cost_raw = doc["cost"]
    if not isinstance(cost_raw, dict):
        _fail(where, "cost", f"expected a table, got {type(cost_raw).__name__}")
    cost = {}
    for k, v in cost_raw.items():
        if k not in COST_KEYS:
            _fail(where, f"cost.{k}", f"unknown cost figure (known: {', '.join(COST_KEYS)})")
        positive = COST_KEYS[k] or k in _POSITIVE_IF_GIVEN
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0 or (positive and v == 0):
            _fail(where, f"cost.{k}", f"expected a {'positive' if positive else 'non-negative'} number, got {v!r}")
        cost[k] = float(v)
    for k, required in COST_KEYS.items():
        if required and k not in cost:
            _fail(where, f"cost.{k}", "missing")
    cost.setdefault("op_overhead_us", 0.0)
    cost.setdefault("transfer_overhead_us", 0.0)
    variables = doc.get("variables", "private")
    if variables not in VARIABLES:
        _fail(where, "variables", f"expected one of {', '.join(map(repr, VARIABLES))}, got {variables!r}")
    status = doc.get("status", {})
    if not isinstance(status, dict):
        _fail(where, "status", f"expected a table kind → status words, got {type(status).__name__}")
    for k, v in status.items():
        if k not in STATUS_KINDS:
            _fail(where, f"status.{k}", f"unknown kind (known: {', '.join(STATUS_KINDS)})")
        if not isinstance(v, str) or not v:
            _fail(where, f"status.{k}", f"expected a non-empty string, got {v!r}")
    static = doc.get("static_shapes", "")
    if not isinstance(static, str):
        _fail(where, "static_shapes", f"expected the words refusing a dynamic-shaped graph, got {static!r}")
    return Target(name, str(doc.get("description", "")), str(doc.get("source", "")), ops, defaults, cost, where,
                  variables, dict(status), dict(sources), static, _devices(where, doc.get("devices", {})))


def _devices(where: str, raw) -> dict:
    """The ``devices`` table as written (its figures are checked by ``workbench.partition.devices``)."""
    if not isinstance(raw, dict):
        _fail(where, "devices", f"expected a table, got {type(raw).__name__}")
    return dict(raw)


def load_target(spec) -> Target:
    """A shipped target by name ('tidl', 'edgetpu', 'xnnpack', 'old-delegate'), or a path to a file."""
    if isinstance(spec, Target):
        return spec
    spec = str(spec)
    path = Path(spec)
    if not path.suffix and not path.exists():
        for ext in (".json", ".toml"):
            if (TARGETS_DIR / (spec + ext)).exists():
                path = TARGETS_DIR / (spec + ext)
                break
        else:
            raise TargetError(f"no target named {spec!r} (shipped: {', '.join(list_targets())}; or give a path "
                              f"to a .json/.toml file)")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TargetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if path.suffix == ".toml":
        import tomllib

        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise TargetError(f"{path}: not valid TOML: {exc}") from None
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TargetError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return parse_target(doc, str(path))


def list_targets() -> list[str]:
    return sorted(p.stem for p in TARGETS_DIR.iterdir() if p.suffix in (".json", ".toml"))
