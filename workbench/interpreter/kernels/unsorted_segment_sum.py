"""UNSORTED_SEGMENT_SUM (float32, int32): output[s] = sum of the data rows whose segment id is s.

Inputs and output as every UNSORTED_SEGMENT op (see ``_segment.UnsortedSegmentKernel``); a segment
no id points at holds the identity of sum (see ``_segment.py``)."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._segment import UnsortedSegmentData, UnsortedSegmentKernel

UnsortedSegmentSumData = UnsortedSegmentData


@kernel(BuiltinOperator.UNSORTED_SEGMENT_SUM, versions=(1,))
class UnsortedSegmentSum(UnsortedSegmentKernel):
    name = "unsorted_segment_sum"
    kind = "sum"
