// Calibration: one core multicasts `pages` pages of `page` bytes from its L1 to the same address on
// every other core of a rectangle, one barrier at the end (the one-to-all multicast test). With
// `linked`, the multicasts are one linked transaction (every one but the last linked) and the
// sender is in the rectangle (the loopback variant, as the measured linked sweep with loopback).
// Compile-time args: pages, page, linked. Args: l1_addr, x0, y0, x1, y1 (NoC), destinations.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t pages = get_compile_time_arg_val(0);
    constexpr uint32_t page = get_compile_time_arg_val(1);
    constexpr bool linked = get_compile_time_arg_val(2) != 0;
    const uint32_t l1 = get_arg_val<uint32_t>(0);
    const uint32_t x0 = get_arg_val<uint32_t>(1);
    const uint32_t y0 = get_arg_val<uint32_t>(2);
    const uint32_t x1 = get_arg_val<uint32_t>(3);
    const uint32_t y1 = get_arg_val<uint32_t>(4);
    const uint32_t dests = get_arg_val<uint32_t>(5);
    for (uint32_t i = 0; i < pages; ++i) {
        const uint64_t dst = get_noc_multicast_addr(x0, y0, x1, y1, l1);
        if constexpr (linked) {
            noc_async_write_multicast_loopback_src(l1, dst, page, dests, i + 1 < pages);
        } else {
            noc_async_write_multicast(l1, dst, page, dests);
        }
    }
    noc_async_write_barrier();
}
