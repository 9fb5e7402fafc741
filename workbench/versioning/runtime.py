"""Minimum runtime releases: which TFLite release first ran each (op, version), and what a model needs.

* :data:`RUNTIME_TABLE` — (op, version) → the first TFLite release with a kernel for it, as data,
  complete as in upstream's ``runtime_version.cc`` (every op, not only the teaching subset).
* :class:`RuntimeVersion` — release strings ordered by upstream's CompareRuntimeVersion rule
  (``tensorflow/lite/tools/versioning/runtime_version.cc``): split on '.', compare component by component as
  integers, skip a component that does not parse as an integer, and when all compared components are equal the
  string with *fewer* components is lower.  So ``"" < "1.5.0"`` and ``"2.3" < "2.3.0"``.
* :func:`min_runtime` — the model's minimum runtime from the versions STORED in the file (like the
  converter), or from today's computed versions (``computed=True``); with the entries that drive it.
* :func:`read_min_runtime_metadata` / :func:`write_min_runtime_metadata` — the converter's
  ``min_runtime_version`` metadata: a 16-byte, zero-filled buffer with the ASCII string copied in.
* :class:`RuntimeProfile` — what a release (or a kernel registry) supports; :func:`check` lists
  what would fail on it, with the error text that runtime prints — unregistered (op, version)
  pairs, custom ops the release does not register (:mod:`.custom_ops`), type combinations no
  kernel takes (:mod:`.kernel_types`); :func:`check_delegate` does the same for a delegate that
  only knows lower op versions.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterable, Mapping

from ..errors import VersionError
from ..schema import CLASSES, builtin_code, op_name, stored_min_runtime
from ..schema.enums import BuiltinOperator as B
from .custom_ops import (
    STOCK_CUSTOM_OPS,
    XNNPACK_CUSTOM_OPS,
    custom_op_text,
    flex_op_text,
    is_flex_op,
    node_failed_text,
)
from .kernel_types import type_verdict
from .rules import Version, _rebuild, op_version, version_of
from .signature import signature_of

__all__ = ["RUNTIME_TABLE", "REGISTERED", "RuntimeVersion", "compare_runtime_version", "runtime_for",
           "RuntimeEntry", "MinRuntime", "min_runtime", "read_min_runtime_metadata",
           "write_min_runtime_metadata", "RuntimeProfile", "Finding", "check", "check_delegate",
           "FINDING_KINDS", "CANNOT_RUN_KINDS", "MIN_RUNTIME_KEY", "METADATA_SIZE", "op_not_found_text",
           "code_out_of_range_text"]

MIN_RUNTIME_KEY = "min_runtime_version"
METADATA_SIZE = 16  # the MLIR exporter's kByteStringSize

# --------------------------------------------------------------------------------------------
# The table.  One line per op in the order of upstream's runtime_version.cc (@03f49db5):
# the releases of versions 1, 2, 3, ...; "-" marks a version the table does not list.
# Six float16 entries come from LiteRT's newer copy (google-ai-edge/LiteRT @119ae633), matching the
# float16 rows of rules.py: CONCATENATION 6, SOFTMAX 4, TRANSPOSE 9, SLICE 8, COS 2, SIN 2 (2.23.0).
# --------------------------------------------------------------------------------------------
_TABLE_TEXT = """
AVERAGE_POOL_2D 1.5.0 1.14.0 2.3.0
BATCH_MATMUL 2.3.0 2.3.0 2.4.0 2.5.0
BROADCAST_TO - 2.5.0 2.5.0
CONV_2D 1.5.0 1.14.0 1.14.0 2.3.0 2.4.0 2.9.0 2.11.0 2.15.0
DEPTHWISE_CONV_2D 1.5.0 1.12.0 1.14.0 2.2.0 2.3.0 2.3.0 2.11.0
ADD 1.5.0 1.14.0 2.4.0 2.6.0 2.13.0 2.23.0
ADD_N 1.14.0
SPACE_TO_BATCH_ND 1.6.0 1.14.0 2.3.0 2.12.0
SUB 1.6.0 1.14.0 2.3.0 2.4.0 2.4.0
DENSIFY 2.2.0
DIV 1.6.0 2.3.0
BATCH_TO_SPACE_ND 1.6.0 1.14.0 2.3.0 2.12.0
CAST 1.5.0 2.7.0 2.8.0 2.9.0 2.12.0 2.15.0 2.17.0 2.21.0
CONCATENATION 1.5.0 1.14.0 2.3.0 2.14.0 2.21.0 2.23.0
DEPTH_TO_SPACE 2.1.0 2.5.0
EMBEDDING_LOOKUP 1.13.0 1.14.0 1.14.0 2.18.0 2.21.0
EMBEDDING_LOOKUP_SPARSE 1.5.0
FAKE_QUANT 1.5.0 1.10.0
FULLY_CONNECTED 1.5.0 1.10.0 1.14.0 1.14.0 2.0.0 2.1.0 2.3.0 2.3.0 2.3.0 2.11.0 2.15.0 2.17.0 2.18.0 2.21.0
GATHER 1.6.0 1.14.0 1.15.0 2.4.0 2.5.0 2.13.0 2.15.0
GATHER_ND 1.14.0 2.3.0 2.5.0 2.13.0 2.16.0
HASHTABLE_LOOKUP 1.5.0
SVDF 1.5.0 1.14.0 2.2.0 2.3.0
L2_NORMALIZATION 1.5.0 1.14.0
L2_POOL_2D 1.5.0
LOCAL_RESPONSE_NORMALIZATION 1.5.0
MAX_POOL_2D 1.5.0 1.14.0 2.3.0
MAXIMUM 1.14.0 1.14.0 2.3.0 2.3.0
MINIMUM 1.14.0 1.14.0 2.3.0 2.3.0
MUL 1.5.0 1.14.0 1.15.0 2.3.0 2.6.0 2.11.0 2.13.0 2.23.0
NON_MAX_SUPPRESSION_V4 2.1.0
NON_MAX_SUPPRESSION_V5 2.1.0
PAD 1.5.0 1.14.0 2.4.0 2.6.0 2.20.0
TILE 1.10.1 2.2.0 2.8.0
PADV2 1.9.0 1.14.0 2.4.0 2.6.0 2.20.0
RESHAPE 1.5.0
SOFTMAX 1.5.0 1.14.0 2.3.0 2.23.0
SPACE_TO_DEPTH 1.5.0 1.14.0
TRANSPOSE 1.6.0 1.14.0 1.15.0 2.3.0 2.4.0 2.12.0 2.14.4 2.22.0 2.23.0
LSTM 1.7.0 1.10.0 1.14.0 2.3.0
UNIDIRECTIONAL_SEQUENCE_LSTM 1.13.1 1.14.0 2.3.0 2.12.0
BIDIRECTIONAL_SEQUENCE_LSTM 1.14.0 1.14.0 1.14.0
BIDIRECTIONAL_SEQUENCE_RNN 1.14.0 1.14.0 2.3.0
MEAN 1.6.0 1.14.0 2.4.0
SUM 1.10.0 1.15.0
REDUCE_MAX 1.11.0 1.14.0 2.5.0
REDUCE_MIN 1.11.0 1.14.0 2.5.0
REDUCE_PROD 1.11.0 2.6.0
REDUCE_ANY 1.11.0
RELU6 1.5.0 1.14.0 2.5.0
RESIZE_BILINEAR 1.7.0 1.14.0 2.2.0 2.5.0
RESIZE_NEAREST_NEIGHBOR 1.13.1 1.14.0 2.3.0 2.4.0
RNN 1.5.0 1.14.0 2.3.0
SKIP_GRAM 1.5.0
SQUEEZE 1.6.0 2.5.0
SPLIT 1.5.0 1.14.0 1.14.0 2.3.0
SPLIT_V 1.13.1 2.3.0
STRIDED_SLICE 1.6.0 1.14.0 2.1.0 2.2.0 2.5.0 2.6.0 2.14.0 2.14.0
TOPK_V2 1.7.0 1.14.0 2.13.0
ARG_MAX 1.9.0 1.14.0 2.9.0
ARG_MIN 1.9.0 1.14.0 2.9.0
TRANSPOSE_CONV 1.9.0 2.2.0 2.3.0 2.13.0 2.15.0
SPARSE_TO_DENSE 1.9.0 1.14.0 1.15.0
EXPAND_DIMS 1.10.0
PACK 1.11.0 1.14.0 2.3.0 2.13.0
SHAPE 1.10.0
SLICE 1.14.0 1.14.0 1.14.0 2.4.0 2.5.0 2.14.0 2.21.0 2.23.0
TANH 1.14.0 1.14.0 2.3.0
ONE_HOT 1.11.0
UNPACK 1.11.0 1.14.0 2.2.0 2.3.0 2.22.0
LEAKY_RELU 1.13.1 2.3.0
LOGISTIC 1.14.0 1.14.0 2.3.0
LOG_SOFTMAX 1.14.0 1.14.0
LSH_PROJECTION 1.5.0
SQUARED_DIFFERENCE 1.13.1 2.5.0
MIRROR_PAD 1.13.1 2.3.0 2.12.0
UNIQUE 1.14.0
UNIDIRECTIONAL_SEQUENCE_RNN 1.14.0 1.14.0 2.3.0
WHERE 1.14.0 2.8.0
DEQUANTIZE 1.13.1 1.14.0 1.15.0 2.2.0 2.7.0 2.18.0 2.21.0 2.22.0
REVERSE_SEQUENCE 1.14.0
EQUAL 1.14.0 1.14.0 2.3.0 2.13.0 2.21.0
NOT_EQUAL 1.14.0 1.14.0 2.3.0 2.21.0
GREATER 1.14.0 1.14.0
GREATER_EQUAL 1.14.0 1.14.0 2.13.0
LESS 1.14.0 1.14.0 2.13.0
LESS_EQUAL 1.14.0 1.14.0
SCATTER_ND 2.1.0
SEGMENT_SUM 2.2.0
SELECT 1.14.0 1.14.0 2.12.0 2.12.0
SELECT_V2 2.2.0 2.12.0
IF 1.15.0
FLOOR_DIV 1.14.0 1.14.0 2.13.0
FLOOR 1.9.0
CEIL 1.14.0
MATRIX_DIAG 1.14.0
MATRIX_SET_DIAG 1.14.0
ELU 1.14.0
QUANTIZE 1.14.0 1.15.0 2.7.0 2.21.0 2.21.0 2.21.0
ROUND 1.14.0
RELU 1.5.0 2.1.0 2.5.0
RELU_N1_TO_1 1.5.0
RELU_0_TO_1 2.10.0
PRELU 1.8.0
EXP 1.7.0 2.12.0
COS 1.14.0 2.23.0
NEG 1.9.0
POW 1.10.0
LOGICAL_OR 1.11.0
LOGICAL_AND 1.11.0
LOGICAL_NOT 1.11.0
FLOOR_MOD 1.13.0 2.13.0
RANGE 1.13.0 2.14.0
SIN 1.9.0 2.23.0
LOG 1.14.0 2.15.0
SQRT 1.10.0 2.21.0
RSQRT 1.10.0 2.5.0 2.15.0
SQUARE 1.12.0
ZEROS_LIKE 1.12.0
ABS 1.13.0 2.4.0 2.5.0 2.6.0 2.12.0
HARD_SWISH 1.15.0
FILL 1.13.0 2.3.0 2.5.0 2.12.0
REVERSE_V2 1.14.0 2.2.0 2.5.0
RANK 1.14.0
WHILE 1.15.0
CUMSUM 2.4.0
CALL_ONCE 2.5.0
RFFT2D 2.5.0
CONV_3D 2.5.0
IMAG 2.5.0
REAL 2.5.0
COMPLEX_ABS 2.5.0
HASHTABLE 2.5.0
HASHTABLE_FIND 2.5.0
HASHTABLE_IMPORT 2.5.0
HASHTABLE_SIZE 2.5.0
REDUCE_ALL 2.6.0
CONV_3D_TRANSPOSE 2.6.0
VAR_HANDLE 2.6.0
READ_VARIABLE 2.6.0
ASSIGN_VARIABLE 2.6.0
BROADCAST_ARGS 2.6.0
RANDOM_STANDARD_NORMAL 2.8.0
BUCKETIZE 2.8.0
RANDOM_UNIFORM 2.8.0
MULTINOMIAL 2.8.0
GELU 2.9.0 2.9.0
DYNAMIC_UPDATE_SLICE 2.9.0 2.17.0 2.19.0 2.20.0 2.21.0 2.22.0
UNSORTED_SEGMENT_PROD 2.10.0
UNSORTED_SEGMENT_MAX 2.10.0
UNSORTED_SEGMENT_MIN 2.11.0
UNSORTED_SEGMENT_SUM 2.10.0
ATAN2 2.10.0
SIGN 2.11.0 2.12.0
BITCAST 2.13.0
BITWISE_XOR 2.13.0
RIGHT_SHIFT 2.13.0
STABLEHLO_SCATTER 2.15.0
DILATE 2.15.0
STABLEHLO_RNG_BIT_GENERATOR 2.15.0
REDUCE_WINDOW 2.15.0
STABLEHLO_GATHER 2.16.0
STABLEHLO_ADD 2.16.0
STABLEHLO_MULTIPLY 2.16.0
STABLEHLO_REDUCE_WINDOW 2.16.0
STABLEHLO_MAXIMUM 2.16.0
STABLEHLO_MINIMUM 2.16.0
STABLEHLO_PAD 2.16.0
STABLEHLO_COMPOSITE 2.17.0
STABLEHLO_AND 2.17.0
STABLEHLO_SHIFT_LEFT 2.17.0
STABLEHLO_CBRT 2.17.0
STABLEHLO_CASE 2.17.0
"""


def _parse_table(text: str) -> dict[tuple[B, int], str]:
    out: dict[tuple[B, int], str] = {}
    for line in text.strip().splitlines():
        name, *releases = line.split()
        op = B[name]
        for v, rel in enumerate(releases, start=1):
            if rel != "-":
                key = (op, v)
                if key in out:
                    raise ValueError(f"duplicate runtime table entry {name} v{v}")
                out[key] = rel
    return out


RUNTIME_TABLE: Mapping[tuple[B, int], str] = _parse_table(_TABLE_TEXT)

# Registered kernel ranges of the builtin resolver (tensorflow/lite/core/kernels/register.cc @ba79eba0,
# its AddBuiltin(op, registration, min, max) calls) — one snapshot, known for these ops only.  An op added
# without a range is registered for version 1 only (tensorflow/lite/mutable_op_resolver.cc).
REGISTERED: Mapping[B, tuple[int, int]] = {
    B.CONV_2D: (1, 8), B.DEPTHWISE_CONV_2D: (1, 7), B.AVERAGE_POOL_2D: (1, 3), B.MAX_POOL_2D: (1, 3),
    B.ADD: (1, 5), B.SUB: (1, 5), B.MUL: (1, 7), B.CONCATENATION: (1, 4), B.RESHAPE: (1, 1),
    B.SOFTMAX: (1, 3), B.LOGISTIC: (1, 3), B.TANH: (1, 3), B.RELU: (1, 3), B.RELU6: (1, 3),
    B.RESIZE_BILINEAR: (1, 4), B.RESIZE_NEAREST_NEIGHBOR: (1, 4), B.PAD: (1, 5), B.MEAN: (1, 3),
    B.QUANTIZE: (1, 4), B.DEQUANTIZE: (1, 6), B.TRANSPOSE: (1, 7), B.TRANSPOSE_CONV: (1, 5),
    B.STRIDED_SLICE: (1, 8), B.SPLIT: (1, 4), B.PACK: (1, 4), B.HARD_SWISH: (1, 1), B.LEAKY_RELU: (1, 2),
    B.PRELU: (1, 1), B.SQUEEZE: (1, 2), B.GATHER: (1, 7), B.BATCH_MATMUL: (1, 4), B.MAXIMUM: (1, 4),
    B.MINIMUM: (1, 4), B.L2_NORMALIZATION: (1, 2), B.SPACE_TO_DEPTH: (1, 2), B.DEPTH_TO_SPACE: (1, 2),
    B.FULLY_CONNECTED: (1, 13),
}
REGISTERED_SOURCE = "tensorflow/lite/core/kernels/register.cc @ba79eba0 (AddBuiltin ranges)"


def runtime_for(op, version: int) -> str | None:
    """The first release with a kernel for (op, version), or None when the table does not list it."""
    try:
        return RUNTIME_TABLE.get((B(int(op)), int(version)))
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------
# Ordering of release strings
# --------------------------------------------------------------------------------------------
_INT = re.compile(r"[+-]?[0-9]+")


def _atoi(s: str) -> int | None:
    """absl::SimpleAtoi for int: optional surrounding whitespace and sign, decimal, in int32 range."""
    s = s.strip(" \t\n\v\f\r")
    if not _INT.fullmatch(s):
        return None
    v = int(s)
    return v if -2**31 <= v < 2**31 else None


def compare_runtime_version(v1: str, v2: str) -> bool:
    """Upstream's CompareRuntimeVersion: True when ``v1`` is lower than ``v2`` (``runtime_version.cc``)."""
    a, b = v1.split("."), v2.split(".")
    i = 0
    while i < len(a) and i < len(b):
        x, y = _atoi(a[i]), _atoi(b[i])
        if x is not None and y is not None and x != y:
            return x < y
        i += 1  # equal, or a component that does not parse on either side: skipped
    return i < len(b)  # all compared components equal: fewer components is lower


