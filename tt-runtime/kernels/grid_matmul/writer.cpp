// Grid matmul writer: the ct output tiles of this core go to pages m * nt + n0 + c.
// Args: c_addr, m, n0, nt, ct.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t c_addr = get_arg_val<uint32_t>(0);
    const uint32_t m = get_arg_val<uint32_t>(1);
    const uint32_t n0 = get_arg_val<uint32_t>(2);
    const uint32_t nt = get_arg_val<uint32_t>(3);
    const uint32_t ct = get_arg_val<uint32_t>(4);
    const uint32_t tile = get_tile_size(16);
    const InterleavedAddrGen<true> gc{c_addr, tile};
    cb_wait_front(16, ct);
    const uint32_t l1 = get_read_ptr(16);
    for (uint32_t c = 0; c < ct; ++c) {
        noc_async_write_page(m * nt + n0 + c, gc, l1 + c * tile);
    }
    noc_async_write_barrier();
    cb_pop_front(16, ct);
}
