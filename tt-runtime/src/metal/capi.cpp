// The ttr.h entry points implemented on the tt-metal host API (cargo feature `metal`).
//
// STATUS: compiled and linked in CI (scripts/metal-check.sh) against the host headers in
// third_party/tt-metal-host-headers (a tt-metal tree of 2026-06-23 with the 0.78 wheel's own copies
// laid over it; see its PROVENANCE) and the libraries of the ttnn 0.78.0 wheel, the release of the
// pin (8b98410e730, v0.78.0-dev20260820). That check proves every tt-metal function called here is
// exported by the 0.78 libtt_metal.so with the same mangled signature, and that opening a device
// without a card fails with TTR_ERR_NO_DEVICE. NOTHING here has run on silicon.
//
// tt-metal API used -> header declaring it (paths relative to $TT_METAL_HOME):
//   distributed::MeshDevice::create_unit_mesh(device_id, l1_small_size, trace_region_size,
//       num_command_queues, DispatchCoreConfig), compute_with_storage_grid_size(),
//       worker_core_from_logical_core(), virtual_core_from_logical_core(coord, CoreType),
//       l1_size_per_core(), allocator(), mesh_command_queue(cq_id), get_device(row, col), shape(),
//       close(), begin_mesh_trace(cq_id), end_mesh_trace(cq_id, id), replay_mesh_trace(cq_id, id,
//       blocking), release_mesh_trace(id)
//                                   tt_metal/api/tt-metalium/mesh_device.hpp
//   DEFAULT_L1_SMALL_SIZE           tt_metal/hostdevcommon/api/hostdevcommon/common_values.hpp
//                                   (the default argument of create_unit_mesh in mesh_device.hpp)
//   DispatchCoreConfig(DispatchCoreType), DispatchCoreType::{WORKER, ETH}
//                                   tt_metal/api/tt-metalium/dispatch_core_common.hpp
//   distributed::MeshBuffer::create(MeshBufferConfig, DeviceLocalBufferConfig, MeshDevice*),
//       MeshBuffer::address(), MeshBuffer::get_reference_buffer(), ReplicatedBufferConfig{size},
//       DeviceLocalBufferConfig{page_size, buffer_type}
//                                   tt_metal/api/tt-metalium/mesh_buffer.hpp
//   BufferType::{DRAM, L1}          tt_metal/api/tt-metalium/buffer_types.hpp (via mesh_buffer.hpp)
//   distributed::EnqueueWriteMeshBuffer(cq, buf, vec, blocking), EnqueueReadMeshBuffer(cq, vec, buf,
//       blocking), EnqueueMeshWorkload(cq, workload, blocking), Finish(cq)
//                                   tt_metal/api/tt-metalium/distributed.hpp
//   distributed::MeshWorkload(), add_program(range, Program&&), get_programs()
//                                   tt_metal/api/tt-metalium/mesh_workload.hpp
//   distributed::MeshCoordinateRange(const MeshShape&)
//                                   tt_metal/api/tt-metalium/mesh_coord.hpp
//   distributed::MeshTraceId        tt_metal/api/tt-metalium/mesh_trace_id.hpp
//   Program, CreateProgram(), CreateKernelFromString(program, source, cores, config),
//       CreateCircularBuffer(program, cores, config), CreateSemaphore(program, cores, initial),
//       SetRuntimeArgs(program, kernel, core, Span<const uint32_t>),
//       SetCommonRuntimeArgs(program, kernel, Span<const uint32_t>)
//                                   tt_metal/api/tt-metalium/host_api.hpp
//   DataMovementConfig{processor, noc, compile_args, defines}, ComputeConfig{math_fidelity,
//       fp32_dest_acc_en, dst_full_sync_en, unpack_to_dest_mode, math_approx_mode, compile_args, defines},
//       DataMovementProcessor::{RISCV_0, RISCV_1}, NOC::{NOC_0, NOC_1}, KernelHandle,
//       max_runtime_args (= 341)    tt_metal/api/tt-metalium/kernel_types.hpp
//                                   (older trees: DataMovementProcessor/NOC in data_types.hpp,
//                                   which kernel_types.hpp includes)
//   GetNumAvailableDevices()       tt_metal/api/tt-metalium/host_api.hpp
//   MathFidelity::{LoFi, HiFi2, HiFi3, HiFi4}, UnpackToDestMode::{UnpackToDestFp32, Default}
//                                   tt_metal/api/tt-metalium/base_types.hpp
//   CircularBufferConfig(total_size, std::map<uint8_t, tt::DataFormat>), set_page_size(index, bytes),
//       set_globally_allocated_address(const Buffer&), set_address_offset(offset)
//                                   tt_metal/api/tt-metalium/circular_buffer_config.hpp
//   tt::DataFormat::{Float32, Float16_b, Bfp8_b, UInt32}
//                                   tt_metal/api/tt-metalium/tt_backend_api_types.hpp (included by
//                                   circular_buffer_config.hpp)
//   CoreCoord, CoreRange(start, end), CoreRangeSet(const std::set<CoreRange>&)
//                                   tt_metal/api/tt-metalium/core_coord.hpp
//   Allocator::get_num_banks(BufferType), get_base_allocator_addr(HalMemType), get_alignment(BufferType),
//       get_bank_ids_from_logical_core(BufferType, core), get_bank_offset(BufferType, bank)
//                                   tt_metal/api/tt-metalium/allocator.hpp
//   HalMemType::L1                  tt_metal/api/tt-metalium/hal_types.hpp
//   detail::WriteToDeviceL1(IDevice*, core, address, std::vector<uint32_t>&),
//       detail::ReadFromDeviceL1(IDevice*, core, address, size, std::vector<uint32_t>&)
//                                   tt_metal/api/tt-metalium/tt_metal.hpp
//   CoreType::DRAM                  UMD, tt_metal/third_party/umd/device/api/umd/device/types/
//                                   core_coordinates.hpp (re-exported through mesh_device.hpp)
//
// What the hardware backend cannot do that the emulator does: count work (the counters queries
// return TTR_ERR_UNSUPPORTED), detect CB protocol violations, out-of-bounds or misaligned NoC
// accesses, or name a deadlock: a hung kernel makes tt-metal's dispatch wait time out
// (TT_METAL_OPERATION_TIMEOUT_SECONDS, 30 s unless set; device_lost.hpp), and the device is then
// lost (TTR_ERR_DEVICE_LOST from that call and every later run, finish and host transfer). Kernels are compiled by
// tt-metal's JIT at the first enqueue of a program, not at ttr_program_add_kernel, so compile errors
// surface as TTR_ERR_COMPILE from ttr_enqueue_program.
//
// No exception crosses the C boundary: every entry point runs inside guard().

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <tt-metalium/allocator.hpp>
#include <tt-metalium/circular_buffer_config.hpp>
#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/dispatch_core_common.hpp>
#include <tt-metalium/distributed.hpp>
#include <tt-metalium/host_api.hpp>
#include <tt-metalium/kernel_types.hpp>
#include <tt-metalium/mesh_buffer.hpp>
#include <tt-metalium/mesh_coord.hpp>
#include <tt-metalium/mesh_device.hpp>
#include <tt-metalium/mesh_workload.hpp>
#include <tt-metalium/tt_metal.hpp>

#include "../../include/ttr.h"
#include "../common/cb_in_buffer.hpp"
#include "device_lost.hpp"

