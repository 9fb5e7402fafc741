"""LOCAL_RESPONSE_NORMALIZATION: the teaching layer (kernels/local_response_normalization.py; no speed
layer) is bit-exact with LiteRT's BUILTIN_REF kernels under the reference variant, and with LiteRT's
builtin kernels by default for beta 1 and 0.5; for other betas litert-x86 raises to the power with
Eigen's vectorised pow, which the kernel does not reproduce — the gap test below bounds it."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import activation_cases
from helpers.op_layers import OpLayers

CASES = activation_cases.LOCAL_RESPONSE_NORMALIZATION
OTHER_BETAS = activation_cases.LRN_OTHER_BETAS
LAYERS = OpLayers({**CASES, **OTHER_BETAS})


@pytest.mark.parametrize("case", sorted({**CASES, **OTHER_BETAS}))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted({**CASES, **OTHER_BETAS}))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


@pytest.mark.parametrize("case", sorted(OTHER_BETAS))
def test_other_betas_are_within_two_ulps_of_litert_on_the_packets(case):
    # the known gap: Eigen's packet pow on the first 4·⌊N/4⌋ values (the last N mod 4 take powf,
    # like the kernel's correctly rounded power); everything else — the window sums — is exact
    [ours], [theirs] = LAYERS.run(case), LAYERS.litert(case)
    ulps = np.abs(ours.view(np.int32).astype(np.int64) - theirs.view(np.int32).astype(np.int64)).reshape(-1)
    assert 0 < (ulps > 0).sum() and ulps.max() <= 2
    n = ulps.size
    assert not ulps[n - n % 4:].any()


def test_the_variants_differ():
    # x86: a symmetric window [c − r, c + r] and a running sum; the reference: [c − r, c + r) in double
    assert LAYERS.differing_variants("radius2_beta1") > 0
