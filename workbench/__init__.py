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

DISTRIBUTION = "tflite-workbench"  # the name pyproject.toml gives; its ``version`` is the one source
__all__ = ["load", "dump", "Interpreter", "WorkbenchError", "ModelError", "LossyWriteError", "UnsupportedOpError",
           "VersionError", "__version__"]


def installed_version() -> str:
    """The version of the installed distribution, from its metadata; a source tree that was never
    installed says so instead."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return f"(the {DISTRIBUTION} distribution is not installed)"


def __getattr__(name):  # the interpreter (and its kernels) load on first use, keeping `import workbench` fast
    if name == "__version__":
        return installed_version()
    if name == "Interpreter":
        from .interpreter import Interpreter

        return Interpreter
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
