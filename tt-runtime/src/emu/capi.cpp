// The ttr.h entry points for the emulator: argument checking, handles, the thread-local last
// error, and translation of C++ failures into status codes. No exception crosses this boundary.
#include <algorithm>
#include <cstring>
#include <new>

#include "../common/cb_in_buffer.hpp"
#include "emu.hpp"
#include "noc_route.hpp"

struct ttr_device {
    std::shared_ptr<ttr::Device> d;
};
struct ttr_buffer {
    std::shared_ptr<ttr::Buffer> b;
};
struct ttr_program {
    std::shared_ptr<ttr::Program> p;
};
struct ttr_trace {
    std::shared_ptr<ttr::Trace> t;
};

namespace {

thread_local std::string t_last_error;

using ttr::fmt;
using ttr::HostError;

template <typename F>
ttr_status guard(F &&f) {
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
        t_last_error = e.what();
        return TTR_ERR_INTERNAL;
    }
}

[[noreturn]] void bad(const std::string &message) { throw HostError{TTR_ERR_INVALID_ARGUMENT, message}; }

void need(const void *p, const char *what) {
    if (p == nullptr) {
        bad(fmt("%s is null", what));
    }
}

// Core indices covered by a list of ranges; every core must be on the grid.
std::vector<uint8_t> cores_of(const ttr::Device &d, const ttr_core_range *ranges, size_t n) {
    if (n == 0) {
        bad("the core range list is empty");
    }
    need(ranges, "ranges");
    std::vector<uint8_t> on(d.cores.size(), 0);
    for (size_t i = 0; i < n; ++i) {
        const ttr_core_range &r = ranges[i];
        if (r.start.x > r.end.x || r.start.y > r.end.y) {
            bad(fmt("core range (%u,%u)-(%u,%u) is empty", r.start.x, r.start.y, r.end.x, r.end.y));
        }
        if (r.end.x >= d.gx || r.end.y >= d.gy) {
            bad(fmt("core range (%u,%u)-(%u,%u) leaves the %ux%u grid", r.start.x, r.start.y, r.end.x, r.end.y, d.gx,
                    d.gy));
        }
        for (uint32_t y = r.start.y; y <= r.end.y; ++y) {
            for (uint32_t x = r.start.x; x <= r.end.x; ++x) {
                on[static_cast<size_t>(d.core_index(x, y))] = 1;
            }
        }
    }
    return on;
}

// A kernel's per-CB unpack-to-dest modes. UnpackToDestFp32 unpacks 32-bit datums into DST, so it is
// a compute setting that needs the 32-bit (fp32_dest_acc) DST: a 16-bit DST cannot hold them.
std::array<uint8_t, ttr::NUM_CBS> unpack_modes(const ttr_kernel_config &config, const ttr::KernelBuild &build) {
    std::array<uint8_t, ttr::NUM_CBS> modes{};
    if (config.num_unpack_to_dest_mode > ttr::NUM_CBS) {
        bad(fmt("kernel '%s': %zu unpack_to_dest_mode entries; there is one per CB id, at most %u",
                build.name.c_str(), config.num_unpack_to_dest_mode, ttr::NUM_CBS));
    }
    if (config.num_unpack_to_dest_mode > 0) {
        need(config.unpack_to_dest_mode, "config.unpack_to_dest_mode");
    }
    for (size_t cb = 0; cb < config.num_unpack_to_dest_mode; ++cb) {
        const ttr_unpack_to_dest_mode mode = config.unpack_to_dest_mode[cb];
        if (mode > TTR_UNPACK_TO_DEST_FP32) {
            bad(fmt("kernel '%s': unknown unpack_to_dest_mode %u for cb %zu", build.name.c_str(), mode, cb));
        }
        if (mode == TTR_UNPACK_TO_DEST_FP32 && build.role != TTR_ROLE_COMPUTE) {
            bad(fmt("kernel '%s': unpack_to_dest_mode is a compute kernel setting, but this is a %s kernel "
                    "(cb %zu is UnpackToDestFp32)",
                    build.name.c_str(), ttr::role_name(build.role), cb));
        }
        if (mode == TTR_UNPACK_TO_DEST_FP32 && !build.fp32_dest) {
            bad(fmt("kernel '%s': cb %zu is UnpackToDestFp32, which unpacks 32-bit datums into DST; enable "
                    "fp32_dest_acc (a 16-bit DST cannot hold them)",
                    build.name.c_str(), cb));
        }
        modes[cb] = mode;
    }
    return modes;
}

