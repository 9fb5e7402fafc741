"""The offload kernel: runs a compiled partition's embedded .tflite with workbench.Interpreter.

``workbench partition -o`` writes each partition as one CUSTOM op, ``workbench-offload``, whose options
carry the partition as a .tflite of its own (:mod:`workbench.partition.compiler`).  This module is the
kernel for that op — the paper's custom kernel, where a real device would be called (TIDL: Init /
Prepare / Eval / Free).

Who registers it: the interpreter knows nothing of partitions or delegates, so it cannot.  This package
declares the module under the entry-point group ``workbench.kernels`` (``pyproject.toml``); the builtin
resolver loads that group once, the first time one is built, exactly as a third-party package would add
its own custom kernels.  So ``workbench.Interpreter(model_path=compiled)`` resolves ``workbench-offload``
like any other kernel, while ``workbench.interpreter`` never imports this package.

Resource variables: with ``"variables": "shared"`` in the options (a target like XNNPACK, which works
on the interpreter's own variables) the embedded interpreter uses the outer interpreter's variable
table, so a VAR_HANDLE on either side names the same variable; otherwise the partition keeps its
variables to itself (the partitioner put every node of each of them inside).  The kernel is never
folded at allocate time: a partition may read or write state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flatbuffers import flexbuffers

from ..errors import UnsupportedOpError
from ..interpreter import Interpreter
from ..interpreter.registry import Kernel, kernel
from ..partition.compiler import FORMAT, OFFLOAD_OP

__all__ = ["Offload", "read_options"]


def read_options(raw) -> dict:
    doc = flexbuffers.Loads(bytes(raw))
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UnsupportedOpError(f"{OFFLOAD_OP}: custom options are not a {FORMAT} map")
    return doc


@dataclass(frozen=True, eq=False)
class OffloadData:
    inner: object
    inputs: tuple     # inner input tensor indices, in the custom op's input order
    outputs: tuple
    partition: int
    target: str

    @property
    def impl(self) -> str:
        return f"{self.target}:P{self.partition}"


@kernel(OFFLOAD_OP, versions=(1,), custom=True)
class Offload(Kernel):
    name = "workbench_offload"
    foldable = False

    def prepare(self, context, node):
        raw = node.operator.custom_options if node.operator is not None else None
        if raw is None:
            raise UnsupportedOpError(f"{OFFLOAD_OP} (node {node.index}) has no custom options")
        doc = read_options(raw)
        return self.start(context, node, bytes(doc["model"]), int(doc.get("partition", 0)),
                          str(doc.get("target", "")), shared=doc.get("variables") == "shared")

    def start(self, context, node, model_bytes: bytes, partition: int, target: str, *, shared: bool,
              **interpreter_kwargs) -> OffloadData:
        """Load the partition's .tflite into an interpreter of its own (its memory is the device's),
        sized for the shapes the outer interpreter gives the node's inputs."""
        inner = Interpreter(model_content=model_bytes, **interpreter_kwargs)
        if shared:
            outer = context.interpreter
            inner.resource_ids = outer.resource_ids
            inner.resources = outer.resources
        ins = tuple(d["index"] for d in inner.get_input_details())
        outs = tuple(d["index"] for d in inner.get_output_details())
        if len(ins) != len(node.inputs) or len(outs) != len(node.outputs):
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): the embedded model has {len(ins)} inputs / "
                                     f"{len(outs)} outputs, the operator {len(node.inputs)} / {len(node.outputs)}")
        details = {d["index"]: d for d in inner.get_input_details()}
        for k, t in zip(ins, node.inputs):
            shape = context.shape(t)
            if shape is not None and tuple(int(d) for d in details[k]["shape"]) != tuple(shape):
                inner.resize_tensor_input(k, list(shape))
        inner.allocate_tensors()
        for d, t in zip(inner.get_output_details(), node.outputs):
            dtype = d["dtype"]
            if dtype is np.object_:    # RESOURCE (reported as object, like litert) is held as an int32 id
                dtype = inner.get_tensor(d["index"]).dtype
            context.set_output(t, tuple(int(x) for x in d["shape"]), dtype)
        return OffloadData(inner, ins, outs, partition, target)

    def invoke(self, context, node, data) -> None:
        inner = data.inner
        tensors = context.tensors
        for k, t in zip(data.inputs, node.inputs):
            inner.set_tensor(k, tensors[t])
        inner.invoke()
        for k, t in zip(data.outputs, node.outputs):
            tensors[t][...] = inner.get_tensor(k)