// Declared inside tt-metal's namespace so that `CoreType` and `DEFAULT_L1_SMALL_SIZE` are looked up
// exactly as mesh_device.hpp looks them up (UMD re-exports CoreType there).
namespace tt::tt_metal::distributed {
// The L1-small default of create_unit_mesh, named as mesh_device.hpp names it.
static constexpr size_t ttr_default_l1_small_size = DEFAULT_L1_SMALL_SIZE;
static CoreCoord ttr_dram_core(const MeshDevice &mesh, uint32_t bank) {
    // Blackhole interleaves DRAM over one bank per channel, so bank b is logical DRAM core (b, 0).
    return mesh.virtual_core_from_logical_core(CoreCoord(bank, 0), CoreType::DRAM);
}
}  // namespace tt::tt_metal::distributed

namespace ttm = tt::tt_metal;  // not `tm`: that is the C library's struct tm
namespace dist = tt::tt_metal::distributed;

namespace {

// Blackhole p150a facts that the host API does not expose as a query we could verify.
constexpr uint32_t BH_MAX_CBS = 64;           // NUM_CIRCULAR_BUFFERS on Blackhole
// A p150a's compute grid: 12 columns of 10 with dispatch on ETH cores, 11 with a Tensix dispatch column.
constexpr uint32_t P150A_GRID_X_ETH = 12;
constexpr uint32_t P150A_GRID_X_TENSIX = 11;
constexpr uint32_t P150A_GRID_Y = 10;
constexpr uint32_t MAX_RTA = ttm::max_runtime_args;  // kernel_types.hpp: 341
constexpr uint8_t CQ_ID = 0;
// The trace region is 0 bytes by default; the port used 32 MiB. Override: TTR_METAL_TRACE_REGION_BYTES.
constexpr size_t DEFAULT_TRACE_REGION = 32u << 20;

struct HostError {
    ttr_status code;
    std::string message;
};

std::string strf(const char *format, ...) __attribute__((format(printf, 1, 2)));
std::string strf(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    char small[512];
    int n = vsnprintf(small, sizeof small, format, ap);
    va_end(ap);
    if (n < 0) {
        return format;
    }
    if (static_cast<size_t>(n) < sizeof small) {
        return std::string(small, static_cast<size_t>(n));
    }
    std::string out(static_cast<size_t>(n) + 1, '\0');
    va_start(ap, format);
    vsnprintf(out.data(), out.size(), format, ap);
    va_end(ap);
    out.resize(static_cast<size_t>(n));
    return out;
}

thread_local std::string t_last_error;

// Runs f, turning every C++ exception into a status code and the thread's last-error message.
// Exceptions thrown by tt-metal itself (TT_FATAL / TT_THROW raise std::runtime_error) get `tt_code`.
template <typename F>
ttr_status guard(ttr_status tt_code, F &&f) {
    t_last_error.clear();
    try {
        f();
        return TTR_OK;
    } catch (const HostError &e) {
        t_last_error = e.message;
        return e.code;
    } catch (const std::bad_alloc &) {
        t_last_error = "host out of memory";
        return TTR_ERR_INTERNAL;
    } catch (const std::exception &e) {
        t_last_error = std::string("tt-metal: ") + e.what();
        return tt_code;
    } catch (...) {
        t_last_error = "tt-metal threw an unknown C++ exception";
        return TTR_ERR_INTERNAL;
    }
}

[[noreturn]] void bad(const std::string &message) { throw HostError{TTR_ERR_INVALID_ARGUMENT, message}; }

void need(const void *p, const char *what) {
    if (p == nullptr) {
        bad(strf("%s is null", what));
    }
}

bool has_text(const std::string &s, const char *needle) { return s.find(needle) != std::string::npos; }

// Which status a tt-metal failure during buffer allocation means.
ttr_status alloc_code(const std::string &what) {
    return has_text(what, "Out of Memory") || has_text(what, "out of memory") || has_text(what, "Not enough space")
               ? TTR_ERR_OUT_OF_MEMORY
               : TTR_ERR_INVALID_ARGUMENT;
}

// Which status a tt-metal failure at enqueue means. tt-metal compiles kernels and places CBs when a
// program is first enqueued; its messages are matched loosely (they are not a stable interface).
ttr_status enqueue_code(const std::string &what) {
    if (has_text(what, "build failed") || has_text(what, "Build failed") || has_text(what, "compile") ||
        has_text(what, "Compile") || has_text(what, "error:")) {
        return TTR_ERR_COMPILE;
    }
    if (has_text(what, "beyond max L1") || has_text(what, "Out of Memory") || has_text(what, "clash")) {
        return TTR_ERR_OUT_OF_MEMORY;
    }
    return TTR_ERR_INTERNAL;
}

struct MTrace;

struct MDevice {
    std::mutex mu;
    std::shared_ptr<dist::MeshDevice> mesh;
    uint32_t id = 0;
    // Once tt-metal reported the device hung: why. Every later run, finish and host transfer fails
    // with it (TTR_ERR_DEVICE_LOST), as the emulator's lost devices do.
    std::string lost;
    ttr_dispatch dispatch = TTR_DISPATCH_TENSIX;
    ttr_device_info info{};
    uint32_t gx = 0, gy = 0;
    MTrace *capturing = nullptr;

    MDevice() = default;
    MDevice(const MDevice &) = delete;
    MDevice &operator=(const MDevice &) = delete;
    ~MDevice() {
        if (mesh) {
            try {
                mesh->close();
            } catch (...) {
                // Nothing can be reported from a destructor; the process is shutting the card down.
            }
        }
    }

    int32_t core_index(uint32_t x, uint32_t y) const {
        return x < gx && y < gy ? static_cast<int32_t>(y * gx + x) : -1;
    }
    dist::MeshCommandQueue &cq() const { return mesh->mesh_command_queue(CQ_ID); }
    // The one physical device of the unit mesh (for the direct L1 access helpers).
    ttm::IDevice *chip() const { return mesh->get_device(static_cast<size_t>(0), static_cast<size_t>(0)); }
};

// Runs f, which waits on the device `d` (a run, a finish, a host transfer); the caller holds d.mu.
// A lost device fails at once; a tt-metal exception that reports a hang (device_lost.hpp) makes the
// device lost. Other exceptions pass through to the caller's handling.
template <typename F>
void on_card(MDevice &d, const char *op, F &&f) {
    if (!d.lost.empty()) {
        throw HostError{TTR_ERR_DEVICE_LOST, d.lost};
    }
    try {
        f();
    } catch (const HostError &) {
        throw;
    } catch (const std::exception &e) {
        if (!ttr_metal::reports_hang(e.what())) {
            throw;
        }
        d.lost = strf("device %u stopped responding during %s (tt-metal: %s); close it and reset the card "
                      "(tt-smi -r) before opening it again",
                      d.id, op, e.what());
        throw HostError{TTR_ERR_DEVICE_LOST, d.lost};
    }
}

struct MBuffer {
    std::shared_ptr<MDevice> dev;    // declared first so it is destroyed last
    std::shared_ptr<dist::MeshBuffer> buf;  // deallocated before the device can close
    bool dram = true;
    uint64_t size = 0;
    uint32_t page_size = 0;
    uint32_t address = 0;
    uint32_t l1_slot = 0;  // L1 buffers: bytes reserved per core
};

struct MKernel {
    std::string name;
    ttr_kernel_role role;
    ttm::KernelHandle handle;
    std::vector<uint8_t> on;  // per core index
};

struct MProgram {
    std::shared_ptr<MDevice> dev;
    std::optional<ttm::Program> program;          // until the first enqueue
    std::unique_ptr<dist::MeshWorkload> workload;  // from the first enqueue on (owns the program)
    std::vector<MKernel> kernels;
    std::vector<uint64_t> cbs;  // per core index: bit i = CB i configured
    // The L1 buffers CBs live in (set_globally_allocated_address keeps only a raw Buffer pointer): kept
    // allocated while the program may run; destroyed after the workload (~MProgram's body runs first).
    std::vector<std::shared_ptr<MBuffer>> cb_buffers;
    bool ran = false;

