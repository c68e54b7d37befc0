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

#define ALWI inline __attribute__((always_inline))
#define UNPACK(...) __VA_ARGS__
#define MATH(...) __VA_ARGS__
#define PACK(...) __VA_ARGS__

// The older entry form `namespace NAMESPACE { void MAIN { ... } }` (ttr_emu/entry.h runs either).
#define NAMESPACE ttr_legacy_ns
#define MAIN kernel_main()

namespace ckernel {

enum class SrcOrder : uint8_t { Regular = 0, Reverse = 1 };
enum class BroadcastType : uint8_t { NONE = 0, COL = 1, ROW = 2, SCALAR = 3 };
enum class EltwiseBinaryType : uint8_t { ELWMUL = 0, ELWDIV = 1, ELWADD = 2, ELWSUB = 3 };
enum class PoolType : uint8_t { SUM = 0, AVG = 1, MAX = 2 };
enum class ReduceDim : uint8_t { REDUCE_ROW = 0, REDUCE_COL = 1, REDUCE_SCALAR = 2 };
enum class VectorMode : uint8_t { None = 0, R = 1, C = 2, RC = 4, RC_custom = 6, Invalid = 0xFF };
enum class InputClamping : uint8_t { ClampToNegative = 1, None = 0 };
// The packer's ReLU (pack_relu_config): the mode numbers are the hardware's STACC_RELU encoding,
// the threshold a bf16 bit pattern.
enum class ReluType : std::uint8_t { NO_RELU = 0, ZERO_RELU, MIN_THRESHOLD_RELU, MAX_THRESHOLD_RELU };
struct ReluConfig {
    static constexpr ReluConfig none() { return ReluConfig(ReluType::NO_RELU); }
    static constexpr ReluConfig zero() { return ReluConfig(ReluType::ZERO_RELU); }
    static constexpr ReluConfig min_threshold(std::uint32_t t) { return ReluConfig(ReluType::MIN_THRESHOLD_RELU, t); }
    static constexpr ReluConfig max_threshold(std::uint32_t t) { return ReluConfig(ReluType::MAX_THRESHOLD_RELU, t); }
    static constexpr ReluConfig from_packed(std::uint32_t packed) {
        return ReluConfig(static_cast<ReluType>(packed & 0x3u), packed >> 16);
    }
    constexpr ReluType get_mode() const { return mode; }
    constexpr std::uint32_t get_threshold() const { return threshold; }

private:
    constexpr ReluConfig(ReluType m, std::uint32_t t = 0) : mode(m), threshold(t) {}
    ReluType mode = ReluType::NO_RELU;
    std::uint32_t threshold = 0;
};
struct p_sfpu {
    constexpr static std::uint32_t kCONST_1_FP16B = 0x3F80;
};
constexpr std::uint32_t TILE_C_DIM = 32;

namespace ttr_detail {
inline const ttr_emu::Abi &api() { return *ttr_emu::api; }
constexpr uint32_t binary_op(EltwiseBinaryType t) {
    return t == EltwiseBinaryType::ELWADD   ? ttr_emu::BIN_ADD
           : t == EltwiseBinaryType::ELWSUB ? ttr_emu::BIN_SUB
                                            : ttr_emu::BIN_MUL;
}
constexpr uint32_t binary_init(EltwiseBinaryType t) {
    return t == EltwiseBinaryType::ELWADD   ? ttr_emu::INIT_ADD
           : t == EltwiseBinaryType::ELWSUB ? ttr_emu::INIT_SUB
                                            : ttr_emu::INIT_MUL;
}
constexpr uint32_t bcast(BroadcastType b) {
    return b == BroadcastType::ROW      ? ttr_emu::BCAST_ROW
           : b == BroadcastType::COL    ? ttr_emu::BCAST_COL
           : b == BroadcastType::SCALAR ? ttr_emu::BCAST_SCALAR
                                        : ttr_emu::BCAST_NONE;
}
constexpr uint32_t pool(PoolType p) {
    return p == PoolType::SUM ? ttr_emu::POOL_SUM : p == PoolType::AVG ? ttr_emu::POOL_AVG : ttr_emu::POOL_MAX;
}
constexpr uint32_t dim(ReduceDim d) {
    return d == ReduceDim::REDUCE_ROW   ? ttr_emu::REDUCE_ROW
           : d == ReduceDim::REDUCE_COL ? ttr_emu::REDUCE_COL
                                        : ttr_emu::REDUCE_SCALAR;
}
// The 16x16 faces an SFPU op with `vector_mode` works on, one bit each (bit f: face f), as
// tt-llk's _llk_math_eltwise_sfpu_apply_vector_mode_ walks them: RC all four, R faces 0 and 1
// (rows 0-15), C faces 0 and 2 (columns 0-15). 0 for the modes the emulator does not model
// (None, RC_custom: the op's own face walk), which it refuses.
constexpr uint32_t ALL_FACES = 0xFu;
constexpr uint32_t faces(VectorMode m) {
    return m == VectorMode::RC ? ALL_FACES : m == VectorMode::R ? 0x3u : m == VectorMode::C ? 0x5u : 0u;
}
}  // namespace ttr_detail

// Circular buffers, as the compute API spells them.
ALWI void cb_wait_front(uint32_t cbid, uint32_t ntiles) {
    ttr_emu::api->cb_wait_front(static_cast<int32_t>(cbid), static_cast<int32_t>(ntiles));
}
ALWI void cb_pop_front(uint32_t cbid, uint32_t ntiles) {
    ttr_emu::api->cb_pop_front(static_cast<int32_t>(cbid), static_cast<int32_t>(ntiles));
}
ALWI void cb_reserve_back(uint32_t cbid, uint32_t ntiles) {
    ttr_emu::api->cb_reserve_back(static_cast<int32_t>(cbid), static_cast<int32_t>(ntiles));
}
ALWI void cb_push_back(uint32_t cbid, uint32_t ntiles) {
    ttr_emu::api->cb_push_back(static_cast<int32_t>(cbid), static_cast<int32_t>(ntiles));
}

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
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().hw_startup(icb0, icb1, ocb);
    ttr_detail::api().op_init(ttr_emu::INIT_BINARY_COMMON, icb0, icb1, ocb);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void unary_op_init_common(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().hw_startup(icb, icb, ocb);
    ttr_detail::api().op_init(ttr_emu::INIT_COPY, icb, 0, ocb);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void init_sfpu(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    unary_op_init_common(icb, ocb, call_line);
}

// DST register protocol.
ALWI void tile_regs_acquire() { ttr_detail::api().regs(ttr_emu::REGS_ACQUIRE); }
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tile_regs_commit() { ttr_detail::api().regs(ttr_emu::REGS_COMMIT); }
ALWI void tile_regs_wait() { ttr_detail::api().regs(ttr_emu::REGS_WAIT); }
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tile_regs_release() { ttr_detail::api().regs(ttr_emu::REGS_RELEASE); }
[[deprecated("Use tile_regs_acquire() instead")]] ALWI void acquire_dst() {
    ttr_detail::api().regs(ttr_emu::REGS_LEGACY_ACQUIRE);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
[[deprecated("Use tile_regs_release() instead")]] ALWI void release_dst() {
    ttr_detail::api().regs(ttr_emu::REGS_LEGACY_RELEASE);
}

// Matmul: in0 goes to SrcB, in1 to SrcA.
ALWI void matmul_init(uint32_t in0_cb_id, uint32_t in1_cb_id, const uint32_t transpose = 0,
                      uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_MATMUL, in0_cb_id, in1_cb_id, transpose);
}
ALWI void matmul_tiles(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index, uint32_t in1_tile_index,
                       uint32_t idst) {
    ttr_detail::api().matmul(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, 0, 1, 1, 1);
}
ALWI void matmul_block_init(uint32_t in0_cb_id, uint32_t in1_cb_id, const uint32_t transpose = 0, uint32_t ct_dim = 1,
                            uint32_t rt_dim = 1, uint32_t kt_dim = 1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    (void)ct_dim;
    (void)rt_dim;
    (void)kt_dim;
    ttr_detail::api().op_init(ttr_emu::INIT_MATMUL, in0_cb_id, in1_cb_id, transpose);
}
ALWI void matmul_block(uint32_t in0_cb_id, uint32_t in1_cb_id, uint32_t in0_tile_index, uint32_t in1_tile_index,
                       uint32_t idst, const uint32_t transpose, uint32_t ct_dim, uint32_t rt_dim, uint32_t kt_dim,
                       uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().matmul(in0_cb_id, in1_cb_id, in0_tile_index, in1_tile_index, idst, transpose, ct_dim, rt_dim,
                             kt_dim);
}

// Element-wise binary ops (SrcA = in0, SrcB = in1).
ALWI void add_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                         uint32_t call_line = __builtin_LINE()) {
    (void)acc_to_dest;
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_ADD, icb0, icb1, 0);
}
ALWI void sub_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                         uint32_t call_line = __builtin_LINE()) {
    (void)acc_to_dest;
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_SUB, icb0, icb1, 0);
}
ALWI void mul_tiles_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_MUL, icb0, icb1, 0);
}
ALWI void add_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false, uint32_t call_line = __builtin_LINE()) {
    add_tiles_init(icb0, icb1, acc_to_dest, call_line);
}
ALWI void sub_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false, uint32_t call_line = __builtin_LINE()) {
    sub_tiles_init(icb0, icb1, acc_to_dest, call_line);
}
ALWI void mul_init(uint32_t icb0, uint32_t icb1, bool full_init = true, uint32_t call_line = __builtin_LINE()) {
    (void)full_init;
    mul_tiles_init(icb0, icb1, call_line);
}
template <bool full_init, EltwiseBinaryType eltwise_binary_type>
ALWI void binary_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                            uint32_t call_line = __builtin_LINE()) {
    (void)acc_to_dest;
    (void)call_line;
    ttr_detail::api().op_init(ttr_detail::binary_init(eltwise_binary_type), icb0, icb1, 0);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttr_detail::api().binary(ttr_emu::BIN_ADD, ttr_emu::BCAST_NONE, icb0, icb1, itile0, itile1, idst);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttr_detail::api().binary(ttr_emu::BIN_SUB, ttr_emu::BCAST_NONE, icb0, icb1, itile0, itile1, idst);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    ttr_detail::api().binary(ttr_emu::BIN_MUL, ttr_emu::BCAST_NONE, icb0, icb1, itile0, itile1, idst);
}

