"""Custom operator options: FlexBuffers maps, known raw C structs, or opaque bytes.

``custom_options_format`` has a single value (FLEXBUFFERS = 0, also the default), so it cannot tell
whether the bytes really are a FlexBuffer: MediaPipe's ``Convolution2DTransposeBias`` stores a raw
``TfLiteTransposeConvParams`` struct (three little-endian int32: padding, stride_width,
stride_height).  Known raw layouts are decoded by name; anything else is tried as a FlexBuffer with a
bounded walk (a crafted buffer cannot make it loop or explode) and kept as bytes if that fails.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from flatbuffers import flexbuffers

MAX_FLEX_NODES = 100_000
MAX_FLEX_DEPTH = 64


@dataclass(frozen=True)
class RawLayout:
    fmt: str
    names: tuple[str, ...]
    about: str


# custom ops whose options are a raw C struct rather than a FlexBuffer (facts from the op sources)
RAW_LAYOUTS = {
    "Convolution2DTransposeBias": RawLayout(
        "<iii", ("padding", "stride_width", "stride_height"),
        "MediaPipe's transposed convolution + bias: a raw TfLiteTransposeConvParams struct "
        "(padding uses TfLitePadding: 1 = SAME, 2 = VALID)"),
}


@dataclass(frozen=True)
class CustomOptions:
    op: str
    raw: bytes
    format: str  # "flexbuffers" | "raw struct" | "opaque" | "none"
    value: Any
    about: str = ""

    def explain(self) -> str:
        if self.format == "none":
            return f"{self.op}: no custom options"
        if self.format == "opaque":
            return f"{self.op}: {len(self.raw)} opaque bytes (not a FlexBuffer this reader can decode)"
        return f"{self.op}: {self.format} ({len(self.raw)} bytes) → {self.value!r}" + (
            f" — {self.about}" if self.about else "")


class _Budget(Exception):
    pass


def _walk(ref, depth: int, budget: list[int]):
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_FLEX_DEPTH:
        raise _Budget()
    if ref.IsNull:
        return None
    if ref.IsBool:
        return ref.AsBool
    if ref.IsInt:
        return ref.AsInt
    if ref.IsFloat:
        return ref.AsFloat
    if ref.IsString:
        return ref.AsString
    if ref.IsKey:
        return ref.AsKey
    if ref.IsBlob:
        return bytes(ref.AsBlob)
    if ref.IsMap:
        m = ref.AsMap
        keys = m.Keys
        values = m.Values
        return {_walk(keys[i], depth + 1, budget): _walk(values[i], depth + 1, budget) for i in range(len(keys))}
    if ref.IsVector or ref.IsTypedVector or ref.IsFixedTypedVector:
        v = ref.AsVector if ref.IsVector else (ref.AsTypedVector if ref.IsTypedVector else ref.AsFixedTypedVector)
        return [_walk(v[i], depth + 1, budget) for i in range(len(v))]
    raise ValueError(f"unsupported FlexBuffer type {ref.Type}")


def decode_flexbuffer(raw: bytes) -> Any:
    """Decode a FlexBuffer with a node budget; raises ValueError if the bytes are not one."""
    if len(raw) < 3:
        raise ValueError("too short for a FlexBuffer")
    try:
        root = flexbuffers.GetRoot(raw)
        return _walk(root, 0, [MAX_FLEX_NODES])
    except _Budget:
        raise ValueError("FlexBuffer too large or too deeply nested") from None
    except ValueError:
        raise
    except Exception as exc:  # the flexbuffers runtime does no bounds checking of its own
        raise ValueError(f"not a valid FlexBuffer: {type(exc).__name__}: {exc}") from None


def decode_custom(op: str, raw) -> CustomOptions:
    if raw is None or len(raw) == 0:
        return CustomOptions(op, b"", "none", None)
    raw = bytes(raw)
    layout = RAW_LAYOUTS.get(op)
    if layout is not None and len(raw) == struct.calcsize(layout.fmt):
        return CustomOptions(op, raw, "raw struct", dict(zip(layout.names, struct.unpack(layout.fmt, raw))),
                             layout.about)
    try:
        value = decode_flexbuffer(raw)
    except ValueError:
        return CustomOptions(op, raw, "opaque", None)
    if not isinstance(value, dict):
        return CustomOptions(op, raw, "opaque", None)
    return CustomOptions(op, raw, "flexbuffers", value)
