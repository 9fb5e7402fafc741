"""Expected version facts of the corpus (tests/versioning/test_versioning_corpus.py), shared with the
CLI tests."""

from __future__ import annotations

# model → {(op, stored, computed): number of operators} where the stored version is ABOVE today's
EXPECTED_BELOW = {"mltk_anomaly_detection": {("STRIDED_SLICE", 2, 1): 1, ("PACK", 2, 1): 1}}