// Broadcast variants: ROW takes row 0 of in1, COL column 0, SCALAR element (0, 0).
template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void init_bcast(uint32_t icb0, uint32_t icb1, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().hw_startup(icb0, icb1, ocb);
    ttr_detail::api().op_init(ttr_detail::binary_init(tBcastOp), icb0, icb1, 0);
}
template <EltwiseBinaryType tBcastOp, BroadcastType tBcastDim, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void any_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    (void)bcast_row_idx;
    ttr_detail::api().binary(ttr_detail::binary_op(tBcastOp), ttr_detail::bcast(tBcastDim), icb0, icb1, itile0,
                             itile1, idst);
}
template <BroadcastType tBcastDim, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    any_tiles_bcast<EltwiseBinaryType::ELWADD, tBcastDim>(icb0, icb1, itile0, itile1, idst, bcast_row_idx);
}
template <BroadcastType tBcastDim, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    any_tiles_bcast<EltwiseBinaryType::ELWSUB, tBcastDim>(icb0, icb1, itile0, itile1, idst, bcast_row_idx);
}
template <BroadcastType tBcastDim, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                          uint32_t bcast_row_idx = 0) {
    any_tiles_bcast<EltwiseBinaryType::ELWMUL, tBcastDim>(icb0, icb1, itile0, itile1, idst, bcast_row_idx);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                               uint32_t bcast_row_idx = 0) {
    add_tiles_bcast<BroadcastType::ROW>(icb0, icb1, itile0, itile1, idst, bcast_row_idx);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    add_tiles_bcast<BroadcastType::COL>(icb0, icb1, itile0, itile1, idst);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    add_tiles_bcast<BroadcastType::SCALAR>(icb0, icb1, itile0, itile1, idst);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst,
                               uint32_t bcast_row_idx = 0) {
    mul_tiles_bcast<BroadcastType::ROW>(icb0, icb1, itile0, itile1, idst, bcast_row_idx);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    mul_tiles_bcast<BroadcastType::COL>(icb0, icb1, itile0, itile1, idst);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1, uint32_t idst) {
    mul_tiles_bcast<BroadcastType::SCALAR>(icb0, icb1, itile0, itile1, idst);
}
ALWI void add_bcast_rows_init_short(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    add_tiles_init(icb0, icb1);
}
ALWI void add_bcast_cols_init_short(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    add_tiles_init(icb0, icb1);
}
ALWI void add_bcast_scalar_init_short(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    add_tiles_init(icb0, icb1);
}
ALWI void mul_bcast_rows_init_short(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    mul_tiles_init(icb0, icb1);
}
ALWI void mul_bcast_cols_init_short(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    mul_tiles_init(icb0, icb1);
}
ALWI void mul_bcast_cols_init(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    mul_tiles_init(icb0, icb1);
}
ALWI void mul_tiles_bcast_scalar_init_short(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    mul_tiles_init(icb0, icb1);
}
ALWI void sub_bcast_cols_init_short(uint32_t icb0, uint32_t icb1, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    sub_tiles_init(icb0, icb1);
}

