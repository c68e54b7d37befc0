// Stand-in for tt-metal's api/dataflow/dataflow_api.h (pinned 8b98410e730): the data-movement
// kernel API with the same names and signatures, implemented by the tt-runtime emulator.
//
// NoC transfers are queued and land at the matching barrier (read barrier, write barrier or
// writes-flushed), so a kernel that skips a barrier sees stale data and, where the emulator can
// tell (CB push / pop, semaphore signal, kernel end), gets an error.
#pragma once

#include <type_traits>

#include "ttr_emu/prelude.h"

#ifndef NOC_INDEX
#define NOC_INDEX 0
#endif
#ifndef NUM_NOCS
#define NUM_NOCS 2
#endif
#ifndef NUM_DRAM_BANKS
#define NUM_DRAM_BANKS 8
#endif

constexpr uint8_t noc_index = NOC_INDEX;

// NoC virtual channels and the largest packet (Blackhole values).
#define NOC_UNICAST_WRITE_VC 1
#define NOC_MULTICAST_WRITE_VC 4
#define NOC_MAX_BURST_SIZE 16384

enum ProgrammableCoreType {
    TENSIX = 0,
    ACTIVE_ETH = 1,
    IDLE_ETH = 2,
    DRAM = 3,
    COUNT = 4,
};

// Circular buffers.
inline void cb_reserve_back(int32_t operand, int32_t num_pages) { ttr_emu::api->cb_reserve_back(operand, num_pages); }
inline void cb_push_back(const int32_t operand, const int32_t num_pages) {
    ttr_emu::api->cb_push_back(operand, num_pages);
}
inline void cb_wait_front(int32_t operand, int32_t num_pages) { ttr_emu::api->cb_wait_front(operand, num_pages); }
inline void cb_pop_front(int32_t operand, int32_t num_pages) { ttr_emu::api->cb_pop_front(operand, num_pages); }
inline uint32_t get_write_ptr(uint32_t operand) {
    return ttr_emu::api->cb_write_ptr(static_cast<int32_t>(operand));
}
inline uint32_t get_read_ptr(uint32_t operand) { return ttr_emu::api->cb_read_ptr(static_cast<int32_t>(operand)); }
// Bytes of one page of the CB (constexpr on the device, where it reads the JIT's tables).
inline int32_t get_tile_size(const int32_t operand) { return static_cast<int32_t>(ttr_emu::api->cb_tile_size(operand)); }
inline bool cb_pages_available_at_front(int32_t cb, int32_t pages) {
    return ttr_emu::api->cb_pages_available_at_front(cb, pages) != 0;
}
inline bool cb_pages_reservable_at_back(int32_t cb, int32_t pages) {
    return ttr_emu::api->cb_pages_reservable_at_back(cb, pages) != 0;
}

inline uint64_t get_noc_addr(uint32_t noc_x, uint32_t noc_y, uint32_t addr, uint8_t noc = noc_index) {
    (void)noc;
    return ttr_emu::api->noc_xy_addr(noc_x, noc_y, addr);
}
inline uint64_t get_noc_addr(uint32_t addr, uint8_t noc = noc_index) {
    (void)noc;
    return ttr_emu::api->noc_local_addr(addr);
}
inline uint64_t get_noc_multicast_addr(uint32_t noc_x_start, uint32_t noc_y_start, uint32_t noc_x_end,
                                       uint32_t noc_y_end, uint32_t addr, uint8_t noc = noc_index) {
    (void)noc;
    return ttr_emu::api->noc_mcast_addr(noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr);
}

template <bool DRAM>
struct InterleavedAddrGen {
    uint32_t bank_base_address;
    const uint32_t page_size;
    uint64_t get_noc_addr(const uint32_t id, const uint32_t offset = 0, uint8_t noc = noc_index) const {
        (void)noc;
        return ttr_emu::api->noc_page_addr(DRAM ? 1u : 0u, bank_base_address, page_size, id, offset);
    }
};

