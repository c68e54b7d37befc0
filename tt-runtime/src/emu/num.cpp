// Tile numerics: bf16 / fp32 conversion with the packer's rounding, the 4-face tile layout, and
// the f32 tile-matmul inner loop.
#include <cstring>

#include "emu.hpp"

namespace ttr::num {

// Faces are 16x16 row-major blocks: face f, row r holds 16 contiguous elements of tile row
// (f / 2) * 16 + r starting at column (f % 2) * 16.
void load_tile(const uint8_t *src, uint32_t format, float *out) {
    if (format == TTR_FORMAT_FLOAT16_B) {
        uint16_t raw[TILE];
        memcpy(raw, src, sizeof raw);
        for (uint32_t f = 0; f < 4; ++f) {
            for (uint32_t r = 0; r < 16; ++r) {
                const uint16_t *in = raw + f * 256 + r * 16;
                float *o = out + ((f / 2) * 16 + r) * 32 + (f % 2) * 16;
                for (uint32_t j = 0; j < 16; ++j) {
                    o[j] = bf16_to_f32(in[j]);
                }
            }
        }
    } else {
        float raw[TILE];
        memcpy(raw, src, sizeof raw);
        for (uint32_t f = 0; f < 4; ++f) {
            for (uint32_t r = 0; r < 16; ++r) {
                const float *in = raw + f * 256 + r * 16;
                float *o = out + ((f / 2) * 16 + r) * 32 + (f % 2) * 16;
                for (uint32_t j = 0; j < 16; ++j) {
                    o[j] = flush(in[j]);
                }
            }
        }
    }
}

void store_tile(const float *in, uint32_t format, uint8_t *dst) {
    if (format == TTR_FORMAT_FLOAT16_B) {
        uint16_t raw[TILE];
        for (uint32_t f = 0; f < 4; ++f) {
            for (uint32_t r = 0; r < 16; ++r) {
                const float *i = in + ((f / 2) * 16 + r) * 32 + (f % 2) * 16;
                uint16_t *o = raw + f * 256 + r * 16;
                for (uint32_t j = 0; j < 16; ++j) {
                    o[j] = f32_to_bf16(i[j]);
                }
            }
        }
        memcpy(dst, raw, sizeof raw);
    } else {
        float raw[TILE];
        for (uint32_t f = 0; f < 4; ++f) {
            for (uint32_t r = 0; r < 16; ++r) {
                const float *i = in + ((f / 2) * 16 + r) * 32 + (f % 2) * 16;
                float *o = raw + f * 256 + r * 16;
                for (uint32_t j = 0; j < 16; ++j) {
                    o[j] = flush(i[j]);
                }
            }
        }
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
