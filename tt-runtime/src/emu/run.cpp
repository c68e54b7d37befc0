// The scheduler and the data-movement half of the kernel API: runtime args, CBs, NoC transfers,
// multicast and semaphores, with the emulator's strictness checks.
#include "run.hpp"
#include "noc_route.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace ttr {

namespace {

thread_local Ctx *t_cur = nullptr;
ttr_emu::Abi g_abi;
std::once_flag g_abi_once;

constexpr uint64_t LOCAL_MASK = (1ull << 36) - 1;
constexpr uint64_t MCAST_FLAG = 1ull << 63;

uint64_t encode(uint32_t x, uint32_t y, uint64_t addr) {
    return (static_cast<uint64_t>(y) << 42) | (static_cast<uint64_t>(x) << 36) | (addr & LOCAL_MASK);
}

uint32_t size_class(uint32_t size) {
    uint32_t cls = 0;
    uint32_t limit = 64;
    while (cls < TTR_NOC_SIZE_CLASSES - 1 && size > limit) {
        ++cls;
        limit *= 2;
    }
    return cls;
}

Device &dev_of(Ctx &c) { return *c.run->dev; }
const Core &core_of(Ctx &c) { return c.run->dev->cores[c.core]; }

// Hops from NoC (sx, sy) to (dx, dy) on the kernel's NoC: NoC 0 routes +x then +y, NoC 1 -y then -x, both
// wrapping around the torus.
uint64_t hops(const Ctx &c, uint32_t sx, uint32_t sy, uint32_t dx, uint32_t dy) {
    bool noc1 = c.def->build.noc == 1;
    uint32_t fx = noc1 ? sx : dx, tx = noc1 ? dx : sx;
    uint32_t fy = noc1 ? sy : dy, ty = noc1 ? dy : sy;
    return (fx % NOC_TORUS_X + NOC_TORUS_X - tx % NOC_TORUS_X) % NOC_TORUS_X +
           (fy % NOC_TORUS_Y + NOC_TORUS_Y - ty % NOC_TORUS_Y) % NOC_TORUS_Y;
}

// Hops from this core to a unicast NoC address.
uint64_t hops_to(Ctx &c, uint64_t noc) {
    const Core &k = core_of(c);
    return hops(c, k.nx, k.ny, static_cast<uint32_t>((noc >> 36) & 63), static_cast<uint32_t>((noc >> 42) & 63));
}

// Hops from this core to the farthest of the multicast destinations `dests`.
uint64_t farthest(Ctx &c, const std::vector<uint32_t> &dests) {
    const Core &k = core_of(c);
    uint64_t most = 0;
    for (uint32_t i : dests) {
        const Core &d = dev_of(c).cores[i];
        most = std::max(most, hops(c, k.nx, k.ny, d.nx, d.ny));
    }
    return most;
}

// Occupancy of the data of a unicast transfer from NoC (sx, sy) to (dx, dy) on this kernel's NoC, and of
// the DRAM bank it reads or writes (bank < 0: none).
void occupy(Ctx &c, uint32_t sx, uint32_t sy, uint32_t dx, uint32_t dy, int32_t bank, uint32_t size) {
    ttr_occupancy &o = c.run->prog->occupancy;
    route_unicast(o, c.def->build.noc == 1 ? 1 : 0, sx, sy, dx, dy, size);
    if (bank >= 0) {
        o.dram_bank_bytes[bank] += size;
    }
}

// Turns a kernel-visible L1 address (a device offset or this core's host window) into an offset.
uint32_t l1_offset(Ctx &c, uint32_t addr, const char *op) {
    uint32_t win = dev_of(c).window(c.core);
    if (addr >= win && addr - win < L1_SIZE) {
        return addr - win;
    }
    if (addr < L1_SIZE) {
        return addr;
    }
    kfail("%s: 0x%x is not an L1 address (L1 is 0x%x bytes) on %s", op, addr, L1_SIZE, who(c).c_str());
}

void check_l1_range(Ctx &c, uint32_t off, uint32_t size, const char *op, const char *side) {
    if (static_cast<uint64_t>(off) + size > L1_SIZE) {
        kfail("%s: %s L1 range 0x%x..0x%llx is out of bounds (L1 is 0x%x bytes) on %s", op, side, off,
              static_cast<unsigned long long>(off) + size, L1_SIZE, who(c).c_str());
    }
    const uint32_t sems = c.run->sem_base;
    bool in_sems = off >= sems && off + size <= sems + MAX_SEMS * SEM_STRIDE;
    if (off < L1_UNRESERVED_BASE && !in_sems) {
        kfail("%s: %s L1 address 0x%x is below 0x%x, in the firmware or kernel-config region (only the "
              "semaphores there may be accessed) on %s",
              op, side, off, L1_UNRESERVED_BASE, who(c).c_str());
    }
    if (off % L1_ALIGN != 0) {
        kfail("%s: %s L1 address 0x%x is not %u-byte aligned (NoC L1 alignment) on %s", op, side, off, L1_ALIGN,
              who(c).c_str());
    }
}

// A resolved unicast NoC target.
struct Target {
    uint8_t *ptr;
    int32_t core;
    int32_t bank;
};

Target resolve(Ctx &c, uint64_t noc, uint32_t size, const char *op, bool read) {
    if ((noc & MCAST_FLAG) != 0) {
        kfail("%s: a multicast NoC address was given to a unicast transfer on %s", op, who(c).c_str());
    }
    uint32_t x = static_cast<uint32_t>((noc >> 36) & 63);
    uint32_t y = static_cast<uint32_t>((noc >> 42) & 63);
    uint64_t off = noc & LOCAL_MASK;
    Device &d = dev_of(c);
    const Endpoint &ep = d.endpoint(x, y);
    const char *side = read ? "source" : "destination";
    if (ep.core >= 0) {
        if (off >= L1_SIZE) {
            kfail("%s: %s L1 address 0x%llx on NoC (%u,%u) is out of bounds (L1 is 0x%x bytes) on %s", op, side,
                  static_cast<unsigned long long>(off), x, y, L1_SIZE, who(c).c_str());
        }
        check_l1_range(c, static_cast<uint32_t>(off), size, op, side);
        d.touch(static_cast<uint32_t>(ep.core));
        return Target{d.cores[static_cast<size_t>(ep.core)].l1 + off, ep.core, -1};
    }
    if (ep.bank >= 0) {
        uint32_t align = read ? DRAM_READ_ALIGN : DRAM_WRITE_ALIGN;
        if (off % align != 0) {
            kfail("%s: DRAM %s address 0x%llx (bank %d) is not %u-byte aligned (NoC DRAM %s alignment) on %s", op,
                  side, static_cast<unsigned long long>(off), ep.bank, align, read ? "read" : "write",
                  who(c).c_str());
        }
        if (!d.dram_alloc.contains(off, size)) {
            kfail("%s: DRAM range 0x%llx..0x%llx of bank %d is outside every allocated buffer on %s", op,
                  static_cast<unsigned long long>(off), static_cast<unsigned long long>(off + size), ep.bank,
                  who(c).c_str());
        }
        return Target{d.banks[static_cast<size_t>(ep.bank)].data() + off, -1, ep.bank};
    }
    kfail("%s: no core or DRAM bank at NoC (%u,%u) on %s; NoC coordinates come from the host "
          "(worker_core_from_logical_core), not from logical ones",
          op, x, y, who(c).c_str());
}

// Worker cores in a multicast rectangle, the sender excluded unless loopback.
std::vector<uint32_t> mcast_dests(Ctx &c, uint64_t noc, uint32_t num_dests, bool loopback, const char *op,
                                  uint32_t *off) {
    if ((noc & MCAST_FLAG) == 0) {
        kfail("%s: the destination is not a multicast address (use get_noc_multicast_addr) on %s", op,
              who(c).c_str());
    }
    uint32_t x0 = static_cast<uint32_t>((noc >> 36) & 63), y0 = static_cast<uint32_t>((noc >> 42) & 63);
    uint32_t x1 = static_cast<uint32_t>((noc >> 48) & 63), y1 = static_cast<uint32_t>((noc >> 54) & 63);
    *off = static_cast<uint32_t>(noc & ((1ull << 32) - 1));
    uint32_t lx = std::min(x0, x1), hx = std::max(x0, x1), ly = std::min(y0, y1), hy = std::max(y0, y1);
    Device &d = dev_of(c);
    std::vector<uint32_t> dests;
    bool sender_inside = false;
    for (uint32_t i = 0; i < d.cores.size(); ++i) {
        const Core &k = d.cores[i];
        if (k.nx < lx || k.nx > hx || k.ny < ly || k.ny > hy) {
            continue;
        }
        if (i == c.core) {
            sender_inside = true;
            if (!loopback) {
                continue;
            }
        }
        d.touch(i);
        dests.push_back(i);
    }
    if (loopback && !sender_inside) {
        kfail("%s: the loopback variant needs the sender inside the rectangle NoC (%u,%u)-(%u,%u) on %s", op, lx, ly,
              hx, hy, who(c).c_str());
    }
    if (dests.size() != num_dests) {
        kfail("%s: num_dests is %u but the rectangle NoC (%u,%u)-(%u,%u) holds %zu destination core(s)%s on %s", op,
              num_dests, lx, ly, hx, hy, dests.size(),
              loopback ? " including the sender"
                       : " excluding the sender (multicast does not write the sender unless the _loopback_src variant "
                         "is used)",
              who(c).c_str());
    }
    return dests;
}

// The rectangle bits of a multicast NoC address (x0, y0, x1, y1).
uint64_t mcast_rect(uint64_t noc) { return (noc >> 36) & ((1ull << 24) - 1); }

// A request on the kernel's NoC: `rect` is the multicast rectangle's bits for a multicast, else
// none. tt-isa-documentation (NoC MemoryMap, NOC_CMD_VC_LINKED): the request after a linked one is
// part of the same transaction, which must go to the same destination rectangle ("failure to
// comply ... will lead to complete NoC failure"), and the NIU initiates nothing else until the
// transaction's last (unlinked) request.
void niu_request(Ctx &c, const char *op, const uint64_t *rect, bool linked) {
    LinkedTxn &t = c.run->linked[static_cast<size_t>(c.core) * 2 + c.def->build.noc];
    if (t.open && (rect == nullptr || *rect != t.rect)) {
        const uint64_t r = t.rect;
        kfail("%s on %s while a linked multicast transaction to NoC (%u,%u)-(%u,%u) opened by kernel '%s' is open on "
              "NoC %u of this core: a request after a linked one must be a multicast to the same rectangle; end the "
              "transaction first with an unlinked multicast to it (NOC_CMD_VC_LINKED)",
              op, who(c).c_str(), static_cast<uint32_t>(r & 63), static_cast<uint32_t>((r >> 6) & 63),
              static_cast<uint32_t>((r >> 12) & 63), static_cast<uint32_t>((r >> 18) & 63),
              c.run->prog->kernels[t.kernel].build.name.c_str(), c.def->build.noc);
    }
    t.open = linked;
    t.rect = rect != nullptr ? *rect : 0;
    t.kernel = c.kernel;
}

void flush_reads(Ctx &c) {
    for (const Xfer &x : c.reads) {
        memmove(x.dst, x.src, x.size);
    }
    if (!c.reads.empty()) {
        c.run->events++;
    }
    c.reads.clear();
}

uint32_t cb_used(const CbState &s) { return static_cast<uint16_t>(s.received - s.acked); }

bool overlaps(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen) { return a < b + blen && b < a + alen; }

// A NoC write that lands in pages of a CB that its core's kernels have pushed and not popped
// races with the kernel reading them: the receiver pushes a remote writer's pages only once the
// writer signals that they landed.
void check_landing_in_cbs(Ctx &c, const Xfer &x) {
    const uint32_t core = static_cast<uint32_t>(x.dst_core);
    for (uint32_t id = 0; id < NUM_CBS; ++id) {
        const CbConfig &cfg = c.run->prog->cbs[core][id];
        if (!cfg.present || !overlaps(cfg.addr, cfg.pages * cfg.page, x.dst_off, x.size)) {
            continue;
        }
        const uint32_t slot = core * NUM_CBS + id;
        const CbState &s = c.run->cbs[slot];
        const Core &d = c.run->dev->cores[core];
        for (uint32_t k = 0; k < cb_used(s); ++k) {
            const uint32_t page = (s.rd_page + k) % cfg.pages;
            if (overlaps(cfg.addr + page * cfg.page, cfg.page, x.dst_off, x.size)) {
                kfail("a NoC write from %s landed in page %u of CB %u on core (%u,%u), which its kernels have pushed "
                      "and not popped: that core pushed the pages before this write landed (wait for the writer's "
                      "semaphore before cb_push_back)",
                      who(c).c_str(), page, id, d.lx, d.ly);
            }
        }
        for (uint32_t page = 0; page < cfg.pages; ++page) {
            if (!overlaps(cfg.addr + page * cfg.page, cfg.page, x.dst_off, x.size)) {
                continue;
            }
            const int64_t pusher = c.run->order->unordered_push(c.index, slot, page);
            if (pusher >= 0) {
                kfail("a NoC write from %s landed in page %u of CB %u on core (%u,%u) after %s pushed that page, and "
                      "nothing ordered the write after the push: the pages were pushed before this write landed "
                      "(wait for the writer's semaphore before cb_push_back)",
                      who(c).c_str(), page, id, d.lx, d.ly, who(c.run->ctxs[static_cast<size_t>(pusher)]).c_str());
            }
        }
    }
}

// Whether a NoC write may land in a CB of its destination core: below the end of the program's own CBs
// there, or in one of its CBs placed in L1 buffers.
bool may_land_in_cbs(const Program &prog, const Xfer &x) {
    if (x.dst_core < 0 || static_cast<size_t>(x.dst_core) >= prog.cb_end.size()) {
        return false;
    }
    const size_t core = static_cast<size_t>(x.dst_core);
    const auto &in_buffers = prog.buffer_cbs[core];
    return x.dst_off < prog.cb_end[core] ||
           std::any_of(in_buffers.begin(), in_buffers.end(),
                       [&](const auto &cb) { return overlaps(cb.first, cb.second - cb.first, x.dst_off, x.size); });
}

void flush_writes(Ctx &c) {
    for (const Xfer &x : c.writes) {
        memmove(x.dst, x.src, x.size);
        // A sender's loopback copy of its own pages (the same bytes) orders nothing.
        if (may_land_in_cbs(*c.run->prog, x) && x.dst != x.src) {
            check_landing_in_cbs(c, x);
            c.run->order->landed(c.index, static_cast<uint32_t>(x.dst_core), x.dst_off, x.size);
        }
    }
    if (!c.writes.empty()) {
        c.run->events++;
    }
    c.writes.clear();
}

void before_signal(Ctx &c, const char *op) {
    if (c.writes.empty()) {
        return;
    }
    if (c.writes.back().linked_mcast) {
        flush_writes(c);
        return;
    }
    kfail("%s while %zu NoC write(s) are not flushed on %s: call noc_async_writes_flushed() or "
          "noc_async_write_barrier() before signalling a semaphore",
          op, c.writes.size(), who(c).c_str());
}

void block(Ctx &c, const Wait &w) {
    c.wait = w;
    c.state = CtxState::Blocked;
    swapcontext(&c.uc, &c.run->sched);
    c.wait.kind = WaitKind::None;
}

void check_count(Ctx &c, const CbConfig &cfg, int32_t cb, int32_t n, const char *op, bool divide) {
    if (n <= 0) {
        kfail("%s(cb %d, %d): the page count must be positive on %s", op, cb, n, who(c).c_str());
    }
    if (static_cast<uint32_t>(n) > cfg.pages) {
        kfail("%s(cb %d, %d): more pages than the CB holds (%u) on %s", op, cb, n, cfg.pages, who(c).c_str());
    }
    if (divide && cfg.pages % static_cast<uint32_t>(n) != 0) {
        kfail("%s(cb %d, %d): %d page(s) do not divide the CB capacity of %u pages on %s", op, cb, n, n, cfg.pages,
              who(c).c_str());
    }
}

// ---- the API table: arguments ----

uint32_t api_arg_addr(uint32_t i) {
    Ctx &c = current();
    if (i >= c.num_args) {
        kfail("get_arg_val(%u): only %u runtime arg(s) are set for %s", i, c.num_args, who(c).c_str());
    }
    return dev_of(c).window(c.core) + c.args_off + 4 * i;
}

uint32_t api_common_arg_addr(uint32_t i) {
    Ctx &c = current();
    if (i >= c.num_common) {
        kfail("get_common_arg_val(%u): only %u common runtime arg(s) are set for %s", i, c.num_common,
              who(c).c_str());
    }
    return dev_of(c).window(c.core) + c.common_off + 4 * i;
}

uint32_t api_compile_arg_oob(uint32_t i, uint32_t n) {
    kfail("get_compile_time_arg_val(%u): %s has %u compile-time arg(s)", i, who(current()).c_str(), n);
}

// ---- circular buffers ----

void api_cb_reserve_back(int32_t cb, int32_t n) {
    Ctx &c = current();
    const CbConfig &cfg = cb_config(c, cb, "cb_reserve_back");
    check_count(c, cfg, cb, n, "cb_reserve_back", true);
    CbState &s = cb_state(c, static_cast<uint32_t>(cb));
    c.counters->cb_waits++;
    if (cfg.pages - cb_used(s) < static_cast<uint32_t>(n)) {
        c.counters->cb_blocked++;
        while (cfg.pages - cb_used(s) < static_cast<uint32_t>(n)) {
            block(c, Wait{WaitKind::CbBack, static_cast<uint32_t>(cb), static_cast<uint32_t>(n), nullptr, 0, 0});
        }
    }
    s.reserved = std::max(s.reserved, static_cast<uint32_t>(n));
}

void api_cb_push_back(int32_t cb, int32_t n) {
    Ctx &c = current();
    const CbConfig &cfg = cb_config(c, cb, "cb_push_back");
    check_count(c, cfg, cb, n, "cb_push_back", true);
    CbState &s = cb_state(c, static_cast<uint32_t>(cb));
    uint32_t un = static_cast<uint32_t>(n);
    if (un > s.reserved) {
        kfail("cb_push_back(cb %d, %d): push more than reserved (%u page(s) reserved) on %s", cb, n, s.reserved,
              who(c).c_str());
    }
    // No overflow check: a reserve waits until its pages are free, and every push takes from the
    // reserved pages, so the reserved pages never exceed the free ones.
    if (s.wr_page + un > cfg.pages) {
        kfail("cb_push_back(cb %d, %d): the pages wrap past the end of the ring (write page %u of %u); pushes within "
              "one wrap must add up to the CB size on %s",
              cb, n, s.wr_page, cfg.pages, who(c).c_str());
    }
    uint32_t start = cfg.addr + s.wr_page * cfg.page;
    for (const Xfer &x : c.reads) {
        if (overlaps(start, un * cfg.page, x.local, x.size)) {
            kfail("cb_push_back(cb %d, %d): a NoC read into these pages has not been waited for "
                  "(noc_async_read_barrier missing) on %s",
                  cb, n, who(c).c_str());
        }
    }
    if (const Landing *l = c.run->order->unordered(c.index, c.core, start, un * cfg.page)) {
        const Ctx &w = c.run->ctxs[l->writer];
        kfail("cb_push_back(cb %d, %d): %u byte(s) at L1 0x%x of these pages were written over the NoC by %s, and "
              "this kernel waited for no semaphore that %s signalled after that write (push a remote writer's pages "
              "only once its semaphore says they landed) on %s",
              cb, n, l->size, l->off, who(w).c_str(), who(w).c_str(), who(c).c_str());
    }
    for (uint32_t k = 0; k < un; ++k) {
        c.run->order->pushed(c.index, c.core * NUM_CBS + static_cast<uint32_t>(cb), s.wr_page + k, cfg.pages);
    }
    s.received = static_cast<uint16_t>(s.received + un);
    s.wr_page = (s.wr_page + un) % cfg.pages;
    s.reserved -= un;
    s.pack_next = s.pack_next > un ? s.pack_next - un : 0;
    c.run->events++;
}

void api_cb_wait_front(int32_t cb, int32_t n) {
    Ctx &c = current();
    const CbConfig &cfg = cb_config(c, cb, "cb_wait_front");
    check_count(c, cfg, cb, n, "cb_wait_front", false);
    CbState &s = cb_state(c, static_cast<uint32_t>(cb));
    c.counters->cb_waits++;
    if (cb_used(s) < static_cast<uint32_t>(n)) {
        c.counters->cb_blocked++;
        while (cb_used(s) < static_cast<uint32_t>(n)) {
            block(c, Wait{WaitKind::CbFront, static_cast<uint32_t>(cb), static_cast<uint32_t>(n), nullptr, 0, 0});
        }
    }
    s.waited = std::max(s.waited, static_cast<uint32_t>(n));
}

void api_cb_pop_front(int32_t cb, int32_t n) {
    Ctx &c = current();
    const CbConfig &cfg = cb_config(c, cb, "cb_pop_front");
    check_count(c, cfg, cb, n, "cb_pop_front", true);
    CbState &s = cb_state(c, static_cast<uint32_t>(cb));
    uint32_t un = static_cast<uint32_t>(n);
    if (un > s.waited) {
        kfail("cb_pop_front(cb %d, %d): pop more than waited (%u page(s) waited for) on %s", cb, n, s.waited,
              who(c).c_str());
    }
    if (s.rd_page + un > cfg.pages) {
        kfail("cb_pop_front(cb %d, %d): the pages wrap past the end of the ring (read page %u of %u); pops within "
              "one wrap must add up to the CB size on %s",
              cb, n, s.rd_page, cfg.pages, who(c).c_str());
    }
    uint32_t start = cfg.addr + s.rd_page * cfg.page;
    for (const Xfer &x : c.writes) {
        if (overlaps(start, un * cfg.page, x.local, x.size)) {
            kfail("cb_pop_front(cb %d, %d): a NoC write from these pages has not completed "
                  "(noc_async_write_barrier missing) on %s",
                  cb, n, who(c).c_str());
        }
    }
    s.acked = static_cast<uint16_t>(s.acked + un);
    s.rd_page = (s.rd_page + un) % cfg.pages;
    s.waited -= un;
    c.run->events++;
}

uint32_t api_cb_write_ptr(int32_t cb) {
    Ctx &c = current();
    const CbConfig &cfg = cb_config(c, cb, "get_write_ptr");
    return dev_of(c).window(c.core) + cfg.addr + cb_state(c, static_cast<uint32_t>(cb)).wr_page * cfg.page;
}

uint32_t api_cb_read_ptr(int32_t cb) {
    Ctx &c = current();
    const CbConfig &cfg = cb_config(c, cb, "get_read_ptr");
    return dev_of(c).window(c.core) + cfg.addr + cb_state(c, static_cast<uint32_t>(cb)).rd_page * cfg.page;
}

uint32_t api_cb_tile_size(int32_t cb) {
    Ctx &c = current();
    const CbConfig &cfg = cb_config(c, cb, "get_tile_size");
    uint32_t t = tile_bytes(cfg.format);
    return t != 0 ? t : cfg.page;
}

void poll_yield(Ctx &c) { block(c, Wait{WaitKind::Yield, 0, 0, nullptr, 0, 0}); }

uint32_t api_cb_pages_available_at_front(int32_t cb, int32_t n) {
    Ctx &c = current();
    const CbConfig &cfg = cb_config(c, cb, "cb_pages_available_at_front");
    check_count(c, cfg, cb, n, "cb_pages_available_at_front", false);
    bool ok = cb_used(cb_state(c, static_cast<uint32_t>(cb))) >= static_cast<uint32_t>(n);
    if (!ok) {
        poll_yield(c);
    }
    return ok ? 1 : 0;
}

uint32_t api_cb_pages_reservable_at_back(int32_t cb, int32_t n) {
    Ctx &c = current();
    const CbConfig &cfg = cb_config(c, cb, "cb_pages_reservable_at_back");
    check_count(c, cfg, cb, n, "cb_pages_reservable_at_back", false);
    bool ok = cfg.pages - cb_used(cb_state(c, static_cast<uint32_t>(cb))) >= static_cast<uint32_t>(n);
    if (!ok) {
        poll_yield(c);
    }
    return ok ? 1 : 0;
}

// ---- NoC ----

uint64_t api_noc_xy_addr(uint32_t x, uint32_t y, uint32_t addr) {
    Ctx &c = current();
    if (x >= NOC_GRID || y >= NOC_GRID) {
        kfail("get_noc_addr(%u, %u, ...): NoC coordinates out of range on %s", x, y, who(c).c_str());
    }
    uint32_t win = dev_of(c).window(c.core);
    if (addr >= win && addr - win < L1_SIZE) {
        addr -= win;
    }
    return encode(x, y, addr);
}

uint64_t api_noc_local_addr(uint32_t addr) {
    Ctx &c = current();
    const Core &k = core_of(c);
    return encode(k.nx, k.ny, l1_offset(c, addr, "get_noc_addr"));
}

uint64_t api_noc_mcast_addr(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t addr) {
    Ctx &c = current();
    if (x0 >= NOC_GRID || y0 >= NOC_GRID || x1 >= NOC_GRID || y1 >= NOC_GRID) {
        kfail("get_noc_multicast_addr: NoC coordinates out of range on %s", who(c).c_str());
    }
    uint32_t win = dev_of(c).window(c.core);
    if (addr >= win && addr - win < L1_SIZE) {
        addr -= win;
    }
    return MCAST_FLAG | (static_cast<uint64_t>(x0) << 36) | (static_cast<uint64_t>(y0) << 42) |
           (static_cast<uint64_t>(x1) << 48) | (static_cast<uint64_t>(y1) << 54) | addr;
}

uint64_t api_noc_page_addr(uint32_t dram, uint32_t base, uint32_t page_size, uint32_t page, uint32_t offset) {
    Ctx &c = current();
    if (page_size == 0) {
        kfail("InterleavedAddrGen: page size 0 on %s", who(c).c_str());
    }
    if (dram == 0) {
        // One L1 bank per worker core, bank b on core b (ttr_device_l1_bank_core), at the same
        // address in every bank.
        const Device &d = dev_of(c);
        uint64_t aligned = (static_cast<uint64_t>(page_size) + L1_ALIGN - 1) / L1_ALIGN * L1_ALIGN;
        uint32_t banks = static_cast<uint32_t>(d.cores.size());
        uint64_t addr = base + static_cast<uint64_t>(page / banks) * aligned;
        if (!d.l1_alloc.contains(addr, page_size)) {
            kfail("InterleavedAddrGen<false>: page %u (L1 0x%llx..0x%llx of bank %u) is outside every allocated L1 "
                  "buffer on %s",
                  page, static_cast<unsigned long long>(addr), static_cast<unsigned long long>(addr + page_size),
                  page % banks, who(c).c_str());
        }
        const Core &k = d.cores[page % banks];
        return encode(k.nx, k.ny, addr + offset);
    }
    uint64_t aligned = (static_cast<uint64_t>(page_size) + DRAM_READ_ALIGN - 1) / DRAM_READ_ALIGN * DRAM_READ_ALIGN;
    uint32_t bank = page % DRAM_BANKS;
    uint64_t addr = base + static_cast<uint64_t>(page / DRAM_BANKS) * aligned + offset;
    const ttr_core &xy = dev_of(c).dram_noc[bank];
    return encode(xy.x, xy.y, addr);
}

void api_noc_read(uint64_t src, uint32_t dst_l1, uint32_t size) {
    Ctx &c = current();
    niu_request(c, "noc_async_read", nullptr, false);
    uint32_t off = l1_offset(c, dst_l1, "noc_async_read");
    check_l1_range(c, off, size, "noc_async_read", "destination");
    Target t = resolve(c, src, size, "noc_async_read", true);
    uint32_t cls = size_class(size);
    c.counters->noc_reads[cls]++;
    c.counters->noc_read_bytes[cls] += size;
    {
        const Core &k = core_of(c);
        uint32_t tx = static_cast<uint32_t>((src >> 36) & 63), ty = static_cast<uint32_t>((src >> 42) & 63);
        c.counters->noc_hops += hops(c, k.nx, k.ny, tx, ty) + hops(c, tx, ty, k.nx, k.ny);
    }
    if (t.bank >= 0) {
        c.counters->dram_read_bytes += size;
    }
    occupy(c, static_cast<uint32_t>((src >> 36) & 63), static_cast<uint32_t>((src >> 42) & 63), core_of(c).nx,
           core_of(c).ny, t.bank, size);
    c.reads.push_back(Xfer{core_of(c).l1 + off, t.ptr, size, off, false});
}

void api_noc_write(uint32_t src_l1, uint64_t dst, uint32_t size) {
    Ctx &c = current();
    niu_request(c, "noc_async_write", nullptr, false);
    uint32_t off = l1_offset(c, src_l1, "noc_async_write");
    check_l1_range(c, off, size, "noc_async_write", "source");
    Target t = resolve(c, dst, size, "noc_async_write", false);
    uint32_t cls = size_class(size);
    c.counters->noc_writes[cls]++;
    c.counters->noc_write_bytes[cls] += size;
    c.counters->noc_hops += hops_to(c, dst);
    if (t.bank >= 0) {
        c.counters->dram_write_bytes += size;
    }
    occupy(c, core_of(c).nx, core_of(c).ny, static_cast<uint32_t>((dst >> 36) & 63),
           static_cast<uint32_t>((dst >> 42) & 63), t.bank, size);
    c.writes.push_back(Xfer{t.ptr, core_of(c).l1 + off, size, off, false, t.core,
                            static_cast<uint32_t>(dst & LOCAL_MASK)});
}

void api_noc_write_mcast(uint32_t src_l1, uint64_t dst, uint32_t size, uint32_t num_dests, uint32_t flags) {
    Ctx &c = current();
    const char *op = (flags & 1) != 0 ? "noc_async_write_multicast_loopback_src" : "noc_async_write_multicast";
    const uint64_t rect = mcast_rect(dst);
    niu_request(c, op, &rect, (flags & 2) != 0);
    uint32_t off = l1_offset(c, src_l1, op);
    check_l1_range(c, off, size, op, "source");
    uint32_t doff = 0;
    std::vector<uint32_t> dests = mcast_dests(c, dst, num_dests, (flags & 1) != 0, op, &doff);
    check_l1_range(c, doff, size, op, "destination");
    Device &d = dev_of(c);
    for (uint32_t k : dests) {
        c.writes.push_back(Xfer{d.cores[k].l1 + doff, core_of(c).l1 + off, size, off, false, static_cast<int32_t>(k),
                                doff});
    }
    if (!c.writes.empty()) {
        c.writes.back().linked_mcast = (flags & 2) != 0;
    }
    c.counters->noc_mcasts++;
    c.counters->noc_mcast_bytes += size;
    c.counters->noc_mcast_dests += dests.size();
    for (uint32_t k : dests) {
        c.counters->noc_mcast_landed_bytes += k == c.core ? 0 : size;
    }
    if ((flags & 2) != 0) {
        c.counters->noc_linked_mcasts++;
        c.counters->noc_linked_mcast_bytes += size;
        c.counters->noc_linked_mcast_dests += dests.size();
    }
    c.counters->noc_hops += farthest(c, dests);
    if (!dests.empty()) {
        uint32_t x0 = static_cast<uint32_t>((dst >> 36) & 63), y0 = static_cast<uint32_t>((dst >> 42) & 63);
        uint32_t x1 = static_cast<uint32_t>((dst >> 48) & 63), y1 = static_cast<uint32_t>((dst >> 54) & 63);
        route_multicast(c.run->prog->occupancy, c.def->build.noc == 1 ? 1 : 0, core_of(c).nx, core_of(c).ny,
                        ttr_core{std::min(x0, x1), std::min(y0, y1)}, ttr_core{std::max(x0, x1), std::max(y0, y1)},
                        size);
    }
}

// A barrier that finds transfers in flight waits for them.
void counted_flush(std::vector<Xfer> &pending, Ctx &c, void (*flush)(Ctx &)) {
    if (!pending.empty()) {
        c.counters->noc_barriers++;
    }
    flush(c);
}
void api_noc_read_barrier() {
    Ctx &c = current();
    counted_flush(c.reads, c, flush_reads);
}
void api_noc_write_barrier() {
    Ctx &c = current();
    counted_flush(c.writes, c, flush_writes);
}
void api_noc_atomic_barrier() {}
uint32_t api_my_noc_x(uint32_t) { return core_of(current()).nx; }
uint32_t api_my_noc_y(uint32_t) { return core_of(current()).ny; }
uint32_t api_noc_index() { return current().def->build.noc; }

// ---- semaphores ----

uint32_t api_semaphore_addr(uint32_t id) {
    Ctx &c = current();
    for (const auto &[sid, init] : c.run->prog->sems[c.core]) {
        if (sid == id) {
            return dev_of(c).window(c.core) + c.run->sem_base + id * SEM_STRIDE;
        }
    }
    kfail("get_semaphore(%u): no semaphore %u on %s", id, id, who(c).c_str());
}

volatile uint32_t *own_word(Ctx &c, volatile uint32_t *p, const char *op) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    uintptr_t win = dev_of(c).window(c.core);
    if (a < win || a + 4 > win + L1_SIZE || a % 4 != 0) {
        kfail("%s: %p is not an aligned word of this core's L1 on %s", op, static_cast<const volatile void *>(p),
              who(c).c_str());
    }
    return p;
}