template <bool DRAM, uint32_t tile_hw = 1024>
struct InterleavedAddrGenFast {
    uint32_t bank_base_address;
    uint32_t page_size;
    DataFormat data_format;
    uint64_t get_noc_addr(const uint32_t id, const uint32_t offset = 0, uint8_t noc = noc_index) const {
        (void)noc;
        return ttr_emu::api->noc_page_addr(DRAM ? 1u : 0u, bank_base_address, page_size, id, offset);
    }
};

// `resolver` only steers overload resolution to address generators, as in tt-metal.
template <typename AddrGen>
inline uint64_t get_noc_addr(const uint32_t id, const AddrGen &addrgen, uint32_t offset = 0, uint8_t noc = noc_index,
                             decltype(addrgen.get_noc_addr()) *resolver = nullptr) {
    (void)resolver;
    return addrgen.get_noc_addr(id, offset, noc);
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true>
inline void noc_async_read(uint64_t src_noc_addr, uint32_t dst_local_l1_addr, uint32_t size, uint8_t noc = noc_index,
                           uint32_t read_req_vc = NOC_UNICAST_WRITE_VC) {
    (void)noc;
    (void)read_req_vc;
    ttr_emu::api->noc_read(src_noc_addr, dst_local_l1_addr, size);
}
template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint32_t size, uint8_t noc = noc_index,
                            uint32_t vc = NOC_UNICAST_WRITE_VC) {
    (void)noc;
    (void)vc;
    ttr_emu::api->noc_write(src_local_l1_addr, dst_noc_addr, size);
}

template <typename AddrGen, bool enable_noc_tracing = true>
inline void noc_async_read_page(const uint32_t id, const AddrGen &s, uint32_t dst_local_l1_addr,
                                uint32_t offset = 0, uint8_t noc = noc_index) {
    noc_async_read(s.get_noc_addr(id, offset, noc), dst_local_l1_addr, s.page_size, noc);
}
template <typename AddrGen, bool enable_noc_tracing = true, bool posted = false>
inline void noc_async_write_page(const uint32_t id, const AddrGen &s, uint32_t src_local_l1_addr,
                                 uint32_t write_size_bytes = 0, uint32_t offset = 0, uint8_t noc = noc_index) {
    noc_async_write(src_local_l1_addr, s.get_noc_addr(id, offset, noc),
                    write_size_bytes == 0 ? s.page_size : write_size_bytes, noc);
}
template <bool DRAM, uint32_t tile_hw>
[[deprecated("Use <typename AddrGen> noc_async_read_page instead.")]] inline void noc_async_read_tile(
    const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw> &addrgen, uint32_t dst_local_l1_addr,
    uint32_t offset = 0, uint8_t noc = noc_index) {
    noc_async_read_page(id, addrgen, dst_local_l1_addr, offset, noc);
}
template <bool DRAM>
[[deprecated("Use <typename AddrGen> noc_async_read_page instead.")]] inline void noc_async_read_tile(
    const uint32_t id, const InterleavedAddrGen<DRAM> &addrgen, uint32_t dst_local_l1_addr, uint32_t offset = 0,
    uint8_t noc = noc_index) {
    noc_async_read_page(id, addrgen, dst_local_l1_addr, offset, noc);
}
template <bool DRAM, uint32_t tile_hw>
[[deprecated("Use <typename AddrGen> noc_async_write_page instead.")]] inline void noc_async_write_tile(
    const uint32_t id, const InterleavedAddrGenFast<DRAM, tile_hw> &addrgen, uint32_t src_local_l1_addr,
    uint8_t noc = noc_index) {
    noc_async_write_page(id, addrgen, src_local_l1_addr, 0, 0, noc);
}
template <bool DRAM>
[[deprecated("Use <typename AddrGen> noc_async_write_page instead.")]] inline void noc_async_write_tile(
    const uint32_t id, const InterleavedAddrGen<DRAM> &addrgen, uint32_t src_local_l1_addr, uint8_t noc = noc_index) {
    noc_async_write_page(id, addrgen, src_local_l1_addr, 0, 0, noc);
}

