// Stand-in for tt-metal's api/compute/eltwise_unary/where.h: the names live in ttr_emu/compute.h.
#pragma once
#include "ttr_emu/compute.h"
