"""UNSORTED_SEGMENT_PROD (float32, int32): output[s] = prod of the data rows whose segment id is s.

Inputs and output as every UNSORTED_SEGMENT op (see ``_segment.UnsortedSegmentKernel``); a segment
no id points at holds the identity of prod (see ``_segment.py``)."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._segment import UnsortedSegmentData, UnsortedSegmentKernel

UnsortedSegmentProdData = UnsortedSegmentData


@kernel(BuiltinOperator.UNSORTED_SEGMENT_PROD, versions=(1,))
class UnsortedSegmentProd(UnsortedSegmentKernel):
    name = "unsorted_segment_prod"
    kind = "prod"
