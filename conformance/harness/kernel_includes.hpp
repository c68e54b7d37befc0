// Conformance harness: stands in for the JIT's generated kernel_includes.hpp, which the firmware
// wrappers (brisck.cc, ncrisck.cc) include to pull in the kernel source. The check passes the
// kernel's path as TTR_CONF_KERNEL.
#pragma once
#include TTR_CONF_KERNEL
