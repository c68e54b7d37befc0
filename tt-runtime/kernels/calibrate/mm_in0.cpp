// Calibration matmul, in0 (reader, NoC 0): the core at x = 0 of each row holds the row's in0 shard
// in L1 (rt x kt tiles, K block by K block) and multicasts each block (rt x kb tiles) to the row,
// itself included; the other cores of the row receive it. Compile-time args: rt, kb, nb.
// Args: shard_addr, is_sender, sender_x, sender_y, x0, y0, x1, y1 (the row, NoC), receivers.
// Semaphores: 0 = receivers ready (on the sender), 1 = block valid (on the receivers).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t rt = get_compile_time_arg_val(0);
    constexpr uint32_t kb = get_compile_time_arg_val(1);
    constexpr uint32_t nb = get_compile_time_arg_val(2);
    const uint32_t shard = get_arg_val<uint32_t>(0);
    const bool sender = get_arg_val<uint32_t>(1) != 0;
    const uint32_t sender_x = get_arg_val<uint32_t>(2);
    const uint32_t sender_y = get_arg_val<uint32_t>(3);
    const uint32_t x0 = get_arg_val<uint32_t>(4);
    const uint32_t y0 = get_arg_val<uint32_t>(5);
    const uint32_t x1 = get_arg_val<uint32_t>(6);
    const uint32_t y1 = get_arg_val<uint32_t>(7);
    const uint32_t receivers = get_arg_val<uint32_t>(8);
    const uint32_t bytes = rt * kb * get_tile_size(0);
    const uint32_t ready_addr = get_semaphore(0);
    const uint32_t valid_addr = get_semaphore(1);
    volatile uint32_t* ready = reinterpret_cast<volatile uint32_t*>(ready_addr);
    volatile uint32_t* valid = reinterpret_cast<volatile uint32_t*>(valid_addr);
    for (uint32_t b = 0; b < nb; ++b) {
        cb_reserve_back(0, rt * kb);
        const uint32_t l1 = get_write_ptr(0);
        if (sender) {
            noc_semaphore_wait(ready, receivers);
            noc_semaphore_set(ready, 0);
            noc_async_write_multicast_loopback_src(shard + b * bytes, get_noc_multicast_addr(x0, y0, x1, y1, l1),
                                                   bytes, receivers + 1);
            noc_async_writes_flushed();
            if (receivers > 0) {
                noc_semaphore_set(valid, 1);
                noc_semaphore_set_multicast(valid_addr, get_noc_multicast_addr(x0, y0, x1, y1, valid_addr),
                                            receivers);
            }
            noc_async_write_barrier();
        } else {
            noc_semaphore_set(valid, 0);
            noc_semaphore_inc(get_noc_addr(sender_x, sender_y, ready_addr), 1);
            noc_semaphore_wait(valid, 1);
        }
        cb_push_back(0, rt * kb);
    }
}
