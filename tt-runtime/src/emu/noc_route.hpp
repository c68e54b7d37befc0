// The NoC links a transfer's data occupies on Blackhole's 17x12 torus, added up per program in a
// ttr_occupancy so the cost model can bound a program by its busiest link and DRAM bank.
//
// Routes follow tt-isa-documentation's "Routing Paths" (WormholeB0/NoC/RoutingPaths.md; Blackhole's NoC has
// the same routers on a 17x12 torus): NoC 0 flows +x and +y, a unicast going along x first, then y; NoC 1
// flows -x and -y, along y first, then x; both wrap at the torus edges. A multicast (tt-metal issues them
// without NOC_CMD_BRCST_XY, so x is the major axis) goes along x to the rectangle's first column in the
// NoC's direction (unless the sender's column is inside the rectangle), then along y from the sender's row
// through every row of the rectangle, and at each of those rows along x until it has passed every column
// of the rectangle.
#pragma once

#include <cstdint>

#include "ttr.h"

namespace ttr {

// Adds `bytes` to every link from NoC (sx, sy) to (dx, dy) on NoC `noc`.
void route_unicast(ttr_occupancy &into, uint32_t noc, uint32_t sx, uint32_t sy, uint32_t dx, uint32_t dy,
                   uint64_t bytes);

// Adds `bytes` to every link of the multicast tree from NoC (sx, sy) to the rectangle lo..hi (inclusive,
// lo <= hi; the part outside the torus is dropped) on NoC `noc`.
void route_multicast(ttr_occupancy &into, uint32_t noc, uint32_t sx, uint32_t sy, ttr_core lo, ttr_core hi,
                     uint64_t bytes);

}  // namespace ttr