    ttm::Program &prog() {
        if (workload) {
            return workload->get_programs().begin()->second;
        }
        return *program;
    }
    ~MProgram() {
        // The workload (and with it the program's device-side state) goes before the device.
        workload.reset();
        program.reset();
    }
};

struct MTrace {
    std::shared_ptr<MDevice> dev;
    std::optional<dist::MeshTraceId> id;
    std::vector<std::shared_ptr<MProgram>> programs;  // kept alive while the trace may replay them
    bool ended = false;
};

// Core indices covered by a list of ranges; every core must be on the grid.
std::vector<uint8_t> cores_of(const MDevice &d, const ttr_core_range *ranges, size_t n) {
    if (n == 0) {
        bad("the core range list is empty");
    }
    need(ranges, "ranges");
    std::vector<uint8_t> on(static_cast<size_t>(d.gx) * d.gy, 0);
    for (size_t i = 0; i < n; ++i) {
        const ttr_core_range &r = ranges[i];
        if (r.start.x > r.end.x || r.start.y > r.end.y) {
            bad(strf("core range (%u,%u)-(%u,%u) is empty", r.start.x, r.start.y, r.end.x, r.end.y));
        }
        if (r.end.x >= d.gx || r.end.y >= d.gy) {
            bad(strf("core range (%u,%u)-(%u,%u) leaves the %ux%u grid", r.start.x, r.start.y, r.end.x, r.end.y,
                     d.gx, d.gy));
        }
        for (uint32_t y = r.start.y; y <= r.end.y; ++y) {
            for (uint32_t x = r.start.x; x <= r.end.x; ++x) {
                on[static_cast<size_t>(d.core_index(x, y))] = 1;
            }
        }
    }
    return on;
}

// The cores as non-overlapping row runs (CoreRangeSet rejects overlapping ranges).
CoreRangeSet range_set(const MDevice &d, const std::vector<uint8_t> &on) {
    std::set<CoreRange> runs;
    for (uint32_t y = 0; y < d.gy; ++y) {
        uint32_t x = 0;
        while (x < d.gx) {
            if (on[static_cast<size_t>(d.core_index(x, y))] == 0) {
                ++x;
                continue;
            }
            uint32_t x0 = x;
            while (x < d.gx && on[static_cast<size_t>(d.core_index(x, y))] != 0) {
                ++x;
            }
            runs.insert(CoreRange(CoreCoord(x0, y), CoreCoord(x - 1, y)));
        }
    }
    return CoreRangeSet(runs);
}

void no_capture(const MDevice &d, const char *op) {
    if (d.capturing != nullptr) {
        throw HostError{TTR_ERR_TRACE, strf("%s during trace capture: the host may not read or write buffers "
                                            "while a trace is being captured",
                                            op)};
    }
}

[[noreturn]] void no_counters() {
    throw HostError{TTR_ERR_UNSUPPORTED,
                    "work counters are not available on silicon: the tt-metal backend counts nothing. Use the "
                    "emulator's counters with a cost model, or tt-metal's device profiler "
                    "(TT_METAL_DEVICE_PROFILER=1) on the card"};
}

size_t trace_region_bytes() {
    const char *v = std::getenv("TTR_METAL_TRACE_REGION_BYTES");
    if (v == nullptr || *v == '\0') {
        return DEFAULT_TRACE_REGION;
    }
    char *end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 0);
    if (end == v || *end != '\0') {
        bad(strf("TTR_METAL_TRACE_REGION_BYTES='%s' is not a byte count", v));
    }
    return static_cast<size_t>(n);
}

uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// An L1 buffer's window on one core, checked.
uint32_t l1_window(const MBuffer &b, ttr_core core, uint32_t offset, uint64_t size) {
    if (b.dram) {
        bad("this is a DRAM buffer; use ttr_buffer_write / ttr_buffer_read");
    }
    if (b.dev->core_index(core.x, core.y) < 0) {
        bad(strf("core (%u,%u) is outside the %ux%u grid", core.x, core.y, b.dev->gx, b.dev->gy));
    }
    if (static_cast<uint64_t>(offset) + size > b.size) {
        bad(strf("range %u+%llu exceeds the L1 buffer of %llu bytes", offset, static_cast<unsigned long long>(size),
                 static_cast<unsigned long long>(b.size)));
    }
    return b.address + offset;
}

// Word-aligned window [lo, hi) around [addr, addr + size) that stays inside the buffer's slot.
std::pair<uint32_t, uint32_t> word_window(const MBuffer &b, uint32_t addr, uint64_t size) {
    uint32_t a = std::max<uint32_t>(4, b.dev->info.l1_alignment);
    uint32_t lo = addr / a * a;
    uint32_t hi = align_up(static_cast<uint32_t>(addr + size), a);
    lo = std::max(lo, b.address);
    hi = std::min(hi, b.address + b.l1_slot);
    // The slot is a multiple of the L1 alignment and starts aligned, so lo/hi stay word aligned.
    return {lo, hi};
}

const char *dispatch_name(ttr_dispatch dispatch) { return dispatch == TTR_DISPATCH_ETH ? "ETH" : "Tensix"; }

// tt-metal 0.78 finds its kernels and firmware through TT_METAL_RUNTIME_ROOT (or a package
// install); a card owner's build sets TT_METAL_HOME, so that tree is the default root.
void default_runtime_root() {
    const char *home = std::getenv("TT_METAL_HOME");
    if (home != nullptr && *home != '\0') {
        setenv("TT_METAL_RUNTIME_ROOT", home, 0);
    }
}

// The typed error of a failed MeshDevice::create_unit_mesh. tt-metal's messages are matched loosely
// (they are not a stable interface); only the failures known to be specific to ETH dispatch on an
// unpatched tt-metal become TTR_ERR_UNSUPPORTED.
HostError open_error(uint32_t device_id, ttr_dispatch dispatch, const std::string &what) {
    if (has_text(what, "No chips detected")) {
        return HostError{TTR_ERR_NO_DEVICE,
                         strf("no Tenstorrent device found (tt-metal: No chips detected in the cluster); check that "
                              "the card is installed and the tt-kmd driver is loaded (/dev/tenstorrent). %s",
                              what.c_str())};
    }
    // Upstream 0.78 on a p150: the ETH core descriptor names logical ETH cores the harvested chip does
    // not have ("No core coordinate found at location: (0, 12, ETH, LOGICAL)"), or the prefetch kernel
    // overflows the idle-ERISC kernel text budget ("idle_erisc ... overflows region").
    bool eth_descriptor = has_text(what, "ETH, LOGICAL");
    bool eth_text_budget = has_text(what, "idle_erisc") && has_text(what, "overflows");
    if (dispatch == TTR_DISPATCH_ETH && (eth_descriptor || eth_text_budget)) {
        return HostError{
            TTR_ERR_UNSUPPORTED,
            strf("opening device %u with dispatch on Ethernet cores failed: %s. Upstream tt-metal at the pinned "
                 "commit cannot dispatch from a p150's Ethernet cores (%s): build tt-metal with "
                 "patches/tt-metal-eth-dispatch.patch for the 12x10 grid, or open with Tensix dispatch for 11x10. "
                 "The dispatch placement is fixed once per process, so retry in a fresh process",
                 device_id, what.c_str(),
                 eth_descriptor ? "its core descriptor lists 14 ETH cores where the card has 12"
                                : "the idle-ERISC kernel text budget is too small for the dispatch kernels")};
    }
    return HostError{TTR_ERR_INTERNAL,
                     strf("opening device %u with %s dispatch failed: %s", device_id, dispatch_name(dispatch),
                          what.c_str())};
}

