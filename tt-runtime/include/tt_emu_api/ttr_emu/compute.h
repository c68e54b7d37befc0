// The compute kernel API behind every stand-in api/compute/*.h header (namespace ckernel, as in
// tt-metal). The compute source is compiled once and its unpack, math and pack parts run in one
// context: UNPACK(x), MATH(x) and PACK(x) all expand to x, and the DST hand-over between math and
// pack (tile_regs_*) is checked as a state machine by the emulator.
#pragma once

#include "ttr_emu/prelude.h"

#ifndef MATH_FIDELITY
#define MATH_FIDELITY 4
#endif
#ifndef DST_ACCUM_MODE
#define DST_ACCUM_MODE false
#endif
#ifndef APPROX
#define APPROX false
#endif

#define UNPACK(x) x
#define MATH(x) x
#define PACK(x) x

namespace ckernel {

enum class SrcOrder : uint8_t { Regular = 0, Reverse = 1 };
enum class BroadcastType : uint8_t { NONE = 0, COL = 1, ROW = 2, SCALAR = 3 };
enum EltwiseBinaryType : uint8_t { ELWMUL = 0, ELWDIV = 1, ELWADD = 2, ELWSUB = 3 };
enum PoolType : uint8_t { SUM = 0, AVG = 1, MAX = 2 };
enum ReduceDim : uint8_t { REDUCE_ROW = 0, REDUCE_COL = 1, REDUCE_SCALAR = 2 };

namespace ttr_detail {
inline const ttr_emu::Abi &api() { return *ttr_emu::api; }
constexpr uint32_t binary_op(EltwiseBinaryType t) {
    return t == ELWADD ? ttr_emu::BIN_ADD : t == ELWSUB ? ttr_emu::BIN_SUB : ttr_emu::BIN_MUL;
}
constexpr uint32_t binary_init(EltwiseBinaryType t) {
    return t == ELWADD ? ttr_emu::INIT_ADD : t == ELWSUB ? ttr_emu::INIT_SUB : ttr_emu::INIT_MUL;
}
constexpr uint32_t bcast(BroadcastType b) {
    return b == BroadcastType::ROW      ? ttr_emu::BCAST_ROW
           : b == BroadcastType::COL    ? ttr_emu::BCAST_COL
           : b == BroadcastType::SCALAR ? ttr_emu::BCAST_SCALAR
                                        : ttr_emu::BCAST_NONE;
}
constexpr uint32_t pool(PoolType p) {
    return p == SUM ? ttr_emu::POOL_SUM : p == AVG ? ttr_emu::POOL_AVG : ttr_emu::POOL_MAX;
}
constexpr uint32_t dim(ReduceDim d) {
    return d == REDUCE_ROW ? ttr_emu::REDUCE_ROW : d == REDUCE_COL ? ttr_emu::REDUCE_COL : ttr_emu::REDUCE_SCALAR;
}
}  // namespace ttr_detail

#ifdef REDUCE_OP
#define TTR_DEFAULT_POOL REDUCE_OP
#else
#define TTR_DEFAULT_POOL PoolType::SUM
#endif
#ifdef REDUCE_DIM
#define TTR_DEFAULT_DIM REDUCE_DIM
#else
#define TTR_DEFAULT_DIM ReduceDim::REDUCE_ROW
#endif

// Reading a CB from the compute kernel: a u32 of page `tile_index` of the waited front, the same
// value for the unpack, math and pack threads (cb_api.h).
ALWI uint32_t read_tile_value(uint32_t cb_id, uint32_t tile_index, uint32_t element_offset) {
    return ttr_detail::api().cb_read_value(cb_id, tile_index, element_offset);
}

// Start-up.
template <SrcOrder order = SrcOrder::Regular>
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    ttr_detail::api().hw_startup(icb0, icb1, ocb);
}
ALWI void compute_kernel_hw_startup(uint32_t icb0, uint32_t ocb) { ttr_detail::api().hw_startup(icb0, icb0, ocb); }
ALWI void binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    ttr_detail::api().hw_startup(icb0, icb1, ocb);
    ttr_detail::api().op_init(ttr_emu::INIT_BINARY_COMMON, icb0, icb1, ocb);
}
ALWI void unary_op_init_common(uint32_t icb, uint32_t ocb) {
    ttr_detail::api().hw_startup(icb, icb, ocb);
    ttr_detail::api().op_init(ttr_emu::INIT_COPY, icb, 0, ocb);
}
ALWI void init_sfpu(uint32_t icb, uint32_t ocb) { unary_op_init_common(icb, ocb); }

