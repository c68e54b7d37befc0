// Where a program's runtime args and semaphores live in each core's kernel-config region, laid out
// as the pinned tt-metal lays out its kernel config buffer
// (tt_metal/impl/program/dispatch.cpp: finalize_rt_args, finalize_sems, finalize_cbs):
//   unique runtime args: per kernel group (cores running the same kernels), each kernel's slot as
//     large as its most args on any core of the group, slots back to back, the group's total
//     aligned to 16 B; the region is as large as the largest group needs;
//   common runtime args next: per group, each kernel's slot aligned to 16 B;
//   semaphores next: 16 B per id up to the highest id;
//   then the CB configs (16 B per CB id up to the highest) and, on Blackhole, the kernel binaries.
// The emulator keeps CB configs in its own tables and runs host-compiled kernels, so neither is
// written here; the RISC-V binaries' size is not modelled. With at most 341 args per kernel per
// core, 16 semaphores and 64 CBs, everything but the binaries always fits the region
// (static_assert below).
#include <map>

#include "emu.hpp"

namespace ttr {

namespace {

constexpr uint32_t CONFIG_ALIGN = L1_ALIGN;

constexpr uint32_t align_up(uint32_t x) { return (x + CONFIG_ALIGN - 1) / CONFIG_ALIGN * CONFIG_ALIGN; }

// The worst case: three kernels with 341 unique and 341 common args each, every semaphore and CB.
static_assert(align_up(3 * MAX_RTA * 4) + 3 * align_up(MAX_RTA * 4) + MAX_SEMS * SEM_STRIDE + NUM_CBS * CB_CONFIG_BYTES <=
                  KERNEL_CONFIG_SIZE,
              "runtime args, semaphores and CB configs always fit the kernel-config region");

// Kernel ids in tt-metal's kernel-group order: the reader (BRISC), the writer (NCRISC), compute.
std::vector<uint32_t> group_kernels(const Program &prog, uint32_t core) {
    static const ttr_kernel_role ORDER[3] = {TTR_ROLE_READER, TTR_ROLE_WRITER, TTR_ROLE_COMPUTE};
    std::vector<uint32_t> ids;
    for (ttr_kernel_role role : ORDER) {
        for (uint32_t k = 0; k < prog.kernels.size(); ++k) {
            if (prog.kernels[k].build.role == role && prog.kernels[k].on_core[core] != 0) {
                ids.push_back(k);
            }
        }
    }
    return ids;
}

}  // namespace

KernelConfigLayout layout_kernel_config(const Program &prog, const ArgTables &args) {
    const uint32_t ncores = static_cast<uint32_t>(prog.cbs.size());
    KernelConfigLayout l;
    l.args_offset.assign(prog.kernels.size(), std::vector<uint32_t>(ncores, 0));
    l.common_offset.assign(prog.kernels.size(), std::vector<uint32_t>(ncores, 0));
    std::map<std::vector<uint32_t>, std::vector<uint32_t>> groups;  // kernel ids -> cores
    for (uint32_t i = 0; i < ncores; ++i) {
        std::vector<uint32_t> ids = group_kernels(prog, i);
        if (!ids.empty()) {
            groups[ids].push_back(i);
        }
    }
    uint32_t unique_bytes = 0;
    for (const auto &[ids, cores] : groups) {
        uint32_t offset = 0;
        for (uint32_t k : ids) {
            size_t most = 0;
            for (uint32_t i : cores) {
                most = std::max(most, args.unique[k][i].size());
                l.args_offset[k][i] = offset;
            }
            offset += static_cast<uint32_t>(most) * 4;
        }
        unique_bytes = std::max(unique_bytes, align_up(offset));
    }
    uint32_t common_bytes = 0;
    for (const auto &[ids, cores] : groups) {
        uint32_t offset = unique_bytes;
        for (uint32_t k : ids) {
            for (uint32_t i : cores) {
                l.common_offset[k][i] = offset;
            }
            offset = align_up(offset + static_cast<uint32_t>(args.common[k].size()) * 4);
        }
        common_bytes = std::max(common_bytes, offset - unique_bytes);
    }
    l.sem_offset = unique_bytes + common_bytes;
    return l;
}

}  // namespace ttr
