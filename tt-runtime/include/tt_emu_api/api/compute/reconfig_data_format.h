// Stand-in for tt-metal's api/compute/reconfig_data_format.h: the names live in ttr_emu/compute.h.
#pragma once
#include "ttr_emu/compute.h"
