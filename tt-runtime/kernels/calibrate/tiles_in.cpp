// Calibration: feeds `tiles` tiles to cb 0 from one L1 tile, and drains cb 16.
// Compile-time args: tiles. Args: l1_addr (one tile).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t tiles = get_compile_time_arg_val(0);
    const uint32_t src = get_arg_val<uint32_t>(0);
    const uint32_t tile = get_tile_size(0);
    for (uint32_t t = 0; t < tiles; ++t) {
        cb_reserve_back(0, 1);
        noc_async_read(get_noc_addr(src), get_write_ptr(0), tile);
        noc_async_read_barrier();
        cb_push_back(0, 1);
        cb_wait_front(16, 1);
        cb_pop_front(16, 1);
    }
}