// Host transfers: refused during trace capture and on a lost device.
void no_capture(const ttr::Device &d, const char *op) {
    d.check_alive();
    if (d.capturing != nullptr) {
        throw HostError{TTR_ERR_TRACE, fmt("%s during trace capture: the host may not read or write buffers "
                                           "while a trace is being captured",
                                           op)};
    }
}

uint64_t dram_page_stride(uint32_t page) {
    return (static_cast<uint64_t>(page) + ttr::DRAM_READ_ALIGN - 1) / ttr::DRAM_READ_ALIGN * ttr::DRAM_READ_ALIGN;
}

// Copies a whole DRAM buffer to or from host memory, page by page.
void dram_copy_pages(ttr::Buffer &b, uint64_t first, uint64_t pages, uint8_t *host, bool to_device) {
    uint64_t stride = dram_page_stride(b.page_size);
    for (uint64_t p = first; p < first + pages; ++p) {
        auto &bank = b.device->banks[p % ttr::DRAM_BANKS];
        uint8_t *dev = bank.data() + b.address + (p / ttr::DRAM_BANKS) * stride;
        uint8_t *h = host + (p - first) * b.page_size;
        if (to_device) {
            memcpy(dev, h, b.page_size);
        } else {
            memcpy(h, dev, b.page_size);
        }
    }
}

void dram_copy(ttr::Buffer &b, uint8_t *host, bool to_device) {
    dram_copy_pages(b, 0, b.size / b.page_size, host, to_device);
}

ttr::Core &l1_core(ttr::Buffer &b, ttr_core core, uint32_t offset, uint64_t size) {
    if (b.dram) {
        bad("this is a DRAM buffer; use ttr_buffer_write / ttr_buffer_read");
    }
    int32_t idx = b.device->core_index(core.x, core.y);
    if (idx < 0) {
        bad(fmt("core (%u,%u) is outside the %ux%u grid", core.x, core.y, b.device->gx, b.device->gy));
    }
    if (static_cast<uint64_t>(offset) + size > b.size) {
        bad(fmt("range %u+%llu exceeds the L1 buffer of %llu bytes", offset, static_cast<unsigned long long>(size),
                static_cast<unsigned long long>(b.size)));
    }
    b.device->touch(static_cast<uint32_t>(idx));
    return b.device->cores[static_cast<size_t>(idx)];
}

// The L1 buffer a CB is to live in (config.buffer), checked: an L1 buffer of the program's device in which
// the CB fits at config.buffer_offset (ttr_common::cb_in_buffer_refusal).
std::shared_ptr<ttr::Buffer> buffer_for_cb(const ttr_cb_config &config, const ttr::Program &p) {
    const std::shared_ptr<ttr::Buffer> &b = config.buffer->b;
    if (b->dram) {
        bad(fmt("cb %u: its buffer is a DRAM buffer; a CB can live only in an L1 buffer (ttr_buffer_create_l1)",
                config.id));
    }
    if (b->device != p.device) {
        bad(fmt("cb %u: its L1 buffer belongs to another device; create the buffer on the program's device",
                config.id));
    }
    const std::string refusal =
        ttr_common::cb_in_buffer_refusal(config.id, config.total_size, config.buffer_offset, b->size, ttr::L1_ALIGN);
    if (!refusal.empty()) {
        bad(refusal);
    }
    return b;
}

void add_counters(ttr_counters &into, const ttr_counters &from) {
    auto *dst = reinterpret_cast<uint64_t *>(&into);
    const auto *src = reinterpret_cast<const uint64_t *>(&from);
    for (size_t i = 0; i < sizeof(ttr_counters) / sizeof(uint64_t); ++i) {
        dst[i] += src[i];
    }
}

void run_or_record(ttr::Device &d, const std::shared_ptr<ttr::Program> &p, const ttr::ArgTables &args) {
    if (d.capturing != nullptr) {
        d.capturing->items.push_back(ttr::TraceItem{p, args});
        return;
    }
    d.count_launch();
    std::string message;
    ttr_status st = ttr::run_program(d, *p, args, &message);
    if (st != TTR_OK) {
        throw HostError{st, message};
    }
}

}  // namespace

