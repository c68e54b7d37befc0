// State of one program run: kernel contexts, CB ring state, compute (DST) state, and the helpers
// the data-movement and compute halves of the kernel API share.
#pragma once

#include <ucontext.h>

#include <cstdint>
#include <string>
#include <vector>

#include "emu.hpp"
#include "order.hpp"

namespace ttr {

struct CbState {
    uint16_t received = 0;  // pages pushed, 16-bit like the hardware counters
    uint16_t acked = 0;     // pages popped
    uint32_t rd_page = 0;
    uint32_t wr_page = 0;
    uint32_t reserved = 0;   // pages reserved and not yet pushed
    uint32_t waited = 0;     // pages waited for and not yet popped
    uint32_t pack_next = 0;  // next sequential pack_tile slot in the reserved area
};

enum class WaitKind { None, CbFront, CbBack, SemEq, SemMin, Yield };

struct Wait {
    WaitKind kind = WaitKind::None;
    uint32_t cb = 0;
    uint32_t pages = 0;
    volatile uint32_t *sem = nullptr;
    uint32_t sem_addr = 0;
    uint32_t value = 0;
};

// A queued NoC transfer; it lands at the matching barrier.
struct Xfer {
    uint8_t *dst;
    const uint8_t *src;
    uint32_t size;
    uint32_t local;      // L1 offset on the issuing core: destination of a read, source of a write
    bool linked_mcast;   // a multicast issued with linked = true
    int32_t dst_core = -1;  // a write's destination core, -1 for DRAM
    uint32_t dst_off = 0;   // and its L1 offset there
};

enum class Regs { Idle, Acquired, Committed, Waited, Legacy };

struct ComputeState {
    bool started = false;
    uint32_t init = UINT32_MAX;  // last InitKind, UINT32_MAX before any
    uint32_t sfpu_inits = 0;     // bit per SfpuOp
    Regs regs = Regs::Idle;
    bool l1_acc = false;
    uint32_t relu_mode = 0;        // the packer's ReLU mode (ckernel::ReluType), 0 = none
    float relu_threshold = 0.0f;   // its threshold, read as bf16 (modes 2 and 3)
    bool written[16] = {};
    alignas(64) float dst[16][TILE];
};

enum class CtxState { Ready, Blocked, Done };

struct Run;

struct Ctx {
    Run *run;
    uint32_t index;  // in Run::ctxs
    uint32_t core;
    uint32_t kernel;
    const KernelDef *def;
    ucontext_t uc;
    void *stack = nullptr;
    CtxState state = CtxState::Ready;
    Wait wait;
    ttr_counters *counters;
    std::vector<Xfer> reads, writes;
    uint32_t num_args = 0, num_common = 0;
    uint32_t args_off = 0, common_off = 0;
    std::unique_ptr<ComputeState> cs;
};

// A linked NoC transaction open on one core's NIU of one NoC (NOC_CMD_VC_LINKED): the next
// request that NIU issues, from any of the core's kernels on that NoC, belongs to it.
struct LinkedTxn {
    bool open = false;
    uint64_t rect = 0;    // the multicast rectangle's coordinate bits
    uint32_t kernel = 0;  // the kernel that opened it
};

struct Run {
    Device *dev;
    Program *prog;
    std::vector<CbState> cbs;  // [core * NUM_CBS + id]
    std::vector<Ctx> ctxs;
    std::vector<LinkedTxn> linked;  // [core * 2 + noc]
    ucontext_t sched;
    uint32_t sem_base = 0;  // L1 offset of semaphore 0 (KernelConfigLayout)
    bool failed = false;
    std::string error;
    uint64_t events = 0;  // bumped by every state change another kernel may wait for
    std::unique_ptr<Order> order;  // happens-before between the contexts
};

// The context running on this thread (set by the scheduler).
Ctx &current();
// Records a kernel error and abandons the run; never returns.
[[noreturn]] void kfail(const char *format, ...) __attribute__((format(printf, 1, 2)));
// "core (x,y) reader 'name'" for messages.
std::string who(const Ctx &c);
// The CB config and state on the current core; fails the kernel if the CB is not configured there.
const CbConfig &cb_config(Ctx &c, int32_t cb, const char *op);
CbState &cb_state(Ctx &c, uint32_t cb);
// Host pointer to a tile of a CB for compute: `index` pages past the read (or write) pointer.
uint8_t *cb_read_tile(Ctx &c, uint32_t cb, uint32_t index, const char *op);
uint8_t *cb_write_tile(Ctx &c, uint32_t cb, uint32_t index, const char *op);

void fill_compute_abi(ttr_emu::Abi &abi);

}  // namespace ttr
