// Happens-before between the kernels of one run, by vector clocks: which NoC writes into a core's
// CBs a kernel there is ordered after when it pushes those pages.
//
// The scheduler resumes kernels in a fixed order, so a sender's multicast has often landed before
// the receiver looks at its CB, whether or not the receiver waited for the sender's semaphore. A
// receiver that pushes the pages without that wait then passes here and races on silicon. So every
// semaphore update releases its kernel's clock into the semaphore word, every completed semaphore
// wait acquires the word's clock, every NoC write that lands in a core's CB region is recorded with
// its writer's clock, and a CB push fails when a write into its pages is not ordered before it.
// The other way round, a write that lands in CB pages after their last push must be ordered after
// that push (the receiver freed them and told the writer): else the receiver pushed too early.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ttr {

// A NoC write that landed in a core's CB region and has not been pushed yet.
struct Landing {
    uint32_t off = 0;
    uint32_t size = 0;
    uint32_t writer = 0;  // the writing kernel's context
    uint32_t epoch = 0;   // the writer's own clock when it landed
};

class Order {
  public:
    Order(uint32_t contexts, uint32_t cores);
    // A semaphore update by `ctx` to the word at `off` of `core`.
    void release(uint32_t ctx, uint32_t core, uint32_t off);
    // A semaphore wait by `ctx` on the word at `off` of `core` that completed.
    void acquire(uint32_t ctx, uint32_t core, uint32_t off);
    // A write by `writer` of [off, off + size) of `core`'s L1 landed.
    void landed(uint32_t writer, uint32_t core, uint32_t off, uint32_t size);
    // A write into [off, off + size) of `core` that `ctx` is not ordered after, or null; forgets the
    // landings that range covers whole.
    const Landing *unordered(uint32_t ctx, uint32_t core, uint32_t off, uint32_t size);
    // `ctx` pushed page `page` of the CB in `slot` (core * NUM_CBS + id) of `pages` pages.
    void pushed(uint32_t ctx, uint32_t slot, uint32_t page, uint32_t pages);
    // The context that last pushed `page` of the CB in `slot` if `writer` is not ordered after that
    // push, else -1.
    int64_t unordered_push(uint32_t writer, uint32_t slot, uint32_t page) const;

  private:
    uint32_t *clock(uint32_t ctx) { return clocks_.data() + static_cast<size_t>(ctx) * n_; }

    uint32_t n_;
    std::vector<uint32_t> clocks_;                               // [ctx][ctx]
    std::unordered_map<uint64_t, std::vector<uint32_t>> words_;  // released clocks by (core, offset)
    std::vector<std::vector<Landing>> landings_;                 // [core]
    struct Push {
        uint32_t pusher = UINT32_MAX;
        uint32_t epoch = 0;
    };
    std::unordered_map<uint32_t, std::vector<Push>> pushes_;  // [slot][page], CBs with a push
    Landing found_;
};

}  // namespace ttr
