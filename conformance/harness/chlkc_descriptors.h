// Conformance harness: stands in for the JIT's generated chlkc_descriptors.h, which describes each
// circular buffer's data format and tile shape and the compute config. The real file carries the
// program's values; this one gives every one of the 64 CBs a bf16 32x32 tile (4 faces of 16x16,
// 2048 bytes) and the compute config the emulator assumes (HiFi4, bf16 DST, half sync, exact math),
// which is enough for a syntax check: the kernels read these only through the API's accessors.
#pragma once

#include <cstdint>

#include "tensix_types.h"

#define TTR_CONF_X8(v) v, v, v, v, v, v, v, v
#define TTR_CONF_X64(v) \
    TTR_CONF_X8(v), TTR_CONF_X8(v), TTR_CONF_X8(v), TTR_CONF_X8(v), TTR_CONF_X8(v), TTR_CONF_X8(v), TTR_CONF_X8(v), \
        TTR_CONF_X8(v)

constexpr std::int32_t unpack_src_format[64] = {TTR_CONF_X64((std::int32_t)DataFormat::Float16_b)};
constexpr std::int32_t unpack_dst_format[64] = {TTR_CONF_X64((std::int32_t)DataFormat::Float16_b)};
constexpr std::int32_t pack_src_format[64] = {TTR_CONF_X64((std::int32_t)DataFormat::Float16_b)};
constexpr std::int32_t pack_dst_format[64] = {TTR_CONF_X64((std::int32_t)DataFormat::Float16_b)};

constexpr std::uint8_t unpack_tile_num_faces[64] = {TTR_CONF_X64(4)};
constexpr std::uint8_t unpack_partial_face[64] = {TTR_CONF_X64(0)};
constexpr std::uint8_t unpack_tile_face_r_dim[64] = {TTR_CONF_X64(16)};
constexpr std::uint8_t unpack_narrow_tile[64] = {TTR_CONF_X64(0)};
constexpr std::uint32_t unpack_tile_r_dim[64] = {TTR_CONF_X64(32)};
constexpr std::uint32_t unpack_tile_c_dim[64] = {TTR_CONF_X64(32)};
constexpr std::uint32_t unpack_num_faces_r_dim[64] = {TTR_CONF_X64(2)};
constexpr std::uint32_t unpack_num_faces_c_dim[64] = {TTR_CONF_X64(2)};
constexpr std::uint16_t unpack_tile_size[64] = {TTR_CONF_X64(2048)};

constexpr std::uint8_t pack_tile_num_faces[64] = {TTR_CONF_X64(4)};
constexpr std::uint8_t pack_partial_face[64] = {TTR_CONF_X64(0)};
constexpr std::uint8_t pack_tile_face_r_dim[64] = {TTR_CONF_X64(16)};
constexpr std::uint8_t pack_narrow_tile[64] = {TTR_CONF_X64(0)};
constexpr std::uint32_t pack_tile_r_dim[64] = {TTR_CONF_X64(32)};
constexpr std::uint32_t pack_tile_c_dim[64] = {TTR_CONF_X64(32)};
constexpr std::uint32_t pack_num_faces_r_dim[64] = {TTR_CONF_X64(2)};
constexpr std::uint32_t pack_num_faces_c_dim[64] = {TTR_CONF_X64(2)};
constexpr std::uint16_t pack_tile_size[64] = {TTR_CONF_X64(2048)};

#undef TTR_CONF_X64
#undef TTR_CONF_X8

#if defined(COMPILE_FOR_TRISC)
constexpr bool DST_ACCUM_MODE = false;
#define DST_SYNC_MODE DstSync::SyncHalf
constexpr ckernel::MathFidelity MATH_FIDELITY = ckernel::MathFidelity::HiFi4;
constexpr bool APPROX = false;
#endif