// DST register protocol.
ALWI void tile_regs_acquire() { ttr_detail::api().regs(ttr_emu::REGS_ACQUIRE); }
ALWI void tile_regs_commit() { ttr_detail::api().regs(ttr_emu::REGS_COMMIT); }
ALWI void tile_regs_wait() { ttr_detail::api().regs(ttr_emu::REGS_WAIT); }
ALWI void tile_regs_release() { ttr_detail::api().regs(ttr_emu::REGS_RELEASE); }
[[deprecated("Use tile_regs_acquire() instead")]] ALWI void acquire_dst() {
    ttr_detail::api().regs(ttr_emu::REGS_LEGACY_ACQUIRE);
}
[[deprecated("Use tile_regs_release() instead")]] ALWI void release_dst() {
    ttr_detail::api().regs(ttr_emu::REGS_LEGACY_RELEASE);
}

// Matmul: in0 goes to SrcB, in1 to SrcA.
ALWI void matmul_init(uint32_t in0_cb_id, uint32_t in1_cb_id, const uint32_t transpose = 0) {
    ttr_detail::api().op_init(ttr_emu::INIT_MATMUL, in0_cb_id, in1_cb_id, transpose);
}
ALWI void matmul_tiles(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index, uint32_t in1_tile_index,
                       uint32_t idst) {
    ttr_detail::api().matmul(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, 0, 1, 1, 1);
}
ALWI void matmul_tiles(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index, uint32_t in1_tile_index,
                       uint32_t idst, const uint32_t transpose) {
    ttr_detail::api().matmul(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, 1, 1, 1);
}
ALWI void matmul_block_init(uint32_t in0_cb_id, uint32_t in1_cb_id, const uint32_t transpose = 0, uint32_t ct_dim = 1,
                            uint32_t rt_dim = 1, uint32_t kt_dim = 1) {
    (void)ct_dim;
    (void)rt_dim;
    (void)kt_dim;
    ttr_detail::api().op_init(ttr_emu::INIT_MATMUL, in0_cb_id, in1_cb_id, transpose);
}
ALWI void matmul_block(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index, uint32_t in1_tile_index,
                       uint32_t idst, const uint32_t transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim) {
    ttr_detail::api().matmul(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, ct_dim, rt_dim,
                             kt_dim);
}
[[deprecated("use matmul_init")]] ALWI void mm_init(uint32_t in0_cb_id = 0, uint32_t in1_cb_id = 1,
                                                    uint32_t out_cb_id = 16, const uint32_t transpose = 0) {
    ttr_detail::api().hw_startup(in0_cb_id, in1_cb_id, out_cb_id);
    matmul_init(in0_cb_id, in1_cb_id, transpose);
}
[[deprecated("use matmul_block_init")]] ALWI void mm_block_init(uint32_t in0_cb_id = 0, uint32_t in1_cb_id = 1,
                                                                uint32_t out_cb_id = 16, const uint32_t transpose = 0,
                                                                uint32_t ct_dim = 1, uint32_t rt_dim = 1,
                                                                uint32_t kt_dim = 1) {
    ttr_detail::api().hw_startup(in0_cb_id, in1_cb_id, out_cb_id);
    matmul_block_init(in0_cb_id, in1_cb_id, transpose, ct_dim, rt_dim, kt_dim);
}

// Element-wise binary ops (SrcA = in0, SrcB = in1).
ALWI void add_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false) {
    (void)acc_to_dest;
    ttr_detail::api().op_init(ttr_emu::INIT_ADD, icb0, icb1, 0);
}
ALWI void sub_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false) {
    (void)acc_to_dest;
    ttr_detail::api().op_init(ttr_emu::INIT_SUB, icb0, icb1, 0);
}
ALWI void mul_tiles_init(uint32_t icb0, uint32_t icb1) { ttr_detail::api().op_init(ttr_emu::INIT_MUL, icb0, icb1, 0); }
ALWI void add_init(uint32_t icb0, uint32_t icb1) { add_tiles_init(icb0, icb1); }
ALWI void sub_init(uint32_t icb0, uint32_t icb1) { sub_tiles_init(icb0, icb1); }
ALWI void mul_init(uint32_t icb0, uint32_t icb1) { mul_tiles_init(icb0, icb1); }
template <bool full_init, EltwiseBinaryType eltwise_binary_type>
ALWI void binary_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false) {
    (void)acc_to_dest;
    ttr_detail::api().op_init(ttr_detail::binary_init(eltwise_binary_type), icb0, icb1, 0);
}
ALWI void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttr_detail::api().binary(ttr_emu::BIN_ADD, ttr_emu::BCAST_NONE, icb0, icb1, itile0, itile1, idst);
}
ALWI void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttr_detail::api().binary(ttr_emu::BIN_SUB, ttr_emu::BCAST_NONE, icb0, icb1, itile0, itile1, idst);
}
ALWI void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttr_detail::api().binary(ttr_emu::BIN_MUL, ttr_emu::BCAST_NONE, icb0, icb1, itile0, itile1, idst);
}