// tt-metal programs are fixed after their first launch except for runtime-arg values.
void not_launched(const MProgram &p, const char *what) {
    if (p.workload) {
        throw HostError{TTR_ERR_UNSUPPORTED,
                        strf("%s after the program's first enqueue: a tt-metal program cannot change its kernels, "
                             "CBs or semaphores once launched (runtime-arg values can change)",
                             what)};
    }
}

}  // namespace

struct ttr_device {
    std::shared_ptr<MDevice> d;
};
struct ttr_buffer {
    std::shared_ptr<MBuffer> b;
};
struct ttr_program {
    std::shared_ptr<MProgram> p;
};
struct ttr_trace {
    std::shared_ptr<MTrace> t;
};

extern "C" {

const char *ttr_last_error(void) { return t_last_error.c_str(); }

const char *ttr_backend_name(void) { return "tt-metal"; }

ttr_status ttr_device_count(uint32_t *count) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(count, "count");
        default_runtime_root();
        size_t n = 0;
        try {
            n = ttm::GetNumAvailableDevices();
        } catch (const std::exception &e) {
            // UMD throws when the cluster has no chip: that is a count of 0, not a failure.
            if (!has_text(e.what(), "No chips detected")) {
                throw;
            }
        }
        *count = static_cast<uint32_t>(n);
    });
}

ttr_status ttr_emu_set_device_count(uint32_t count) {
    (void)count;
    return guard(TTR_ERR_INTERNAL, [&] {
        throw HostError{TTR_ERR_UNSUPPORTED, "ttr_emu_set_device_count: tt-metal drives the cards it finds"};
    });
}

ttr_status ttr_emu_fail_after(ttr_device *device, uint64_t launches) {
    (void)launches;
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        throw HostError{TTR_ERR_UNSUPPORTED, "ttr_emu_fail_after: fault injection is the emulator's"};
    });
}

ttr_status ttr_device_open(uint32_t device_id, ttr_dispatch dispatch, ttr_device **out) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(out, "out");
        if (dispatch != TTR_DISPATCH_TENSIX && dispatch != TTR_DISPATCH_ETH) {
            bad(strf("unknown dispatch core type %u", dispatch));
        }
        auto d = std::make_shared<MDevice>();
        d->id = device_id;
        d->dispatch = dispatch;
        ttm::DispatchCoreConfig config(dispatch == TTR_DISPATCH_ETH ? ttm::DispatchCoreType::ETH
                                                                    : ttm::DispatchCoreType::WORKER);
        size_t trace_region = trace_region_bytes();
        default_runtime_root();
        // Without a timeout tt-metal's dispatch waits never return on a hung card (device_lost.hpp).
        setenv("TT_METAL_OPERATION_TIMEOUT_SECONDS", ttr_metal::DEFAULT_OPERATION_TIMEOUT_SECONDS, 0);
        try {
            d->mesh = dist::MeshDevice::create_unit_mesh(static_cast<int>(device_id), dist::ttr_default_l1_small_size,
                                                         trace_region, 1, config);
        } catch (const std::exception &e) {
            throw open_error(device_id, dispatch, e.what());
        }
        if (!d->mesh) {
            throw HostError{TTR_ERR_INTERNAL,
                            strf("MeshDevice::create_unit_mesh(%u) returned no device", device_id)};
        }
        CoreCoord grid = d->mesh->compute_with_storage_grid_size();
        d->gx = static_cast<uint32_t>(grid.x);
        d->gy = static_cast<uint32_t>(grid.y);
        // The grid shows where dispatch runs: a Tensix column for Tensix dispatch, none for ETH. A
        // grid other than the p150a's for the dispatch asked means that dispatch was not obtained (or
        // the card is not a p150a); past this check the dispatch in info is the one obtained.
        uint32_t want_x = dispatch == TTR_DISPATCH_ETH ? P150A_GRID_X_ETH : P150A_GRID_X_TENSIX;
        if (d->gx != want_x || d->gy != P150A_GRID_Y) {
            throw HostError{TTR_ERR_UNSUPPORTED,
                            strf("device %u opened with %s dispatch has a %ux%u compute grid where a p150a has "
                                 "%ux%u: this runtime supports a Blackhole p150a with the dispatch it was opened with",
                                 device_id, dispatch_name(dispatch), d->gx, d->gy, want_x, P150A_GRID_Y)};
        }
        const auto &alloc = d->mesh->allocator();
        d->info = ttr_device_info{d->gx,
                                  d->gy,
                                  dispatch,
                                  d->mesh->l1_size_per_core(),
                                  static_cast<uint32_t>(alloc->get_base_allocator_addr(ttm::HalMemType::L1)),
                                  alloc->get_alignment(ttm::BufferType::L1),
                                  alloc->get_alignment(ttm::BufferType::DRAM),
                                  alloc->get_num_banks(ttm::BufferType::DRAM),
                                  alloc->get_num_banks(ttm::BufferType::L1),
                                  BH_MAX_CBS,
                                  MAX_RTA,
                                  0};
        *out = new ttr_device{std::move(d)};
    });
}

void ttr_device_close(ttr_device *device) {
    try {
        delete device;
    } catch (...) {
        // ~MDevice already swallows close() failures; nothing else can throw here.
    }
}

ttr_status ttr_device_get_info(const ttr_device *device, ttr_device_info *out) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        need(out, "out");
        *out = device->d->info;
    });
}

ttr_status ttr_device_worker_core(const ttr_device *device, ttr_core logical, ttr_core *noc) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        need(noc, "noc");
        MDevice &d = *device->d;
        if (d.core_index(logical.x, logical.y) < 0) {
            bad(strf("logical core (%u,%u) is outside the %ux%u grid", logical.x, logical.y, d.gx, d.gy));
        }
        std::lock_guard<std::mutex> lock(d.mu);
        CoreCoord c = d.mesh->worker_core_from_logical_core(CoreCoord(logical.x, logical.y));
        *noc = ttr_core{static_cast<uint32_t>(c.x), static_cast<uint32_t>(c.y)};
    });
}

ttr_status ttr_device_dram_core(const ttr_device *device, uint32_t bank, ttr_core *noc) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        need(noc, "noc");
        MDevice &d = *device->d;
        if (bank >= d.info.dram_banks) {
            bad(strf("DRAM bank %u does not exist (there are %u)", bank, d.info.dram_banks));
        }
        std::lock_guard<std::mutex> lock(d.mu);
        CoreCoord c = tt::tt_metal::distributed::ttr_dram_core(*d.mesh, bank);
        *noc = ttr_core{static_cast<uint32_t>(c.x), static_cast<uint32_t>(c.y)};
    });
}

ttr_status ttr_device_l1_bank_core(const ttr_device *device, uint32_t bank, ttr_core *logical) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        need(logical, "logical");
        MDevice &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        const auto &alloc = d.mesh->allocator();
        for (uint32_t y = 0; y < d.gy; ++y) {
            for (uint32_t x = 0; x < d.gx; ++x) {
                const auto &ids = alloc->get_bank_ids_from_logical_core(ttm::BufferType::L1, CoreCoord(x, y));
                if (ids.size() == 1 && ids[0] == bank) {
                    *logical = ttr_core{x, y};
                    return;
                }
            }
        }
        bad(strf("L1 bank %u is not the one bank of any core of the %ux%u grid", bank, d.gx, d.gy));
    });
}