extern "C" {

const char *ttr_last_error(void) { return t_last_error.c_str(); }

const char *ttr_backend_name(void) { return "emulator"; }

ttr_status ttr_device_count(uint32_t *count) {
    return guard([&] {
        need(count, "count");
        *count = ttr::device_count();
    });
}

ttr_status ttr_emu_set_device_count(uint32_t count) {
    return guard([&] { ttr::set_device_count(count); });
}

ttr_status ttr_emu_fail_after(ttr_device *device, uint64_t launches) {
    return guard([&] {
        need(device, "device");
        ttr::Device &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        d.fault_armed = true;
        d.launches_left = launches;
    });
}

ttr_status ttr_device_open(uint32_t device_id, ttr_dispatch dispatch, ttr_device **out) {
    return guard([&] {
        need(out, "out");
        if (dispatch != TTR_DISPATCH_TENSIX && dispatch != TTR_DISPATCH_ETH) {
            bad(fmt("unknown dispatch core type %u", dispatch));
        }
        auto d = std::make_shared<ttr::Device>(device_id, dispatch);
        *out = new ttr_device{std::move(d)};
    });
}

void ttr_device_close(ttr_device *device) { delete device; }

ttr_status ttr_device_get_info(const ttr_device *device, ttr_device_info *out) {
    return guard([&] {
        need(device, "device");
        need(out, "out");
        const ttr::Device &d = *device->d;
        *out = ttr_device_info{d.gx,
                               d.gy,
                               d.dispatch,
                               ttr::L1_SIZE,
                               ttr::L1_UNRESERVED_BASE,
                               ttr::L1_ALIGN,
                               ttr::DRAM_READ_ALIGN,
                               ttr::DRAM_BANKS,
                               static_cast<uint32_t>(d.cores.size()),
                               ttr::NUM_CBS,
                               ttr::MAX_RTA,
                               1};
    });
}

ttr_status ttr_device_worker_core(const ttr_device *device, ttr_core logical, ttr_core *noc) {
    return guard([&] {
        need(device, "device");
        need(noc, "noc");
        int32_t idx = device->d->core_index(logical.x, logical.y);
        if (idx < 0) {
            bad(fmt("logical core (%u,%u) is outside the %ux%u grid", logical.x, logical.y, device->d->gx,
                    device->d->gy));
        }
        const ttr::Core &c = device->d->cores[static_cast<size_t>(idx)];
        *noc = ttr_core{c.nx, c.ny};
    });
}

ttr_status ttr_device_dram_core(const ttr_device *device, uint32_t bank, ttr_core *noc) {
    return guard([&] {
        need(device, "device");
        need(noc, "noc");
        if (bank >= ttr::DRAM_BANKS) {
            bad(fmt("DRAM bank %u does not exist (there are %u)", bank, ttr::DRAM_BANKS));
        }
        *noc = device->d->dram_noc[bank];
    });
}

ttr_status ttr_device_l1_bank_core(const ttr_device *device, uint32_t bank, ttr_core *logical) {
    return guard([&] {
        need(device, "device");
        need(logical, "logical");
        const ttr::Device &d = *device->d;
        if (bank >= d.cores.size()) {
            bad(fmt("L1 bank %u does not exist (there are %zu, one per worker core)", bank, d.cores.size()));
        }
        *logical = ttr_core{d.cores[bank].lx, d.cores[bank].ly};
    });
}

ttr_status ttr_buffer_create_dram(ttr_device *device, uint64_t size, uint32_t page_size, ttr_buffer **out) {
    return guard([&] {
        need(device, "device");
        need(out, "out");
        if (page_size == 0 || size == 0 || size % page_size != 0) {
            bad(fmt("a DRAM buffer needs a non-zero size that is a multiple of the page size (size %llu, page %u)",
                    static_cast<unsigned long long>(size), page_size));
        }
        ttr::Device &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        uint64_t pages = size / page_size;
        uint64_t per_bank = (pages + ttr::DRAM_BANKS - 1) / ttr::DRAM_BANKS * dram_page_stride(page_size);
        uint64_t addr = 0;
        if (!d.dram_alloc.allocate(per_bank, &addr)) {
            throw HostError{TTR_ERR_OUT_OF_MEMORY,
                            fmt("DRAM is full: cannot allocate %llu bytes per bank",
                                static_cast<unsigned long long>(per_bank))};
        }
        d.grow_banks(addr + per_bank);
        auto b = std::make_shared<ttr::Buffer>();
        b->device = device->d;
        b->dram = true;
        b->size = size;
        b->page_size = page_size;
        b->address = static_cast<uint32_t>(addr);
        *out = new ttr_buffer{std::move(b)};
    });
}

ttr_status ttr_buffer_create_l1(ttr_device *device, uint32_t size, ttr_buffer **out) {
    return guard([&] {
        need(device, "device");
        need(out, "out");
        if (size == 0) {
            bad("an L1 buffer needs a non-zero size");
        }
        ttr::Device &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        uint64_t addr = 0;
        if (!d.l1_alloc.allocate(size, &addr)) {
            throw HostError{TTR_ERR_OUT_OF_MEMORY, fmt("L1 is full: cannot allocate %u bytes per core", size)};
        }
        auto b = std::make_shared<ttr::Buffer>();
        b->device = device->d;
        b->dram = false;
        b->size = size;
        b->page_size = size;
        b->address = static_cast<uint32_t>(addr);
        *out = new ttr_buffer{std::move(b)};
    });
}

void ttr_buffer_free(ttr_buffer *buffer) { delete buffer; }

uint32_t ttr_buffer_address(const ttr_buffer *buffer) { return buffer != nullptr ? buffer->b->address : 0; }

uint64_t ttr_buffer_size(const ttr_buffer *buffer) { return buffer != nullptr ? buffer->b->size : 0; }

ttr_status ttr_buffer_write(ttr_buffer *buffer, const void *data, uint64_t size) {
    return guard([&] {
        need(buffer, "buffer");
        need(data, "data");
        ttr::Buffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.device->mu);
        no_capture(*b.device, "ttr_buffer_write");
        if (!b.dram) {
            bad("this is an L1 buffer; use ttr_buffer_write_core");
        }
        if (size != b.size) {
            bad(fmt("write of %llu bytes to a buffer of %llu bytes", static_cast<unsigned long long>(size),
                    static_cast<unsigned long long>(b.size)));
        }
        dram_copy(b, const_cast<uint8_t *>(static_cast<const uint8_t *>(data)), true);
    });
}

