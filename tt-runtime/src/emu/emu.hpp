// Internal types of the Blackhole p150a emulator behind ttr.h.
//
// Layout of the model: a Device owns the L1 of every worker core (mapped below 4 GiB so kernels
// can turn L1 addresses into pointers), eight DRAM banks and the allocators. A Program holds
// kernels (JIT-compiled shared objects), CBs, semaphores and runtime args. A Run executes one
// program: every (core, kernel) pair becomes a cooperative context (ucontext) and a single-threaded
// round-robin scheduler resumes them when what they wait for holds, which makes runs deterministic
// and lets it report a deadlock instead of hanging.
#pragma once

#include <ucontext.h>

#include <array>
#include <cstring>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../../include/ttr.h"
#include "../../include/tt_emu_api/ttr_emu/abi.h"

namespace ttr {

// Geometry and memory map of one p150a.
constexpr uint32_t L1_SIZE = 1536 * 1024;
constexpr uint32_t L1_STRIDE = 2 * 1024 * 1024;  // host window per core; the gap is a guard
// L1 below L1_UNRESERVED_BASE, as the pinned tt-metal lays it out: firmware, mailboxes and fabric
// state up to MEM_MAP_END = 40 KiB (tt_metal/hw/inc/internal/tt-1xx/blackhole/dev_mem_map.h), then
// the kernel-config region, 69 KiB by default (default_l1_kernel_config_size in
// tt_metal/llrt/hal/tt-1xx/blackhole/bh_hal_tensix.cpp), which holds each program's runtime args,
// semaphores, CB configs and, on Blackhole, its kernel binaries; allocations start above it,
// 64-byte aligned (DEFAULT_UNRESERVED there): 1427 KiB of the 1536 remain.
constexpr uint32_t KERNEL_CONFIG_BASE = 40 * 1024;
constexpr uint32_t KERNEL_CONFIG_SIZE = 69 * 1024;
constexpr uint32_t L1_UNRESERVED_BASE = KERNEL_CONFIG_BASE + KERNEL_CONFIG_SIZE;
static_assert(L1_UNRESERVED_BASE % 64 == 0, "DEFAULT_UNRESERVED is aligned to the DRAM alignment");
constexpr uint32_t SEM_STRIDE = 16;  // one L1-aligned word per semaphore (finalize_sems)
constexpr uint32_t MAX_SEMS = 16;
constexpr uint32_t CB_CONFIG_BYTES = 16;  // UINT32_WORDS_PER_LOCAL_CIRCULAR_BUFFER_CONFIG words per CB id
constexpr uint32_t NUM_CBS = 64;
constexpr uint32_t MAX_RTA = 341;
constexpr uint32_t L1_ALIGN = 16;
constexpr uint32_t DRAM_READ_ALIGN = 64;
constexpr uint32_t DRAM_WRITE_ALIGN = 16;
constexpr uint32_t DRAM_BANKS = 8;
constexpr uint64_t DRAM_BANK_SIZE = 4ull << 30;
constexpr uint32_t DRAM_BASE = 64;
constexpr uint32_t GRID_Y = 10;
constexpr uint32_t TILE = 1024;
constexpr uint32_t NOC_GRID = 64;
// Blackhole's NoC is a 17 x 12 torus (tt-isa-documentation BlackholeA0 NoC): hop counts wrap at these.
constexpr uint32_t NOC_TORUS_X = 17;
constexpr uint32_t NOC_TORUS_Y = 12;
constexpr uint32_t STACK_SIZE = 512 * 1024;
constexpr uint32_t MAX_DEVICES = 64;

// A host-side failure carried to the C API boundary.
struct HostError {
    ttr_status code;
    std::string message;
};

// Devices the emulator presents: the count set by set_device_count, else $TTR_EMU_DEVICES, else 1.
// Throws HostError when $TTR_EMU_DEVICES is not a count of 1..MAX_DEVICES.
uint32_t device_count();
void set_device_count(uint32_t count);  // throws HostError outside 1..MAX_DEVICES

// printf-style formatting into a std::string.
std::string fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));

const char *role_name(ttr_kernel_role role);
uint32_t tile_bytes(uint32_t format);  // 0 when the format has no tile size here
const char *format_name(uint32_t format);

// A loaded kernel shared object.
struct KernelLib {
    void *handle = nullptr;
    void (*run)(const ttr_emu::Abi *) = nullptr;
    ~KernelLib();
};

struct KernelBuild {
    std::string name;
    std::string source;
    ttr_kernel_role role;
    std::vector<uint32_t> compile_args;
    std::vector<std::pair<std::string, std::string>> defines;
    ttr_fidelity fidelity;
    bool fp32_dest;
    bool approx;
    uint32_t noc;
    std::array<uint8_t, NUM_CBS> unpack_to_dest{};  // ttr_unpack_to_dest_mode per CB id
};