ttr_status ttr_buffer_create_dram(ttr_device *device, uint64_t size, uint32_t page_size, ttr_buffer **out) {
    ttr_status st = guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        need(out, "out");
        if (page_size == 0 || size == 0 || size % page_size != 0) {
            bad(strf("a DRAM buffer needs a non-zero size that is a multiple of the page size (size %llu, page %u)",
                     static_cast<unsigned long long>(size), page_size));
        }
        MDevice &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        auto b = std::make_shared<MBuffer>();
        b->dev = device->d;
        b->dram = true;
        b->size = size;
        b->page_size = page_size;
        dist::DeviceLocalBufferConfig local;
        local.page_size = page_size;
        local.buffer_type = ttm::BufferType::DRAM;
        dist::ReplicatedBufferConfig global;
        global.size = size;
        try {
            b->buf = dist::MeshBuffer::create(global, local, d.mesh.get());
        } catch (const std::exception &e) {
            throw HostError{alloc_code(e.what()), strf("DRAM buffer of %llu bytes (pages of %u): %s",
                                                       static_cast<unsigned long long>(size), page_size, e.what())};
        }
        if (b->buf->address() > UINT32_MAX) {
            throw HostError{TTR_ERR_UNSUPPORTED, "the DRAM buffer's bank address does not fit the API's 32 bits"};
        }
        b->address = static_cast<uint32_t>(b->buf->address());
        *out = new ttr_buffer{std::move(b)};
    });
    return st;
}

ttr_status ttr_buffer_create_l1(ttr_device *device, uint32_t size, ttr_buffer **out) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        need(out, "out");
        if (size == 0) {
            bad("an L1 buffer needs a non-zero size");
        }
        MDevice &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        const auto &alloc = d.mesh->allocator();
        // One page per L1 bank: tt-metal allocates interleaved buffers in lock step over the banks, so
        // with exactly one page per bank the range [address, address + slot) is reserved in every bank.
        // That is "the same address on every worker core" provided each grid core holds exactly one
        // bank at offset 0, which is checked here rather than assumed.
        for (uint32_t y = 0; y < d.gy; ++y) {
            for (uint32_t x = 0; x < d.gx; ++x) {
                const auto &ids = alloc->get_bank_ids_from_logical_core(ttm::BufferType::L1, CoreCoord(x, y));
                if (ids.size() != 1 || alloc->get_bank_offset(ttm::BufferType::L1, ids[0]) != 0) {
                    throw HostError{TTR_ERR_UNSUPPORTED,
                                    strf("core (%u,%u) does not hold exactly one L1 bank at offset 0; per-core L1 "
                                         "buffers need that layout",
                                         x, y)};
                }
            }
        }
        uint32_t banks = alloc->get_num_banks(ttm::BufferType::L1);
        uint32_t slot = align_up(size, std::max<uint32_t>(4, d.info.l1_alignment));
        auto b = std::make_shared<MBuffer>();
        b->dev = device->d;
        b->dram = false;
        b->size = size;
        b->page_size = slot;
        b->l1_slot = slot;
        dist::DeviceLocalBufferConfig local;
        local.page_size = slot;
        local.buffer_type = ttm::BufferType::L1;
        dist::ReplicatedBufferConfig global;
        global.size = static_cast<uint64_t>(slot) * banks;
        try {
            b->buf = dist::MeshBuffer::create(global, local, d.mesh.get());
        } catch (const std::exception &e) {
            throw HostError{alloc_code(e.what()), strf("L1 buffer of %u bytes per core: %s", size, e.what())};
        }
        b->address = static_cast<uint32_t>(b->buf->address());
        *out = new ttr_buffer{std::move(b)};
    });
}

void ttr_buffer_free(ttr_buffer *buffer) {
    if (buffer == nullptr) {
        return;
    }
    try {
        std::shared_ptr<MDevice> dev = buffer->b->dev;
        std::lock_guard<std::mutex> lock(dev->mu);
        delete buffer;
    } catch (...) {
        // A failed deallocation cannot be reported through a void function.
    }
}

uint32_t ttr_buffer_address(const ttr_buffer *buffer) { return buffer != nullptr ? buffer->b->address : 0; }

uint64_t ttr_buffer_size(const ttr_buffer *buffer) { return buffer != nullptr ? buffer->b->size : 0; }

ttr_status ttr_buffer_write(ttr_buffer *buffer, const void *data, uint64_t size) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(buffer, "buffer");
        need(data, "data");
        MBuffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.dev->mu);
        no_capture(*b.dev, "ttr_buffer_write");
        if (!b.dram) {
            bad("this is an L1 buffer; use ttr_buffer_write_core");
        }
        if (size != b.size) {
            bad(strf("write of %llu bytes to a buffer of %llu bytes", static_cast<unsigned long long>(size),
                     static_cast<unsigned long long>(b.size)));
        }
        const auto *p = static_cast<const uint8_t *>(data);
        std::vector<uint8_t> host(p, p + size);
        // Blocking: the host copy dies with this call.
        on_card(*b.dev, "ttr_buffer_write", [&] { dist::EnqueueWriteMeshBuffer(b.dev->cq(), b.buf, host, true); });
    });
}

ttr_status ttr_buffer_read(ttr_buffer *buffer, void *data, uint64_t size) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(buffer, "buffer");
        need(data, "data");
        MBuffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.dev->mu);
        no_capture(*b.dev, "ttr_buffer_read");
        if (!b.dram) {
            bad("this is an L1 buffer; use ttr_buffer_read_core");
        }
        if (size != b.size) {
            bad(strf("read of %llu bytes from a buffer of %llu bytes", static_cast<unsigned long long>(size),
                     static_cast<unsigned long long>(b.size)));
        }
        std::vector<uint8_t> host(size);
        on_card(*b.dev, "ttr_buffer_read", [&] { dist::EnqueueReadMeshBuffer(b.dev->cq(), host, b.buf, true); });
        if (host.size() != size) {
            throw HostError{TTR_ERR_INTERNAL, strf("tt-metal returned %zu bytes for a %llu-byte buffer", host.size(),
                                                   static_cast<unsigned long long>(size))};
        }
        memcpy(data, host.data(), size);
    });
}

// Reads the whole buffer and copies the page range out: correct on any tt-metal version. A region
// read (BufferRegion) would move fewer bytes, but its API at the pin is not verified here.
ttr_status ttr_buffer_read_pages(ttr_buffer *buffer, uint64_t first, uint64_t pages, void *data, uint64_t size) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(buffer, "buffer");
        need(data, "data");
        MBuffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.dev->mu);
        no_capture(*b.dev, "ttr_buffer_read_pages");
        if (!b.dram) {
            bad("this is an L1 buffer; use ttr_buffer_read_core");
        }
        uint64_t total = b.size / b.page_size;
        if (first > total || pages > total - first || size != pages * b.page_size) {
            bad(strf("pages %llu+%llu (%llu bytes) of a buffer of %llu pages of %u bytes",
                     static_cast<unsigned long long>(first), static_cast<unsigned long long>(pages),
                     static_cast<unsigned long long>(size), static_cast<unsigned long long>(total), b.page_size));
        }
        std::vector<uint8_t> host(b.size);
        on_card(*b.dev, "ttr_buffer_read_pages",
                [&] { dist::EnqueueReadMeshBuffer(b.dev->cq(), host, b.buf, true); });
        memcpy(data, host.data() + first * b.page_size, size);
    });
}