ttr_status ttr_buffer_read(ttr_buffer *buffer, void *data, uint64_t size) {
    return guard([&] {
        need(buffer, "buffer");
        need(data, "data");
        ttr::Buffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.device->mu);
        no_capture(*b.device, "ttr_buffer_read");
        if (!b.dram) {
            bad("this is an L1 buffer; use ttr_buffer_read_core");
        }
        if (size != b.size) {
            bad(fmt("read of %llu bytes from a buffer of %llu bytes", static_cast<unsigned long long>(size),
                    static_cast<unsigned long long>(b.size)));
        }
        dram_copy(b, static_cast<uint8_t *>(data), false);
    });
}

ttr_status ttr_buffer_read_pages(ttr_buffer *buffer, uint64_t first, uint64_t pages, void *data, uint64_t size) {
    return guard([&] {
        need(buffer, "buffer");
        need(data, "data");
        ttr::Buffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.device->mu);
        no_capture(*b.device, "ttr_buffer_read_pages");
        if (!b.dram) {
            bad("this is an L1 buffer; use ttr_buffer_read_core");
        }
        uint64_t total = b.size / b.page_size;
        if (first > total || pages > total - first) {
            bad(fmt("pages %llu..%llu of a buffer of %llu pages", static_cast<unsigned long long>(first),
                    static_cast<unsigned long long>(first + pages), static_cast<unsigned long long>(total)));
        }
        if (size != pages * b.page_size) {
            bad(fmt("read of %llu bytes for %llu pages of %u bytes", static_cast<unsigned long long>(size),
                    static_cast<unsigned long long>(pages), b.page_size));
        }
        dram_copy_pages(b, first, pages, static_cast<uint8_t *>(data), false);
    });
}

ttr_status ttr_buffer_write_core(ttr_buffer *buffer, ttr_core core, uint32_t offset, const void *data,
                                 uint64_t size) {
    return guard([&] {
        need(buffer, "buffer");
        need(data, "data");
        ttr::Buffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.device->mu);
        no_capture(*b.device, "ttr_buffer_write_core");
        ttr::Core &c = l1_core(b, core, offset, size);
        memcpy(c.l1 + b.address + offset, data, size);
    });
}

ttr_status ttr_buffer_read_core(ttr_buffer *buffer, ttr_core core, uint32_t offset, void *data, uint64_t size) {
    return guard([&] {
        need(buffer, "buffer");
        need(data, "data");
        ttr::Buffer &b = *buffer->b;
        std::lock_guard<std::mutex> lock(b.device->mu);
        no_capture(*b.device, "ttr_buffer_read_core");
        ttr::Core &c = l1_core(b, core, offset, size);
        memcpy(data, c.l1 + b.address + offset, size);
    });
}

