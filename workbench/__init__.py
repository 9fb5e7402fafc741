"""TFLite Workbench: inspectable TensorFlow Lite components for teaching and model inspection.

The names a notebook needs::

    import workbench
    model = workbench.load("model.tflite")       # immutable, X-ray-able schema objects
    workbench.options.parse(model, op)           # typed builtin options, present vs defaulted
    data = workbench.dump(model)                 # and back to bytes
"""

from .errors import LossyWriteError, ModelError, UnsupportedOpError, VersionError, WorkbenchError
from .schema import dump, load

__version__ = "0.1.0"

__all__ = ["load", "dump", "WorkbenchError", "ModelError", "LossyWriteError", "UnsupportedOpError",
           "VersionError", "__version__"]