// Copy a CB tile into DST.
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_tile_to_dst_init_short(uint32_t cbid, uint32_t transpose = 0, uint32_t transpose_within_16x16_face = false,
                                      uint32_t call_line = __builtin_LINE()) {
    (void)transpose_within_16x16_face;
    (void)call_line;
    ttr_detail::api().op_init(transpose != 0 ? ttr_emu::INIT_TRANSPOSE : ttr_emu::INIT_COPY, cbid, 0, 0);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_tile_init(uint32_t cbid, uint32_t call_line = __builtin_LINE()) {
    copy_tile_to_dst_init_short(cbid, 0, false, call_line);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void copy_init(uint32_t cbid, uint32_t transpose = 0, uint32_t transpose_within_16x16_face = false,
                    uint32_t call_line = __builtin_LINE()) {
    copy_tile_to_dst_init_short(cbid, transpose, transpose_within_16x16_face, call_line);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
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
template <PoolType reduce_type, ReduceDim reduce_dim, bool enforce_fp32_accumulation = DST_ACCUM_MODE>
ALWI void reduce_init(uint32_t icb, uint32_t icb_scaler, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_REDUCE, icb, icb_scaler, ocb);
}
template <PoolType reduce_type, ReduceDim reduce_dim, bool enforce_fp32_accumulation = DST_ACCUM_MODE>
ALWI void reduce_tile(uint32_t icb, uint32_t icb_scaler, uint32_t itile, uint32_t itile_scaler, uint32_t idst) {
    ttr_detail::api().reduce(ttr_detail::pool(reduce_type), ttr_detail::dim(reduce_dim), icb, icb_scaler, itile,
                             itile_scaler, idst);
}
ALWI void reduce_uninit(uint32_t icb = 0) {
    (void)icb;
    ttr_detail::api().op_init(ttr_emu::INIT_UNINIT, 0, 0, 0);
}

// Transpose (within a tile).
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_init(uint32_t icb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_TRANSPOSE, icb, 0, 0);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_tile(uint32_t icb, uint32_t itile, uint32_t idst) {
    ttr_detail::api().transpose(icb, itile, idst);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void transpose_wh_init(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)ocb;
    transpose_init(icb, call_line);
}
ALWI void transpose_wh_init_short(uint32_t icb, uint32_t call_line = __builtin_LINE()) { transpose_init(icb, call_line); }
ALWI void transpose_wh_tile(uint32_t icb, uint32_t itile, uint32_t idst) { transpose_tile(icb, itile, idst); }

// Layout conversion.
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_TILIZE, icb, block, ocb);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb, uint32_t input_tile_index = 0,
                       uint32_t output_tile_index = 0) {
    (void)input_tile_index;
    (void)output_tile_index;
    ttr_detail::api().tilize_block(icb, block, ocb);
}
ALWI void tilize_uninit(uint32_t icb, uint32_t ocb) {
    (void)icb;
    (void)ocb;
    ttr_detail::api().op_init(ttr_emu::INIT_UNINIT, 0, 0, 0);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void untilize_init(uint32_t icb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_UNTILIZE, icb, 0, 0);
}
template <uint32_t block_ct_dim = 1, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void untilize_block(uint32_t icb, uint32_t full_ct_dim, uint32_t ocb) {
    ttr_detail::api().untilize_block(icb, full_ct_dim, ocb);
}
ALWI void untilize_uninit(uint32_t icb) {
    (void)icb;
    ttr_detail::api().op_init(ttr_emu::INIT_UNINIT, 0, 0, 0);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_init(uint32_t icb, uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_PACK_UNTILIZE, icb, ocb, 0);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_block(uint32_t icb, uint32_t block_rt_dim, uint32_t ocb, uint32_t block_c_index = 0) {
    ttr_detail::api().pack_untilize_block(icb, block_rt_dim, ocb, block_ct_dim, full_ct_dim, block_c_index);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool diagonal = false,
          uint32_t row_num_datums = TILE_C_DIM, bool dense = false, bool init_pack = true,
          bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_dest_init(uint32_t ocb, uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    ttr_detail::api().op_init(ttr_emu::INIT_PACK_UNTILIZE, ocb, ocb, 1);
}
template <uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool diagonal = false,
          bool narrow_row = false, uint32_t row_num_datums = TILE_C_DIM, uint32_t tile_dst_ct_offset = 0,
          bool dense = false>
ALWI void pack_untilize_dest(uint32_t ocb, uint32_t block_rt_dim = 1, uint32_t block_c_index = 0,
                             uint32_t tile_dst_rt_offset = 0) {
    (void)tile_dst_rt_offset;
    ttr_detail::api().pack_untilize_dest(ocb, block_rt_dim, block_ct_dim, full_ct_dim, block_c_index);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_untilize_uninit(uint32_t ocb) {
    (void)ocb;
    ttr_detail::api().op_init(ttr_emu::INIT_UNINIT, 0, 0, 0);
}

// Packing DST tiles into CBs.
template <bool out_of_order_output = false, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_tile(uint32_t ifrom_dst, uint32_t icb, std::uint32_t output_tile_index = 0) {
    ttr_detail::api().pack(ifrom_dst, icb, output_tile_index, out_of_order_output ? 1u : 0u);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void pack_tile_block(uint32_t ifrom_dst, uint32_t icb, uint32_t ntiles) {
    for (uint32_t i = 0; i < ntiles; ++i) {
        pack_tile(ifrom_dst + i, icb);
    }
}
// Format reconfigs: the one-operand forms always reprogram; the (old, new) forms only when the
// two CBs' formats differ, as the LLK compares them.
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t new_cb_id) {
    ttr_detail::api().reconfig(ttr_emu::RECONFIG_PACK, ttr_emu::NO_CB, new_cb_id);
}
template <bool is_tile_dim_reconfig_en = false>
ALWI void pack_reconfig_data_format(const uint32_t old_cb_id, const uint32_t new_cb_id) {
    ttr_detail::api().reconfig(ttr_emu::RECONFIG_PACK, old_cb_id, new_cb_id);
}
ALWI void reconfig_data_format_srca(uint32_t srca_new) {
    ttr_detail::api().reconfig(ttr_emu::RECONFIG_SRCA, ttr_emu::NO_CB, srca_new);
}
ALWI void reconfig_data_format_srca(uint32_t srca_old, uint32_t srca_new) {
    ttr_detail::api().reconfig(ttr_emu::RECONFIG_SRCA, srca_old, srca_new);
}
ALWI void reconfig_data_format_srcb(uint32_t srcb_new) {
    ttr_detail::api().reconfig(ttr_emu::RECONFIG_SRCB, ttr_emu::NO_CB, srcb_new);
}
template <SrcOrder src_order = SrcOrder::Regular>
ALWI void reconfig_data_format(const uint32_t srca_new, const uint32_t srcb_new) {
    reconfig_data_format_srca(srca_new);
    reconfig_data_format_srcb(srcb_new);
}
ALWI void pack_reconfig_l1_acc(uint32_t l1_acc_en) { ttr_detail::api().pack_l1_acc(l1_acc_en); }
// Every later pack (pack_tile, tilize, untilize) goes through the packer's ReLU stage.
ALWI void pack_relu_config(const ReluConfig &config) {
    ttr_detail::api().pack_relu(static_cast<uint32_t>(config.get_mode()) | (config.get_threshold() & 0xFFFFu) << 16);
}

// SFPU, in place on DST tiles, in f32.
ALWI void relu_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_RELU); }
ALWI void relu_tile(uint32_t idst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_RELU, idst, idst, idst, 0, ttr_detail::ALL_FACES);
}
template <bool approx = false, uint32_t scale = 0x3F800000, InputClamping input_clamping = InputClamping::ClampToNegative,
          bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile_init() {
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_EXP);
}
template <bool approx = false, bool scale_en = false, InputClamping input_clamping = InputClamping::ClampToNegative,
          int iterations = 8, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void exp_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC,
                   uint16_t scale = p_sfpu::kCONST_1_FP16B) {
    (void)scale;
    ttr_detail::api().sfpu(ttr_emu::SFPU_EXP, idst, idst, idst, 0, ttr_detail::faces(vector_mode));
}
template <bool legacy_compat = true, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void recip_tile_init() {
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_RECIP);
}
template <bool legacy_compat = true, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void recip_tile(uint32_t idst, VectorMode vector_mode = VectorMode::RC) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_RECIP, idst, idst, idst, 0, ttr_detail::faces(vector_mode));
}
ALWI void sqrt_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_SQRT); }
template <bool FAST_APPROX = false, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sqrt_tile(uint32_t idst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_SQRT, idst, idst, idst, 0, ttr_detail::ALL_FACES);
}
template <bool legacy_compat = false>
ALWI void rsqrt_tile_init() {
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_RSQRT);
}
template <bool legacy_compat = false, bool FAST_APPROX = false, bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void rsqrt_tile(uint32_t idst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_RSQRT, idst, idst, idst, 0, ttr_detail::ALL_FACES);
}
ALWI void relu_max_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_RELU_MAX); }
ALWI void relu_max_tile(uint32_t idst, uint32_t param0) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_RELU_MAX, idst, idst, idst, param0, ttr_detail::ALL_FACES);
}
ALWI void binary_max_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_MAX); }
ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_MAX, idst0, idst1, odst, 0, ttr_detail::faces(vector_mode));
}
ALWI void binary_min_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_MIN); }
ALWI void binary_min_tile(uint32_t idst0, uint32_t idst1, uint32_t odst, VectorMode vector_mode = VectorMode::RC) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_MIN, idst0, idst1, odst, 0, ttr_detail::faces(vector_mode));
}
ALWI void binop_with_scalar_tile_init() {
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_ADD_SCALAR);
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_SUB_SCALAR);
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_MUL_SCALAR);
    ttr_detail::api().sfpu_init(ttr_emu::SFPU_DIV_SCALAR);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_unary_tile(uint32_t idst, uint32_t param1) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_ADD_SCALAR, idst, idst, idst, param1, ttr_detail::ALL_FACES);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_unary_tile(uint32_t idst, uint32_t param1) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_SUB_SCALAR, idst, idst, idst, param1, ttr_detail::ALL_FACES);
}
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void mul_unary_tile(uint32_t idst, uint32_t param1) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_MUL_SCALAR, idst, idst, idst, param1, ttr_detail::ALL_FACES);
}
// As the LLK defines it, div_unary_tile multiplies by its scalar: the host passes the reciprocal of
// the divisor (ttnn inverts it; ckernel_sfpu_binop_with_unary.h computes val * parameter).
template <bool fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void div_unary_tile(uint32_t idst, uint32_t param1) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_DIV_SCALAR, idst, idst, idst, param1, ttr_detail::ALL_FACES);
}
// Binary SFPU ops of two DST tiles (eltwise_binary_sfpu.h), in f32. The rounding mode only affects a
// bf16 DST: Default keeps the top 16 bits of the f32 result (the SFPU store truncates), NearestEven
// rounds to nearest even first (float32_to_bf16_rne in the LLK).
enum class DstRoundingMode : std::uint8_t { Default = 0, NearestEven = 1 };
ALWI void add_binary_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_ADD_BINARY); }
ALWI void sub_binary_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_SUB_BINARY); }
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_ADD_BINARY, idst0, idst1, odst, static_cast<uint32_t>(dst_rounding_mode),
                           ttr_detail::ALL_FACES);
}
template <ckernel::DstRoundingMode dst_rounding_mode = ckernel::DstRoundingMode::Default,
          bool is_fp32_dest_acc_en = DST_ACCUM_MODE>