// Compiles (or finds in the disk cache) and loads a kernel. Throws HostError.
std::shared_ptr<KernelLib> load_kernel(const KernelBuild &build);

struct Core {
    uint32_t lx, ly;  // logical
    uint32_t nx, ny;  // NoC
    uint8_t *l1;      // host window
};

// A NoC endpoint: a worker core or a DRAM bank.
struct Endpoint {
    int32_t core = -1;
    int32_t bank = -1;
};

class Device;

// Interval allocator over [lo, hi) with fixed alignment.
class RangeAllocator {
  public:
    RangeAllocator(uint64_t lo, uint64_t hi, uint64_t align, bool top_down);
    bool allocate(uint64_t size, uint64_t *addr);
    void release(uint64_t addr);
    // Whether [addr, addr + size) lies within one allocation.
    bool contains(uint64_t addr, uint64_t size) const;
    uint64_t lowest() const;  // hi when empty
    uint64_t highest_end() const;  // lo when empty

  private:
    uint64_t lo_, hi_, align_;
    bool top_down_;
    std::map<uint64_t, uint64_t> used_;  // start -> size
};

struct Buffer {
    std::shared_ptr<Device> device;
    bool dram = true;
    uint64_t size = 0;
    uint32_t page_size = 0;
    uint32_t address = 0;
    ~Buffer();
};

struct CbConfig {
    bool present = false;
    uint32_t addr = 0, total = 0, page = 0, pages = 0, format = 0;
};

struct KernelDef {
    KernelBuild build;
    std::shared_ptr<KernelLib> lib;
    std::vector<uint8_t> on_core;  // per core index
};

// Runtime args of every kernel: unique per core, and common.
struct ArgTables {
    std::vector<std::vector<std::vector<uint32_t>>> unique;  // [kernel][core]
    std::vector<std::vector<uint32_t>> common;               // [kernel]
};

struct Program {
    std::shared_ptr<Device> device;
    std::vector<KernelDef> kernels;
    std::vector<std::array<CbConfig, NUM_CBS>> cbs;              // [core][id]
    std::vector<uint32_t> cb_end;                                // [core] first L1 address past the CBs
    // [core] the [lo, hi) of each CB placed in an L1 buffer: NoC writes there are checked against the CBs as
    // writes below cb_end are (each CB's own bytes, not the span between two of them: a buffer holding a CB
    // at an offset may hold other data around it).
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> buffer_cbs;
    std::vector<std::shared_ptr<Buffer>> cb_buffers;  // the L1 buffers those CBs live in, kept allocated
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> sems;  // [core] (id, initial)
    ArgTables args;
    std::vector<std::vector<ttr_counters>> counters;  // [kernel][core]
    ttr_occupancy occupancy{};                          // NoC links and DRAM banks, every kernel and core
    bool ran = false;
};

// A recorded program launch.
struct TraceItem {
    std::shared_ptr<Program> program;
    ArgTables args;
};

struct Trace {
    std::shared_ptr<Device> device;
    std::vector<TraceItem> items;
    bool ended = false;
};

class Device {
  public:
    Device(uint32_t device_id, ttr_dispatch dispatch);
    ~Device();
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;

    std::mutex mu;
    uint32_t gx, gy;
    ttr_dispatch dispatch;
    std::vector<Core> cores;
    std::array<ttr_core, DRAM_BANKS> dram_noc;
    std::array<std::vector<uint8_t>, DRAM_BANKS> banks;
    RangeAllocator dram_alloc;
    RangeAllocator l1_alloc;
    Trace *capturing = nullptr;
    std::vector<void *> stack_pool;
    const uint32_t id;
    // Fault injection (ttr_emu_fail_after): programs that may still run, when armed; once lost, the
    // message every later run, finish and transfer fails with.
    bool fault_armed = false;
    uint64_t launches_left = 0;
    std::string lost;

    // Throws TTR_ERR_DEVICE_LOST once the device is lost.
    void check_alive() const;
    // Counts one program run against an armed fault; the run that exceeds it loses the device.
    void count_launch();

    int32_t core_index(uint32_t lx, uint32_t ly) const;  // -1 when outside the grid
    const Endpoint &endpoint(uint32_t nx, uint32_t ny) const;
    // Fills a core's L1 with 0xFF (NaN) the first time anything uses it; L1 then keeps its
    // contents across programs, as on the device.
    void touch(uint32_t core);
    uint32_t window(uint32_t core) const;  // host address of core's L1, as kernels see it
    void grow_banks(uint64_t end);

  private:
    uint8_t *region_ = nullptr;
    size_t region_len_ = 0;
    std::vector<Endpoint> endpoints_;  // NOC_GRID * NOC_GRID
    std::vector<uint8_t> touched_;     // per core
};

