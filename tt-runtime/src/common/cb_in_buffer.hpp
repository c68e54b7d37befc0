// Where a CB placed in an L1 buffer may sit (ttr_cb_config.buffer, buffer_offset): the rule both backends
// apply before placing it, as tt-metal's CircularBufferConfig::set_globally_allocated_address_and_total_size
// does for a globally allocated CB at an address offset (the offset aligned to the L1 alignment, the CB
// within the buffer's bank from the offset on). tt-metal 0.78 itself checks only the size against the whole
// bank, so the backends check the offset here.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace ttr_common {

// Why CB `id` of `total_size` bytes cannot sit at `offset` in an L1 buffer of `buffer_size` bytes per core
// with L1 alignment `alignment`, or "" when it can.
inline std::string cb_in_buffer_refusal(uint32_t id, uint32_t total_size, uint32_t offset, uint64_t buffer_size,
                                        uint32_t alignment) {
    char m[256];
    if (offset % alignment != 0) {
        std::snprintf(m, sizeof m,
                      "cb %u: offset %u in its L1 buffer is not a multiple of the L1 alignment (%u bytes); place the "
                      "CB at an aligned offset",
                      id, offset, alignment);
        return m;
    }
    if (static_cast<uint64_t>(offset) + total_size > buffer_size) {
        std::snprintf(m, sizeof m,
                      "cb %u: %u bytes at offset %u do not fit in its L1 buffer of %llu bytes per core; make the "
                      "buffer at least as large as the offset plus the CB",
                      id, total_size, offset, static_cast<unsigned long long>(buffer_size));
        return m;
    }
    return "";
}

}  // namespace ttr_common