// Broadcast variants: ROW takes row 0 of in1, COL column 0, SCALAR element (0, 0).
template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim>
ALWI void init_bcast(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    ttr_detail::api().hw_startup(icb0, icb1, ocb);
    ttr_detail::api().op_init(ttr_detail::binary_init(tBcastOp), icb0, icb1, 0);
}
template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim>
ALWI void any_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttr_detail::api().binary(ttr_detail::binary_op(tBcastOp), ttr_detail::bcast(tBcastDim), icb0, icb1, itile0,
                             itile1, idst);
}
template <BroadcastType tBcastDim>
ALWI void add_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    any_tiles_bcast<ELWADD, tBcastDim>(icb0, icb1, itile0, itile1, idst);
}
template <BroadcastType tBcastDim>
ALWI void sub_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    any_tiles_bcast<ELWSUB, tBcastDim>(icb0, icb1, itile0, itile1, idst);
}
template <BroadcastType tBcastDim>
ALWI void mul_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    any_tiles_bcast<ELWMUL, tBcastDim>(icb0, icb1, itile0, itile1, idst);
}
ALWI void add_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    add_tiles_bcast<BroadcastType::ROW>(icb0, icb1, itile0, itile1, idst);
}
ALWI void add_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    add_tiles_bcast<BroadcastType::COL>(icb0, icb1, itile0, itile1, idst);
}
ALWI void add_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    add_tiles_bcast<BroadcastType::SCALAR>(icb0, icb1, itile0, itile1, idst);
}
ALWI void mul_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    mul_tiles_bcast<BroadcastType::ROW>(icb0, icb1, itile0, itile1, idst);
}
ALWI void mul_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    mul_tiles_bcast<BroadcastType::COL>(icb0, icb1, itile0, itile1, idst);
}
ALWI void mul_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    mul_tiles_bcast<BroadcastType::SCALAR>(icb0, icb1, itile0, itile1, idst);
}
ALWI void add_bcast_rows_init_short(uint32_t icb0, uint32_t icb1) { add_tiles_init(icb0, icb1); }
ALWI void add_bcast_cols_init_short(uint32_t icb0, uint32_t icb1) { add_tiles_init(icb0, icb1); }
ALWI void add_bcast_scalar_init_short(uint32_t icb0, uint32_t icb1) { add_tiles_init(icb0, icb1); }
ALWI void mul_bcast_rows_init_short(uint32_t icb0, uint32_t icb1) { mul_tiles_init(icb0, icb1); }
ALWI void mul_bcast_cols_init_short(uint32_t icb0, uint32_t icb1) { mul_tiles_init(icb0, icb1); }
ALWI void mul_bcast_cols_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    mul_tiles_init(icb0, icb1);
}
ALWI void mul_tiles_bcast_scalar_init_short(uint32_t icb0, uint32_t icb1) { mul_tiles_init(icb0, icb1); }
ALWI void sub_bcast_cols_init_short(uint32_t icb0, uint32_t icb1) { sub_tiles_init(icb0, icb1); }

// Copy a CB tile into DST.
ALWI void copy_tile_to_dst_init_short(uint32_t cbid, uint32_t transpose = 0) {
    ttr_detail::api().op_init(transpose != 0 ? ttr_emu::INIT_TRANSPOSE : ttr_emu::INIT_COPY, cbid, 0, 0);
}
ALWI void copy_tile_init(uint32_t cbid) { copy_tile_to_dst_init_short(cbid); }
ALWI void copy_init(uint32_t cbid) { copy_tile_to_dst_init_short(cbid); }
ALWI void copy_tile(uint32_t in_cb_id, uint32_t in_tile_index, uint32_t dst_tile_index) {
    ttr_detail::api().copy(in_cb_id, in_tile_index, dst_tile_index);
}
ALWI void copy_block_matmul_partials(uint32_t in_cb_id, uint32_t start_in_tile_index, uint32_t start_dst_tile_index,
                                     uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i) {
        copy_tile(in_cb_id, start_in_tile_index + i, start_dst_tile_index + i);
    }
}