// Offsets in the kernel-config region (from KERNEL_CONFIG_BASE) of a run's runtime args and
// semaphores (kernel_config.cpp).
struct KernelConfigLayout {
    std::vector<std::vector<uint32_t>> args_offset;    // [kernel][core] unique runtime args
    std::vector<std::vector<uint32_t>> common_offset;  // [kernel][core] common runtime args
    uint32_t sem_offset = 0;                           // semaphore id 0; SEM_STRIDE apart
};
KernelConfigLayout layout_kernel_config(const Program &prog, const ArgTables &args);

// Runs a program to completion. Returns TTR_OK or an error code with *message set.
ttr_status run_program(Device &dev, Program &prog, const ArgTables &args, std::string *message);

// Tile numerics shared by the compute model.
namespace num {
inline uint32_t bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
inline float from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
// Denormal -> signed zero (branch-free so loops over tiles vectorise).
inline float flush(float x) {
    uint32_t u = bits(x);
    uint32_t keep = (u & 0x7F800000u) != 0 ? 0xFFFFFFFFu : 0x80000000u;
    return from_bits(u & keep);
}
// Rounds to bf16 as the FPU writes a 16-bit DST: to nearest, ties away from zero, denormals to
// signed zero, NaN stays NaN.
inline uint16_t f32_to_bf16(float x) {
    uint32_t u = bits(x);
    uint32_t exp = u & 0x7F800000u;
    if (exp == 0) {
        return static_cast<uint16_t>((u & 0x80000000u) >> 16);
    }
    if (exp == 0x7F800000u) {
        if ((u & 0x007FFFFFu) != 0) {
            return static_cast<uint16_t>(((u & 0x80000000u) >> 16) | 0x7FC0u);
        }
        return static_cast<uint16_t>(u >> 16);
    }
    // Adding half an ulp to the magnitude and truncating rounds ties away from zero; a carry into
    // the exponent is the correct result, up to infinity.
    return static_cast<uint16_t>((u + 0x8000u) >> 16);
}
// bf16 -> f32, flushing denormals.
inline float bf16_to_f32(uint16_t h) { return flush(from_bits(static_cast<uint32_t>(h) << 16)); }
// The packer's early conversion to BF16 by rounding (tt-isa-documentation, Packers/
// FormatConversion.md, "Rounding"; Blackhole shares the Wormhole packer pipeline): to nearest, ties
// away from zero; denormals flush to zero and minus zero becomes plus zero, so both give 0x0000; NaN
// becomes infinity (its sign bit kept: only the exponent and mantissa are rounded).
inline uint16_t pack_bf16(float x) {
    uint32_t u = bits(x);
    uint32_t exp = u & 0x7F800000u;
    if (exp == 0) {
        return 0;
    }
    if (exp == 0x7F800000u) {
        return static_cast<uint16_t>((u >> 16) & 0xFF80u);
    }
    return static_cast<uint16_t>((u + 0x8000u) >> 16);
}
// What a Float32 datum becomes on its way into SrcA/SrcB (UNPACR FormatConversion, tt-isa-documentation
// WormholeB0 UNPACR_Regular.md, which Blackhole shares): with an fp32 DST tt-metal unpacks Float32
// CBs as TF32, the top 19 bits (sign, exponent and 10 mantissa bits: `DatumBits >> 13`, a truncation);
// without one as BF16 (denormals to signed zero, then the top 16 bits: truncation again). The FPU
// reads a denormal Src datum as signed zero (FloatBitPatterns.md).
inline float src_tf32(float x) { return flush(from_bits(bits(x) & 0xFFFFE000u)); }
inline float src_bf16(float x) { return flush(from_bits(bits(x) & 0xFFFF0000u)); }
// A DST value after the packer's early conversion for an L1 output of `format`: Float16_b rounds
// (pack_bf16); Float32 is the identity from an fp32 DST (bits kept: -0, NaN and denormals survive)
// and, from a 16-bit DST, the same BF16 rounding (the early conversion stays at BF16 and the late one
// only widens, FormatConversion.md; tt-metal packs a 16-bit DST with Read_32b_data off and Read_raw
// off, llk cpack_common.h).
inline float pack_value(float x, uint32_t format, bool fp32_dest) {
    if (format == TTR_FORMAT_FLOAT32 && fp32_dest) {
        return x;
    }
    return from_bits(static_cast<uint32_t>(pack_bf16(x)) << 16);
}
// Reads one tile (faced, in `format`) into row-major f32, denormals read as signed zero.
void load_tile(const uint8_t *src, uint32_t format, float *out);
// Reads one Float32 tile into row-major f32 bit for bit (the unpacker writing DST directly).
void load_tile_exact(const uint8_t *src, float *out);
// Writes a row-major DST tile into L1 (faced, in `format`) through the packer's conversions
// (pack_value, then the late conversion to `format`).
void store_tile(const float *in, uint32_t format, bool fp32_dest, uint8_t *dst);
// c[32x32] += a[32 x k0..k1] * b[k0..k1 x 32], all row-major.
void matmul_acc(float *c, const float *a, const float *b, uint32_t k0, uint32_t k1);
}  // namespace num

}  // namespace ttr