ALWI void sub_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_SUB_BINARY, idst0, idst1, odst, static_cast<uint32_t>(dst_rounding_mode),
                           ttr_detail::ALL_FACES);
}

// IEEE equality of two DST tiles (eltwise_binary_sfpu.h): 1.0 where equal, 0.0 elsewhere. As the
// LLK computes it: identical bits and no NaN, or both ±0 / subnormal.
ALWI void eq_binary_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_EQ_BINARY); }
ALWI void eq_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst) {
    ttr_detail::api().sfpu(ttr_emu::SFPU_EQ_BINARY, idst0, idst1, odst, 0, ttr_detail::ALL_FACES);
}
// Select (eltwise_unary/where.h): the bits of tile idst1 where the bits of the condition tile
// idst0 are nonzero, those of idst2 elsewhere. The emulator implements the 32-bit formats, which
// the LLK moves as raw 32-bit words (on an fp32 DST).
ALWI void where_tile_init() { ttr_detail::api().sfpu_init(ttr_emu::SFPU_WHERE); }
template <DataFormat data_format>
ALWI void where_tile(uint32_t idst0, uint32_t idst1, uint32_t idst2, uint32_t odst) {
    static_assert(data_format == DataFormat::Float32 || data_format == DataFormat::Int32 ||
                      data_format == DataFormat::UInt32,
                  "the emulator's where_tile moves 32-bit words: Float32, Int32 or UInt32");
    ttr_detail::api().sfpu(ttr_emu::SFPU_WHERE, idst0, idst1, odst, idst2, ttr_detail::ALL_FACES);
}

}  // namespace ckernel

using namespace ckernel;
