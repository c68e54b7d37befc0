// The call table between a JIT-compiled kernel and the tt-runtime emulator.
//
// Kernels are shared objects built against the stand-in headers; every device operation goes
// through this table, which the emulator hands to the kernel's entry point. The emulator knows
// which core and kernel is running, so no entry takes a context argument. Part of the kernel
// cache key: change TTR_EMU_ABI_VERSION with the layout.
#pragma once

#include <cstdint>

#define TTR_EMU_ABI_VERSION 4u

namespace ttr_emu {

// Register-file protocol steps (tile_regs_*).
// acquire_dst / release_dst (deprecated) hold DST for math and pack at once: REGS_LEGACY_*.
enum RegStep : uint32_t {
    REGS_ACQUIRE = 0,
    REGS_COMMIT = 1,
    REGS_WAIT = 2,
    REGS_RELEASE = 3,
    REGS_LEGACY_ACQUIRE = 4,
    REGS_LEGACY_RELEASE = 5,
};

// Op families a compute init selects.
enum InitKind : uint32_t {
    INIT_COPY = 0,
    INIT_MATMUL = 1,
    INIT_ADD = 2,
    INIT_SUB = 3,
    INIT_MUL = 4,
    INIT_REDUCE = 5,
    INIT_TRANSPOSE = 6,
    INIT_TILIZE = 7,
    INIT_UNTILIZE = 8,
    INIT_PACK_UNTILIZE = 9,
    INIT_BINARY_COMMON = 10,
    INIT_UNINIT = 11,
};

// Element-wise binary ops and their broadcast.
enum BinaryOp : uint32_t { BIN_ADD = 0, BIN_SUB = 1, BIN_MUL = 2 };
enum Bcast : uint32_t { BCAST_NONE = 0, BCAST_ROW = 1, BCAST_COL = 2, BCAST_SCALAR = 3 };

// SFPU ops on DST tiles.
enum SfpuOp : uint32_t {
    SFPU_RELU = 0,
    SFPU_EXP = 1,
    SFPU_RECIP = 2,
    SFPU_SQRT = 3,
    SFPU_RSQRT = 4,
    SFPU_MAX = 5,
    SFPU_ADD_SCALAR = 6,
    SFPU_SUB_SCALAR = 7,
    SFPU_MUL_SCALAR = 8,
    SFPU_DIV_SCALAR = 9,
    SFPU_RELU_MAX = 10,
    SFPU_MIN = 11,
    SFPU_ADD_BINARY = 12,  // param: the DstRoundingMode (0 Default, 1 NearestEven)
    SFPU_SUB_BINARY = 13,  // param: the DstRoundingMode
    SFPU_EQ_BINARY = 14,
    SFPU_WHERE = 15,  // the false operand's DST index is the call's param
};

// What a format reconfig reprograms; `old_cb` NO_CB: unconditionally, else only when the formats
// of `old_cb` and `new_cb` differ (the LLK's two-operand forms).
enum Reconfig : uint32_t { RECONFIG_SRCA = 0, RECONFIG_SRCB = 1, RECONFIG_PACK = 2 };
constexpr uint32_t NO_CB = 0xFFFFFFFFu;

enum PoolKind : uint32_t { POOL_SUM = 0, POOL_AVG = 1, POOL_MAX = 2 };
enum ReduceKind : uint32_t { REDUCE_ROW = 0, REDUCE_COL = 1, REDUCE_SCALAR = 2 };

struct Abi {
    uint32_t version;
    // Arguments.
    uint32_t (*arg_addr)(uint32_t index);
    uint32_t (*common_arg_addr)(uint32_t index);
    uint32_t (*compile_arg_out_of_range)(uint32_t index, uint32_t count);
    // Circular buffers.
    void (*cb_reserve_back)(int32_t cb, int32_t pages);
    void (*cb_push_back)(int32_t cb, int32_t pages);
    void (*cb_wait_front)(int32_t cb, int32_t pages);
    void (*cb_pop_front)(int32_t cb, int32_t pages);
    uint32_t (*cb_write_ptr)(int32_t cb);
    uint32_t (*cb_read_ptr)(int32_t cb);
    uint32_t (*cb_tile_size)(int32_t cb);
    uint32_t (*cb_pages_available_at_front)(int32_t cb, int32_t pages);
    uint32_t (*cb_pages_reservable_at_back)(int32_t cb, int32_t pages);
    // NoC.
    uint64_t (*noc_xy_addr)(uint32_t x, uint32_t y, uint32_t addr);
    uint64_t (*noc_local_addr)(uint32_t addr);
    uint64_t (*noc_mcast_addr)(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t addr);
    uint64_t (*noc_page_addr)(uint32_t dram, uint32_t base, uint32_t page_size, uint32_t page, uint32_t offset);
    void (*noc_read)(uint64_t src, uint32_t dst_l1, uint32_t size);
    void (*noc_write)(uint32_t src_l1, uint64_t dst, uint32_t size);
    // flags: bit 0 loopback (the sender is written too), bit 1 linked (ordered with the next signal).
    void (*noc_write_mcast)(uint32_t src_l1, uint64_t dst, uint32_t size, uint32_t num_dests, uint32_t flags);
    void (*noc_read_barrier)();
    void (*noc_write_barrier)();
    void (*noc_writes_flushed)();
    void (*noc_atomic_barrier)();
    uint32_t (*my_noc_x)(uint32_t noc);
    uint32_t (*my_noc_y)(uint32_t noc);
    uint32_t (*noc_index)();
    // Semaphores.
    uint32_t (*semaphore_addr)(uint32_t id);
    void (*sem_set)(volatile uint32_t *sem, uint32_t value);
    void (*sem_wait)(volatile uint32_t *sem, uint32_t value, uint32_t at_least);
    void (*sem_inc)(uint64_t addr, uint32_t incr);
    void (*sem_set_remote)(uint32_t src_l1, uint64_t dst);
    void (*sem_set_mcast)(uint32_t src_l1, uint64_t dst, uint32_t num_dests, uint32_t flags);
    // Compute.
    void (*hw_startup)(uint32_t icb0, uint32_t icb1, uint32_t ocb);
    void (*op_init)(uint32_t kind, uint32_t a, uint32_t b, uint32_t c);
    void (*sfpu_init)(uint32_t op);
    void (*regs)(uint32_t step);
    void (*matmul)(uint32_t in0, uint32_t in1, uint32_t t0, uint32_t t1, uint32_t dst, uint32_t transpose,
                   uint32_t ct, uint32_t rt, uint32_t kt);
    void (*binary)(uint32_t op, uint32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t dst);
    void (*copy)(uint32_t cb, uint32_t tile, uint32_t dst);
    void (*reduce)(uint32_t pool, uint32_t dim, uint32_t cb, uint32_t scaler_cb, uint32_t tile, uint32_t scaler_tile,
                   uint32_t dst);
    void (*transpose)(uint32_t cb, uint32_t tile, uint32_t dst);
    // `faces`: the 16x16 faces of the tiles it works on, bit f for face f (VectorMode).
    void (*sfpu)(uint32_t op, uint32_t dst0, uint32_t dst1, uint32_t odst, uint32_t param, uint32_t faces);
    void (*pack)(uint32_t dst, uint32_t cb, uint32_t out_index, uint32_t out_of_order);
    void (*tilize_block)(uint32_t icb, uint32_t block, uint32_t ocb);
    void (*untilize_block)(uint32_t icb, uint32_t block, uint32_t ocb);
    void (*pack_untilize_block)(uint32_t icb, uint32_t block_rt, uint32_t ocb, uint32_t block_ct, uint32_t full_ct,
                                uint32_t block_c_index);
    void (*pack_untilize_dest)(uint32_t ocb, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct,
                               uint32_t block_c_index);
    void (*pack_l1_acc)(uint32_t enable);
    // The packer's ReLU: ckernel::ReluConfig packed (mode in bits 0-1, bf16 threshold in bits 16-31).
    void (*pack_relu)(uint32_t config);
    void (*fail)(const char *message);
    // Compute: word `word` of page `page` of the waited front of a CB (read_tile_value).
    uint32_t (*cb_read_value)(uint32_t cb, uint32_t page, uint32_t word);
    // Compute: a data format reconfig (Reconfig) of the unpackers' sources or the packer.
    void (*reconfig)(uint32_t what, uint32_t old_cb, uint32_t new_cb);
};

}  // namespace ttr_emu