ttr_status ttr_program_create(ttr_device *device, ttr_program **out) {
    return guard([&] {
        need(device, "device");
        need(out, "out");
        auto p = std::make_shared<ttr::Program>();
        p->device = device->d;
        size_t n = device->d->cores.size();
        p->cbs.resize(n);
        p->cb_end.assign(n, ttr::L1_UNRESERVED_BASE);
        p->buffer_cbs.resize(n);
        p->sems.resize(n);
        *out = new ttr_program{std::move(p)};
    });
}

void ttr_program_free(ttr_program *program) { delete program; }

ttr_status ttr_program_add_kernel(ttr_program *program, const ttr_kernel_config *config, uint32_t *kernel_id) {
    return guard([&] {
        need(program, "program");
        need(config, "config");
        need(kernel_id, "kernel_id");
        need(config->name, "config.name");
        need(config->source, "config.source");
        if (config->role > TTR_ROLE_COMPUTE) {
            bad(fmt("unknown kernel role %u", config->role));
        }
        if (config->math_fidelity >= TTR_FIDELITY_COUNT) {
            bad(fmt("unknown math fidelity %u", config->math_fidelity));
        }
        if (config->noc > 1) {
            bad(fmt("NoC %u does not exist (0 or 1)", config->noc));
        }
        ttr::Program &p = *program->p;
        std::vector<uint8_t> on = cores_of(*p.device, config->ranges, config->num_ranges);
        ttr::KernelBuild build;
        build.name = config->name;
        build.source = config->source;
        build.role = config->role;
        if (config->num_compile_args > 0) {
            need(config->compile_args, "config.compile_args");
            build.compile_args.assign(config->compile_args, config->compile_args + config->num_compile_args);
        }
        if (config->num_defines > 0) {
            need(config->defines, "config.defines");
        }
        for (size_t i = 0; i < config->num_defines; ++i) {
            need(config->defines[i].name, "define name");
            need(config->defines[i].value, "define value");
            build.defines.emplace_back(config->defines[i].name, config->defines[i].value);
        }
        bool compute = config->role == TTR_ROLE_COMPUTE;
        build.fidelity = compute ? config->math_fidelity : static_cast<ttr_fidelity>(TTR_LOFI);
        build.fp32_dest = compute && config->fp32_dest_acc != 0;
        build.approx = compute && config->math_approx != 0;
        build.noc = compute ? 0 : config->noc;
        build.unpack_to_dest = unpack_modes(*config, build);
        for (const ttr::KernelDef &k : p.kernels) {
            for (size_t i = 0; i < on.size(); ++i) {
                if (on[i] != 0 && k.on_core[i] != 0 && k.build.role == build.role) {
                    const ttr::Core &c = p.device->cores[i];
                    bad(fmt("core (%u,%u) already runs %s kernel '%s'", c.lx, c.ly, ttr::role_name(build.role),
                            k.build.name.c_str()));
                }
            }
        }
        auto lib = ttr::load_kernel(build);
        std::lock_guard<std::mutex> lock(p.device->mu);
        size_t n = p.device->cores.size();
        p.kernels.push_back(ttr::KernelDef{std::move(build), std::move(lib), std::move(on)});
        p.args.unique.emplace_back(n);
        p.args.common.emplace_back();
        p.counters.emplace_back(n, ttr_counters{});
        *kernel_id = static_cast<uint32_t>(p.kernels.size() - 1);
    });
}