def _text(v) -> str:
    if isinstance(v, RuntimeVersion):
        return v.text
    if isinstance(v, MinRuntime):
        return v.version
    if isinstance(v, str):
        return v
    raise TypeError(f"not a runtime version: {v!r}")


class RuntimeVersion:
    """A TFLite release string ordered by upstream's CompareRuntimeVersion rule.

    ``<`` / ``>`` follow that rule exactly; ``<=`` means "not greater", ``>=`` "not lower";
    ``==`` compares the text.  (The rule skips components that are not integers, so it is not a
    total order: ``"2.x" < "2.3"`` and ``"2.3" < "2.x"`` are both false.)
    """

    __slots__ = ("text",)

    def __init__(self, text: str):
        object.__setattr__(self, "text", _text(text))

    def __setattr__(self, name, value):
        raise AttributeError("RuntimeVersion is immutable")

    def __lt__(self, other) -> bool:
        return compare_runtime_version(self.text, _text(other))

    def __gt__(self, other) -> bool:
        return compare_runtime_version(_text(other), self.text)

    def __le__(self, other) -> bool:
        return not self.__gt__(other)

    def __ge__(self, other) -> bool:
        return not self.__lt__(other)

    def __eq__(self, other) -> bool:
        try:
            return self.text == _text(other)
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"RuntimeVersion({self.text!r})"


