"""The four ways every kernel test in tests/interpreter/kernels/ runs a one-op case.

A test module holds ``CASES``: case name → ``build(name) -> (ModelBuilder, {input name: array})`` (the
builders of ``quantized_cases`` and the quant test tables fit).  :class:`OpLayers` runs each case

  * through the speed layer (the default interpreter) and through the teaching layer alone
    (``reference=True``): every element equal, floats bit for bit;
  * against ai-edge-litert's builtin kernels (variant ``litert-x86``, the default);
  * with ``variant="reference"``, teaching layer alone, against LiteRT's own reference kernels (its
    ``BUILTIN_REF`` op resolver).

LiteRT runs every case of a module in one child process per resolver (``litert_batch.run_many``:
its kernels can abort the process), once, the first time a test asks.  A module whose op has a
known gap between the layers or the variants says so in the test that shows it, never by skipping
here.  Usage::

    LAYERS = OpLayers(CASES)

    @pytest.mark.parametrize("case", sorted(CASES))
    def test_teaching_layer_is_the_speed_layer(case):
        LAYERS.check_layers(case)
"""

from __future__ import annotations

import numpy as np

from helpers import litert_batch
from helpers.quantized_cases import assert_same
from workbench.interpreter import Interpreter
from workbench.versioning import update_versions


class OpLayers:
    def __init__(self, cases: dict):
        self.cases = cases
        self._built: dict = {}
        self._litert: dict = {}

    def build(self, name: str):
        """(model, inputs in the interpreter's input order)."""
        if name not in self._built:
            builder, feeds = self.cases[name](name)
            model = update_versions(builder.build())
            names = [d["name"] for d in Interpreter(model=model).get_input_details()]
            self._built[name] = (model, [feeds[n] for n in names])
        return self._built[name]

    def run(self, name: str, *, reference: bool = False, variant: str = "litert-x86") -> list:
        """Our outputs for case ``name``: one invoke, in output order."""
        model, inputs = self.build(name)
        it = Interpreter(model=model, reference=reference, variant=variant)
        it.allocate_tensors()
        for d, x in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], x)
        it.invoke()
        return [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()]

    def litert(self, name: str, resolver: str = "BUILTIN_WITHOUT_DEFAULT_DELEGATES") -> list:
        """LiteRT's outputs for case ``name`` under ``resolver`` (all cases run once, in one child)."""
        if resolver not in self._litert:
            from workbench import dump

            names = sorted(self.cases)
            jobs = [(dump(self.build(n)[0]), self.build(n)[1]) for n in names]
            self._litert[resolver] = dict(zip(names, litert_batch.run_many(jobs, resolver=resolver)))
        status, value = self._litert[resolver][name]
        assert status == "ok", f"{name}: LiteRT ({resolver}) {status}: {value}"
        return value

    # -- the checks -----------------------------------------------------------------------------------
    def check_layers(self, name: str) -> None:
        """The teaching layer computes the speed layer's bits, under both variants."""
        for variant in ("litert-x86", "reference"):
            assert_same(self.run(name, reference=True, variant=variant), self.run(name, variant=variant),
                        f"{name} (teaching vs speed layer, variant {variant})")

    def check_litert(self, name: str) -> None:
        """The default interpreter is bit-exact with LiteRT's builtin kernels."""
        assert_same(self.run(name), self.litert(name), f"{name} (ours vs LiteRT builtin)")

    def check_reference_variant(self, name: str) -> None:
        """``variant="reference"`` (teaching layer) is bit-exact with LiteRT's BUILTIN_REF kernels."""
        assert_same(self.run(name, reference=True, variant="reference"), self.litert(name, "BUILTIN_REF"),
                    f"{name} (reference variant vs LiteRT BUILTIN_REF)")

    def differing_variants(self, name: str) -> int:
        """How many output elements the two variants compute differently (a variant test wants > 0)."""
        a, b = self.run(name), self.run(name, variant="reference")
        return sum(int((x != y).sum()) for x, y in zip(a, b))
