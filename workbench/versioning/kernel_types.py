"""Which tensor-type combinations TFLite's kernels accept, per builtin op — data.

An op version says which kernel *generation* a release needs; it does not say that a kernel for
the operator's types exists at all.  The version rules fall through to version 1 for any
combination they have no row for (a CONV_2D with a uint8 input, int8 filter and int16 output is
"v1: no rule applies"), and no kernel of any release runs it.  This table lists, per op, the
type combinations some kernel handles, so :func:`workbench.versioning.check` can say so.

Where the rows come from: TFLite's kernels as ai-edge-litert 2.3 ships them (LiteRT's
``tflite/kernels/*.cc``, each kernel's Prepare and Eval type switches), found by handing LiteRT one
one-operator model per combination of FLOAT32, FLOAT16, INT8, UINT8, INT16, INT32, INT64 and BOOL
in the op's typed slots (integer activations quantized as the converter quantizes them) and
keeping the combinations it prepared *and* invoked; then cross-checked against the workbench
interpreter's kernels (``tests/versioning/test_kernel_types.py``, which also lists the
combinations LiteRT has and the workbench does not).  A few rows name types outside that grid
(int4 weights, …): they come from the version rules, which give those combinations their own
version because a kernel was written for them.

Only combinations a kernel *handles* are rows.  LiteRT's Prepare does not check every type: it
loads an ADD with float32 inputs and an int8 output, a DEPTHWISE_CONV_2D with an int16 filter
for int16 input, a CONV_2D with a float16 filter for float32 input — and its kernels then read the
bytes as another type.  Those are not rows.

Types only.  Quantization (per-tensor or per-channel, the fixed output scales of LOGISTIC or
SOFTMAX, power-of-two int16 scales), shapes and options are checked by the kernels, not here.
The table speaks only about signatures whose typed slots all hold a type of :data:`VOCABULARY`
(the grid above); for any other type (STRING, COMPLEX64, INT4, …) it says nothing.

The text below: one block per op — its name and its typed slots (``role=slot``, the slot an
:class:`~workbench.versioning.OpSignature` names: ``in0``, ``out1``, …) — then one row per
accepted combination, one type per slot in that order.  ``a|b`` means either type, ``*`` any
type, ``=in0`` the same type as slot ``in0``; text after ``;`` labels the row.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping

from ..schema.enums import BuiltinOperator as B
from ..schema.enums import TensorType as T

__all__ = ["KERNEL_TYPES", "VOCABULARY", "KernelTypes", "TypeRow", "TypeVerdict", "type_verdict",
           "KERNEL_TYPES_SOURCE"]

KERNEL_TYPES_SOURCE = ("TFLite kernels as ai-edge-litert 2.3 ships them (one-operator models per type "
                       "combination), cross-checked against the workbench interpreter")

VOCABULARY = frozenset({T.FLOAT32, T.FLOAT16, T.INT8, T.UINT8, T.INT16, T.INT32, T.INT64, T.BOOL})

_ALL = "float32|float16|int8|uint8|int16|int32|int64|bool"
_NUM = "float32|float16|int8|uint8|int16|int32|int64"
_SHAPED = "float32|int8|uint8|int16|int32|int64"

_TEXT = f"""
CONV_2D input=in0 filter=in1 output=out0
  float32 float32 float32
  float32 int8 float32 ; hybrid: float activations, int8 weights
  int8 int8 int8
  uint8 uint8 uint8 ; legacy uint8 quantization
  int16 int8 int16 ; 16x8: int16 activations, int8 weights
  int8 int4 int8 ; int8 with int4 weights

DEPTHWISE_CONV_2D input=in0 filter=in1 output=out0
  float32 float32 float32
  float32 int8 float32 ; hybrid: float activations, int8 weights
  int8 int8 int8
  uint8 uint8 uint8 ; legacy uint8 quantization
  int16 int8 int16 ; 16x8: int16 activations, int8 weights
  int8 int4 int8 ; int8 with int4 weights

TRANSPOSE_CONV input=in2 filter=in1 output=out0
  float32 float32 float32
  float32 int8 float32 ; hybrid: float activations, int8 weights
  int8 int8 int8
  uint8 uint8 uint8 ; legacy uint8 quantization
  int16 int8 int16 ; 16x8: int16 activations, int8 weights

FULLY_CONNECTED input=in0 weights=in1 output=out0
  float32 float32 float32
  float32 int8 float32 ; hybrid: float activations, int8 weights
  int8 int8 int8|int16 ; an int16 output for LSTM-style graphs
  uint8 uint8 uint8|int16 ; legacy uint8 quantization, or an int16 output (the LSTM format)
  int16 int8 int16 ; 16x8: int16 activations, int8 weights
  int16 int16 int16 ; int16 weights
  int8 int4 int8 ; int8 with int4 weights
  int16 int4 int16 ; int16 with int4 weights

