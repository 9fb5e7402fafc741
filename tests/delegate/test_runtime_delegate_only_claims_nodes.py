"""A runtime delegate only claims nodes; TFLite's partitioner makes the partitions.

In LiteRT a delegate's DelegatePrepare asks which nodes it supports (``tflite/delegates/utils.cc``
GraphPartitionHelper::Partition over GetSupportedNodes) and TFLite cuts them into node subsets
(``tflite/graph_info.cc`` PartitionGraphIntoIndependentNodeSubsets), which
``tflite/core/subgraph.cc`` ReplaceNodeSubsetsWithDelegateKernels replaces by DELEGATE nodes.  The TI
paper's walk and the Edge TPU compiler's cut are offline compiles: ``workbench partition -o`` or a
delegate in ``mode="compiled"``.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

import workbench
from workbench.delegate import DelegateError, OfflineStrategyError, SimulatedAccelerator, load_delegate
from workbench.partition import compile as compile_plan
from workbench.partition import partition


@lru_cache(maxsize=None)
def _model(path: str):
    return workbench.load(path)


class ClaimsThese(SimulatedAccelerator):
    """A runtime tidl delegate that claims only the given nodes (as TI's runtime delegate claims the nodes
    its offline import listed)."""

    def __init__(self, nodes, **kw):
        super().__init__("tidl", name="claims-these", **kw)
        self.nodes = frozenset(nodes)

    def supports(self, sig):
        return super().supports(sig) if sig.index in self.nodes else f"{sig.name}: not claimed"


def _sizes(it):
    plan = it.delegations[0][1].plans[0]
    return sorted(len(p.nodes) for p in plan.partitions)


@pytest.mark.parametrize("strategy", ["tidl", "edgetpu"])
def test_a_runtime_delegate_refuses_an_offline_strategy_and_says_what_to_do(strategy):
    # GraphPartitionHelper is the only cut a runtime delegate gets (tflite/delegates/utils.cc)
    with pytest.raises(OfflineStrategyError) as err:
        SimulatedAccelerator("tidl", strategy=strategy)
    text = str(err.value)
    assert text.startswith(f"simulated-tidl: strategy {strategy!r} is an offline compile")
    assert f"--strategy {strategy} -o OUT.tflite" in text and "mode='compiled'" in text
    assert isinstance(err.value, DelegateError) and isinstance(err.value, ValueError)
    # load_delegate wraps it as LiteRT wraps a plugin's failure
    with pytest.raises(ValueError, match="^Failed to load delegate from tidl\n.*offline compile"):
        load_delegate("tidl", {"strategy": strategy})
    # and a bad mode is a plain ValueError
    with pytest.raises(ValueError, match="mode must be one of runtime, compiled"):
        SimulatedAccelerator("tidl", mode="offline")
    assert SimulatedAccelerator("tidl", mode="compiled", strategy=strategy).strategy == strategy


def test_a_runtime_delegate_claims_what_the_rules_accept_and_tflite_partitions(corpus_paths):
    # DeepLab v3: the tidl rules accept every node but RESIZE_BILINEAR; TFLite's cut of those nodes
    m = _model(str(corpus_paths["aitoolkit_deeplab_v3"]))
    d = SimulatedAccelerator("tidl")
    it = workbench.Interpreter(model=m, experimental_delegates=[d])
    assert (d.mode, d.strategy) == ("runtime", "tflite")
    want = partition(m, "tidl", "tflite")
    assert [(p.node, p.partition) for p in it.placements()] == [(p.node, p.partition) for p in want.placements]
    assert _sizes(it) == [1, 3, 62]


def test_given_the_walks_nodes_tflites_partitioner_cuts_deeplab_otherwise(corpus_paths):
    # the compiled model (the paper's walk): partitions of 1, 4 and 61 nodes, one custom op each
    m = _model(str(corpus_paths["aitoolkit_deeplab_v3"]))
    walk = partition(m, "tidl", "tidl")
    assert sorted(len(p.nodes) for p in walk.partitions) == [1, 4, 61]
    compiled = SimulatedAccelerator("tidl", mode="compiled", strategy="tidl")
    it = workbench.Interpreter(model=m, experimental_delegates=[compiled])
    assert _sizes(it) == [1, 4, 61]
    assert len(compile_plan(walk).subgraphs[0].operators) == len(walk.placements) - walk.offloaded + 3
    # a runtime delegate claiming exactly those nodes: TFLite's partitioner makes 1, 3 and 62
    claimed = {n for p in walk.partitions for n in p.nodes}
    it = workbench.Interpreter(model=m, experimental_delegates=[ClaimsThese(claimed)])
    assert _sizes(it) == [1, 3, 62]
    assert sum(_sizes(it)) == len(claimed)           # the same nodes, cut otherwise


def test_given_the_walks_nodes_tflites_partitioner_makes_selfie_segmentations_largest_89_not_38(corpus_paths):
    m = _model(str(corpus_paths["selfie_segmentation"]))
    walk = partition(m, "tidl", "tidl")              # at most 16 subgraphs, as TI's default
    assert len(walk.partitions) == 16 and max(len(p.nodes) for p in walk.partitions) == 38
    claimed = {n for p in walk.partitions for n in p.nodes}
    it = workbench.Interpreter(model=m, experimental_delegates=[ClaimsThese(claimed)])
    sizes = _sizes(it)
    assert max(sizes) == 89 and len(sizes) == 15 and sum(sizes) == len(claimed)
