// Grid matmul compute: DST[0..ct) += in0 tile x ct in1 tiles for every k, then pack ct tiles.
// Compile-time args: kt, ct.
#include "api/compute/matmul.h"

void kernel_main() {
    constexpr uint32_t kt = get_compile_time_arg_val(0);
    constexpr uint32_t ct = get_compile_time_arg_val(1);
    compute_kernel_hw_startup<SrcOrder::Reverse>(0, 1, 16);
    matmul_block_init(0, 1, 0, ct, 1, 1);
    tile_regs_acquire();
    for (uint32_t k = 0; k < kt; ++k) {
        cb_wait_front(0, 1);
        cb_wait_front(1, ct);
        matmul_block(0, 1, 0, 0, 0, 0, ct, 1, 1);
        cb_pop_front(0, 1);
        cb_pop_front(1, ct);
    }
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, ct);
    for (uint32_t c = 0; c < ct; ++c) {
        pack_tile(c, 16);
    }
    cb_push_back(16, ct);
    tile_regs_release();
}
