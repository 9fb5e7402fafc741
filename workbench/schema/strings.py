"""TFLite's packed string format (the bytes of a STRING tensor), and numpy arrays of strings.

A STRING tensor holds ``n`` byte strings (``n`` = the number of elements of its shape) in one
buffer, laid out as little-endian int32 words followed by the characters::

    n | offset[0] | offset[1] | ... | offset[n] | bytes of string 0 | bytes of string 1 | ...

String ``i`` is ``buffer[offset[i]:offset[i+1]]``; offsets count from the start of the buffer, so
``offset[0]`` is the header size ``4 * (n + 2)`` and ``offset[n]`` the buffer's length
(``tensorflow/lite/string_util.h``: ``GetStringCount``, ``GetString``, ``DynamicBuffer``).  The
strings are raw bytes: no terminating NUL, no encoding (TensorFlow writes UTF-8).

In numpy the workbench holds strings as an ``object`` array of Python ``bytes``, which is what
``ai_edge_litert``'s ``get_tensor`` returns for a STRING tensor.
"""

from __future__ import annotations

import struct

import numpy as np

from ..errors import ModelError, TensorError

__all__ = ["pack_strings", "unpack_strings", "string_array", "empty_strings"]

_WORD = 4


def pack_strings(values) -> bytes:
    """The packed buffer of ``values`` (any iterable of bytes or str; str is written as UTF-8)."""
    items = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
    n = len(items)
    header = _WORD * (n + 2)
    offsets = [header]
    for s in items:
        offsets.append(offsets[-1] + len(s))
    return struct.pack(f"<{n + 2}i", n, *offsets) + b"".join(items)


def unpack_strings(raw, count: int | None = None, path: str = "") -> list[bytes]:
    """The strings of a packed buffer, every offset checked (a :class:`ModelError` names what is wrong).

    ``count`` is the number of strings the tensor's shape promises (checked when given).
    """
    raw = bytes(raw)
    size = len(raw)
    if size < _WORD:
        raise ModelError(f"a STRING buffer needs at least 4 bytes (the string count); this one has {size}", path)
    n = struct.unpack_from("<i", raw, 0)[0]
    if n < 0:
        raise ModelError(f"STRING buffer: the string count is {n}", path)
    header = _WORD * (n + 2)
    if header > size:
        raise ModelError(f"STRING buffer: {n} strings need a header of {header} bytes (count and {n + 1} offsets); "
                         f"the buffer has {size} bytes", path)
    if count is not None and n != count:
        raise ModelError(f"STRING buffer holds {n} strings; the tensor's shape has {count} elements", path)
    offsets = struct.unpack_from(f"<{n + 1}i", raw, _WORD)
    if offsets[0] < header:
        raise ModelError(f"STRING buffer: offset[0] is {offsets[0]}, inside the {header}-byte header", path)
    for i in range(n):
        if offsets[i + 1] < offsets[i]:
            raise ModelError(f"STRING buffer: offset[{i + 1}] = {offsets[i + 1]} is below offset[{i}] = {offsets[i]} "
                             f"(string {i} would have a negative length)", path)
    if offsets[n] > size:
        raise ModelError(f"STRING buffer: offset[{n}] = {offsets[n]} points past the end of the {size}-byte buffer",
                         path)
    return [raw[offsets[i]:offsets[i + 1]] for i in range(n)]


def empty_strings(shape) -> np.ndarray:
    """An object array of the given shape holding ``b""`` everywhere (a fresh STRING tensor)."""
    arr = np.empty(tuple(int(d) for d in shape), dtype=object)
    arr.fill(b"")
    return arr


def _as_bytes(v, what: str) -> bytes:
    if isinstance(v, bytes):        # np.bytes_ included (a bytes subclass)
        return v if type(v) is bytes else bytes(v)
    if isinstance(v, str):          # np.str_ included
        return v.encode("utf-8")
    # litert refuses the rest too (bytearray, None, numbers: "PyBytes_AsStringAndSize() failed")
    raise TensorError(f"{what}: a STRING tensor takes bytes or str elements, got {type(v).__name__} ({v!r})")


def string_array(value, what: str = "value") -> np.ndarray:
    """``value`` (an array of dtype 'S', 'U' or object holding bytes/str) as an object array of bytes.

    'S' elements are taken as numpy gives them (numpy drops trailing NUL bytes of fixed-width
    strings); str elements are encoded as UTF-8.  Anything else is a :class:`TensorError`.
    """
    arr = np.asarray(value)
    if arr.dtype.kind not in "SUO":
        raise TensorError(f"{what}: a STRING tensor takes an array of bytes or str (numpy dtype 'S', 'U' or "
                          f"object), got {arr.dtype}")
    out = np.empty(arr.shape, dtype=object)
    flat_out = out.reshape(-1)
    for i, v in enumerate(arr.reshape(-1)):
        flat_out[i] = _as_bytes(v, what)
    return out