void api_sem_set(volatile uint32_t *p, uint32_t v) {
    Ctx &c = current();
    *own_word(c, p, "noc_semaphore_set") = v;
    c.run->order->release(c.index, c.core,
                          static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p) - dev_of(c).window(c.core)));
    c.run->events++;
}

void api_sem_wait(volatile uint32_t *p, uint32_t v, uint32_t at_least) {
    Ctx &c = current();
    const char *op = at_least != 0 ? "noc_semaphore_wait_min" : "noc_semaphore_wait";
    own_word(c, p, op);
    c.counters->sem_waits++;
    uint32_t addr = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p) - dev_of(c).window(c.core));
    auto holds = [&]() { return at_least != 0 ? *p >= v : *p == v; };
    while (!holds()) {
        block(c, Wait{at_least != 0 ? WaitKind::SemMin : WaitKind::SemEq, 0, 0, p, addr, v});
    }
    c.run->order->acquire(c.index, c.core, addr);
}

// A semaphore word on another core; its update releases the kernel's clock there.
volatile uint32_t *remote_word(Ctx &c, uint64_t noc, const char *op) {
    Target t = resolve(c, noc & ~static_cast<uint64_t>(15), 16, op, false);
    if (t.core < 0) {
        kfail("%s: the target is not a worker core's L1 on %s", op, who(c).c_str());
    }
    if ((noc & 3) != 0) {
        kfail("%s: the semaphore address is not 4-byte aligned on %s", op, who(c).c_str());
    }
    c.run->order->release(c.index, static_cast<uint32_t>(t.core), static_cast<uint32_t>(noc & LOCAL_MASK));
    return reinterpret_cast<volatile uint32_t *>(t.ptr + (noc & 15));
}