ttr_status ttr_program_add_cb(ttr_program *program, const ttr_cb_config *config) {
    return guard([&] {
        need(program, "program");
        need(config, "config");
        ttr::Program &p = *program->p;
        if (config->id >= ttr::NUM_CBS) {
            bad(fmt("cb id %u is out of range (0..%u)", config->id, ttr::NUM_CBS - 1));
        }
        if (config->page_size == 0 || config->total_size == 0 || config->total_size % config->page_size != 0) {
            bad(fmt("cb %u: total size %u is not a non-zero multiple of the page size %u", config->id,
                    config->total_size, config->page_size));
        }
        if (ttr::tile_bytes(config->format) == 0) {
            bad(fmt("cb %u: unknown data format %u", config->id, config->format));
        }
        std::vector<uint8_t> on = cores_of(*p.device, config->ranges, config->num_ranges);
        std::shared_ptr<ttr::Buffer> in;
        if (config->buffer != nullptr) {
            in = buffer_for_cb(*config, p);
        } else if (config->buffer_offset != 0) {
            bad(fmt("cb %u: buffer offset %u without a buffer; an offset places a CB inside an L1 buffer (set "
                    "buffer, or leave buffer_offset 0)",
                    config->id, config->buffer_offset));
        }
        std::lock_guard<std::mutex> lock(p.device->mu);
        size_t fullest = on.size();  // the core whose CBs end highest: the new CB goes above them everywhere
        for (size_t i = 0; i < on.size(); ++i) {
            if (on[i] == 0) {
                continue;
            }
            if (p.cbs[i][config->id].present) {
                const ttr::Core &c = p.device->cores[i];
                bad(fmt("cb %u is already configured on core (%u,%u)", config->id, c.lx, c.ly));
            }
            if (fullest == on.size() || p.cb_end[i] > p.cb_end[fullest]) {
                fullest = i;
            }
        }
        if (in) {
            const ttr::CbConfig cfg{true, in->address + config->buffer_offset, config->total_size, config->page_size,
                                    config->total_size / config->page_size, config->format};
            for (size_t i = 0; i < on.size(); ++i) {
                if (on[i] == 0) {
                    continue;
                }
                p.cbs[i][config->id] = cfg;
                p.buffer_cbs[i].emplace_back(cfg.addr, cfg.addr + cfg.total);
            }
            p.cb_buffers.push_back(std::move(in));
            return;
        }
        uint32_t addr = (p.cb_end[fullest] + ttr::L1_ALIGN - 1) / ttr::L1_ALIGN * ttr::L1_ALIGN;
        uint64_t end = static_cast<uint64_t>(addr) + config->total_size;
        if (end > ttr::L1_SIZE) {
            const ttr::Core &c = p.device->cores[fullest];
            throw HostError{TTR_ERR_OUT_OF_MEMORY,
                            fmt("cb %u of %u bytes does not fit in the L1 of core (%u,%u): it would end at 0x%llx, "
                                "L1 is 0x%x bytes and CBs start at 0x%x (above the firmware and the %u-byte "
                                "kernel-config region)",
                                config->id, config->total_size, c.lx, c.ly, static_cast<unsigned long long>(end),
                                ttr::L1_SIZE, ttr::L1_UNRESERVED_BASE, ttr::KERNEL_CONFIG_SIZE)};
        }
        for (size_t i = 0; i < on.size(); ++i) {
            if (on[i] == 0) {
                continue;
            }
            p.cbs[i][config->id] = ttr::CbConfig{true, addr, config->total_size, config->page_size,
                                                 config->total_size / config->page_size, config->format};
            p.cb_end[i] = static_cast<uint32_t>(end);
        }
    });
}

ttr_status ttr_program_add_semaphore(ttr_program *program, const ttr_core_range *ranges, size_t num_ranges,
                                     uint32_t initial_value, uint32_t *semaphore_id) {
    return guard([&] {
        need(program, "program");
        need(semaphore_id, "semaphore_id");
        ttr::Program &p = *program->p;
        std::vector<uint8_t> on = cores_of(*p.device, ranges, num_ranges);
        std::lock_guard<std::mutex> lock(p.device->mu);
        for (uint32_t id = 0; id < ttr::MAX_SEMS; ++id) {
            bool free = true;
            for (size_t i = 0; i < on.size() && free; ++i) {
                if (on[i] == 0) {
                    continue;
                }
                for (const auto &[sid, init] : p.sems[i]) {
                    if (sid == id) {
                        free = false;
                    }
                }
            }
            if (free) {
                for (size_t i = 0; i < on.size(); ++i) {
                    if (on[i] != 0) {
                        p.sems[i].emplace_back(id, initial_value);
                    }
                }
                *semaphore_id = id;
                return;
            }
        }
        bad(fmt("no free semaphore id on those cores (at most %u per core)", ttr::MAX_SEMS));
    });
}

