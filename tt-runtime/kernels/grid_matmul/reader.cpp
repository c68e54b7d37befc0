// Grid matmul reader. The core at logical x = 0 of each row reads the row's in0 tile for step k
// from DRAM and multicasts it to the rest of the row; every core reads its own in1 tiles.
// Args: a_addr, b_addr, m, n0, kt, nt, ct, is_sender, sender_x, sender_y, x0, y0, x1, y1, receivers.
// Semaphores: 0 = receivers ready (on the sender), 1 = tile valid (on the receivers).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t m = get_arg_val<uint32_t>(2);
    const uint32_t n0 = get_arg_val<uint32_t>(3);
    const uint32_t kt = get_arg_val<uint32_t>(4);
    const uint32_t nt = get_arg_val<uint32_t>(5);
    const uint32_t ct = get_arg_val<uint32_t>(6);
    const bool sender = get_arg_val<uint32_t>(7) != 0;
    const uint32_t sender_x = get_arg_val<uint32_t>(8);
    const uint32_t sender_y = get_arg_val<uint32_t>(9);
    const uint32_t x0 = get_arg_val<uint32_t>(10);
    const uint32_t y0 = get_arg_val<uint32_t>(11);
    const uint32_t x1 = get_arg_val<uint32_t>(12);
    const uint32_t y1 = get_arg_val<uint32_t>(13);
    const uint32_t receivers = get_arg_val<uint32_t>(14);

    const uint32_t tile = get_tile_size(0);
    const InterleavedAddrGenFast<true> ga{a_addr, tile, DataFormat::Float16_b};
    const InterleavedAddrGenFast<true> gb{b_addr, tile, DataFormat::Float16_b};
    const uint32_t ready_addr = get_semaphore(0);
    const uint32_t valid_addr = get_semaphore(1);
    volatile uint32_t* ready = reinterpret_cast<volatile uint32_t*>(ready_addr);
    volatile uint32_t* valid = reinterpret_cast<volatile uint32_t*>(valid_addr);

    for (uint32_t k = 0; k < kt; ++k) {
        cb_reserve_back(0, 1);
        const uint32_t l1 = get_write_ptr(0);
        if (sender) {
            noc_async_read_page(m * kt + k, ga, l1);
            noc_async_read_barrier();
            if (receivers > 0) {
                noc_semaphore_wait(ready, receivers);
                noc_semaphore_set(ready, 0);
                noc_async_write_multicast(l1, get_noc_multicast_addr(x0, y0, x1, y1, l1), tile, receivers, true);
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
        cb_push_back(0, 1);

        cb_reserve_back(1, ct);
        const uint32_t l1b = get_write_ptr(1);
        for (uint32_t c = 0; c < ct; ++c) {
            noc_async_read_page(k * nt + n0 + c, gb, l1b + c * tile);
        }
        noc_async_read_barrier();
        cb_push_back(1, ct);
    }
}