void api_sem_inc(uint64_t addr, uint32_t incr) {
    Ctx &c = current();
    niu_request(c, "noc_semaphore_inc", nullptr, false);
    before_signal(c, "noc_semaphore_inc");
    volatile uint32_t *w = remote_word(c, addr, "noc_semaphore_inc");
    *w = *w + incr;
    c.counters->noc_sem_ops++;
    c.counters->noc_hops += hops_to(c, addr);
    c.run->events++;
}

void api_sem_set_remote(uint32_t src_l1, uint64_t dst) {
    Ctx &c = current();
    niu_request(c, "noc_semaphore_set_remote", nullptr, false);
    before_signal(c, "noc_semaphore_set_remote");
    uint32_t off = l1_offset(c, src_l1, "noc_semaphore_set_remote");
    check_l1_range(c, off, 4, "noc_semaphore_set_remote", "source");
    uint32_t v;
    memcpy(&v, core_of(c).l1 + off, 4);
    *remote_word(c, dst, "noc_semaphore_set_remote") = v;
    c.counters->noc_sem_ops++;
    c.counters->noc_hops += hops_to(c, dst);
    c.run->events++;
}

void api_sem_set_mcast(uint32_t src_l1, uint64_t dst, uint32_t num_dests, uint32_t flags) {
    Ctx &c = current();
    const char *op =
        (flags & 1) != 0 ? "noc_semaphore_set_multicast_loopback_src" : "noc_semaphore_set_multicast";
    const uint64_t rect = mcast_rect(dst);
    niu_request(c, op, &rect, (flags & 2) != 0);
    before_signal(c, op);
    uint32_t off = l1_offset(c, src_l1, op);
    check_l1_range(c, off, 4, op, "source");
    uint32_t v;
    memcpy(&v, core_of(c).l1 + off, 4);
    uint32_t doff = 0;
    std::vector<uint32_t> dests = mcast_dests(c, dst, num_dests, (flags & 1) != 0, op, &doff);
    check_l1_range(c, doff & ~15u, 16, op, "destination");
    for (uint32_t k : dests) {
        memcpy(dev_of(c).cores[k].l1 + doff, &v, 4);
        c.run->order->release(c.index, k, doff);
    }
    c.counters->noc_sem_ops++;
    c.counters->noc_hops += farthest(c, dests);
    c.run->events++;
}