def _max_release(releases: Iterable[str]) -> str:
    best = ""
    for r in releases:
        if compare_runtime_version(best, r):
            best = r
    return best


# --------------------------------------------------------------------------------------------
# A model's minimum runtime
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RuntimeEntry:
    """One operator's (op, version) and the release the table gives it."""

    subgraph: int
    op_index: int
    op: str
    code: int
    version: int
    runtime: str | None  # None: not in the table (skipped, like upstream)

    def __repr__(self) -> str:
        rt = self.runtime if self.runtime is not None else "not in table"
        return f"{self.op} v{self.version} → {rt} [subgraph {self.subgraph}, op {self.op_index}]"


@dataclass(frozen=True, repr=False)
class MinRuntime:
    """A model's minimum runtime release and the operators that drive it."""

    version: str  # "" when no operator is in the table (like upstream)
    drivers: tuple[RuntimeEntry, ...]  # operators whose release equals the minimum
    entries: tuple[RuntimeEntry, ...]  # every operator (including skipped ones)
    computed: bool = False  # True: from today's computed versions, not the stored ones

    @property
    def skipped(self) -> tuple[RuntimeEntry, ...]:
        return tuple(e for e in self.entries if e.runtime is None)

    @property
    def runtime_version(self) -> RuntimeVersion:
        return RuntimeVersion(self.version)

    def by_op(self) -> dict[tuple[str, int], str | None]:
        """(op, version) → release, one row per distinct pair."""
        return {(e.op, e.version): e.runtime for e in self.entries}

    def __str__(self) -> str:
        return self.version

    def __repr__(self) -> str:
        kind = "computed" if self.computed else "stored"
        pairs = sorted({(e.op, e.version) for e in self.drivers})
        drive = ", ".join(f"{o} v{v}" for o, v in pairs) or "nothing"
        skipped = sorted({f"{e.op} v{e.version}" for e in self.skipped})
        tail = f"; skipped (not in the table): {', '.join(skipped)}" if skipped else ""
        return f"min runtime {self.version or '(none)'} from {kind} op versions, driven by {drive}{tail}"

    def _repr_html_(self) -> str:
        rows = []
        for (op, v), rt in sorted(self.by_op().items(), key=lambda kv: kv[0]):
            hot = any(e.op == op and e.version == v for e in self.drivers)
            rows.append(f"<tr style='background:{'#ffe0b2' if hot else 'white'}'><td>{html.escape(op)}</td>"
                        f"<td>v{v}</td><td>{html.escape(rt or 'not in table')}</td></tr>")
        return (f"<div>minimum runtime <b>{html.escape(self.version or '(none)')}</b> "
                f"({'computed' if self.computed else 'stored'} versions)<table><tr><th>op</th><th>version</th>"
                f"<th>first release</th></tr>{''.join(rows)}</table></div>")


