// The exported entry point of a JIT-compiled kernel; included after the kernel's source.
#pragma once

#include "ttr_emu/prelude.h"

// The kernel defines `void kernel_main()` or the older compute form
// `namespace NAMESPACE { void MAIN { ... } }` (NAMESPACE expands to ttr_legacy_ns). The real headers
// declare neither, so the stand-in must not either: these weak references name the two entry
// points by their (Itanium ABI) symbols, and whichever the kernel did not define is null.
void ttr_entry_kernel_main() __asm__("_Z11kernel_mainv") __attribute__((weak, visibility("hidden")));
void ttr_entry_legacy_main() __asm__("_ZN13ttr_legacy_ns11kernel_mainEv") __attribute__((weak, visibility("hidden")));

extern "C" __attribute__((visibility("default"))) uint32_t ttr_kernel_abi_version() { return TTR_EMU_ABI_VERSION; }

extern "C" __attribute__((visibility("default"))) void ttr_kernel_run(const ttr_emu::Abi *abi) {
    ttr_emu::api = abi;
    if (&ttr_entry_kernel_main != nullptr) {
        ttr_entry_kernel_main();
    } else if (&ttr_entry_legacy_main != nullptr) {
        ttr_entry_legacy_main();
    } else {
        abi->fail("the kernel defines neither `void kernel_main()` nor `namespace NAMESPACE { void MAIN }`");
    }
}