void api_fail(const char *message) { kfail("%s: %s", who(current()).c_str(), message); }

void init_abi() {
    ttr_emu::Abi &a = g_abi;
    a.version = TTR_EMU_ABI_VERSION;
    a.arg_addr = api_arg_addr;
    a.common_arg_addr = api_common_arg_addr;
    a.compile_arg_out_of_range = api_compile_arg_oob;
    a.cb_reserve_back = api_cb_reserve_back;
    a.cb_push_back = api_cb_push_back;
    a.cb_wait_front = api_cb_wait_front;
    a.cb_pop_front = api_cb_pop_front;
    a.cb_write_ptr = api_cb_write_ptr;
    a.cb_read_ptr = api_cb_read_ptr;
    a.cb_tile_size = api_cb_tile_size;
    a.cb_pages_available_at_front = api_cb_pages_available_at_front;
    a.cb_pages_reservable_at_back = api_cb_pages_reservable_at_back;
    a.noc_xy_addr = api_noc_xy_addr;
    a.noc_local_addr = api_noc_local_addr;
    a.noc_mcast_addr = api_noc_mcast_addr;
    a.noc_page_addr = api_noc_page_addr;
    a.noc_read = api_noc_read;
    a.noc_write = api_noc_write;
    a.noc_write_mcast = api_noc_write_mcast;
    a.noc_read_barrier = api_noc_read_barrier;
    a.noc_write_barrier = api_noc_write_barrier;
    a.noc_writes_flushed = api_noc_write_barrier;
    a.noc_atomic_barrier = api_noc_atomic_barrier;
    a.my_noc_x = api_my_noc_x;
    a.my_noc_y = api_my_noc_y;
    a.noc_index = api_noc_index;
    a.semaphore_addr = api_semaphore_addr;
    a.sem_set = api_sem_set;
    a.sem_wait = api_sem_wait;
    a.sem_inc = api_sem_inc;
    a.sem_set_remote = api_sem_set_remote;
    a.sem_set_mcast = api_sem_set_mcast;
    a.fail = api_fail;
    fill_compute_abi(a);
}