def min_runtime(model, computed: bool = False) -> MinRuntime:
    """The model's minimum runtime (upstream's UpdateMinimumRuntimeVersionForModel, read-only).

    By default the versions STORED in the file are used, as the converter does; ``computed=True``
    uses the versions today's rules compute for each operator instead.  (op, version) pairs the
    table does not list — custom ops, unknown versions — are skipped, like upstream.
    """
    entries = []
    for s, sg in enumerate(model.subgraphs or ()):
        for i, op in enumerate(sg.operators or ()):
            opcode = model.operator_codes[op.opcode_index]
            code = builtin_code(opcode)
            version = op_version(model, s, i).number if computed and code != B.CUSTOM else opcode.version
            rt = runtime_for(code, version) if code != B.CUSTOM else None
            entries.append(RuntimeEntry(s, i, op_name(opcode), int(code), int(version), rt))
    best = _max_release(e.runtime for e in entries if e.runtime is not None)
    drivers = tuple(e for e in entries if e.runtime is not None and e.runtime == best)
    return MinRuntime(best, drivers, tuple(entries), computed)


# --------------------------------------------------------------------------------------------
# The min_runtime_version metadata
# --------------------------------------------------------------------------------------------
def read_min_runtime_metadata(model) -> str | None:
    """The ``min_runtime_version`` metadata string (trailing NULs stripped), or None if absent."""
    return stored_min_runtime(model)


