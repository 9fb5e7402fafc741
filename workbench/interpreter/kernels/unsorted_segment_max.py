"""UNSORTED_SEGMENT_MAX (float32, int32): output[s] = max of the data rows whose segment id is s.

Inputs and output as every UNSORTED_SEGMENT op (see ``_segment.UnsortedSegmentKernel``); a segment
no id points at holds the identity of max (see ``_segment.py``)."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._segment import UnsortedSegmentData, UnsortedSegmentKernel

UnsortedSegmentMaxData = UnsortedSegmentData


@kernel(BuiltinOperator.UNSORTED_SEGMENT_MAX, versions=(1,))
class UnsortedSegmentMax(UnsortedSegmentKernel):
    name = "unsorted_segment_max"
    kind = "max"