// ---- scheduler ----

void end_checks(Ctx &c) {
    if (!c.reads.empty()) {
        kfail("%s ended with %zu NoC read(s) not waited for (noc_async_read_barrier missing)", who(c).c_str(),
              c.reads.size());
    }
    if (!c.writes.empty()) {
        kfail("%s ended with %zu NoC write(s) not completed (noc_async_write_barrier missing)", who(c).c_str(),
              c.writes.size());
    }
    if (c.cs && c.cs->regs != Regs::Idle) {
        kfail("%s ended holding the DST registers (tile_regs_release missing)", who(c).c_str());
    }
    if (c.def->build.role != TTR_ROLE_COMPUTE) {
        const LinkedTxn &t = c.run->linked[static_cast<size_t>(c.core) * 2 + c.def->build.noc];
        if (t.open && t.kernel == c.kernel) {
            kfail("%s ended with a linked multicast transaction open on NoC %u: its last multicast must be issued with "
                  "linked = false (NOC_CMD_VC_LINKED)",
                  who(c).c_str(), c.def->build.noc);
        }
    }
}

void trampoline() {
    Ctx &c = current();
    c.def->lib->run(&g_abi);
    end_checks(c);
    c.counters->runs++;
    c.state = CtxState::Done;
    c.run->events++;
    swapcontext(&c.uc, &c.run->sched);
    abort();
}