def _encode(version: str) -> bytes:
    try:
        raw = version.encode("ascii")
    except UnicodeEncodeError:
        raise VersionError(f"min_runtime_version must be ASCII, got {version!r}") from None
    if len(raw) >= METADATA_SIZE:
        raise VersionError(
            f"min_runtime_version {version!r} is {len(raw)} bytes; the metadata buffer holds "
            f"{METADATA_SIZE} bytes including a terminating NUL, so at most {METADATA_SIZE - 1} "
            "characters fit (the converter skips writing it and logs a warning)")
    return raw


def write_min_runtime_metadata(model, version: str | MinRuntime | None = None):
    """Return a new Model whose ``min_runtime_version`` metadata holds ``version``.

    The format is the converter's: the buffer is zero-filled and the ASCII string copied to its
    start.  A missing entry is created with a fresh 16-byte buffer; an existing one is updated in
    place (its buffer keeps its size, as upstream writes into it; a buffer too small for the
    string — which upstream would overrun — is replaced by a 16-byte one).  ``version`` defaults
    to :func:`min_runtime` of the model.  A string of 16 bytes or more raises
    :class:`~workbench.errors.VersionError` (upstream silently skips the write).
    """
    text = min_runtime(model).version if version is None else _text(version)
    raw = _encode(text)
    Buffer, Metadata = CLASSES["Buffer"], CLASSES["Metadata"]
    buffers = list(model.buffers or ())
    if not buffers:
        buffers.append(Buffer())  # the empty sentinel every model starts with
    metadata = list(model.metadata or ())
    for k, m in enumerate(metadata):
        if m.name != MIN_RUNTIME_KEY:
            continue
        if m.buffer == 0 or m.buffer >= len(buffers):
            # no usable buffer: give the entry its own (never write into the sentinel)
            buffers.append(Buffer(data=memoryview(raw.ljust(METADATA_SIZE, b"\0"))))
            metadata[k] = dataclasses.replace(m, buffer=len(buffers) - 1)
        else:
            old = buffers[m.buffer]
            size = len(old.data) if old.data is not None and old.offset <= 1 else 0
            if size <= len(raw):
                size = METADATA_SIZE
            buffers[m.buffer] = dataclasses.replace(old, data=memoryview(raw.ljust(size, b"\0")), offset=0,
                                                    size=0)
        break
    else:
        buffers.append(Buffer(data=memoryview(raw.ljust(METADATA_SIZE, b"\0"))))
        metadata.append(Metadata(name=MIN_RUNTIME_KEY, buffer=len(buffers) - 1))
    return _rebuild(model, buffers=tuple(buffers), metadata=tuple(metadata))


