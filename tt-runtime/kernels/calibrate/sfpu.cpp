// Calibration: `tiles` tiles of cb 0 through DST and one SFPU pass each (relu), packed to cb 16.
// Compile-time args: tiles.
#include "api/compute/eltwise_unary/relu.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    constexpr uint32_t tiles = get_compile_time_arg_val(0);
    init_sfpu(0, 16);
    relu_tile_init();
    for (uint32_t t = 0; t < tiles; ++t) {
        cb_wait_front(0, 1);
        tile_regs_acquire();
        copy_tile(0, 0, 0);
        relu_tile(0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(0, 16);
        cb_push_back(16, 1);
        tile_regs_release();
        cb_pop_front(0, 1);
    }
}
