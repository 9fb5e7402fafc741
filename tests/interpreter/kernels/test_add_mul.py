"""ADD and MUL: the teaching layer (kernels/add.py, kernels/mul.py, _binary.py, _binary_plain.py) and the
speed layer (fast/binary.py) compute the same bits, the default interpreter is bit-exact with LiteRT's builtin
kernels and the reference variant with LiteRT's BUILTIN_REF kernels: one set of tests run for each op's cases
(ids ``OP-case``), then what is particular to each op.

ADD: float32, float16, int32, int64, uint8, int8, int16 (general scales, power-of-two scales, unquantized),
broadcasts of every kind litert dispatches (elementwise, five-fold, scalar, the slow loop) -- and the two
variants part where litert's NEON loops narrow to int16 or round once (Variant.neon_narrowing).

MUL: float32, float16, int32, int64, uint32, complex64, uint8, int8, int16 (→ int16, int8, uint8),
unquantized int16, broadcasts -- and the variants part where litert's NEON 8-bit MUL narrows its product to
int16 (Variant.neon_narrowing)."""

from __future__ import annotations

import pytest

from helpers.binary_cases import (
    C64,
    F16,
    F32,
    I8,
    I16,
    I32,
    I64,
    U8,
    U32,
    binary,
    builtin_ref_outcome,
    differing_bits,
    fast_path_of,
    int16_rounding_ties,
    prepared_data,
    scalar_broadcast_pairs,
)
from helpers.op_layers import OpLayers
from workbench.perf import elementwise
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import AddOptions, MulOptions
from workbench.schema import BuiltinOperator as B

# ADD's cases
RELU6 = AddOptions(fused_activation_function=Act.RELU6)
GENERAL16 = AddOptions(pot_scale_int16=False)
SAMPLE_ADD = (7.316399569390342e-05, 2.5244273274438456e-05, 5.4738251492381096e-05)   # a16w8 node 7

ADD_CASES = {
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

# MUL's cases
RELU = MulOptions(fused_activation_function=Act.RELU)

MUL_CASES = {
    "float32": binary(B.MUL, F32, (2, 3, 40), (2, 3, 40), options=MulOptions()),
    "float32_broadcast_relu": binary(B.MUL, F32, (2, 3, 40), (3, 1), options=RELU),
    "float16_broadcast": binary(B.MUL, F16, (3, 40), (40,), options=MulOptions()),
    "int32_wraps_relu": binary(B.MUL, I32, (3, 40), (3, 40), options=RELU),
    "int64_broadcast": binary(B.MUL, I64, (3, 40), (40,), options=MulOptions()),
    "uint32_relu_n1_to_1": binary(B.MUL, U32, (3, 40), (3, 40),
                                  options=MulOptions(fused_activation_function=Act.RELU_N1_TO_1)),
    "complex64": binary(B.MUL, C64, (3, 40), (40,), options=MulOptions()),
    "uint8_every_pair": binary(B.MUL, U8, None, None, (0.05, 3), (0.02, 200), (0.0011, 4), MulOptions()),
    "int8_every_pair": binary(B.MUL, I8, None, None, (0.05, 3), (0.02, -100), (0.003, -5), MulOptions()),
    "uint8_multiplier_above_one": binary(B.MUL, U8, None, None, (0.05, 3), (0.02, 200), (0.0002, 4), MulOptions()),
    "int8_multiplier_above_one": binary(B.MUL, I8, None, None, (0.05, 3), (0.02, -100), (0.0002, 4), MulOptions()),
    "uint8_broadcast_relu": binary(B.MUL, U8, (2, 4, 3), (1, 3), (0.05, 3), (0.02, 200), (0.0009, 30), RELU),
    "uint8_overflow_scalar_broadcast": binary(B.MUL, U8, (5, 40), (5, 1), (0.05, 3), (0.02, 200), (0.0002, 4),
                                              MulOptions()),
    "uint8_overflow_fivefold": binary(B.MUL, U8, (2, 1, 3, 17), (2, 4, 1, 1), (0.05, 3), (0.02, 200), (0.0002, 4),
                                      MulOptions()),
    "int8_overflow_not_fivefold": binary(B.MUL, I8, (2, 1, 3, 1, 19), (1, 4, 1, 5, 19), (0.05, 3), (0.02, -100),
                                         (0.0002, 4), MulOptions()),
    "uint8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.MUL, U8, (0.05, 3), (0.02, 200), (0.0002, 4),
                                                                MulOptions()),
    "int8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.MUL, I8, (0.05, 3), (0.02, -100), (0.0002, 4),
                                                               MulOptions(), swap=True),
    "int16": binary(B.MUL, I16, (3, 40), (3, 40), (0.001, 0), (0.002, 0), (0.00003, 0), MulOptions()),
    "int16_broadcast_relu_n1_to_1": binary(B.MUL, I16, (3, 40), (40,), (0.001, 0), (0.002, 0), (0.00003, 0),
                                           MulOptions(fused_activation_function=Act.RELU_N1_TO_1)),
    "int16_to_int8": binary(B.MUL, I16, (3, 40), (3, 40), (2 ** -15, 0), (2 ** -15, 0), (1 / 128, 5), MulOptions(),
                            out_dt=I8),
    "int16_to_uint8_relu": binary(B.MUL, I16, (3, 40), (3, 40), (2 ** -15, 0), (2 ** -15, 0), (1 / 128, 130), RELU,
                                  out_dt=U8),
    "int16_plain": binary(B.MUL, I16, (3, 40), (3, 40), options=MulOptions()),
    "int16_plain_relu": binary(B.MUL, I16, (3, 40), (40,), options=RELU),
}
ADD, MUL = OpLayers(ADD_CASES), OpLayers(MUL_CASES)
LAYERS = {"ADD": ADD, "MUL": MUL}
OP_CASES = [pytest.param(op, case, id=f"{op}-{case}") for op, layers in LAYERS.items() for case in sorted(layers.cases)]
# LiteRT's BUILTIN_REF resolver registers ADD up to version 5 and MUL up to version 7: float16 (ADD version 6,
# MUL version 8) is builtin-only
REF_FAILS = {("ADD", "float16_relu"): "Didn't find op for builtin opcode 'ADD' version '6'",
             ("MUL", "float16_broadcast"): "Didn't find op for builtin opcode 'MUL' version '8'"}


