// The emulated p150a: core grid and NoC coordinates, L1 windows, DRAM banks, allocators, buffers.
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "emu.hpp"

namespace ttr {

namespace {
// NoC x of each logical column: Tensix columns 1-7 and 10-16 of the 17-wide NoC, the last two
// harvested; x = 0 and x = 9 hold DRAM, x = 8 the L2CPU.
constexpr uint32_t NOC_X[12] = {1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14};
constexpr uint32_t NOC_Y_OFFSET = 2;
const Endpoint NO_ENDPOINT{};
// 0 until set_device_count: then $TTR_EMU_DEVICES decides.
std::atomic<uint32_t> g_device_count{0};
}  // namespace

uint32_t device_count() {
    uint32_t set = g_device_count.load();
    if (set != 0) {
        return set;
    }
    const char *env = getenv("TTR_EMU_DEVICES");
    if (env == nullptr || *env == '\0') {
        return 1;
    }
    char *end = nullptr;
    errno = 0;
    unsigned long n = strtoul(env, &end, 10);
    if (errno != 0 || *end != '\0' || env[0] == '-' || n == 0 || n > MAX_DEVICES) {
        throw HostError{TTR_ERR_INVALID_ARGUMENT,
                        fmt("TTR_EMU_DEVICES=%s: give the number of emulated devices, 1 to %u", env, MAX_DEVICES)};
    }
    return static_cast<uint32_t>(n);
}

void set_device_count(uint32_t count) {
    if (count == 0 || count > MAX_DEVICES) {
        throw HostError{TTR_ERR_INVALID_ARGUMENT,
                        fmt("the emulator presents 1 to %u devices, not %u", MAX_DEVICES, count)};
    }
    g_device_count.store(count);
}

std::string fmt(const char *format, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    if (n < 0) {
        return std::string(format);
    }
    return std::string(buf);
}

const char *role_name(ttr_kernel_role role) {
    switch (role) {
        case TTR_ROLE_READER:
            return "reader";
        case TTR_ROLE_WRITER:
            return "writer";
        default:
            return "compute";
    }
}

uint32_t tile_bytes(uint32_t format) {
    switch (format) {
        case TTR_FORMAT_FLOAT16_B:
            return 2048;
        case TTR_FORMAT_FLOAT32:
        case TTR_FORMAT_UINT32:
            return 4096;
        case TTR_FORMAT_BFP8_B:
            return 1088;
        default:
            return 0;
    }
}

const char *format_name(uint32_t format) {
    switch (format) {
        case TTR_FORMAT_FLOAT16_B:
            return "Float16_b";
        case TTR_FORMAT_FLOAT32:
            return "Float32";
        case TTR_FORMAT_UINT32:
            return "UInt32";
        case TTR_FORMAT_BFP8_B:
            return "Bfp8_b";
        default:
            return "unknown";
    }
}

RangeAllocator::RangeAllocator(uint64_t lo, uint64_t hi, uint64_t align, bool top_down)
    : lo_(lo), hi_(hi), align_(align), top_down_(top_down) {}

bool RangeAllocator::allocate(uint64_t size, uint64_t *addr) {
    if (size == 0) {
        size = align_;
    }
    uint64_t rounded = (size + align_ - 1) / align_ * align_;
    if (rounded > hi_ - lo_) {
        return false;
    }
    if (!top_down_) {
        uint64_t cursor = lo_;
        for (const auto &[start, len] : used_) {
            if (start >= cursor && start - cursor >= rounded) {
                break;
            }
            cursor = (start + len + align_ - 1) / align_ * align_;
        }
        if (cursor + rounded > hi_) {
            return false;
        }
        used_[cursor] = rounded;
        *addr = cursor;
        return true;
    }
    uint64_t ceiling = hi_;
    for (auto it = used_.rbegin(); it != used_.rend(); ++it) {
        uint64_t end = it->first + it->second;
        if (ceiling >= end && ceiling - end >= rounded) {
            break;
        }
        ceiling = it->first;
    }
    if (ceiling < lo_ + rounded) {
        return false;
    }
    uint64_t start = (ceiling - rounded) / align_ * align_;
    used_[start] = rounded;
    *addr = start;
    return true;
}

void RangeAllocator::release(uint64_t addr) { used_.erase(addr); }

bool RangeAllocator::contains(uint64_t addr, uint64_t size) const {
    auto it = used_.upper_bound(addr);
    if (it == used_.begin()) {
        return false;
    }
    --it;
    return addr >= it->first && addr + size <= it->first + it->second;
}

uint64_t RangeAllocator::lowest() const { return used_.empty() ? hi_ : used_.begin()->first; }

uint64_t RangeAllocator::highest_end() const {
    return used_.empty() ? lo_ : used_.rbegin()->first + used_.rbegin()->second;
}

Device::Device(uint32_t device_id, ttr_dispatch disp)
    : gx(disp == TTR_DISPATCH_ETH ? 12 : 11),
      gy(GRID_Y),
      dispatch(disp),
      dram_alloc(DRAM_BASE, DRAM_BANK_SIZE, DRAM_READ_ALIGN, false),
      l1_alloc(L1_UNRESERVED_BASE, L1_SIZE, L1_ALIGN, true),
      id(device_id),
      endpoints_(NOC_GRID * NOC_GRID) {
    uint32_t count = device_count();
    if (device_id >= count) {
        throw HostError{TTR_ERR_NO_DEVICE,
                        fmt("no device %u: the emulator presents %u device%s (ids 0 to %u); set TTR_EMU_DEVICES=%u "
                            "to emulate %u",
                            device_id, count, count == 1 ? "" : "s", count - 1, device_id + 1, device_id + 1)};
    }
    uint32_t n = gx * gy;
    region_len_ = static_cast<size_t>(n) * L1_STRIDE;
    // Kernels hold L1 addresses in 32 bits, so the windows must sit below 4 GiB.
    for (uint64_t hint = 0x10000000; hint + region_len_ <= 0xF0000000ull; hint += 0x10000000) {
        void *p = mmap(reinterpret_cast<void *>(hint), region_len_, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == MAP_FAILED) {
            continue;
        }
        if (reinterpret_cast<uint64_t>(p) != hint) {
            munmap(p, region_len_);
            continue;
        }
        region_ = static_cast<uint8_t *>(p);
        break;
    }
    if (region_ == nullptr) {
        throw HostError{TTR_ERR_INTERNAL, "cannot map the emulated L1 below 4 GiB"};
    }
    for (uint32_t y = 0; y < gy; ++y) {
        for (uint32_t x = 0; x < gx; ++x) {
            uint32_t idx = y * gx + x;
            uint8_t *l1 = region_ + static_cast<size_t>(idx) * L1_STRIDE;
            if (mprotect(l1, L1_SIZE, PROT_READ | PROT_WRITE) != 0) {
                munmap(region_, region_len_);
                throw HostError{TTR_ERR_INTERNAL, "cannot map the emulated L1"};
            }
            cores.push_back(Core{x, y, NOC_X[x], y + NOC_Y_OFFSET, l1});
            endpoints_[(y + NOC_Y_OFFSET) * NOC_GRID + NOC_X[x]].core = static_cast<int32_t>(idx);
        }
    }
    touched_.assign(cores.size(), 0);
    for (uint32_t b = 0; b < DRAM_BANKS; ++b) {
        dram_noc[b] = ttr_core{b < 4 ? 0u : 9u, 2 + (b % 4) * 3};
        endpoints_[dram_noc[b].y * NOC_GRID + dram_noc[b].x].bank = static_cast<int32_t>(b);
    }
}

Device::~Device() {
    for (void *s : stack_pool) {
        munmap(s, STACK_SIZE);
    }
    if (region_ != nullptr) {
        munmap(region_, region_len_);
    }
}

void Device::check_alive() const {
    if (!lost.empty()) {
        throw HostError{TTR_ERR_DEVICE_LOST, lost};
    }
}

void Device::count_launch() {
    check_alive();
    if (!fault_armed) {
        return;
    }
    if (launches_left == 0) {
        lost = fmt("emulated device %u stopped responding (a fault injected with ttr_emu_fail_after)", id);
        check_alive();
    }
    --launches_left;
}

int32_t Device::core_index(uint32_t lx, uint32_t ly) const {
    if (lx >= gx || ly >= gy) {
        return -1;
    }
    return static_cast<int32_t>(ly * gx + lx);
}

const Endpoint &Device::endpoint(uint32_t nx, uint32_t ny) const {
    if (nx >= NOC_GRID || ny >= NOC_GRID) {
        return NO_ENDPOINT;
    }
    return endpoints_[ny * NOC_GRID + nx];
}

void Device::touch(uint32_t core) {
    if (touched_[core] == 0) {
        // Uninitialised memory reads as 0xFF bytes: NaN in bf16 and fp32.
        memset(cores[core].l1, 0xFF, L1_SIZE);
        touched_[core] = 1;
    }
}

uint32_t Device::window(uint32_t core) const {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(cores[core].l1));
}

void Device::grow_banks(uint64_t end) {
    for (auto &bank : banks) {
        if (bank.size() < end) {
            // Fresh DRAM reads as 0xFF bytes (NaN).
            bank.resize(end, 0xFF);
        }
    }
}

Buffer::~Buffer() {
    std::lock_guard<std::mutex> lock(device->mu);
    if (dram) {
        device->dram_alloc.release(address);
    } else {
        device->l1_alloc.release(address);
    }
}

}  // namespace ttr