# --------------------------------------------------------------------------------------------
# Runtime profiles and forward-compatibility findings
# --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _release_profile(cls, rel: str) -> "RuntimeProfile":
    """The profile of release ``rel``, derived once (the runtime table is fixed; the profile is frozen)."""
    supported = frozenset(k for k, r in RUNTIME_TABLE.items() if not compare_runtime_version(rel, r))
    max_code = max((int(op) for op, _ in supported), default=None)
    return cls(f"TFLite {rel}", supported, frozenset(op for op, _ in RUNTIME_TABLE), rel, max_code,
               "runtime_version.cc @03f49db5")


def op_not_found_text(op: str, version: int) -> str:
    """What TFLite's GetRegistrationFromOpCode prints for an unregistered (op, version)."""
    return (f"Didn't find op for builtin opcode '{op}' version '{version}'. An older version of this "
            "builtin might be supported. Are you using an old TFLite binary with a newer model?")


def code_out_of_range_text(code: int) -> str:
    """What TFLite prints for a builtin code past its BuiltinOperator_MAX."""
    return f"Op builtin_code out of range: {code}. Are you using old TFLite binary with newer model?"


@dataclass(frozen=True, repr=False)
class RuntimeProfile:
    """What one runtime can run: a set of (op, version) pairs.

    * :meth:`for_release` derives it from :data:`RUNTIME_TABLE`: (op, v) is supported when its
      first release is ≤ the release (CompareRuntimeVersion order); ``max_builtin_code`` is the
      highest op code any such entry names — a lower bound on that release's BuiltinOperator_MAX,
      derived from the table.
    * :meth:`registered_kernels` uses the registered ranges of one register.cc snapshot
      (:data:`REGISTERED`), known for the teaching ops only.
    """

    name: str
    supported: frozenset  # {(BuiltinOperator, version)}
    known_ops: frozenset  # ops the profile can speak about (others: "cannot tell")
    release: str | None = None
    max_builtin_code: int | None = None
    source: str = ""

    @classmethod
    def for_release(cls, release: str) -> "RuntimeProfile":
        return _release_profile(cls, _text(release))

    @classmethod
    def registered_kernels(cls) -> "RuntimeProfile":
        supported = frozenset((op, v) for op, (lo, hi) in REGISTERED.items() for v in range(lo, hi + 1))
        return cls("builtin resolver (register.cc snapshot)", supported, frozenset(REGISTERED), None, None,
                   REGISTERED_SOURCE)

    def supports(self, op, version: int) -> bool | None:
        """True / False, or None when the profile knows nothing about the op."""
        try:
            code = B(int(op))
        except ValueError:
            return False if self.max_builtin_code is not None else None
        if code not in self.known_ops:
            return None
        return (code, int(version)) in self.supported

    def versions(self, op) -> tuple[int, ...]:
        """The versions of ``op`` this runtime has kernels for (empty if none)."""
        code = B(int(op))
        return tuple(sorted(v for o, v in self.supported if o == code))

    def kernel_range(self, op) -> tuple[int, int] | None:
        vs = self.versions(op)
        return (vs[0], vs[-1]) if vs else None

    def __contains__(self, pair) -> bool:
        op, v = pair
        return bool(self.supports(op, v))

    def __len__(self) -> int:
        return len(self.supported)

    def __repr__(self) -> str:
        extra = f", builtin codes ≤ {self.max_builtin_code}" if self.max_builtin_code is not None else ""
        return (f"RuntimeProfile({self.name}: {len(self.supported)} (op, version) pairs over "
                f"{len({o for o, _ in self.supported})} ops{extra}; from {self.source})")


@dataclass(frozen=True, repr=False)
class Finding:
    """One thing that would fail (or that cannot be told) on a runtime or delegate.

    ``kind`` (see :data:`FINDING_KINDS`): "op-version" ((op, version) not registered),
    "builtin-code" (code past the runtime's enum), "custom-op" (a custom op the release does not
    register: the app must), "flex-op" (a TensorFlow op that needs the Select TF ops delegate),
    "unsupported-types" (no kernel takes the operator's type combination), "min-runtime-metadata"
    (the model asks for a newer release), "delegate-version", "delegate-op" (op unknown to the
    delegate), "unknown" (the profile cannot tell).  Every field a view needs is here: ``message``
    is what the runtime prints, ``reason`` why, :attr:`title` the kind in words.
    """

    kind: str
    message: str  # the error text the runtime prints (or the workbench's own, for metadata)
    subgraph: int | None = None
    op_index: int | None = None
    op: str | None = None
    version: int | None = None  # the stored version
    computed: int | None = None  # today's computed version
    reason: str = ""  # why the version is what it is (op_version)
    detail: str = ""  # the facts in brief ("input UINT8, filter INT8, output INT16" for unsupported-types)

    @property
    def title(self) -> str:
        """The kind in words: 'custom op: the app must register a kernel'."""
        return FINDING_KINDS.get(self.kind, self.kind)

    @property
    def is_error(self) -> bool:
        """Would the runtime refuse the model?  TFLite refuses op by op ((op, version) lookup);
        the ``min_runtime_version`` metadata is advisory (LiteRT loads a model whose metadata asks
        for 99.0.0), and "unknown" means the profile cannot tell."""
        return self.kind not in ("unknown", "min-runtime-metadata")

    def __repr__(self) -> str:
        where = "" if self.subgraph is None else f"[subgraph {self.subgraph}, op {self.op_index}] "
        why = f"\n    why: {self.reason}" if self.reason else ""
        if self.computed is not None and self.version is not None and self.computed != self.version:
            why += f" (stored v{self.version}, today's rules compute v{self.computed})"
        return f"{self.kind}: {where}{self.message}{why}"


