// Stand-in for tt-metal's api/compute/tile_move_copy.h: the names live in ttr_emu/compute.h.
#pragma once
#include "ttr_emu/compute.h"
