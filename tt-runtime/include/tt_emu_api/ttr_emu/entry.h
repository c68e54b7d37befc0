// The exported entry point of a JIT-compiled kernel; included after the kernel's source.
#pragma once

#include "ttr_emu/prelude.h"

extern "C" __attribute__((visibility("default"))) uint32_t ttr_kernel_abi_version() { return TTR_EMU_ABI_VERSION; }

extern "C" __attribute__((visibility("default"))) void ttr_kernel_run(const ttr_emu::Abi *abi) {
    ttr_emu::api = abi;
    if (&::kernel_main != nullptr) {
        ::kernel_main();
    } else if (&ttr_legacy_ns::kernel_main != nullptr) {
        ttr_legacy_ns::kernel_main();
    } else {
        abi->fail("the kernel defines neither `void kernel_main()` nor `namespace NAMESPACE { void MAIN }`");
    }
}