inline void noc_async_read_barrier(uint8_t noc = noc_index) {
    (void)noc;
    ttr_emu::api->noc_read_barrier();
}
inline void noc_async_write_barrier(uint8_t noc = noc_index) {
    (void)noc;
    ttr_emu::api->noc_write_barrier();
}
inline void noc_async_writes_flushed(uint8_t noc = noc_index) {
    (void)noc;
    ttr_emu::api->noc_writes_flushed();
}
inline void noc_async_atomic_barrier(uint8_t noc = noc_index) {
    (void)noc;
    ttr_emu::api->noc_atomic_barrier();
}
inline void noc_async_full_barrier(uint8_t noc = noc_index) {
    (void)noc;
    ttr_emu::api->noc_read_barrier();
    ttr_emu::api->noc_write_barrier();
    ttr_emu::api->noc_atomic_barrier();
}

template <uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1>
inline void noc_async_write_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast, uint32_t size,
                                      uint32_t num_dests, bool linked = false, uint8_t noc = noc_index,
                                      uint8_t vc = NOC_MULTICAST_WRITE_VC) {
    (void)noc;
    (void)vc;
    ttr_emu::api->noc_write_mcast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, linked ? 2u : 0u);
}
inline void noc_async_write_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                   uint32_t size, uint32_t num_dests, bool linked = false,
                                                   uint8_t noc = noc_index) {
    (void)noc;
    ttr_emu::api->noc_write_mcast(src_local_l1_addr, dst_noc_addr_multicast, size, num_dests, linked ? 3u : 1u);
}

template <ProgrammableCoreType type = ProgrammableCoreType::TENSIX>
inline uint32_t get_semaphore(uint32_t semaphore_id) {
    static_assert(type == ProgrammableCoreType::TENSIX, "the emulator has Tensix semaphores only");
    return ttr_emu::api->semaphore_addr(semaphore_id);
}
inline void noc_semaphore_set(volatile uint32_t *sem_addr, uint32_t val) { ttr_emu::api->sem_set(sem_addr, val); }
inline void noc_semaphore_wait(volatile uint32_t *sem_addr, uint32_t val) {
    ttr_emu::api->sem_wait(sem_addr, val, 0);
}
inline void noc_semaphore_wait_min(volatile uint32_t *sem_addr, uint32_t val) {
    ttr_emu::api->sem_wait(sem_addr, val, 1);
}
template <bool posted = false>
inline void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t noc_id = noc_index,
                              uint8_t vc = NOC_UNICAST_WRITE_VC) {
    (void)noc_id;
    (void)vc;
    ttr_emu::api->sem_inc(addr, incr);
}
inline void noc_semaphore_set_remote(uint32_t src_local_l1_addr, uint64_t dst_noc_addr, uint8_t noc = noc_index) {
    (void)noc;
    ttr_emu::api->sem_set_remote(src_local_l1_addr, dst_noc_addr);
}
inline void noc_semaphore_set_multicast(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                        uint32_t num_dests, bool linked = false, uint8_t noc = noc_index,
                                        uint8_t vc = NOC_MULTICAST_WRITE_VC) {
    (void)noc;
    (void)vc;
    ttr_emu::api->sem_set_mcast(src_local_l1_addr, dst_noc_addr_multicast, num_dests, linked ? 2u : 0u);
}
inline void noc_semaphore_set_multicast_loopback_src(uint32_t src_local_l1_addr, uint64_t dst_noc_addr_multicast,
                                                     uint32_t num_dests, bool linked = false,
                                                     uint8_t noc = noc_index) {
    (void)noc;
    ttr_emu::api->sem_set_mcast(src_local_l1_addr, dst_noc_addr_multicast, num_dests, linked ? 3u : 1u);
}
