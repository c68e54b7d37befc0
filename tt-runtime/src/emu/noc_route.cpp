// NoC routes on Blackhole's torus (noc_route.hpp) and the C API's ttr_noc_route over them.
#include "noc_route.hpp"

#include <algorithm>

#include "emu.hpp"

namespace ttr {

namespace {

static_assert(TTR_NOC_TORUS_X == NOC_TORUS_X && TTR_NOC_TORUS_Y == NOC_TORUS_Y && TTR_DRAM_BANKS == DRAM_BANKS,
              "ttr.h's occupancy shape is the emulator's torus and banks");

enum Axis { ALONG_X = 0, ALONG_Y = 1 };

// The next router after `at` on an axis of `size` routers, in NoC `noc`'s direction.
uint32_t next(uint32_t noc, uint32_t at, uint32_t size) { return noc == 0 ? (at + 1) % size : (at + size - 1) % size; }

void occupy(ttr_occupancy &o, uint32_t noc, uint32_t x, uint32_t y, Axis axis, uint64_t bytes) {
    o.link_bytes[noc][y][x][axis] += bytes;
}

bool within(uint32_t v, uint32_t lo, uint32_t hi) { return v >= lo && v <= hi; }

}  // namespace

void route_unicast(ttr_occupancy &into, uint32_t noc, uint32_t sx, uint32_t sy, uint32_t dx, uint32_t dy,
                   uint64_t bytes) {
    uint32_t x = sx % NOC_TORUS_X, y = sy % NOC_TORUS_Y;
    dx %= NOC_TORUS_X;
    dy %= NOC_TORUS_Y;
    if (noc == 0) {
        for (; x != dx; x = next(noc, x, NOC_TORUS_X)) {
            occupy(into, noc, x, y, ALONG_X, bytes);
        }
        for (; y != dy; y = next(noc, y, NOC_TORUS_Y)) {
            occupy(into, noc, x, y, ALONG_Y, bytes);
        }
    } else {
        for (; y != dy; y = next(noc, y, NOC_TORUS_Y)) {
            occupy(into, noc, x, y, ALONG_Y, bytes);
        }
        for (; x != dx; x = next(noc, x, NOC_TORUS_X)) {
            occupy(into, noc, x, y, ALONG_X, bytes);
        }
    }
}

void route_multicast(ttr_occupancy &into, uint32_t noc, uint32_t sx, uint32_t sy, ttr_core lo, ttr_core hi,
                     uint64_t bytes) {
    hi.x = std::min(hi.x, NOC_TORUS_X - 1);
    hi.y = std::min(hi.y, NOC_TORUS_Y - 1);
    if (lo.x > hi.x || lo.y > hi.y) {
        return;
    }
    const uint32_t columns = hi.x - lo.x + 1, rows = hi.y - lo.y + 1;
    const uint32_t first_x = noc == 0 ? lo.x : hi.x;
    uint32_t x = sx % NOC_TORUS_X, y = sy % NOC_TORUS_Y;
    if (!within(x, lo.x, hi.x)) {
        for (; x != first_x; x = next(noc, x, NOC_TORUS_X)) {
            occupy(into, noc, x, y, ALONG_X, bytes);
        }
    }
    for (uint32_t rows_left = rows;; y = next(noc, y, NOC_TORUS_Y)) {
        if (within(y, lo.y, hi.y)) {
            for (uint32_t bx = x, passed = 0;; bx = next(noc, bx, NOC_TORUS_X)) {
                if (within(bx, lo.x, hi.x) && ++passed == columns) {
                    break;
                }
                occupy(into, noc, bx, y, ALONG_X, bytes);
            }
            if (--rows_left == 0) {
                break;
            }
        }
        occupy(into, noc, x, y, ALONG_Y, bytes);
    }
}

}  // namespace ttr
