"""NON_MAX_SUPPRESSION_V5 (float32): TensorFlow's NonMaxSuppressionV5, the algorithm of ``_nms.py``.

Inputs: boxes [N, 4], scores [N], max_output_size (int32 scalar; its value sizes the outputs),
iou_threshold and score_threshold (float32 scalars), soft_nms_sigma (float32 scalar, >= 0; 0 = plain
NMS).  Outputs: selected_indices [max_output_size] (int32), selected_scores [max_output_size]
(float32, soft-NMS decayed) -- both zero past the selections -- and valid_outputs (int32 scalar)."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._nms import NmsKernel, NonMaxSuppressionData

NonMaxSuppressionV5Data = NonMaxSuppressionData


@kernel(BuiltinOperator.NON_MAX_SUPPRESSION_V5, versions=(1,))
class NonMaxSuppressionV5(NmsKernel):
    name = "non_max_suppression_v5"
    soft = True