BATCH_MATMUL lhs=in0 rhs=in1 output=out0
  float32 float32 float32
  float32 int8 float32 ; hybrid: float lhs, int8 rhs
  int8 int8 int8|int32
  int16 int8|int16 int16

EMBEDDING_LOOKUP table=in1 output=out0
  float32|float16|int8|uint8|int16|int32|int64|bool =in1
  int8 float32 ; hybrid: an int8 table read as float

ADD input1=in0 input2=in1 output=out0
  {_NUM} =in0 =in0
SUB input1=in0 input2=in1 output=out0
  {_SHAPED} =in0 =in0
MUL input1=in0 input2=in1 output=out0
  {_NUM} =in0 =in0
DIV input1=in0 input2=in1 output=out0
  float32|int8|uint8|int16|int32 =in0 =in0
MAXIMUM input1=in0 input2=in1 output=out0
  {_NUM} =in0 =in0
MINIMUM input1=in0 input2=in1 output=out0
  {_NUM} =in0 =in0
FLOOR_DIV input1=in0 input2=in1 output=out0
  float32|int8|int16|int32 =in0 =in0
FLOOR_MOD input1=in0 input2=in1 output=out0
  float32|int8|int16|int32|int64 =in0 =in0
SQUARED_DIFFERENCE input1=in0 input2=in1 output=out0
  float32|int8|int32 =in0 =in0
PRELU input=in0 alpha=in1 output=out0
  float32|int8|uint8|int16 =in0 =in0

EQUAL input1=in0 input2=in1 output=out0
  {_ALL} =in0 bool
NOT_EQUAL input1=in0 input2=in1 output=out0
  {_ALL} =in0 bool
LESS input1=in0 input2=in1 output=out0
  {_NUM} =in0 bool
LESS_EQUAL input1=in0 input2=in1 output=out0
  {_NUM} =in0 bool
GREATER input1=in0 input2=in1 output=out0
  {_NUM} =in0 bool
GREATER_EQUAL input1=in0 input2=in1 output=out0
  {_NUM} =in0 bool

ABS input=in0 output=out0
  float32|int8|int16|int32 =in0
RELU input=in0 output=out0
  float32|int8|uint8|int16 =in0
RELU6 input=in0 output=out0
  float32|int8|uint8|int16 =in0
LEAKY_RELU input=in0 output=out0
  float32|int8|uint8|int16 =in0
TANH input=in0 output=out0
  float32|float16|int8|uint8|int16 =in0
LOGISTIC input=in0 output=out0
  float32|float16|int8|uint8|int16 =in0
GELU input=in0 output=out0
  float32|float16|int8|uint8|int16 =in0
HARD_SWISH input=in0 output=out0
  float32|int8|uint8 =in0
EXP input=in0 output=out0
  float32|int8|int16 =in0
LOG input=in0 output=out0
  float32|int8|int16 =in0
SQRT input=in0 output=out0
  float32|int8|int16 =in0
RSQRT input=in0 output=out0
  float32|int8|int16 =in0
SIN input=in0 output=out0
  float32|float16 =in0
COS input=in0 output=out0
  float32|float16 =in0
SIGN input=in0 output=out0
  float32|int32 =in0
SOFTMAX input=in0 output=out0
  float32|float16|int8|uint8|int16 =in0
LOG_SOFTMAX input=in0 output=out0
  float32|int8|uint8 =in0
L2_NORMALIZATION input=in0 output=out0
  float32|int8|uint8 =in0
MAX_POOL_2D input=in0 output=out0
  float32|int8|uint8|int16 =in0
AVERAGE_POOL_2D input=in0 output=out0
  float32|int8|uint8|int16 =in0

DEQUANTIZE input=in0 output=out0
  float16|int8|uint8|int16 float32
  int4|uint4|int2 float32 ; packed low-bit weights
QUANTIZE input=in0 output=out0
  float32 int8|uint8|int16 ; quantize
  int8|uint8 int8|uint8|int16 ; requantize
  int16 int8|int16 ; requantize
CAST input=in0 output=out0
  * *

MEAN input=in0 output=out0
  {_SHAPED} =in0
SUM input=in0 output=out0
  {_SHAPED} =in0
REDUCE_PROD input=in0 output=out0
  float32|int8|int16|int32|int64 =in0
REDUCE_MAX input=in0 output=out0
  {_SHAPED} =in0