ttr_status ttr_buffer_write_core(ttr_buffer *buffer, ttr_core core, uint32_t offset, const void *data,
                                 uint64_t size) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(buffer, "buffer");
        need(data, "data");
        MBuffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.dev->mu);
        no_capture(*b.dev, "ttr_buffer_write_core");
        uint32_t addr = l1_window(b, core, offset, size);
        if (size == 0) {
            return;
        }
        on_card(*b.dev, "ttr_buffer_write_core", [&] {
            // Direct writes bypass the command queue: let enqueued work finish first.
            dist::Finish(b.dev->cq());
            auto [lo, hi] = word_window(b, addr, size);
            std::vector<uint32_t> words;
            CoreCoord c(core.x, core.y);
            if (lo != addr || hi != addr + size) {
                // Read-modify-write of the partial words at either end.
                ttm::detail::ReadFromDeviceL1(b.dev->chip(), c, lo, hi - lo, words);
            }
            words.resize((hi - lo) / 4);
            memcpy(reinterpret_cast<uint8_t *>(words.data()) + (addr - lo), data, size);
            ttm::detail::WriteToDeviceL1(b.dev->chip(), c, lo, words);
        });
    });
}

ttr_status ttr_buffer_read_core(ttr_buffer *buffer, ttr_core core, uint32_t offset, void *data, uint64_t size) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(buffer, "buffer");
        need(data, "data");
        MBuffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.dev->mu);
        no_capture(*b.dev, "ttr_buffer_read_core");
        uint32_t addr = l1_window(b, core, offset, size);
        if (size == 0) {
            return;
        }
        auto [lo, hi] = word_window(b, addr, size);
        std::vector<uint32_t> words;
        on_card(*b.dev, "ttr_buffer_read_core", [&] {
            dist::Finish(b.dev->cq());
            ttm::detail::ReadFromDeviceL1(b.dev->chip(), CoreCoord(core.x, core.y), lo, hi - lo, words);
        });
        if (words.size() * 4 < hi - lo) {
            throw HostError{TTR_ERR_INTERNAL, "tt-metal returned fewer L1 bytes than asked for"};
        }
        memcpy(data, reinterpret_cast<const uint8_t *>(words.data()) + (addr - lo), size);
    });
}

ttr_status ttr_program_create(ttr_device *device, ttr_program **out) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        need(out, "out");
        auto p = std::make_shared<MProgram>();
        p->dev = device->d;
        p->program.emplace(ttm::CreateProgram());
        p->cbs.assign(static_cast<size_t>(device->d->gx) * device->d->gy, 0);
        *out = new ttr_program{std::move(p)};
    });
}

void ttr_program_free(ttr_program *program) {
    if (program == nullptr) {
        return;
    }
    try {
        std::shared_ptr<MDevice> dev = program->p->dev;
        std::lock_guard<std::mutex> lock(dev->mu);
        delete program;
    } catch (...) {
        // Nothing to report through a void function.
    }
}

ttr_status ttr_program_add_kernel(ttr_program *program, const ttr_kernel_config *config, uint32_t *kernel_id) {
    return guard(TTR_ERR_INVALID_ARGUMENT, [&] {
        need(program, "program");
        need(config, "config");
        need(kernel_id, "kernel_id");
        need(config->name, "config.name");
        need(config->source, "config.source");
        if (config->role > TTR_ROLE_COMPUTE) {
            bad(strf("unknown kernel role %u", config->role));
        }
        if (config->math_fidelity >= TTR_FIDELITY_COUNT) {
            bad(strf("unknown math fidelity %u", config->math_fidelity));
        }
        if (config->noc > 1) {
            bad(strf("NoC %u does not exist (0 or 1)", config->noc));
        }
        MProgram &p = *program->p;
        MDevice &d = *p.dev;
        std::vector<uint8_t> on = cores_of(d, config->ranges, config->num_ranges);
        std::vector<uint32_t> compile_args;
        if (config->num_compile_args > 0) {
            need(config->compile_args, "config.compile_args");
            compile_args.assign(config->compile_args, config->compile_args + config->num_compile_args);
        }
        std::map<std::string, std::string> defines;
        if (config->num_defines > 0) {
            need(config->defines, "config.defines");
        }
        for (size_t i = 0; i < config->num_defines; ++i) {
            need(config->defines[i].name, "define name");
            need(config->defines[i].value, "define value");
            defines[config->defines[i].name] = config->defines[i].value;
        }
        std::lock_guard<std::mutex> lock(d.mu);
        not_launched(p, "adding a kernel");
        for (const MKernel &k : p.kernels) {
            for (size_t i = 0; i < on.size(); ++i) {
                if (on[i] != 0 && k.on[i] != 0 && k.role == config->role) {
                    bad(strf("core (%zu,%zu) already runs kernel '%s' in that role", i % d.gx, i / d.gx,
                             k.name.c_str()));
                }
            }
        }
        CoreRangeSet cores = range_set(d, on);
        std::string source(config->source);
        ttm::KernelHandle handle;
        if (config->role == TTR_ROLE_COMPUTE) {
            ttm::ComputeConfig cc;
            switch (config->math_fidelity) {
                case TTR_LOFI: cc.math_fidelity = ttm::MathFidelity::LoFi; break;
                case TTR_HIFI2: cc.math_fidelity = ttm::MathFidelity::HiFi2; break;
                case TTR_HIFI3: cc.math_fidelity = ttm::MathFidelity::HiFi3; break;
                default: cc.math_fidelity = ttm::MathFidelity::HiFi4; break;
            }
            cc.fp32_dest_acc_en = config->fp32_dest_acc != 0;
            cc.dst_full_sync_en = false;  // half-sync DST, as the emulator models
            cc.math_approx_mode = config->math_approx != 0;
            if (config->num_unpack_to_dest_mode > BH_MAX_CBS) {
                bad(strf("%zu unpack_to_dest_mode entries; at most %u", config->num_unpack_to_dest_mode, BH_MAX_CBS));
            }
            if (config->num_unpack_to_dest_mode > 0) {
                need(config->unpack_to_dest_mode, "config.unpack_to_dest_mode");
            }
            cc.unpack_to_dest_mode.assign(BH_MAX_CBS, ttm::UnpackToDestMode::Default);
            for (size_t cb = 0; cb < config->num_unpack_to_dest_mode; ++cb) {
                if (config->unpack_to_dest_mode[cb] == TTR_UNPACK_TO_DEST_FP32) {
                    cc.unpack_to_dest_mode[cb] = ttm::UnpackToDestMode::UnpackToDestFp32;
                }
            }
            cc.compile_args = std::move(compile_args);
            cc.defines = std::move(defines);
            handle = ttm::CreateKernelFromString(p.prog(), source, cores, cc);
        } else {
            // Reader on BRISC (RISCV_0), writer on NCRISC (RISCV_1); the NoC is the caller's choice
            // (ttr's defaults are tt-metal's RISCV_0_default = NoC 0, RISCV_1_default = NoC 1).
            ttm::DataMovementConfig dm;
            dm.processor = config->role == TTR_ROLE_READER ? ttm::DataMovementProcessor::RISCV_0
                                                           : ttm::DataMovementProcessor::RISCV_1;
            dm.noc = config->noc == 0 ? ttm::NOC::NOC_0 : ttm::NOC::NOC_1;
            dm.compile_args = std::move(compile_args);
            dm.defines = std::move(defines);
            handle = ttm::CreateKernelFromString(p.prog(), source, cores, dm);
        }
        p.kernels.push_back(MKernel{config->name, config->role, handle, std::move(on)});
        *kernel_id = static_cast<uint32_t>(p.kernels.size() - 1);
    });
}