// Reduce: DST (row / column / scalar part) accumulates in * scaler.
template <PoolType reduce_type = TTR_DEFAULT_POOL, ReduceDim reduce_dim = TTR_DEFAULT_DIM,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_init(uint32_t icb, uint32_t icb_scaler, uint32_t ocb) {
    ttr_detail::api().op_init(ttr_emu::INIT_REDUCE, icb, icb_scaler, ocb);
}
template <PoolType reduce_type = TTR_DEFAULT_POOL, ReduceDim reduce_dim = TTR_DEFAULT_DIM,
          bool enforce_fp32_accumulation = false>
ALWI void reduce_tile(uint32_t icb, uint32_t icb_scaler, uint32_t itile, uint32_t itile_scaler, uint32_t idst) {
    ttr_detail::api().reduce(ttr_detail::pool(reduce_type), ttr_detail::dim(reduce_dim), icb, icb_scaler, itile,
                             itile_scaler, idst);
}
template <bool enforce_fp32_accumulation = false>
ALWI void reduce_uninit() {
    ttr_detail::api().op_init(ttr_emu::INIT_UNINIT, 0, 0, 0);
}

// Transpose (within a tile).
ALWI void transpose_init(uint32_t icb) { ttr_detail::api().op_init(ttr_emu::INIT_TRANSPOSE, icb, 0, 0); }
ALWI void transpose_tile(uint32_t icb, uint32_t itile, uint32_t idst) {
    ttr_detail::api().transpose(icb, itile, idst);
}
ALWI void transpose_wh_init(uint32_t icb, uint32_t ocb) {
    (void)ocb;
    transpose_init(icb);
}
ALWI void transpose_wh_init_short(uint32_t icb) { transpose_init(icb); }
ALWI void transpose_wh_tile(uint32_t icb, uint32_t itile, uint32_t idst) { transpose_tile(icb, itile, idst); }

// Layout conversion.
ALWI void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb) {
    ttr_detail::api().op_init(ttr_emu::INIT_TILIZE, icb, block, ocb);
}
ALWI void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb) { ttr_detail::api().tilize_block(icb, block, ocb); }
ALWI void tilize_uninit(uint32_t icb, uint32_t ocb) {
    (void)icb;
    (void)ocb;
    ttr_detail::api().op_init(ttr_emu::INIT_UNINIT, 0, 0, 0);
}
ALWI void untilize_init(uint32_t icb) { ttr_detail::api().op_init(ttr_emu::INIT_UNTILIZE, icb, 0, 0); }
template <uint32_t block_ct_dim = 1>
ALWI void untilize_block(uint32_t icb, uint32_t full_ct_dim, uint32_t ocb) {
    ttr_detail::api().untilize_block(icb, full_ct_dim, ocb);
}
ALWI void untilize_uninit(uint32_t icb) {
    (void)icb;
    ttr_detail::api().op_init(ttr_emu::INIT_UNINIT, 0, 0, 0);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool diagonal = false,
          bool narrow_row = false, uint32_t row_num_datums = 32>
ALWI void pack_untilize_init(uint32_t icb, uint32_t ocb) {
    ttr_detail::api().op_init(ttr_emu::INIT_PACK_UNTILIZE, icb, ocb, 0);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool narrow_row = false,
          uint32_t row_num_datums = 32>
ALWI void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb, uint32_t block_c_index = 0) {
    ttr_detail::api().pack_untilize_block(icb, block_rt_dim, ocb, block_ct_dim, full_ct_dim, block_c_index);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool diagonal = false,
          bool narrow_row = false, uint32_t row_num_datums = 32>
ALWI void pack_untilize_dest_init(uint32_t ocb, uint32_t face_r_dim = 16, uint32_t num_faces = 4) {
    (void)face_r_dim;
    (void)num_faces;
    ttr_detail::api().op_init(ttr_emu::INIT_PACK_UNTILIZE, ocb, ocb, 1);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool diagonal = false,
          bool narrow_row = false, uint32_t row_num_datums = 32>
ALWI void pack_untilize_dest(uint32_t ocb, uint32_t block_rt_dim = 1, uint32_t block_c_index = 0,
                             uint32_t face_r_dim = 16, uint32_t num_faces = 4) {
    (void)face_r_dim;
    (void)num_faces;
    ttr_detail::api().pack_untilize_dest(ocb, block_rt_dim, block_ct_dim, full_ct_dim, block_c_index);
}
ALWI void pack_untilize_uninit(uint32_t ocb) {
    (void)ocb;
    ttr_detail::api().op_init(ttr_emu::INIT_UNINIT, 0, 0, 0);
}

// Packing DST tiles into CBs.
template <bool out_of_order_output = false>
ALWI void pack_tile(uint32_t ifrom_dst, uint32_t icb, std::uint32_t output_tile_index = 0) {
    ttr_detail::api().pack(ifrom_dst, icb, output_tile_index, out_of_order_output ? 1u : 0u);
}
ALWI void pack_tile_block(uint32_t ifrom_dst, uint32_t icb, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i) {
        pack_tile(ifrom_dst + i, icb);
    }
}
ALWI void pack_reconfig_data_format(uint32_t new_cb_id) { (void)new_cb_id; }
ALWI void pack_reconfig_data_format(uint32_t old_cb_id, uint32_t new_cb_id) {
    (void)old_cb_id;
    (void)new_cb_id;
}
ALWI void reconfig_data_format(uint32_t srca_new, uint32_t srcb_new) {
    (void)srca_new;
    (void)srcb_new;
}
ALWI void reconfig_data_format_srca(uint32_t srca_new) { (void)srca_new; }
ALWI void reconfig_data_format_srcb(uint32_t srcb_new) { (void)srcb_new; }
ALWI void pack_reconfig_l1_acc(uint32_t l1_acc_en) { ttr_detail::api().pack_l1_acc(l1_acc_en); }
ALWI void pack_relu_config(uint32_t config) { ttr_detail::api().pack_relu(config); }

// SFPU, in place on DST tiles, in f32.
#define TTR_SFPU_UNARY(name, op)                                                                         \
    template <bool approx = false, bool b1 = false, bool b2 = false>                                     \
    ALWI void name##_tile_init() {                                                                       \
        ttr_detail::api().sfpu_init(op);                                                                 \
    }                                                                                                    \
    template <bool approx = false, bool b1 = false, bool b2 = false>                                     \
    ALWI void name##_tile(uint32_t idst) {                                                               \
        ttr_detail::api().sfpu(op, idst, idst, idst, 0);                                                 \
    }