bool satisfied(Ctx &c) {
    const Wait &w = c.wait;
    switch (w.kind) {
        case WaitKind::CbFront:
            return cb_used(cb_state(c, w.cb)) >= w.pages;
        case WaitKind::CbBack: {
            const CbConfig &cfg = c.run->prog->cbs[c.core][w.cb];
            return cfg.pages - cb_used(cb_state(c, w.cb)) >= w.pages;
        }
        case WaitKind::SemEq:
            return *w.sem == w.value;
        case WaitKind::SemMin:
            return *w.sem >= w.value;
        default:
            return true;
    }
}

std::string describe_wait(Ctx &c) {
    const Wait &w = c.wait;
    switch (w.kind) {
        case WaitKind::CbFront:
            return fmt("waits in cb_wait_front(cb %u, %u): %u page(s) available", w.cb, w.pages,
                       cb_used(cb_state(c, w.cb)));
        case WaitKind::CbBack: {
            const CbConfig &cfg = c.run->prog->cbs[c.core][w.cb];
            return fmt("waits in cb_reserve_back(cb %u, %u): %u of %u page(s) free", w.cb, w.pages,
                       cfg.pages - cb_used(cb_state(c, w.cb)), cfg.pages);
        }
        case WaitKind::SemEq:
            return fmt("waits in noc_semaphore_wait(semaphore at L1 0x%x == %u): its value is %u", w.sem_addr, w.value,
                       *w.sem);
        case WaitKind::SemMin:
            return fmt("waits in noc_semaphore_wait_min(semaphore at L1 0x%x >= %u): its value is %u", w.sem_addr,
                       w.value, *w.sem);
        default:
            return "polls a CB without progress";
    }
}

