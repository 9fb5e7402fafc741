"""The interpreter: kernels one op per file, an exact (op, version) resolver, traces and profiles.

    from workbench.interpreter import Interpreter
    it = Interpreter(model_path="model.tflite")
    it.allocate_tensors(); it.set_tensor(...); it.invoke(); it.get_tensor(...)

Write your own kernel::

    from workbench.interpreter import Kernel, OpResolver, BuiltinOpResolver

    class Twice(Kernel):
        def prepare(self, context, node):
            context.set_output(node.outputs[0], context.shape(node.inputs[0]), context.dtype(node.inputs[0]))
        def invoke(self, context, node, data):
            t = context.tensors
            t[node.outputs[0]][...] = 2 * t[node.inputs[0]]

    resolver = BuiltinOpResolver(); resolver.add_custom("Twice", Twice)
"""

from .context import Context, Node
from .interpreter import Interpreter, SignatureRunner
from .registry import (
    BUILTIN_KERNELS,
    CUSTOM_KERNELS,
    BuiltinOpResolver,
    Kernel,
    OpData,
    OpResolver,
    format_versions,
    kernel,
    opdata,
)
from .trace import Profile, StepEvent

__all__ = ["Interpreter", "SignatureRunner", "OpResolver", "BuiltinOpResolver", "Kernel", "OpData", "opdata",
           "kernel", "Context", "Node", "StepEvent", "Profile", "BUILTIN_KERNELS", "CUSTOM_KERNELS",
           "format_versions"]