TTR_SFPU_UNARY(relu, ttr_emu::SFPU_RELU)
TTR_SFPU_UNARY(exp, ttr_emu::SFPU_EXP)
TTR_SFPU_UNARY(recip, ttr_emu::SFPU_RECIP)
TTR_SFPU_UNARY(sqrt, ttr_emu::SFPU_SQRT)
TTR_SFPU_UNARY(rsqrt, ttr_emu::SFPU_RSQRT)
#undef TTR_SFPU_UNARY
ALWI void relu_max_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_RELU_MAX); }
ALWI void relu_max_tile(uint32_t idst, uint32_t param0) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_RELU_MAX, idst, idst, idst, param0);
}
ALWI void binary_max_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_MAX); }
ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_MAX, idst0, idst1, odst, 0);
}
ALWI void binary_min_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_MIN); }
ALWI void binary_min_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_MIN, idst0, idst1, odst, 0);
}
ALWI void max_tile_init() { binary_max_tile_init(); }
ALWI void max_tile(uint32_t idst0, uint32_t idst1) { binary_max_tile(idst0, idst1, idst0); }
ALWI void binop_with_scalar_tile_init() {
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_ADD_SCALAR);
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_SUB_SCALAR);
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_MUL_SCALAR);
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_DIV_SCALAR);
}
ALWI void add_unary_tile(uint32_t idst, uint32_t param1) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_ADD_SCALAR, idst, idst, idst, param1);
}
ALWI void sub_unary_tile(uint32_t idst, uint32_t param1) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_SUB_SCALAR, idst, idst, idst, param1);
}
ALWI void mul_unary_tile(uint32_t idst, uint32_t param1) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_MUL_SCALAR, idst, idst, idst, param1);
}
ALWI void div_unary_tile(uint32_t idst, uint32_t param1) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_DIV_SCALAR, idst, idst, idst, param1);
}
// Binary SFPU ops of two DST tiles (eltwise_binary_sfpu.h), in f32 with an fp32 DST; the rounding
// mode only affects a bf16 DST, which these stand-ins round like every other DST write.
enum class DstRoundingMode : std::uint8_t { Default = 0, NearestEven = 1 };
ALWI void add_binary_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_ADD_BINARY); }
ALWI void sub_binary_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_SUB_BINARY); }
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_ADD_BINARY, idst0, idst1, odst, 0);
}
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_SUB_BINARY, idst0, idst1, odst, 0);
}

}  // namespace ckernel

using namespace ckernel;