@pytest.mark.parametrize("op, case", OP_CASES)
def test_teaching_layer_is_the_speed_layer(op, case):
    LAYERS[op].check_layers(case)


@pytest.mark.parametrize("op, case", OP_CASES)
def test_bit_exact_with_litert_builtin(op, case):
    LAYERS[op].check_litert(case)


@pytest.mark.parametrize("op, case", [p for p in OP_CASES if tuple(p.values) not in REF_FAILS])
def test_reference_variant_bit_exact_with_litert_builtin_ref(op, case):
    LAYERS[op].check_reference_variant(case)


@pytest.mark.parametrize("op, case", [pytest.param(op, case, id=f"{op}-{case}") for op, case in sorted(REF_FAILS)])
def test_builtin_ref_cannot_run(op, case):
    status, message = builtin_ref_outcome(LAYERS[op], case)
    assert status == "error" and REF_FAILS[op, case] in message, (status, message)


# ------------------------------------------------------------------------------------------------
# ADD


@pytest.mark.parametrize("case", ["int8_int16_overflow", "uint8_int16_overflow", "int8_overflow_fivefold",
                                  "int8_overflow_scalar_broadcast", "uint8_overflow_scalar_broadcast"])
def test_neon_narrowing_wraps_what_the_reference_saturates(case):
    # an output scale far below the inputs' makes the requantized sum leave int16: litert's NEON loop
    # narrows it by truncation (vmovn) and the value lands at the other end of the range; the reference
    # saturates.  Elementwise, five-fold and scalar-broadcast loops alike.
    assert ADD.differing_variants(case) > 0


def test_neon_uint8_add_truncates_its_input_shift():
    # at ordinary scales: uint8's NEON loop shifts each rescaled input right without rounding (227 of
    # the 65536 pairs move by one), the scalar-broadcast loop too
    assert ADD.differing_variants("uint8_every_pair") == 227
    assert ADD.differing_variants("uint8_scalar_broadcast_every_pair") > 0


def test_int16_add_vector_loop_rounds_once():
    # AddElementwiseInt16 folds each input's right shift into the left shift: one rounding where the
    # reference rounds twice.  Only pairs whose rescale meets an exact tie tell them apart: none of
    # every int16 value against a permutation of them, but the searched pairs in the vector blocks
    assert ADD.differing_variants("int16_every_value_sample_scales") == 0
    assert ADD.differing_variants("int16_rounding_ties_sample_scales") > 0


@pytest.mark.parametrize("case", ["int8_overflow_not_fivefold", "int16_general_broadcast_relu", "int16_pot",
                                  "float32_broadcast_relu6", "int32_wraps_relu_n1_to_1"])
def test_variants_agree_where_litert_runs_the_reference_loop(case):
    # a broadcast that is not "five-fold" runs BroadcastAdd6DSlow in both builds; int16 broadcasts, the
    # power-of-two path and the plain types have no vector loop of their own
    assert differing_bits(ADD, case) == 0