FINDING_KINDS: Mapping[str, str] = {
    "op-version": "(op, version) not registered in this release",
    "builtin-code": "op code newer than this release",
    "custom-op": "custom op: the app must register a kernel for it",
    "flex-op": "TensorFlow (Flex) op: needs the Select TF ops delegate",
    "unsupported-types": "no TFLite kernel takes these tensor types",
    "min-runtime-metadata": "min_runtime_version metadata above this release (advisory)",
    "delegate-version": "op version above what the delegate handles",
    "delegate-op": "op the delegate does not handle",
    "unknown": "cannot tell",
}
# kinds that stop a stock release from running the model as shipped whatever its op versions
CANNOT_RUN_KINDS = frozenset({"custom-op", "flex-op", "unsupported-types"})


def _profile(runtime) -> RuntimeProfile:
    if isinstance(runtime, RuntimeProfile):
        return runtime
    return RuntimeProfile.for_release(_text(runtime))


def _why(v: Version) -> str:
    return v.reason


_SEEN: dict | None = None     # (id(model), what, subgraph, operator) → (model, answer), inside one_look_each


@contextmanager
def one_look_each():
    """Inside the block, :func:`check` works out each operator's computed version and type verdict once
    per model object, however many runtimes the model is checked against (a release × model table).
    Neither depends on the runtime; the models must not change inside the block."""
    global _SEEN
    outer = _SEEN
    _SEEN = {} if outer is None else outer
    try:
        yield
    finally:
        _SEEN = outer


def _once(what: str, model, s: int, i: int, work):
    """``work()``, remembered inside :func:`one_look_each` (the model is kept so its id stays its own)."""
    if _SEEN is None:
        return work()
    key = (id(model), what, s, i)
    if key not in _SEEN:
        _SEEN[key] = (model, work())
    return _SEEN[key][1]


def check(model, runtime: str | RuntimeProfile = "2.3.0") -> list[Finding]:
    """What would stop ``runtime`` from running ``model``, with the error text it would print.

    Operators are checked with their STORED versions (that is what the interpreter looks up);
    each finding also carries today's computed version and the reason for it.  Model-level
    findings: the ``min_runtime_version`` metadata above the release; builtin codes beyond the
    release's enum.  Per operator, the first thing the runtime would refuse:

    * a builtin (op, version) the release has no kernel for ("op-version", "builtin-code");
    * a CUSTOM op: "flex-op" for a TensorFlow op (needs the Select TF ops delegate), "custom-op"
      for any other the release's builtin resolver does not register — the custom ops it does
      register (``TFLite_Detection_PostProcess``, ``Mfcc``, ``AudioSpectrogram``, …, from the
      release that added each, :mod:`.custom_ops`) run;
    * a registered builtin whose tensor types no TFLite kernel takes ("unsupported-types",
      :mod:`.kernel_types`): the version rules fall through to version 1 for types they have no row
      for, and the (op, version) lookup alone would call such a model runnable.
    """
    profile = _profile(runtime)
    findings: list[Finding] = []
    if profile.release is not None:
        meta = read_min_runtime_metadata(model)
        if meta and compare_runtime_version(profile.release, meta):
            findings.append(Finding(
                "min-runtime-metadata",
                f"the model's min_runtime_version metadata is {meta}, above TFLite {profile.release}: "
                f"the converter says this model needs TFLite {meta} or newer"))
    for s, sg in enumerate(model.subgraphs or ()):
        for i, op in enumerate(sg.operators or ()):
            opcode = model.operator_codes[op.opcode_index]
            code = builtin_code(opcode)
            if code == B.CUSTOM:
                f = _custom_finding(profile, s, i, opcode.custom_code or "", int(opcode.version))
                if f is not None:
                    findings.append(f)
                continue
            name, stored = op_name(opcode), int(opcode.version)
            known_code = isinstance(code, B)
            if profile.max_builtin_code is not None and (not known_code or int(code) > profile.max_builtin_code):
                findings.append(Finding("builtin-code", code_out_of_range_text(int(code)), s, i, name, stored,
                                        reason=f"{name} (code {int(code)}) is newer than every op TFLite "
                                               f"{profile.release} knows (highest: {profile.max_builtin_code})"))
                continue
            ok = profile.supports(code, stored)
            if ok:
                f = _once("types", model, s, i, lambda: _types_finding(model, s, i, name, stored))
                if f is not None:
                    findings.append(f)
                continue
            v = _once("version", model, s, i, lambda: op_version(model, s, i)) if known_code else None
            computed = v.number if v is not None else None
            reason = _why(v) if v is not None else ""
            if ok is None:
                findings.append(Finding("unknown", f"{profile.name} has no entry for {name}: cannot tell "
                                        f"whether version {stored} runs there", s, i, name, stored, computed, reason))
                continue
            if profile.release is not None and runtime_for(code, stored) is None:
                first = "is not in the runtime table"
            elif profile.release is not None:
                first = f"first ran in TFLite {runtime_for(code, stored)}"
            else:
                first = f"{profile.name} registers versions {profile.kernel_range(code)}"
            findings.append(Finding("op-version", op_not_found_text(name, stored), s, i, name, stored, computed,
                                    f"{reason}; {name} v{stored} {first}" if reason else first))
    return findings


