// Tile numerics: L1 tiles to and from row-major f32 in the 4-face layout (the unpacker's read, the
// packer's conversions), and the f32 tile-matmul inner loop.
#include <cstring>

#include "emu.hpp"

namespace ttr::num {

namespace {

// Faces are 16x16 row-major blocks: face f, row r holds 16 contiguous elements of tile row
// (f / 2) * 16 + r starting at column (f % 2) * 16. Calls f(faced index, row-major index).
template <typename F>
void for_each_face_element(F f) {
    for (uint32_t face = 0; face < 4; ++face) {
        for (uint32_t r = 0; r < 16; ++r) {
            const uint32_t faced = face * 256 + r * 16;
            const uint32_t row_major = ((face / 2) * 16 + r) * 32 + (face % 2) * 16;
            for (uint32_t j = 0; j < 16; ++j) {
                f(faced + j, row_major + j);
            }
        }
    }
}

}  // namespace

void load_tile(const uint8_t *src, uint32_t format, float *out) {
    if (format == TTR_FORMAT_FLOAT16_B) {
        uint16_t raw[TILE];
        memcpy(raw, src, sizeof raw);
        for_each_face_element([&](uint32_t faced, uint32_t row_major) { out[row_major] = bf16_to_f32(raw[faced]); });
    } else {
        float raw[TILE];
        memcpy(raw, src, sizeof raw);
        for_each_face_element([&](uint32_t faced, uint32_t row_major) { out[row_major] = flush(raw[faced]); });
    }
}

void load_tile_exact(const uint8_t *src, float *out) {
    float raw[TILE];
    memcpy(raw, src, sizeof raw);
    for_each_face_element([&](uint32_t faced, uint32_t row_major) { out[row_major] = raw[faced]; });
}

void store_tile(const float *in, uint32_t format, bool fp32_dest, uint8_t *dst) {
    if (format == TTR_FORMAT_FLOAT16_B) {
        uint16_t raw[TILE];
        for_each_face_element([&](uint32_t faced, uint32_t row_major) { raw[faced] = pack_bf16(in[row_major]); });
        memcpy(dst, raw, sizeof raw);
    } else {
        float raw[TILE];
        for_each_face_element(
            [&](uint32_t faced, uint32_t row_major) { raw[faced] = pack_value(in[row_major], format, fp32_dest); });
        memcpy(dst, raw, sizeof raw);
    }
}

// Row i of c accumulates a[i][k] * b[k][:] over k in a local row so the j loop vectorises. The
// AVX2 clone and the baseline do the same additions in the same order (no FMA contraction), so
// results do not depend on the host CPU.
__attribute__((target_clones("avx2", "default"))) void matmul_acc(float *__restrict c, const float *__restrict a,
                                                                 const float *__restrict b, uint32_t k0,
                                                                 uint32_t k1) {
    for (uint32_t i = 0; i < 32; ++i) {
        float row[32];
        for (uint32_t j = 0; j < 32; ++j) {
            row[j] = 0.0f;
        }
        const float *ai = a + i * 32;
        for (uint32_t k = k0; k < k1; ++k) {
            const float av = ai[k];
            const float *bk = b + k * 32;
            for (uint32_t j = 0; j < 32; ++j) {
                row[j] += av * bk[j];
            }
        }
        float *ci = c + i * 32;
        for (uint32_t j = 0; j < 32; ++j) {
            ci[j] += row[j];
        }
    }
}

}  // namespace ttr::num