def test_add_vector_loops_are_only_emulated_where_they_change_values():
    """Moved from test_quantized_elementwise.py.  The OpData marks the outputs litert's NEON loop
    writes (whole blocks of 8 or 16, per run of ProcessBroadcastShapes's dispatch); the speed layer
    keeps a second table for them only where that loop changes a value: uint8 ADD (its truncating
    input shift moves a few sums by one), not MUL at ordinary scales (below)."""
    for case in ("uint8_every_pair", "uint8_int16_overflow"):               # 8-wide; the tail is exact
        d = prepared_data(ADD, case)
        assert d.vector_mask.sum() == 65549 // 8 * 8 and not d.vector_mask.reshape(-1)[65549 // 8 * 8:].any()
    path = fast_path_of(ADD, "uint8_every_pair")
    assert 0 < int((path.vector_table != path.table).sum()) < 1000
    assert prepared_data(ADD, "int8_overflow_fivefold").vector_mask is not None
    d = prepared_data(ADD, "uint8_overflow_scalar_broadcast")               # (1, 1) + (3, 20): one run of 60
    assert (d.vector_scalar_broadcast and d.vector_mask.reshape(-1)[:56].all()
            and not d.vector_mask.reshape(-1)[56:].any())
    assert prepared_data(ADD, "int8_overflow_not_fivefold").vector_mask is None     # the reference loop
    for case in ("uint8_every_pair", "int8_overflow_fivefold", "int16_every_value_sample_scales"):
        assert prepared_data(ADD, case, "reference").vector_mask is None, case      # reference: no vector loop


def test_int16_add_vector_loop_is_only_emulated_without_broadcast():
    """The int16 vector loop takes whole blocks of 16 when the shapes agree; a broadcast runs the
    reference, so does the power-of-two path (as test_quantized_elementwise.py checks on its cases).
    The speed layer computes the two parts once each ("numpy")."""
    d = prepared_data(ADD, "int16_every_value_sample_scales")
    n = d.vector_mask.size
    assert n % 16 == 13 and d.vector_mask.sum() == n - 13 and d.vector_mask[: n - 13].all()
    assert fast_path_of(ADD, "int16_every_value_sample_scales").name == "numpy"
    for case in ("int16_general_broadcast_relu", "int16_pot"):
        assert prepared_data(ADD, case).vector_mask is None, case
        assert fast_path_of(ADD, case) is None, case                  # the teaching layer's numpy


def test_labels_name_the_fast_path():
    assert fast_path_of(ADD, "int8_every_pair").name == "table"
    # one pass on the pool (fast/binary.py): the kernel library's C loop, or numba's rows without it
    assert fast_path_of(ADD, "float32").name == ("rows" if elementwise.binary_function() is None else "native")
    assert fast_path_of(ADD, "int32_wraps_relu_n1_to_1") is None


# ------------------------------------------------------------------------------------------------
# MUL


@pytest.mark.parametrize("case", ["int8_multiplier_above_one", "uint8_multiplier_above_one",
                                  "uint8_overflow_scalar_broadcast", "uint8_overflow_fivefold",
                                  "uint8_scalar_broadcast_every_pair", "int8_scalar_broadcast_every_pair"])
def test_neon_narrowing_changes_products_beyond_int16(case):
    # s1·s2/s_out > 1 lets the requantized product leave int16: litert's NEON loop narrows it saturating
    # (vqmovn; uint8's scalar-broadcast loop truncating) and adds the zero point in int16, wrapping; the
    # reference saturates to the 8-bit type directly
    assert MUL.differing_variants(case) > 0


@pytest.mark.parametrize("case", ["uint8_every_pair", "int8_every_pair", "int8_overflow_not_fivefold", "int16",
                                  "int16_to_int8", "float32_broadcast_relu", "complex64"])
def test_variants_agree_elsewhere(case):
    # products that fit int16 narrow to themselves; a broadcast that is not "five-fold" and int16 run the
    # reference loop in both builds
    assert differing_bits(MUL, case) == 0


def test_mul_vector_loops_are_only_emulated_where_they_change_values():
    """Moved from test_quantized_elementwise.py: litert's NEON MUL only differs when the int16
    intermediate overflows; the OpData marks the outputs of its loops (8- or 16-wide blocks per run of
    ProcessBroadcastShapes's dispatch) and the speed layer keeps their table only where it differs."""
    assert prepared_data(MUL, "uint8_every_pair").vector_mask is not None
    assert fast_path_of(MUL, "uint8_every_pair").vector_table is None          # the same values
    assert fast_path_of(MUL, "uint8_multiplier_above_one").vector_table is not None
    assert prepared_data(MUL, "int8_overflow_not_fivefold").vector_mask is None          # the reference loop
    d = prepared_data(MUL, "uint8_overflow_fivefold")          # (2,1,3,17)·(2,4,1,1): scalar runs of 3·17 = 51
    runs = d.vector_mask.reshape(-1, 51)
    assert d.vector_scalar_broadcast and runs[:, :48].all() and not runs[:, 48:].any()
    assert prepared_data(MUL, "uint8_overflow_fivefold", "reference").vector_mask is None
