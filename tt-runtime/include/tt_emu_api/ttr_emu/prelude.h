// Kernel-side basics shared by every stand-in header: the call table pointer, argument access,
// compile-time args, DataFormat, CB indices and the attribute macros of the tt-metal kernel API.
// What only one kernel kind gets (the CB calls, whose spelling differs between the data-movement
// and the compute API, ALWI, the legacy compute entry point) lives in that kind's header.
//
// The emulator compiles a kernel with TTR_CT_ARGS_LIST (the compile-time args followed by a
// comma) and TTR_CT_ARG_COUNT defined; L1 addresses handed to kernels are pointer-sized values
// below 4 GiB, so `reinterpret_cast<volatile uint32_t*>(addr)` works as on the device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ttr_emu/abi.h"

#ifndef TTR_CT_ARGS_LIST
#define TTR_CT_ARGS_LIST
#endif
#ifndef TTR_CT_ARG_COUNT
#define TTR_CT_ARG_COUNT 0
#endif

#define FORCE_INLINE inline __attribute__((always_inline))
#define tt_l1_ptr
#define tt_reg_ptr

namespace ttr_emu {
inline const Abi *api = nullptr;
inline constexpr uint32_t ct_args[] = {TTR_CT_ARGS_LIST 0u};
inline constexpr uint32_t ct_arg_count = TTR_CT_ARG_COUNT;
constexpr uint32_t ct_arg(uint32_t index) {
    return index < ct_arg_count ? ct_args[index] : api->compile_arg_out_of_range(index, ct_arg_count);
}
template <typename T>
inline T *l1_ptr(uint32_t addr) {
    return reinterpret_cast<T *>(static_cast<uintptr_t>(addr));
}
}  // namespace ttr_emu

#define get_compile_time_arg_val(arg_idx) (::ttr_emu::ct_arg(static_cast<uint32_t>(arg_idx)))

inline uint32_t get_arg_addr(int arg_idx) { return ttr_emu::api->arg_addr(static_cast<uint32_t>(arg_idx)); }
inline uint32_t get_common_arg_addr(int arg_idx) {
    return ttr_emu::api->common_arg_addr(static_cast<uint32_t>(arg_idx));
}
template <typename T>
inline T get_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "runtime args are 32-bit");
    return *ttr_emu::l1_ptr<volatile T>(get_arg_addr(arg_idx));
}
template <typename T>
inline T get_common_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "runtime args are 32-bit");
    return *ttr_emu::l1_ptr<volatile T>(get_common_arg_addr(arg_idx));
}

enum class DataFormat : uint8_t {
    Float32 = 0,
    Float16 = 1,
    Bfp8 = 2,
    Bfp4 = 3,
    Tf32 = 4,
    Float16_b = 5,
    Bfp8_b = 6,
    Bfp4_b = 7,
    Int32 = 8,
    UInt16 = 9,
    Lf8 = 10,
    Bfp2 = 11,
    Int8 = 14,
    Bfp2_b = 15,
    UInt32 = 24,
    UInt8 = 30,
    Invalid = 255,
};

namespace tt {
enum CBIndex : uint8_t {
#define TTR_CB(n) c_##n = n,
    TTR_CB(0) TTR_CB(1) TTR_CB(2) TTR_CB(3) TTR_CB(4) TTR_CB(5) TTR_CB(6) TTR_CB(7) TTR_CB(8) TTR_CB(9) TTR_CB(10)
    TTR_CB(11) TTR_CB(12) TTR_CB(13) TTR_CB(14) TTR_CB(15) TTR_CB(16) TTR_CB(17) TTR_CB(18) TTR_CB(19) TTR_CB(20)
    TTR_CB(21) TTR_CB(22) TTR_CB(23) TTR_CB(24) TTR_CB(25) TTR_CB(26) TTR_CB(27) TTR_CB(28) TTR_CB(29) TTR_CB(30)
    TTR_CB(31) TTR_CB(32) TTR_CB(33) TTR_CB(34) TTR_CB(35) TTR_CB(36) TTR_CB(37) TTR_CB(38) TTR_CB(39) TTR_CB(40)
    TTR_CB(41) TTR_CB(42) TTR_CB(43) TTR_CB(44) TTR_CB(45) TTR_CB(46) TTR_CB(47) TTR_CB(48) TTR_CB(49) TTR_CB(50)
    TTR_CB(51) TTR_CB(52) TTR_CB(53) TTR_CB(54) TTR_CB(55) TTR_CB(56) TTR_CB(57) TTR_CB(58) TTR_CB(59) TTR_CB(60)
    TTR_CB(61) TTR_CB(62) TTR_CB(63)
#undef TTR_CB
};
}  // namespace tt
