"""Where the optional directory of larger models is (next to the repository), for the tests that use it.

Shared by tests/interpreter/quant/test_quantized_models.py and tests/interpreter/explain/test_quantized_explain.py;
a test that needs a model from it skips when the file is absent.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED_MODELS = ROOT.parent / "shared" / "models"