REDUCE_MIN input=in0 output=out0
  {_SHAPED} =in0
ARG_MAX input=in0 output=out0
  float32|int8|uint8|int32|bool int32|int64
ARG_MIN input=in0 output=out0
  float32|int8|uint8|int32|bool int32|int64

SQUEEZE input=in0 output=out0
  * =in0
TRANSPOSE input=in0 output=out0
  {_ALL} =in0
TILE input=in0 output=out0
  {_ALL} =in0
BROADCAST_TO input=in0 output=out0
  {_ALL} =in0
REVERSE_V2 input=in0 output=out0
  {_ALL} =in0
SLICE input=in0 output=out0
  {_ALL} =in0
STRIDED_SLICE input=in0 output=out0
  {_ALL} =in0
CONCATENATION input1=in0 input2=in1 output=out0
  {_ALL} =in0 =in0
PACK input1=in0 input2=in1 output=out0
  {_SHAPED} =in0 =in0
UNPACK input=in0 output=out0
  float32|float16|int8|uint8|int16|int32|bool =in0
SPLIT input=in1 output=out0
  {_SHAPED} =in1
SPLIT_V input=in0 output=out0
  {_SHAPED} =in0
PAD input=in0 output=out0
  {_ALL} =in0
PADV2 input=in0 output=out0
  {_ALL} =in0
MIRROR_PAD input=in0 output=out0
  {_ALL} =in0
SPACE_TO_BATCH_ND input=in0 output=out0
  {_ALL} =in0
BATCH_TO_SPACE_ND input=in0 output=out0
  {_ALL} =in0
SPACE_TO_DEPTH input=in0 output=out0
  float32|int8|uint8|int32|int64 =in0
DEPTH_TO_SPACE input=in0 output=out0
  float32|int8|uint8|int32|int64 =in0
RESIZE_BILINEAR input=in0 output=out0
  float32|int8|uint8|int16 =in0
RESIZE_NEAREST_NEIGHBOR input=in0 output=out0
  float32|float16|int8|uint8|int16|int32|bool =in0
GATHER params=in0 indices=in1 output=out0
  {_ALL} int32|int64|int16 =in0
GATHER_ND params=in0 indices=in1 output=out0
  {_ALL} int32|int64|int16 =in0
DYNAMIC_UPDATE_SLICE operand=in0 start_indices=in2 output=out0
  {_ALL} int32|int64 =in0
SELECT condition=in0 x=in1 output=out0
  bool {_ALL} =in1
SELECT_V2 condition=in0 x=in1 output=out0
  bool {_ALL} =in1
FILL dims=in0 value=in1 output=out0
  int32|int64 {_ALL} =in1
SPARSE_TO_DENSE indices=in0 values=in2 output=out0
  int32|int64 float32|int8|uint8|int32|int64 =in2
RANGE start=in0 output=out0
  float32|int32|int64 =in0
WHERE condition=in0 output=out0
  float32|int8|uint8|int32|int64|bool int64|int32
TOPK_V2 input=in0 k=in1 indices=out1
  float32|int8|uint8|int16|int32|int64 int32|int16 int32|int16