ttr_status ttr_program_set_runtime_args(ttr_program *program, uint32_t kernel_id, ttr_core core, const uint32_t *args,
                                        size_t num_args) {
    return guard([&] {
        need(program, "program");
        ttr::Program &p = *program->p;
        std::lock_guard<std::mutex> lock(p.device->mu);
        if (kernel_id >= p.kernels.size()) {
            bad(fmt("kernel %u does not exist", kernel_id));
        }
        if (num_args > ttr::MAX_RTA) {
            bad(fmt("%zu runtime args for kernel '%s' on core (%u,%u); the limit is %u per kernel per core", num_args,
                    p.kernels[kernel_id].build.name.c_str(), core.x, core.y, ttr::MAX_RTA));
        }
        int32_t idx = p.device->core_index(core.x, core.y);
        if (idx < 0 || p.kernels[kernel_id].on_core[static_cast<size_t>(idx)] == 0) {
            bad(fmt("kernel '%s' does not run on core (%u,%u)", p.kernels[kernel_id].build.name.c_str(), core.x,
                    core.y));
        }
        if (num_args > 0) {
            need(args, "args");
        }
        p.args.unique[kernel_id][static_cast<size_t>(idx)].assign(args, args + num_args);
    });
}

ttr_status ttr_program_set_common_runtime_args(ttr_program *program, uint32_t kernel_id, const uint32_t *args,
                                               size_t num_args) {
    return guard([&] {
        need(program, "program");
        ttr::Program &p = *program->p;
        std::lock_guard<std::mutex> lock(p.device->mu);
        if (kernel_id >= p.kernels.size()) {
            bad(fmt("kernel %u does not exist", kernel_id));
        }
        if (num_args > ttr::MAX_RTA) {
            bad(fmt("%zu common runtime args for kernel '%s'; the limit is %u per kernel", num_args,
                    p.kernels[kernel_id].build.name.c_str(), ttr::MAX_RTA));
        }
        if (num_args > 0) {
            need(args, "args");
        }
        p.args.common[kernel_id].assign(args, args + num_args);
    });
}

ttr_status ttr_program_counters(const ttr_program *program, int32_t kernel_id, ttr_counters *out) {
    return guard([&] {
        need(program, "program");
        need(out, "out");
        const ttr::Program &p = *program->p;
        std::lock_guard<std::mutex> lock(p.device->mu);
        if (kernel_id >= 0 && static_cast<size_t>(kernel_id) >= p.kernels.size()) {
            bad(fmt("kernel %d does not exist", kernel_id));
        }
        *out = ttr_counters{};
        for (size_t k = 0; k < p.counters.size(); ++k) {
            if (kernel_id >= 0 && static_cast<size_t>(kernel_id) != k) {
                continue;
            }
            for (const ttr_counters &c : p.counters[k]) {
                add_counters(*out, c);
            }
        }
    });
}

ttr_status ttr_program_core_counters(const ttr_program *program, uint32_t kernel_id, ttr_core core,
                                     ttr_counters *out) {
    return guard([&] {
        need(program, "program");
        need(out, "out");
        const ttr::Program &p = *program->p;
        std::lock_guard<std::mutex> lock(p.device->mu);
        if (kernel_id >= p.kernels.size()) {
            bad(fmt("kernel %u does not exist", kernel_id));
        }
        int32_t idx = p.device->core_index(core.x, core.y);
        if (idx < 0) {
            bad(fmt("core (%u,%u) is outside the grid", core.x, core.y));
        }
        *out = p.counters[kernel_id][static_cast<size_t>(idx)];
    });
}

ttr_status ttr_program_reset_counters(ttr_program *program) {
    return guard([&] {
        need(program, "program");
        ttr::Program &p = *program->p;
        std::lock_guard<std::mutex> lock(p.device->mu);
        for (auto &per_core : p.counters) {
            for (ttr_counters &c : per_core) {
                c = ttr_counters{};
            }
        }
        p.occupancy = ttr_occupancy{};
    });
}

ttr_status ttr_program_occupancy(const ttr_program *program, ttr_occupancy *out) {
    return guard([&] {
        need(program, "program");
        need(out, "out");
        const ttr::Program &p = *program->p;
        std::lock_guard<std::mutex> lock(p.device->mu);
        *out = p.occupancy;
    });
}

