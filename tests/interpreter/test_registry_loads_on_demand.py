"""BuiltinOpResolver loads kernel modules as models ask for them (workbench/interpreter/registry.py), and
what it can run does not depend on the order of the questions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.errors import RegistrationError, UnsupportedOpError
from workbench.interpreter import BuiltinOpResolver, Kernel, kernels
from workbench.interpreter.registry import BUILTIN_KERNELS
from workbench.schema.enums import BuiltinOperator as B

ROOT = Path(__file__).resolve().parents[2]
DIGITS = ROOT / "sample_models" / "digits_cnn_float.tflite"

PROBE = """
import json, sys
import workbench
it = workbench.Interpreter(model_path=sys.argv[1])
it.allocate_tensors()
it.invoke()
ops = sorted({op.name for op in (n.op for n in it._subgraphs[0].nodes) if hasattr(op, "name")})
loaded = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("workbench.interpreter.kernels.")
                and not m.rsplit(".", 1)[1].startswith("_"))
print(json.dumps({"ops": ops, "loaded": loaded}))
"""


def test_a_model_loads_the_kernel_modules_of_its_ops_not_all_of_them():
    out = subprocess.run([sys.executable, "-c", PROBE, str(DIGITS)], capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    for op in doc["ops"]:
        assert kernels.module_of(op) in doc["loaded"], op
    assert "lstm" not in doc["loaded"] and "while_" not in doc["loaded"]
    assert len(doc["loaded"]) < len(kernels.ALL_MODULES) // 3


def test_every_op_module_named_by_the_rule_registers_that_op():
    kernels.load_all()
    for (op, _v), cls in BUILTIN_KERNELS.items():
        name = kernels.module_of(op.name)
        if name is not None:                 # the rule never points at a module that does not register it
            assert cls.__module__.endswith("." + name) or any(
                c.__module__.endswith("." + name) for (o, _), c in BUILTIN_KERNELS.items() if o == op), op.name


def test_a_custom_op_and_a_listing_on_a_fresh_resolver_see_every_kernel():
    fresh = BuiltinOpResolver()
    assert fresh.find("TFLite_Detection_PostProcess", 1) is not None      # no module is named after it
    full = BuiltinOpResolver()
    full.load_everything()
    assert BuiltinOpResolver().ops() == full.ops()
    assert BuiltinOpResolver().versions(B.CONV_2D) == full.versions(B.CONV_2D)


def test_a_missing_version_still_says_which_versions_exist():
    with pytest.raises(UnsupportedOpError, match="has versions"):
        BuiltinOpResolver().find(B.SOFTMAX, 99)


def test_adding_a_kernel_that_is_already_registered_is_refused_on_a_fresh_resolver():
    class Twice(Kernel):
        def prepare(self, context, node):
            return None

        def invoke(self, context, node, data):
            pass

    with pytest.raises(RegistrationError, match="already registered"):
        BuiltinOpResolver().add_builtin(B.SOFTMAX, Twice)
    r = BuiltinOpResolver()
    r.add_custom("TwiceForThisTest", Twice)
    assert r.find("TwiceForThisTest", 1) is not None
