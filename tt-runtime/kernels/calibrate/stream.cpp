// Calibration: one core moves `pages` pages of `page` bytes between a DRAM buffer and a ring of
// `ring` pages of an L1 buffer, every transfer in flight before one barrier (the directed ideal
// DRAM test). Compile-time args: write (0: DRAM to L1, 1: L1 to DRAM), pages, page, ring.
// Args: dram_addr, l1_addr.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t write = get_compile_time_arg_val(0);
    constexpr uint32_t pages = get_compile_time_arg_val(1);
    constexpr uint32_t page = get_compile_time_arg_val(2);
    constexpr uint32_t ring = get_compile_time_arg_val(3);
    const uint32_t dram = get_arg_val<uint32_t>(0);
    const uint32_t l1 = get_arg_val<uint32_t>(1);
    const InterleavedAddrGen<true> gen{dram, page};
    for (uint32_t i = 0; i < pages; ++i) {
        const uint32_t slot = l1 + (i % ring) * page;
        if (write != 0) {
            noc_async_write_page(i, gen, slot);
        } else {
            noc_async_read_page(i, gen, slot);
        }
    }
    if (write != 0) {
        noc_async_write_barrier();
    } else {
        noc_async_read_barrier();
    }
}