ttr_status ttr_noc_route(uint32_t noc, ttr_core from, ttr_core to_lo, ttr_core to_hi, uint32_t multicast,
                         uint64_t bytes, ttr_occupancy *into) {
    return guard([&] {
        need(into, "into");
        if (noc >= TTR_NOCS) {
            bad(fmt("NoC %u does not exist (there are %u)", noc, static_cast<unsigned>(TTR_NOCS)));
        }
        for (const ttr_core &c : {from, to_lo, to_hi}) {
            if (c.x >= TTR_NOC_TORUS_X || c.y >= TTR_NOC_TORUS_Y) {
                bad(fmt("NoC coordinates (%u,%u) are outside the %ux%u torus", c.x, c.y,
                        static_cast<unsigned>(TTR_NOC_TORUS_X), static_cast<unsigned>(TTR_NOC_TORUS_Y)));
            }
        }
        if (to_lo.x > to_hi.x || to_lo.y > to_hi.y) {
            bad(fmt("the destination corners (%u,%u)..(%u,%u) are not lowest first", to_lo.x, to_lo.y, to_hi.x,
                    to_hi.y));
        }
        if (multicast != 0) {
            ttr::route_multicast(*into, noc, from.x, from.y, to_lo, to_hi, bytes);
        } else if (to_lo.x != to_hi.x || to_lo.y != to_hi.y) {
            bad("a unicast route has one destination: to_lo and to_hi must be equal");
        } else {
            ttr::route_unicast(*into, noc, from.x, from.y, to_lo.x, to_lo.y, bytes);
        }
    });
}

ttr_status ttr_enqueue_program(ttr_device *device, ttr_program *program, uint32_t blocking) {
    (void)blocking;
    return guard([&] {
        need(device, "device");
        need(program, "program");
        ttr::Device &d = *device->d;
        if (program->p->device != device->d) {
            bad("the program belongs to another device");
        }
        std::lock_guard<std::mutex> lock(d.mu);
        if (program->p->kernels.empty()) {
            bad("the program has no kernels");
        }
        if (d.capturing != nullptr && !program->p->ran) {
            throw HostError{TTR_ERR_TRACE, "a program enqueued during trace capture must have run once before the "
                                           "capture (that run compiles and loads it)"};
        }
        run_or_record(d, program->p, program->p->args);
        if (d.capturing == nullptr) {
            program->p->ran = true;
        }
    });
}

ttr_status ttr_finish(ttr_device *device) {
    return guard([&] {
        need(device, "device");
        ttr::Device &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        d.check_alive();
    });
}

ttr_status ttr_trace_begin(ttr_device *device, ttr_trace **out) {
    return guard([&] {
        need(device, "device");
        need(out, "out");
        ttr::Device &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.capturing != nullptr) {
            throw HostError{TTR_ERR_TRACE, "a trace capture is already in progress"};
        }
        auto t = std::make_shared<ttr::Trace>();
        t->device = device->d;
        d.capturing = t.get();
        *out = new ttr_trace{std::move(t)};
    });
}

ttr_status ttr_trace_end(ttr_device *device, ttr_trace *trace) {
    return guard([&] {
        need(device, "device");
        need(trace, "trace");
        ttr::Device &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.capturing != trace->t.get()) {
            throw HostError{TTR_ERR_TRACE, "this trace is not being captured"};
        }
        d.capturing = nullptr;
        trace->t->ended = true;
    });
}

ttr_status ttr_trace_replay(ttr_device *device, ttr_trace *trace, uint32_t blocking) {
    (void)blocking;
    return guard([&] {
        need(device, "device");
        need(trace, "trace");
        ttr::Device &d = *device->d;
        std::lock_guard<std::mutex> lock(d.mu);
        if (!trace->t->ended) {
            throw HostError{TTR_ERR_TRACE, "the trace has not been ended (ttr_trace_end) yet"};
        }
        if (trace->t->device != device->d) {
            bad("the trace belongs to another device");
        }
        if (d.capturing != nullptr) {
            throw HostError{TTR_ERR_TRACE, "cannot replay a trace during trace capture"};
        }
        for (const ttr::TraceItem &item : trace->t->items) {
            run_or_record(d, item.program, item.args);
        }
    });
}

void ttr_trace_release(ttr_trace *trace) {
    if (trace == nullptr) {
        return;
    }
    {
        ttr::Device &d = *trace->t->device;
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.capturing == trace->t.get()) {
            d.capturing = nullptr;
        }
    }
    delete trace;
}

ttr_status ttr_device_profiler_read(ttr_device *device, ttr_program_time *out, size_t capacity, size_t *count) {
    return guard([&] {
        need(device, "device");
        need(count, "count");
        if (capacity > 0) {
            need(out, "out");
        }
        *count = 0;
        throw HostError{TTR_ERR_UNSUPPORTED,
                        "the emulator has no device profiler: it counts work instead (ttr_program_counters), "
                        "from which tt_runtime::cost models device time"};
    });
}

}  // extern "C"