def _custom_finding(profile: RuntimeProfile, s: int, i: int, name: str, stored: int) -> Finding | None:
    """The finding for one CUSTOM operator on ``profile`` (None: the release registers it)."""
    shown = name or "CUSTOM"
    where = node_failed_text(i, shown)
    rel = profile.release
    stock = STOCK_CUSTOM_OPS.get(name)
    if stock is not None:
        if stored not in stock.versions:
            return Finding("custom-op", custom_op_text(shown) + where, s, i, shown, stored,
                           reason=f"TFLite's builtin resolver registers {shown} at version "
                                  f"{', '.join(map(str, stock.versions))} only; this operator asks for version "
                                  f"{stored}, so the app must register a kernel for it")
        if rel is None:  # a register.cc snapshot: it registers every stock custom op
            return None
        if stock.first is None:
            return Finding("unknown", f"cannot tell whether TFLite {rel} registers the custom op {shown}", s, i,
                           shown, stored, reason=f"{shown} ({stock.what}): {stock.evidence}")
        if not compare_runtime_version(rel, stock.first):
            return None
        if stock.known_from is not None and compare_runtime_version(rel, stock.known_from):
            return Finding("unknown", f"cannot tell whether TFLite {rel} registers the custom op {shown}", s, i,
                           shown, stored, reason=f"{shown} ({stock.what}): {stock.evidence}; releases before "
                                                 f"{stock.known_from} were not checked")
        return Finding("custom-op", custom_op_text(shown) + where, s, i, shown, stored,
                       reason=f"{shown} ({stock.what}) is a custom op TFLite's builtin resolver registers from "
                              f"{stock.first} on ({stock.evidence}); TFLite {rel} does not, so the app must "
                              "register a kernel for it")
    who = f"TFLite {rel}" if rel is not None else profile.name
    if is_flex_op(name):
        tf_op = name[len("Flex"):] or "?"
        return Finding("flex-op", flex_op_text() + where, s, i, shown, stored,
                       reason=f"{shown} is TensorFlow's {tf_op} op, kept by the converter (SELECT_TF_OPS): it runs "
                              "only with the Select TF ops (Flex) delegate linked into the app (Android: "
                              "org.tensorflow:tensorflow-lite-select-tf-ops); no stock TFLite release has a kernel "
                              f"for it, so {who} cannot run the model as shipped")
    why = (f"{shown} is a custom op: no stock TFLite release registers it, so {who} cannot run the model as "
           "shipped; the app must register a kernel for it (MutableOpResolver::AddCustom)")
    if name in XNNPACK_CUSTOM_OPS:
        why += (f". LiteRT's XNNPACK delegate, applied by default, implements MediaPipe's {shown} itself and "
                "takes such nodes over before the interpreter looks for a kernel")
    return Finding("custom-op", custom_op_text(shown) + where, s, i, shown, stored, reason=why)


def _types_finding(model, s: int, i: int, name: str, stored: int) -> Finding | None:
    """An "unsupported-types" finding when no TFLite kernel takes the operator's types."""
    sig = signature_of(model, s, i)
    verdict = type_verdict(sig)
    if verdict is None or verdict.ok:
        return None
    v = version_of(sig)
    rules = ("the version rules have no row for these types" if v.rule is None
             else "the version rules give it a version, but no kernel was written for these types")
    return Finding(
        "unsupported-types", f"no {name} kernel takes {verdict.types_text()}: {node_failed_text(i, name)}",
        s, i, name, stored, v.number,
        f"{v.reason}: {rules}. TFLite's {name} kernels take {verdict.accepted_text()}", verdict.types_text())


def check_delegate(model, max_versions: Mapping, *, report_unsupported: bool = False) -> list[Finding]:
    """Findings for a delegate that knows each op only up to ``max_versions[op]``.

    The stored version is what the delegate sees (``registration->version``); the message gives
    the reason today's rules give for it: "DEPTHWISE_CONV_2D v2 > max version 1 (dilation_w_factor=2 ≠ 1)".
    With ``report_unsupported``, ops absent from ``max_versions`` are reported too.
    """
    limits = {int(k): int(v) for k, v in max_versions.items()}
    findings: list[Finding] = []
    for s, sg in enumerate(model.subgraphs or ()):
        for i, op in enumerate(sg.operators or ()):
            opcode = model.operator_codes[op.opcode_index]
            code = builtin_code(opcode)
            if code == B.CUSTOM:
                continue
            name, stored = op_name(opcode), int(opcode.version)
            if int(code) not in limits:
                if report_unsupported:
                    findings.append(Finding("delegate-op", f"{name} is not supported by this delegate", s, i,
                                            name, stored))
                continue
            limit = limits[int(code)]
            if stored <= limit:
                continue
            v = op_version(model, s, i)
            why = v.why if v.number == stored else f"stored v{stored}; today's rules give {v.reason}"
            findings.append(Finding("delegate-version", f"{name} v{stored} > max version {limit} ({why})", s, i,
                                    name, stored, v.number, v.reason))
    return findings
