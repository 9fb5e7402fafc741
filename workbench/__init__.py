"""TFLite Workbench: inspectable TensorFlow Lite components for teaching and model inspection.

The names a notebook needs::

    import workbench
    model = workbench.load("model.tflite")       # immutable, X-ray-able schema objects
    workbench.options.parse(model, op)           # typed builtin options, present vs defaulted
    data = workbench.dump(model)                 # and back to bytes
    it = workbench.Interpreter(model_path=...)   # ai_edge_litert's API over readable kernels
"""

from .errors import LossyWriteError, ModelError, UnsupportedOpError, VersionError, WorkbenchError
from .schema import dump, load

__version__ = "0.1.0"

__all__ = ["load", "dump", "Interpreter", "WorkbenchError", "ModelError", "LossyWriteError", "UnsupportedOpError",
           "VersionError", "__version__"]


def __getattr__(name):  # the interpreter (and its kernels) load on first use, keeping `import workbench` fast
    if name == "Interpreter":
        from .interpreter import Interpreter

        return Interpreter
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
