"""NON_MAX_SUPPRESSION_V4 (float32): TensorFlow's NonMaxSuppressionV4, the algorithm of ``_nms.py``.

Inputs: boxes [N, 4], scores [N], max_output_size (int32 scalar; its value sizes the outputs),
iou_threshold and score_threshold (float32 scalars).  Outputs: selected_indices [max_output_size]
(int32, zero past the selections) and valid_outputs (int32 scalar)."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._nms import NmsKernel, NonMaxSuppressionData

NonMaxSuppressionV4Data = NonMaxSuppressionData


@kernel(BuiltinOperator.NON_MAX_SUPPRESSION_V4, versions=(1,))
class NonMaxSuppressionV4(NmsKernel):
    name = "non_max_suppression_v4"
    soft = False