void *take_stack(Device &d) {
    if (!d.stack_pool.empty()) {
        void *s = d.stack_pool.back();
        d.stack_pool.pop_back();
        return s;
    }
    void *s = mmap(nullptr, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s == MAP_FAILED) {
        throw HostError{TTR_ERR_INTERNAL, "cannot allocate a kernel stack"};
    }
    // A guard page at the low end turns a stack overflow into a fault instead of corruption.
    mprotect(s, 4096, PROT_NONE);
    return s;
}

ttr_status validate(Device &dev, Program &prog, const ArgTables &args, std::string *message) {
    uint64_t floor = dev.l1_alloc.lowest();
    for (uint32_t i = 0; i < dev.cores.size(); ++i) {
        if (prog.cb_end[i] > floor) {
            *message = fmt("the program's CBs on core (%u,%u) end at 0x%x, above the lowest L1 buffer at 0x%llx",
                           dev.cores[i].lx, dev.cores[i].ly, prog.cb_end[i], static_cast<unsigned long long>(floor));
            return TTR_ERR_OUT_OF_MEMORY;
        }
    }
    for (size_t k = 0; k < prog.kernels.size(); ++k) {
        for (uint32_t i = 0; i < dev.cores.size(); ++i) {
            if (prog.kernels[k].on_core[i] == 0) {
                continue;
            }
            size_t total = args.unique[k][i].size() + args.common[k].size();
            if (total > MAX_RTA) {
                *message = fmt("kernel '%s' on core (%u,%u) has %zu runtime args (unique + common); the limit is %u",
                               prog.kernels[k].build.name.c_str(), dev.cores[i].lx, dev.cores[i].ly, total, MAX_RTA);
                return TTR_ERR_INVALID_ARGUMENT;
            }
        }
    }
    return TTR_OK;
}

void write_words(uint8_t *dst, const std::vector<uint32_t> &words) {
    if (!words.empty()) {
        memcpy(dst, words.data(), words.size() * 4);
    }
}

}  // namespace

Ctx &current() { return *t_cur; }

void kfail(const char *format, ...) {
    Ctx &c = current();
    char buf[2048];
    va_list ap;
    va_start(ap, format);
    vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    if (!c.run->failed) {
        c.run->failed = true;
        c.run->error = buf;
    }
    c.state = CtxState::Done;
    swapcontext(&c.uc, &c.run->sched);
    abort();
}

std::string who(const Ctx &c) {
    const Core &k = c.run->dev->cores[c.core];
    return fmt("core (%u,%u) %s '%s'", k.lx, k.ly, role_name(c.def->build.role), c.def->build.name.c_str());
}

const CbConfig &cb_config(Ctx &c, int32_t cb, const char *op) {
    if (cb < 0 || static_cast<uint32_t>(cb) >= NUM_CBS) {
        kfail("%s: cb %d is out of range (0..%u) on %s", op, cb, NUM_CBS - 1, who(c).c_str());
    }
    const CbConfig &cfg = c.run->prog->cbs[c.core][static_cast<uint32_t>(cb)];
    if (!cfg.present) {
        kfail("%s: cb %d is not configured on %s", op, cb, who(c).c_str());
    }
    return cfg;
}