ttr_status ttr_program_add_cb(ttr_program *program, const ttr_cb_config *config) {
    return guard(TTR_ERR_INVALID_ARGUMENT, [&] {
        need(program, "program");
        need(config, "config");
        MProgram &p = *program->p;
        MDevice &d = *p.dev;
        if (config->id >= BH_MAX_CBS) {
            bad(strf("cb id %u is out of range (0..%u)", config->id, BH_MAX_CBS - 1));
        }
        if (config->page_size == 0 || config->total_size == 0 || config->total_size % config->page_size != 0) {
            bad(strf("cb %u: total size %u is not a non-zero multiple of the page size %u", config->id,
                     config->total_size, config->page_size));
        }
        tt::DataFormat format = tt::DataFormat::Float16_b;
        switch (config->format) {
            case TTR_FORMAT_FLOAT32: format = tt::DataFormat::Float32; break;
            case TTR_FORMAT_FLOAT16_B: format = tt::DataFormat::Float16_b; break;
            case TTR_FORMAT_BFP8_B: format = tt::DataFormat::Bfp8_b; break;
            case TTR_FORMAT_UINT32: format = tt::DataFormat::UInt32; break;
            default: bad(strf("cb %u: unknown data format %u", config->id, config->format));
        }
        std::vector<uint8_t> on = cores_of(d, config->ranges, config->num_ranges);
        std::shared_ptr<MBuffer> in;
        if (config->buffer != nullptr) {
            in = config->buffer->b;
            if (in->dram) {
                bad(strf("cb %u: its buffer is a DRAM buffer; a CB can live only in an L1 buffer "
                         "(ttr_buffer_create_l1)",
                         config->id));
            }
            if (in->dev != p.dev) {
                bad(strf("cb %u: its L1 buffer belongs to another device; create the buffer on the program's device",
                         config->id));
            }
            const std::string refusal = ttr_common::cb_in_buffer_refusal(config->id, config->total_size,
                                                                         config->buffer_offset, in->size,
                                                                         d.info.l1_alignment);
            if (!refusal.empty()) {
                bad(refusal);
            }
        } else if (config->buffer_offset != 0) {
            bad(strf("cb %u: buffer offset %u without a buffer; an offset places a CB inside an L1 buffer (set "
                     "buffer, or leave buffer_offset 0)",
                     config->id, config->buffer_offset));
        }
        std::lock_guard<std::mutex> lock(d.mu);
        not_launched(p, "adding a CB");
        uint64_t bit = uint64_t{1} << config->id;
        for (size_t i = 0; i < on.size(); ++i) {
            if (on[i] != 0 && (p.cbs[i] & bit) != 0) {
                bad(strf("cb %u is already configured on core (%zu,%zu)", config->id, i % d.gx, i / d.gx));
            }
        }
        auto index = static_cast<uint8_t>(config->id);
        std::map<uint8_t, tt::DataFormat> spec{{index, format}};
        ttm::CircularBufferConfig cb(config->total_size, spec);
        cb.set_page_size(index, config->page_size);
        if (in) {
            // The reference buffer is the MeshBuffer's Buffer on the unit mesh's one device; the CB takes its
            // address (the same in every L1 bank, ttr_buffer_create_l1) plus the offset. In 0.78
            // set_address_offset only records the offset (checked above: 0.78 checks neither its alignment nor
            // the CB's end against the bank), and CreateCircularBuffer places the CB at the buffer's address
            // plus it (CircularBufferImpl::assign_global_address); later releases check and apply the offset in
            // set_address_offset itself, which needs the buffer set first, as here.
            cb.set_globally_allocated_address(*in->buf->get_reference_buffer());
            cb.set_address_offset(config->buffer_offset);
        }
        ttm::CreateCircularBuffer(p.prog(), range_set(d, on), cb);
        for (size_t i = 0; i < on.size(); ++i) {
            if (on[i] != 0) {
                p.cbs[i] |= bit;
            }
        }
        if (in) {
            p.cb_buffers.push_back(std::move(in));
        }
    });
}

ttr_status ttr_program_add_semaphore(ttr_program *program, const ttr_core_range *ranges, size_t num_ranges,
                                     uint32_t initial_value, uint32_t *semaphore_id) {
    return guard(TTR_ERR_INVALID_ARGUMENT, [&] {
        need(program, "program");
        need(semaphore_id, "semaphore_id");
        MProgram &p = *program->p;
        MDevice &d = *p.dev;
        std::vector<uint8_t> on = cores_of(d, ranges, num_ranges);
        std::lock_guard<std::mutex> lock(d.mu);
        not_launched(p, "adding a semaphore");
        // tt-metal picks the lowest id free on every core of the set, as the emulator does.
        *semaphore_id = ttm::CreateSemaphore(p.prog(), range_set(d, on), initial_value);
    });
}

ttr_status ttr_program_set_runtime_args(ttr_program *program, uint32_t kernel_id, ttr_core core, const uint32_t *args,
                                        size_t num_args) {
    return guard(TTR_ERR_INVALID_ARGUMENT, [&] {
        need(program, "program");
        MProgram &p = *program->p;
        MDevice &d = *p.dev;
        std::lock_guard<std::mutex> lock(d.mu);
        if (kernel_id >= p.kernels.size()) {
            bad(strf("kernel %u does not exist", kernel_id));
        }
        const MKernel &k = p.kernels[kernel_id];
        if (num_args > MAX_RTA) {
            bad(strf("%zu runtime args for kernel '%s' on core (%u,%u); the limit is %u per kernel per core", num_args,
                     k.name.c_str(), core.x, core.y, MAX_RTA));
        }
        int32_t idx = d.core_index(core.x, core.y);
        if (idx < 0 || k.on[static_cast<size_t>(idx)] == 0) {
            bad(strf("kernel '%s' does not run on core (%u,%u)", k.name.c_str(), core.x, core.y));
        }
        if (num_args > 0) {
            need(args, "args");
        }
        std::vector<uint32_t> values(args, args + num_args);
        // After the first enqueue tt-metal accepts new values but not a different count.
        ttm::SetRuntimeArgs(p.prog(), k.handle, CoreCoord(core.x, core.y), values);
    });
}

ttr_status ttr_program_set_common_runtime_args(ttr_program *program, uint32_t kernel_id, const uint32_t *args,
                                               size_t num_args) {
    return guard(TTR_ERR_INVALID_ARGUMENT, [&] {
        need(program, "program");
        MProgram &p = *program->p;
        std::lock_guard<std::mutex> lock(p.dev->mu);
        if (kernel_id >= p.kernels.size()) {
            bad(strf("kernel %u does not exist", kernel_id));
        }
        const MKernel &k = p.kernels[kernel_id];
        if (num_args > MAX_RTA) {
            bad(strf("%zu common runtime args for kernel '%s'; the limit is %u per kernel", num_args, k.name.c_str(),
                     MAX_RTA));
        }
        if (num_args > 0) {
            need(args, "args");
        }
        std::vector<uint32_t> values(args, args + num_args);
        ttm::SetCommonRuntimeArgs(p.prog(), k.handle, values);
    });
}

ttr_status ttr_program_counters(const ttr_program *program, int32_t kernel_id, ttr_counters *out) {
    (void)kernel_id;
    return guard(TTR_ERR_INTERNAL, [&] {
        need(program, "program");
        need(out, "out");
        no_counters();
    });
}

ttr_status ttr_program_core_counters(const ttr_program *program, uint32_t kernel_id, ttr_core core,
                                     ttr_counters *out) {
    (void)kernel_id;
    (void)core;
    return guard(TTR_ERR_INTERNAL, [&] {
        need(program, "program");
        need(out, "out");
        no_counters();
    });
}

