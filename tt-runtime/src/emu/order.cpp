// Vector clocks of one run's kernels (order.hpp).
#include "order.hpp"

#include <algorithm>

namespace ttr {

namespace {

uint64_t word_key(uint32_t core, uint32_t off) { return (static_cast<uint64_t>(core) << 32) | off; }

}  // namespace

Order::Order(uint32_t contexts, uint32_t cores)
    : n_(contexts), clocks_(static_cast<size_t>(contexts) * contexts, 0), landings_(cores) {
    for (uint32_t i = 0; i < n_; ++i) {
        clock(i)[i] = 1;
    }
}

void Order::release(uint32_t ctx, uint32_t core, uint32_t off) {
    std::vector<uint32_t> &w = words_[word_key(core, off)];
    w.resize(n_, 0);
    const uint32_t *own = clock(ctx);
    for (uint32_t i = 0; i < n_; ++i) {
        w[i] = std::max(w[i], own[i]);
    }
    clock(ctx)[ctx]++;
}

void Order::acquire(uint32_t ctx, uint32_t core, uint32_t off) {
    auto it = words_.find(word_key(core, off));
    if (it == words_.end()) {
        return;
    }
    uint32_t *own = clock(ctx);
    for (uint32_t i = 0; i < n_; ++i) {
        own[i] = std::max(own[i], it->second[i]);
    }
}

void Order::landed(uint32_t writer, uint32_t core, uint32_t off, uint32_t size) {
    landings_[core].push_back(Landing{off, size, writer, clock(writer)[writer]});
}

const Landing *Order::unordered(uint32_t ctx, uint32_t core, uint32_t off, uint32_t size) {
    std::vector<Landing> &ls = landings_[core];
    const uint32_t *own = clock(ctx);
    for (const Landing &l : ls) {
        if (l.off < off + size && off < l.off + l.size && own[l.writer] < l.epoch) {
            found_ = l;
            return &found_;
        }
    }
    ls.erase(std::remove_if(ls.begin(), ls.end(),
                            [&](const Landing &l) { return l.off >= off && l.off + l.size <= off + size; }),
             ls.end());
    return nullptr;
}

void Order::pushed(uint32_t ctx, uint32_t slot, uint32_t page, uint32_t pages) {
    std::vector<Push> &ps = pushes_[slot];
    ps.resize(pages);
    ps[page] = Push{ctx, clock(ctx)[ctx]};
}

int64_t Order::unordered_push(uint32_t writer, uint32_t slot, uint32_t page) const {
    auto it = pushes_.find(slot);
    if (it == pushes_.end() || page >= it->second.size()) {
        return -1;
    }
    const Push &p = it->second[page];
    if (p.pusher == UINT32_MAX || clocks_[static_cast<size_t>(writer) * n_ + p.pusher] >= p.epoch) {
        return -1;
    }
    return p.pusher;
}

}  // namespace ttr
