"""UNSORTED_SEGMENT_MIN (float32, int32): output[s] = min of the data rows whose segment id is s.

Inputs and output as every UNSORTED_SEGMENT op (see ``_segment.UnsortedSegmentKernel``); a segment
no id points at holds the identity of min (see ``_segment.py``)."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._segment import UnsortedSegmentData, UnsortedSegmentKernel

UnsortedSegmentMinData = UnsortedSegmentData


@kernel(BuiltinOperator.UNSORTED_SEGMENT_MIN, versions=(1,))
class UnsortedSegmentMin(UnsortedSegmentKernel):
    name = "unsorted_segment_min"
    kind = "min"