ttr_status ttr_program_reset_counters(ttr_program *program) {
    // Nothing is counted, so there is nothing to reset; reading them fails with TTR_ERR_UNSUPPORTED.
    return guard(TTR_ERR_INTERNAL, [&] { need(program, "program"); });
}

ttr_status ttr_program_occupancy(const ttr_program *program, ttr_occupancy *out) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(program, "program");
        need(out, "out");
        no_counters();
    });
}

ttr_status ttr_noc_route(uint32_t noc, ttr_core from, ttr_core to_lo, ttr_core to_hi, uint32_t multicast,
                         uint64_t bytes, ttr_occupancy *into) {
    (void)noc;
    (void)from;
    (void)to_lo;
    (void)to_hi;
    (void)multicast;
    (void)bytes;
    return guard(TTR_ERR_INTERNAL, [&] {
        need(into, "into");
        throw HostError{TTR_ERR_UNSUPPORTED,
                        "the NoC route model is the emulator's occupancy accounting; build without the `metal` "
                        "feature to use it"};
    });
}

ttr_status ttr_enqueue_program(ttr_device *device, ttr_program *program, uint32_t blocking) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        need(program, "program");
        MDevice &d = *device->d;
        MProgram &p = *program->p;
        if (p.dev != device->d) {
            bad("the program belongs to another device");
        }
        std::lock_guard<std::mutex> lock(d.mu);
        if (p.kernels.empty()) {
            bad("the program has no kernels");
        }
        if (d.capturing != nullptr && !p.ran) {
            throw HostError{TTR_ERR_TRACE, "a program enqueued during trace capture must have run once before the "
                                           "capture (that run compiles and loads it)"};
        }
        bool first = !p.workload;
        if (first) {
            auto w = std::make_unique<dist::MeshWorkload>();
            w->add_program(dist::MeshCoordinateRange(d.mesh->shape()), std::move(*p.program));
            p.program.reset();
            p.workload = std::move(w);
        }
        try {
            // Blocking enqueues are not allowed while a trace is being captured.
            on_card(d, "ttr_enqueue_program",
                    [&] { dist::EnqueueMeshWorkload(d.cq(), *p.workload, d.capturing == nullptr && blocking != 0); });
        } catch (const HostError &) {
            throw;
        } catch (const std::exception &e) {
            std::string what = e.what();
            throw HostError{first ? enqueue_code(what) : TTR_ERR_INTERNAL,
                            strf("enqueue of a program with kernel '%s'%s: %s", p.kernels.front().name.c_str(),
                                 first ? " (first launch: tt-metal compiles its kernels now)" : "", what.c_str())};
        }
        if (d.capturing != nullptr) {
            d.capturing->programs.push_back(program->p);
        } else {
            p.ran = true;
        }
    });
}

ttr_status ttr_finish(ttr_device *device) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        MDevice &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.capturing != nullptr) {
            return;  // nothing has been issued for execution; the emulator also treats this as a no-op
        }
        on_card(d, "ttr_finish", [&] { dist::Finish(d.cq()); });
    });
}

ttr_status ttr_trace_begin(ttr_device *device, ttr_trace **out) {
    return guard(TTR_ERR_TRACE, [&] {
        need(device, "device");
        need(out, "out");
        MDevice &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.capturing != nullptr) {
            throw HostError{TTR_ERR_TRACE, "a trace capture is already in progress"};
        }
        auto t = std::make_shared<MTrace>();
        t->dev = device->d;
        t->id = d.mesh->begin_mesh_trace(CQ_ID);
        d.capturing = t.get();
        *out = new ttr_trace{std::move(t)};
    });
}

ttr_status ttr_trace_end(ttr_device *device, ttr_trace *trace) {
    return guard(TTR_ERR_TRACE, [&] {
        need(device, "device");
        need(trace, "trace");
        MDevice &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.capturing != trace->t.get()) {
            throw HostError{TTR_ERR_TRACE, "this trace is not being captured"};
        }
        d.capturing = nullptr;
        d.mesh->end_mesh_trace(CQ_ID, *trace->t->id);
        trace->t->ended = true;
    });
}

ttr_status ttr_trace_replay(ttr_device *device, ttr_trace *trace, uint32_t blocking) {
    return guard(TTR_ERR_TRACE, [&] {
        need(device, "device");
        need(trace, "trace");
        MDevice &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        if (!trace->t->ended) {
            throw HostError{TTR_ERR_TRACE, "the trace has not been ended (ttr_trace_end) yet"};
        }
        if (trace->t->dev != device->d) {
            bad("the trace belongs to another device");
        }
        if (d.capturing != nullptr) {
            throw HostError{TTR_ERR_TRACE, "cannot replay a trace during trace capture"};
        }
        on_card(d, "ttr_trace_replay", [&] { d.mesh->replay_mesh_trace(CQ_ID, *trace->t->id, blocking != 0); });
    });
}

void ttr_trace_release(ttr_trace *trace) {
    if (trace == nullptr) {
        return;
    }
    try {
        MTrace &t = *trace->t;
        MDevice &d = *t.dev;
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.capturing == &t) {
            d.capturing = nullptr;
            d.mesh->end_mesh_trace(CQ_ID, *t.id);
            t.ended = true;
        }
        if (t.id) {
            // The trace may still be running; its programs must outlive it on the device.
            dist::Finish(d.cq());
            d.mesh->release_mesh_trace(*t.id);
            t.id.reset();
        }
    } catch (...) {
        // A void function cannot report a failed release.
    }
    delete trace;
}

}  // extern "C"

// ttr_device_profiler_read: tt-metal's device profiler, program by program. Appended for
// `superpoint doctor`; written against the headers tt_metal/api/tt-metalium/host_api.hpp
// (ReadMeshDeviceProfilerResults) and tt_metal/api/tt-metalium/experimental/profiler.hpp
// (GetLatestProgramsPerfData, ProgramAnalysisData) and not yet compiled against tt-metal 0.78.
#include <tt-metalium/experimental/profiler.hpp>

extern "C" ttr_status ttr_device_profiler_read(ttr_device *device, ttr_program_time *out, size_t capacity,
                                               size_t *count) {
    return guard(TTR_ERR_INTERNAL, [&] {
        need(device, "device");
        need(count, "count");
        if (capacity > 0) {
            need(out, "out");
        }
        *count = 0;
        const char *enabled = std::getenv("TT_METAL_DEVICE_PROFILER");
        if (enabled == nullptr || std::strcmp(enabled, "1") != 0) {
            throw HostError{TTR_ERR_UNSUPPORTED,
                            "tt-metal's device profiler is off: run with TT_METAL_DEVICE_PROFILER=1 on a tt-metal "
                            "built with the device profiler"};
        }
        MDevice &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        on_card(d, "ttr_device_profiler_read", [&] { tt::tt_metal::ReadMeshDeviceProfilerResults(*d.mesh); });
        std::vector<ttr_program_time> times;
        for (const auto &chip : tt::tt_metal::experimental::GetLatestProgramsPerfData()) {
            for (const auto &program : chip.second) {
                auto it = program.program_analyses_results.find("DEVICE KERNEL DURATION [ns]");
                if (it == program.program_analyses_results.end()) {
                    continue;
                }
                times.push_back(ttr_program_time{program.program_execution_uid.runtime_id, it->second.start_timestamp,
                                                 it->second.duration});
            }
        }
        std::sort(times.begin(), times.end(),
                  [](const ttr_program_time &a, const ttr_program_time &b) { return a.start < b.start; });
        *count = times.size();
        std::copy_n(times.begin(), std::min(capacity, times.size()), out);
    });
}
