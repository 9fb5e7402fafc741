"""ADD: the teaching layer (kernels/add.py, _binary.py, _binary_plain.py) and the speed layer
(fast/binary.py) compute the same bits, the default interpreter is bit-exact with LiteRT's builtin
kernels and the reference variant with LiteRT's BUILTIN_REF kernels — float32, float16, int32, int64,
uint8, int8, int16 (general scales, power-of-two scales, unquantized), broadcasts of every kind litert
dispatches (elementwise, five-fold, scalar, the slow loop) — and the two variants part where litert's
NEON loops narrow to int16 or round once (Variant.neon_narrowing)."""

from __future__ import annotations

import pytest

from binary_cases import (
    F16, F32, I8, I16, I32, I64, U8, binary, builtin_ref_outcome, differing_bits, fast_path_of, int16_rounding_ties, prepared_data,
    scalar_broadcast_pairs,
)
from op_layers import OpLayers
from workbench.schema import ActivationFunctionType as Act, AddOptions, BuiltinOperator as B

RELU6 = AddOptions(fused_activation_function=Act.RELU6)
GENERAL16 = AddOptions(pot_scale_int16=False)
SAMPLE_ADD = (7.316399569390342e-05, 2.5244273274438456e-05, 5.4738251492381096e-05)   # a16w8 node 7

CASES = {
    "float32": binary(B.ADD, F32, (2, 3, 40), (2, 3, 40), options=AddOptions()),
    "float32_broadcast_relu6": binary(B.ADD, F32, (2, 3, 40), (3, 1), options=RELU6),
    "float32_broadcast_rank5": binary(B.ADD, F32, (2, 1, 3, 1, 5), (1, 4, 1, 6, 5), options=AddOptions()),
    "float16_relu": binary(B.ADD, F16, (3, 40), (40,), options=AddOptions(fused_activation_function=Act.RELU)),
    "int32_wraps_relu_n1_to_1": binary(B.ADD, I32, (3, 40), (3, 40),
                                       options=AddOptions(fused_activation_function=Act.RELU_N1_TO_1)),
    "int64_broadcast": binary(B.ADD, I64, (3, 40), (40,), options=AddOptions()),
    "uint8_every_pair": binary(B.ADD, U8, None, None, (0.05, 3), (0.02, 200), (0.06, 128), AddOptions()),
    "int8_every_pair": binary(B.ADD, I8, None, None, (0.05, 3), (0.02, -100), (0.06, -1), AddOptions()),
    "uint8_int16_overflow": binary(B.ADD, U8, None, None, (0.05, 3), (0.02, 200), (2e-7, 4), AddOptions()),
    "int8_int16_overflow": binary(B.ADD, I8, None, None, (0.05, 3), (0.02, -100), (3e-7, 4), AddOptions()),
    "uint8_broadcast_relu6": binary(B.ADD, U8, (2, 3, 8), (8,), (0.05, 3), (0.02, 200), (0.03, 0), RELU6),
    "int8_overflow_fivefold": binary(B.ADD, I8, (4, 1, 21), (1, 5, 21), (0.05, 3), (0.02, -100), (2e-5, 4),
                                     AddOptions()),
    "int8_overflow_not_fivefold": binary(B.ADD, I8, (2, 1, 3, 1, 19), (1, 4, 1, 5, 19), (0.05, 3), (0.02, -100),
                                         (2e-5, 4), AddOptions()),
    "int8_overflow_scalar_broadcast": binary(B.ADD, I8, (3, 19), (1,), (0.05, 3), (0.02, -100), (2e-7, 4),
                                             AddOptions()),
    "uint8_overflow_scalar_broadcast": binary(B.ADD, U8, (1, 1), (3, 20), (0.05, 3), (0.02, 200), (2e-5, 4),
                                              AddOptions()),
    "int8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.ADD, I8, (0.05, 3), (0.02, -100), (0.01, 4),
                                                               AddOptions()),
    "uint8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.ADD, U8, (0.05, 3), (0.02, 200), (0.06, 128),
                                                                AddOptions(), swap=True),
    "int16_general": binary(B.ADD, I16, (2, 3, 40), (2, 3, 40), (0.001, 0), (0.0007, 0), (0.0015, 0), GENERAL16),
    "int16_general_broadcast_relu": binary(B.ADD, I16, (3, 1000), (1000,), (0.0003, 0), (0.01, 0), (0.011, 0),
                                           AddOptions(pot_scale_int16=False, fused_activation_function=Act.RELU)),
    "int16_every_value_sample_scales": binary(B.ADD, I16, "every int16", None, *((s, 0) for s in SAMPLE_ADD),
                                              GENERAL16),
    "int16_rounding_ties_sample_scales": int16_rounding_ties(B.ADD, *((s, 0) for s in SAMPLE_ADD), GENERAL16),
    "int16_pot": binary(B.ADD, I16, (2, 3, 40), (2, 3, 40), (2 ** -12, 0), (2 ** -14, 0), (2 ** -12, 0),
                        AddOptions(pot_scale_int16=True)),
    "int16_pot_option_general_scales": binary(B.ADD, I16, (2, 3, 40), (2, 3, 40), (0.001, 0), (0.0007, 0),
                                              (0.0015, 0), AddOptions(pot_scale_int16=True)),
    "int16_plain_relu6": binary(B.ADD, I16, (3, 40), (40,), options=RELU6),
}
LAYERS = OpLayers(CASES)
# LiteRT's BUILTIN_REF resolver registers ADD up to version 5: float16 (version 6) is builtin-only
REF_FAILS = {"float16_relu": "Didn't find op for builtin opcode 'ADD' version '6'"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(set(CASES) - set(REF_FAILS)))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


