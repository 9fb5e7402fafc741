"""Models and targets of tests/partition/test_partition_rules.py, shared with the cross-check and
delegate tests."""

from __future__ import annotations

import json

import numpy as np

from workbench.schema import BuiltinOperator as B
from workbench.schema import CallOnceOptions, ModelBuilder, TensorType, VarHandleOptions


def add_subgraph(b: ModelBuilder, name: str, build) -> int:
    """Build another subgraph with the same builder (shared buffers and operator codes); its index."""
    saved = (b.tensors, b.operators, b.inputs, b.outputs)
    b.tensors, b.operators, b.inputs, b.outputs = [], [], [], []
    build(b)
    b.subgraphs.append(b.subgraph(name))
    b.tensors, b.operators, b.inputs, b.outputs = saved
    return len(b.subgraphs)


def stateful_model(split: bool = False, variable: str = "v"):
    """CALL_ONCE (init: v = [1, 2, 3, 4]); h = VAR_HANDLE v; r = READ h; y = r + x;
    ``split``: w = SIGN(y) + y (SIGN: an op no test target takes); ASSIGN h ← w (or y); output y.

    Main nodes: 0 CALL_ONCE, 1 VAR_HANDLE, 2 READ_VARIABLE, 3 ADD, [4 SIGN, 5 ADD,] ASSIGN_VARIABLE."""
    b = ModelBuilder()

    def init(b):
        h = b.tensor("init_h", [], TensorType.RESOURCE)
        b.op(B.VAR_HANDLE, [], [h], VarHandleOptions(container="", shared_name=variable))
        b.op(B.ASSIGN_VARIABLE, [h, b.constant("init_value", np.array([[1, 2, 3, 4]], np.float32))], [])

    x = b.input("x", [1, 4])
    b.op(B.CALL_ONCE, [], [], CallOnceOptions(init_subgraph_index=add_subgraph(b, "init", init)))
    h = b.tensor("h", [], TensorType.RESOURCE)
    b.op(B.VAR_HANDLE, [], [h], VarHandleOptions(container="", shared_name=variable))
    r = b.tensor("r", [1, 4])
    b.op(B.READ_VARIABLE, [h], [r])
    y = b.tensor("y", [1, 4])
    b.op(B.ADD, [r, x], [y])
    new = y
    if split:
        z = b.tensor("z", [1, 4])
        b.op(B.SIGN, [y], [z])
        new = b.tensor("w", [1, 4])
        b.op(B.ADD, [z, y], [new])
    b.op(B.ASSIGN_VARIABLE, [h, new], [])
    b.output(y)
    return b.build()


def make_target(tmp_path, name: str, ops: dict, **top) -> str:
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps({"name": name, "ops": ops, **top,
                             "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}}))
    return str(p)


VAR_OPS = {"VAR_HANDLE": {}, "READ_VARIABLE": {}, "ASSIGN_VARIABLE": {}}
