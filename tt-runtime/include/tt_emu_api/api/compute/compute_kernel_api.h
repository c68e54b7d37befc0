// Stand-in for tt-metal's api/compute/compute_kernel_api.h: the names live in ttr_emu/compute.h.
#pragma once
#include "ttr_emu/compute.h"