@pytest.mark.parametrize("case", sorted(REF_FAILS))
def test_builtin_ref_cannot_run(case):
    status, message = builtin_ref_outcome(LAYERS, case)
    assert status == "error" and REF_FAILS[case] in message, (status, message)


@pytest.mark.parametrize("case", ["int8_int16_overflow", "uint8_int16_overflow", "int8_overflow_fivefold",
                                  "int8_overflow_scalar_broadcast", "uint8_overflow_scalar_broadcast"])
def test_neon_narrowing_wraps_what_the_reference_saturates(case):
    # an output scale far below the inputs' makes the requantized sum leave int16: litert's NEON loop
    # narrows it by truncation (vmovn) and the value lands at the other end of the range; the reference
    # saturates.  Elementwise, five-fold and scalar-broadcast loops alike.
    assert LAYERS.differing_variants(case) > 0


def test_neon_uint8_add_truncates_its_input_shift():
    # at ordinary scales: uint8's NEON loop shifts each rescaled input right without rounding (227 of
    # the 65536 pairs move by one), the scalar-broadcast loop too
    assert LAYERS.differing_variants("uint8_every_pair") == 227
    assert LAYERS.differing_variants("uint8_scalar_broadcast_every_pair") > 0


def test_int16_add_vector_loop_rounds_once():
    # AddElementwiseInt16 folds each input's right shift into the left shift: one rounding where the
    # reference rounds twice.  Only pairs whose rescale meets an exact tie tell them apart: none of
    # every int16 value against a permutation of them, but the searched pairs in the vector blocks
    assert LAYERS.differing_variants("int16_every_value_sample_scales") == 0
    assert LAYERS.differing_variants("int16_rounding_ties_sample_scales") > 0


@pytest.mark.parametrize("case", ["int8_overflow_not_fivefold", "int16_general_broadcast_relu", "int16_pot",
                                  "float32_broadcast_relu6", "int32_wraps_relu_n1_to_1"])
def test_variants_agree_where_litert_runs_the_reference_loop(case):
    # a broadcast that is not "five-fold" runs BroadcastAdd6DSlow in both builds; int16 broadcasts, the
    # power-of-two path and the plain types have no vector loop of their own
    assert differing_bits(LAYERS, case) == 0


def test_the_vector_loops_are_only_emulated_where_they_change_values():
    """Moved from test_quantized_elementwise.py.  The OpData marks the outputs litert's NEON loop
    writes (whole blocks of 8 or 16, per run of ProcessBroadcastShapes's dispatch); the speed layer
    keeps a second table for them only where that loop changes a value: uint8 ADD (its truncating
    input shift moves a few sums by one), not MUL at ordinary scales (test_mul.py)."""
    for case in ("uint8_every_pair", "uint8_int16_overflow"):               # 8-wide; the tail is exact
        d = prepared_data(LAYERS, case)
        assert d.vector_mask.sum() == 65549 // 8 * 8 and not d.vector_mask.reshape(-1)[65549 // 8 * 8:].any()
    path = fast_path_of(LAYERS, "uint8_every_pair")
    assert 0 < int((path.vector_table != path.table).sum()) < 1000
    assert prepared_data(LAYERS, "int8_overflow_fivefold").vector_mask is not None
    d = prepared_data(LAYERS, "uint8_overflow_scalar_broadcast")               # (1, 1) + (3, 20): one run of 60
    assert d.vector_scalar_broadcast and d.vector_mask.reshape(-1)[:56].all() and not d.vector_mask.reshape(-1)[56:].any()
    assert prepared_data(LAYERS, "int8_overflow_not_fivefold").vector_mask is None     # the reference loop
    for case in ("uint8_every_pair", "int8_overflow_fivefold", "int16_every_value_sample_scales"):
        assert prepared_data(LAYERS, case, "reference").vector_mask is None, case      # reference: no vector loop


def test_int16_add_vector_loop_is_only_emulated_without_broadcast():
    """The int16 vector loop takes whole blocks of 16 when the shapes agree; a broadcast runs the
    reference, so does the power-of-two path (as test_quantized_elementwise.py checks on its cases).
    The speed layer computes the two parts once each ("numpy")."""
    d = prepared_data(LAYERS, "int16_every_value_sample_scales")
    n = d.vector_mask.size
    assert n % 16 == 13 and d.vector_mask.sum() == n - 13 and d.vector_mask[: n - 13].all()
    assert fast_path_of(LAYERS, "int16_every_value_sample_scales").name == "numpy"
    for case in ("int16_general_broadcast_relu", "int16_pot"):
        assert prepared_data(LAYERS, case).vector_mask is None, case
        assert fast_path_of(LAYERS, case) is None, case                  # the teaching layer's numpy


def test_labels_name_the_fast_path():
    assert fast_path_of(LAYERS, "int8_every_pair").name == "table"
    assert fast_path_of(LAYERS, "float32") is None and fast_path_of(LAYERS, "int32_wraps_relu_n1_to_1") is None
