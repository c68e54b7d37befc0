// Calibration matmul, in1 (writer, NoC 1): the core at y = 0 of each column reads the column's in1
// block (kb x ct tiles of the kt x nt DRAM matrix) for each K block and multicasts it down the
// column; the other cores of the column receive it. At the end every core drains its rt x ct
// output tiles, which stay in L1 (the published runs keep the output in L1).
// Compile-time args: rt, ct, kb, nb. Args: b_addr, n0, nt, is_sender, sender_x, sender_y, x0, y0,
// x1, y1 (the column, NoC), receivers. Semaphores: 2 = receivers ready, 3 = block valid.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t rt = get_compile_time_arg_val(0);
    constexpr uint32_t ct = get_compile_time_arg_val(1);
    constexpr uint32_t kb = get_compile_time_arg_val(2);
    constexpr uint32_t nb = get_compile_time_arg_val(3);
    const uint32_t b_addr = get_arg_val<uint32_t>(0);
    const uint32_t n0 = get_arg_val<uint32_t>(1);
    const uint32_t nt = get_arg_val<uint32_t>(2);
    const bool sender = get_arg_val<uint32_t>(3) != 0;
    const uint32_t sender_x = get_arg_val<uint32_t>(4);
    const uint32_t sender_y = get_arg_val<uint32_t>(5);
    const uint32_t x0 = get_arg_val<uint32_t>(6);
    const uint32_t y0 = get_arg_val<uint32_t>(7);
    const uint32_t x1 = get_arg_val<uint32_t>(8);
    const uint32_t y1 = get_arg_val<uint32_t>(9);
    const uint32_t receivers = get_arg_val<uint32_t>(10);
    const uint32_t tile = get_tile_size(1);
    const InterleavedAddrGenFast<true> gb{b_addr, tile, DataFormat::Float16_b};
    const uint32_t ready_addr = get_semaphore(2);
    const uint32_t valid_addr = get_semaphore(3);
    volatile uint32_t* ready = reinterpret_cast<volatile uint32_t*>(ready_addr);
    volatile uint32_t* valid = reinterpret_cast<volatile uint32_t*>(valid_addr);
    for (uint32_t b = 0; b < nb; ++b) {
        cb_reserve_back(1, kb * ct);
        const uint32_t l1 = get_write_ptr(1);
        if (sender) {
            for (uint32_t k = 0; k < kb; ++k) {
                for (uint32_t c = 0; c < ct; ++c) {
                    noc_async_read_page((b * kb + k) * nt + n0 + c, gb, l1 + (k * ct + c) * tile);
                }
            }
            noc_async_read_barrier();
            if (receivers > 0) {
                noc_semaphore_wait(ready, receivers);
                noc_semaphore_set(ready, 0);
                noc_async_write_multicast(l1, get_noc_multicast_addr(x0, y0, x1, y1, l1), kb * ct * tile, receivers);
                noc_async_writes_flushed();
                noc_semaphore_set(valid, 1);
                noc_semaphore_set_multicast(valid_addr, get_noc_multicast_addr(x0, y0, x1, y1, valid_addr),
                                            receivers);
                noc_async_write_barrier();
            }
        } else {
            noc_semaphore_set(valid, 0);
            noc_semaphore_inc(get_noc_addr(sender_x, sender_y, ready_addr), 1);
            noc_semaphore_wait(valid, 1);
        }
        cb_push_back(1, kb * ct);
    }
    cb_wait_front(16, rt * ct);
    cb_pop_front(16, rt * ct);
}