CbState &cb_state(Ctx &c, uint32_t cb) { return c.run->cbs[c.core * NUM_CBS + cb]; }

uint8_t *cb_read_tile(Ctx &c, uint32_t cb, uint32_t index, const char *op) {
    const CbConfig &cfg = cb_config(c, static_cast<int32_t>(cb), op);
    const CbState &s = cb_state(c, cb);
    if (index >= s.waited) {
        kfail("%s: reads tile %u of cb %u but only %u page(s) were waited for on %s", op, index, cb, s.waited,
              who(c).c_str());
    }
    if (s.rd_page + index >= cfg.pages) {
        kfail("%s: tile %u of cb %u runs past the end of the ring (read page %u of %u) on %s", op, index, cb,
              s.rd_page, cfg.pages, who(c).c_str());
    }
    return c.run->dev->cores[c.core].l1 + cfg.addr + (s.rd_page + index) * cfg.page;
}

uint8_t *cb_write_tile(Ctx &c, uint32_t cb, uint32_t index, const char *op) {
    const CbConfig &cfg = cb_config(c, static_cast<int32_t>(cb), op);
    const CbState &s = cb_state(c, cb);
    if (index >= s.reserved) {
        kfail("%s: writes tile %u of cb %u but only %u page(s) were reserved on %s", op, index, cb, s.reserved,
              who(c).c_str());
    }
    if (s.wr_page + index >= cfg.pages) {
        kfail("%s: tile %u of cb %u runs past the end of the ring (write page %u of %u) on %s", op, index, cb,
              s.wr_page, cfg.pages, who(c).c_str());
    }
    return c.run->dev->cores[c.core].l1 + cfg.addr + (s.wr_page + index) * cfg.page;
}

ttr_status run_program(Device &dev, Program &prog, const ArgTables &args, std::string *message) {
    std::call_once(g_abi_once, init_abi);
    ttr_status st = validate(dev, prog, args, message);
    if (st != TTR_OK) {
        return st;
    }
    const uint32_t ncores = static_cast<uint32_t>(dev.cores.size());
    Run run;
    run.dev = &dev;
    run.prog = &prog;
    run.cbs.resize(static_cast<size_t>(ncores) * NUM_CBS);
    run.linked.resize(static_cast<size_t>(ncores) * 2);
    const KernelConfigLayout config = layout_kernel_config(prog, args);
    run.sem_base = KERNEL_CONFIG_BASE + config.sem_offset;
    for (uint32_t i = 0; i < ncores; ++i) {
        bool used = !prog.sems[i].empty();
        for (uint32_t cb = 0; cb < NUM_CBS && !used; ++cb) {
            used = prog.cbs[i][cb].present;
        }
        for (const KernelDef &k : prog.kernels) {
            used = used || k.on_core[i] != 0;
        }
        if (used) {
            dev.touch(i);
        }
        for (const auto &[id, init] : prog.sems[i]) {
            memcpy(dev.cores[i].l1 + run.sem_base + id * SEM_STRIDE, &init, 4);
        }
    }
    // Contexts in a fixed order: cores row by row, then reader, compute, writer.
    static const ttr_kernel_role ORDER[3] = {TTR_ROLE_READER, TTR_ROLE_COMPUTE, TTR_ROLE_WRITER};
    size_t count = 0;
    for (const KernelDef &k : prog.kernels) {
        count += static_cast<size_t>(std::count(k.on_core.begin(), k.on_core.end(), 1));
    }
    run.ctxs.reserve(count);
    for (uint32_t i = 0; i < ncores; ++i) {
        for (ttr_kernel_role role : ORDER) {
            for (uint32_t k = 0; k < prog.kernels.size(); ++k) {
                const KernelDef &def = prog.kernels[k];
                if (def.build.role != role || def.on_core[i] == 0) {
                    continue;
                }
                run.ctxs.emplace_back();
                Ctx &c = run.ctxs.back();
                c.run = &run;
                c.index = static_cast<uint32_t>(run.ctxs.size() - 1);
                c.core = i;
                c.kernel = k;
                c.def = &def;
                c.counters = &prog.counters[k][i];
                c.args_off = KERNEL_CONFIG_BASE + config.args_offset[k][i];
                c.common_off = KERNEL_CONFIG_BASE + config.common_offset[k][i];
                c.num_args = static_cast<uint32_t>(args.unique[k][i].size());
                c.num_common = static_cast<uint32_t>(args.common[k].size());
                write_words(dev.cores[i].l1 + c.args_off, args.unique[k][i]);
                write_words(dev.cores[i].l1 + c.common_off, args.common[k]);
                if (role == TTR_ROLE_COMPUTE) {
                    c.cs.reset(new ComputeState);
                }
            }
        }
    }
    run.order = std::make_unique<Order>(static_cast<uint32_t>(run.ctxs.size()), ncores);
    for (Ctx &c : run.ctxs) {
        c.stack = take_stack(dev);
        getcontext(&c.uc);
        c.uc.uc_stack.ss_sp = c.stack;
        c.uc.uc_stack.ss_size = STACK_SIZE;
        c.uc.uc_link = nullptr;
        makecontext(&c.uc, trampoline, 0);
    }
    size_t remaining = run.ctxs.size();
    while (remaining > 0 && !run.failed) {
        bool progress = false;
        uint64_t events_before = run.events;
        for (Ctx &c : run.ctxs) {
            if (c.state == CtxState::Done) {
                continue;
            }
            if (c.state == CtxState::Blocked) {
                if (!satisfied(c)) {
                    continue;
                }
                if (c.wait.kind != WaitKind::Yield) {
                    progress = true;
                }
            } else {
                progress = true;
            }
            c.state = CtxState::Ready;
            t_cur = &c;
            swapcontext(&run.sched, &c.uc);
            t_cur = nullptr;
            if (run.failed) {
                break;
            }
            if (c.state == CtxState::Done) {
                --remaining;
            }
        }
        if (!run.failed && remaining > 0 && !progress && run.events == events_before) {
            std::string report = "deadlock: every unfinished kernel is blocked";
            for (Ctx &c : run.ctxs) {
                if (c.state != CtxState::Done) {
                    report += "\n  " + who(c) + " " + describe_wait(c);
                }
            }
            run.failed = true;
            run.error = report;
            st = TTR_ERR_DEADLOCK;
        }
    }
    for (Ctx &c : run.ctxs) {
        dev.stack_pool.push_back(c.stack);
    }
    if (run.failed) {
        *message = run.error;
        return st == TTR_OK ? TTR_ERR_KERNEL : st;
    }
    return TTR_OK;
}

}  // namespace ttr
