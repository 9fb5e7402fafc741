"""What SEGMENT_SUM and UNSORTED_SEGMENT_{SUM,PROD,MAX,MIN} share.

Rows of ``data`` (the leading dimensions that ``segment_ids`` covers) are combined into output row
``segment_ids[i]``; rows no id points at hold the reduction's identity (0 for sum, 1 for product,
the type's lowest / highest value for max / min, as TFLite initialises them).
"""

from __future__ import annotations

import numpy as np


def identity(kind: str, dtype: np.dtype):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min if kind == "max" else info.max


UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def segment_reduce(kind: str, data: np.ndarray, ids: np.ndarray, num_segments: int, reference: bool) -> np.ndarray:
    lead = ids.ndim
    rows = data.reshape((-1,) + data.shape[lead:])
    flat = ids.reshape(-1).astype(np.int64)
    out = np.full((num_segments,) + data.shape[lead:], identity(kind, data.dtype), data.dtype)
    keep = (flat >= 0) & (flat < num_segments)
    if reference:
        for i in range(len(flat)):
            if keep[i]:
                out[flat[i]] = UFUNC[kind](out[flat[i]], rows[i])
        return out
    UFUNC[kind].at(out, flat[keep], rows[keep])
    return out
