"""RANK: the number of dimensions of the input, as an int32 scalar (shape [])."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata


@opdata
class RankData(OpData):
    rank: int


@kernel(BuiltinOperator.RANK, versions=(1,))
class Rank(Kernel):
    name = "rank"
    value_inputs = ()          # only the input's shape matters: folded in allocate_tensors

    def prepare(self, context, node):
        context.set_output(node.outputs[0], (), np.int32)
        return RankData(len(context.shape(node.inputs[0])))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = d.rank
