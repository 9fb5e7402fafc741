"""interpreter/tracing.py: steps(), profile(), invoke_node() and the kernel labels they show."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.tiny_models import folding_model
from workbench import Interpreter
from workbench.errors import TensorError
from workbench.interpreter import tracing


def _ready(**kw) -> Interpreter:
    it = Interpreter(model=folding_model(), **kw)
    it.allocate_tensors()
    it.set_tensor(0, np.array([-9, 0, 1, 2], np.float32))
    return it


def test_steps_yield_one_event_per_executed_node_with_what_invoke_computes():
    it = _ready()
    events = list(tracing.steps(it._sg(0)))
    assert [(e.node, e.op) for e in events] == [(1, "ADD"), (2, "RELU")]
    it.invoke()
    np.testing.assert_array_equal(events[-1].outputs[0], it.get_tensor(5))


def test_profile_times_every_executed_node_in_every_run():
    prof = tracing.profile(_ready()._sg(0), runs=3, warmup=0)
    assert prof.runs == 3 and [n.node for n in prof.nodes] == [1, 2]


def test_invoke_node_refuses_a_folded_node_saying_why():
    sg = _ready()._sg(0)
    with pytest.raises(TensorError, match="evaluated once in allocate_tensors"):
        tracing.invoke_node(sg, 0, {})
    out, = tracing.invoke_node(sg, 2, {4: np.array([-1, 1, -2, 2], np.float32)})
    np.testing.assert_array_equal(out, [0, 1, 0, 2])


def test_label_names_the_fast_path_or_the_teaching_layer_in_its_place():
    fast_sg, reference_sg = _ready()._sg(0), _ready(reference=True)._sg(0)
    assert fast_sg.fast and not reference_sg.fast
    for (node, kernel, _, data), (_, ref_kernel, _, ref_data) in zip(fast_sg.prepared, reference_sg.prepared):
        path = fast_sg.fast.get(node.index)
        if path is None:
            continue
        assert tracing.label(fast_sg, node, kernel, data) == f"{kernel.name}/{path.name}"
        assert tracing.label(reference_sg, node, ref_kernel, ref_data) == f"{kernel.name}/reference"
