// Conformance harness: stands in for the JIT's generated chlkc_unpack.cpp, which the real
// chlkc_list.h includes for this TRISC. The check passes the compute kernel's path as TTR_CONF_KERNEL.
#include TTR_CONF_KERNEL