"""


# ---------------------------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TypeRow:
    """One accepted row: per slot a set of types (None: any type) or a reference to another slot."""

    cells: tuple  # per slot: a tuple of TensorTypes | None (any type) | str (the slot whose type it repeats)
    label: str = ""
    text: str = ""  # the row as written

    def matches(self, slots: tuple[str, ...], got: tuple) -> bool:
        for cell, t in zip(self.cells, got):
            if isinstance(cell, str):
                if t != got[slots.index(cell)]:
                    return False
            elif cell is not None and t not in cell:
                return False
        return True

    def expand(self, slots: tuple[str, ...]):
        """Every concrete type tuple this row accepts (``*`` expands to :data:`VOCABULARY`)."""
        free = [k for k, c in enumerate(self.cells) if not isinstance(c, str)]
        choices = [self.cells[k] if self.cells[k] is not None else sorted(VOCABULARY) for k in free]
        for picked in itertools.product(*choices):
            got = [None] * len(self.cells)
            for k, t in zip(free, picked):
                got[k] = t
            for k, c in enumerate(self.cells):
                if isinstance(c, str):
                    got[k] = got[slots.index(c)]
            yield tuple(got)


@dataclass(frozen=True, repr=False)
class KernelTypes:
    """The accepted type combinations of one op: its typed slots (role, slot) and its rows."""

    op: B
    roles: tuple[str, ...]  # "input", "filter", ...
    slots: tuple[str, ...]  # "in0", "in1", "out0", ...
    rows: tuple[TypeRow, ...]

    def accepts(self, got: tuple) -> TypeRow | None:
        for row in self.rows:
            if row.matches(self.slots, got):
                return row
        return None

    def combinations(self) -> list[tuple]:
        """Every concrete combination the rows accept, each once, in row order."""
        seen: dict = {}
        for row in self.rows:
            for got in row.expand(self.slots):
                seen.setdefault(got, row)
        return list(seen)

    def describe(self) -> str:
        """The rows as a reader wants them: 'float32·int8→float32 (hybrid …); …'."""
        return "; ".join(self._row_text(r) for r in self.rows)

    def _row_text(self, row: TypeRow) -> str:
        ins, outs = [], []
        for slot, cell in zip(self.slots, row.cells):
            if isinstance(cell, str):
                text = f"same as {self.roles[self.slots.index(cell)]}"
            elif cell is None:
                text = "any"
            else:
                text = "|".join(t.name.lower() for t in cell)
            (outs if slot.startswith("out") else ins).append(text)
        text = " · ".join(ins) + " → " + " · ".join(outs)
        return f"{text} ({row.label})" if row.label else text

    def __repr__(self) -> str:
        lines = [f"{self.op.name} ({self.header}), the combinations TFLite's kernels take:"]
        lines += [f"  {self._row_text(r)}" for r in self.rows]
        return "\n".join(lines)

    @property
    def header(self) -> str:
        ins = [r for r, s in zip(self.roles, self.slots) if not s.startswith("out")]
        outs = [r for r, s in zip(self.roles, self.slots) if s.startswith("out")]
        return " · ".join(ins) + " → " + " · ".join(outs)


def _cell(word: str):
    if word == "*":
        return None
    if word.startswith("="):
        return word[1:]
    return tuple(T[w.upper()] for w in word.split("|"))


def _parse(text: str) -> dict[B, KernelTypes]:
    out: dict[B, KernelTypes] = {}
    head = None
    rows: list[TypeRow] = []

    def close():
        if head is not None:
            op, roles, slots = head
            if op in out:
                raise ValueError(f"duplicate kernel-types block for {op.name}")
            out[op] = KernelTypes(op, roles, slots, tuple(rows))

    for raw in text.strip().splitlines():
        if not raw.strip():
            continue
        if not raw.startswith(" "):
            close()
            name, *pairs = raw.split()
            roles, slots = zip(*(p.split("=") for p in pairs))
            head, rows = (B[name], tuple(roles), tuple(slots)), []
            continue
        body, _, label = raw.partition(";")
        words = body.split()
        if len(words) != len(head[2]):
            raise ValueError(f"{head[0].name}: row {raw.strip()!r} has {len(words)} types for {len(head[2])} slots")
        cells = tuple(_cell(w) for w in words)
        for c in cells:
            if isinstance(c, str) and c not in head[2]:
                raise ValueError(f"{head[0].name}: row {raw.strip()!r} refers to unknown slot {c}")
        rows.append(TypeRow(cells, label.strip(), body.strip()))
    close()
    return out


KERNEL_TYPES: Mapping[B, KernelTypes] = _parse(_TEXT)


# ---------------------------------------------------------------------------------------------
# the verdict for one operator
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TypeVerdict:
    """Whether some TFLite kernel takes an operator's types: the types seen per typed slot, and the row
    that accepts them (None when no row does)."""

    entry: KernelTypes
    got: tuple  # TensorType per typed slot
    row: TypeRow | None

    @property
    def ok(self) -> bool:
        return self.row is not None

    def types_text(self) -> str:
        """'input UINT8, filter INT8, output INT16'."""
        return ", ".join(f"{role} {t.name}" for role, t in zip(self.entry.roles, self.got))

    def accepted_text(self) -> str:
        return f"{self.entry.header}: {self.entry.describe()}"


def _slot_type(sig, slot: str):
    t = sig.input(int(slot[2:])) if slot.startswith("in") else sig.output(int(slot[3:]))
    return t if t.exists and not t.omitted else None


def type_verdict(sig) -> TypeVerdict | None:
    """The verdict for an :class:`~workbench.versioning.OpSignature`, or None when the table cannot
    speak (an op it does not list, a typed slot that is missing, a type outside :data:`VOCABULARY`)."""
    entry = KERNEL_TYPES.get(sig.op)
    if entry is None:
        return None
    got = []
    for slot in entry.slots:
        t = _slot_type(sig, slot)
        if t is None or t.type not in VOCABULARY:
            return None
        got.append(t.type)
    got = tuple(got)
    return TypeVerdict(entry, got, entry.accepts(got))
