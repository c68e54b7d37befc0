// The compute half of the kernel API: DST register protocol and capacity, op inits, and the tile
// ops (matmul with math fidelity, element-wise, copy, reduce, transpose, SFPU, pack with the
// packer's ReLU stage, tilize and untilize) on f32 values with the device's rounding.
//
// Math fidelity: SrcA holds in1 for matmul (in0 for element-wise ops), SrcB the other operand.
// A phase multiplies 5 significant bits of SrcA by 7 of SrcB. Phase 0 takes SrcA's implicit 1 + 4
// MSBs and SrcB's implicit 1 + 6 MSBs; HiFi2 adds SrcA's next 5 bits (against SrcB's high part);
// HiFi3 adds SrcB's next 7 bits against SrcA's high part; HiFi4 adds the last cross term. So the
// phases cover 10 significant bits of SrcA and 14 of SrcB: bf16 operands (8 bits) multiply
// exactly at HiFi4, while a tf32 SrcA operand (11 bits, a Float32 tile unpacked) loses its last
// bit, truncated (the model is never more precise than the hardware). With a bf16
// DST every phase and every 16-deep face step of a matmul is added into DST with bf16 rounding;
// with an fp32 DST the phases are summed in f32 first.
#include <cmath>
#include <cstring>

#include "run.hpp"

namespace ttr {

namespace {

constexpr uint32_t SRCA_HI_MASK = 0xFFF80000u;    // sign, exponent, 4 mantissa MSBs
constexpr uint32_t SRCB_HI_MASK = 0xFFFE0000u;    // sign, exponent, 6 mantissa MSBs
constexpr uint32_t SRCA_FULL_MASK = 0xFFFFC000u;  // sign, exponent, 9 mantissa MSBs (2 phases x 5 bits)
constexpr uint32_t SRCB_FULL_MASK = 0xFFFFFC00u;  // sign, exponent, 13 mantissa MSBs (2 phases x 7 bits)

// The packer's ReLU modes (ckernel::ReluType, the STACC_RELU_ApplyRelu encoding).
constexpr uint32_t RELU_NONE = 0;
constexpr uint32_t RELU_ZERO = 1;
constexpr uint32_t RELU_MIN_THRESHOLD = 2;
constexpr uint32_t RELU_MAX_THRESHOLD = 3;

struct Scratch {
    alignas(64) float in0_full[16][TILE];
    alignas(64) float in0_hi[16][TILE];
    alignas(64) float in0_lo[16][TILE];
    alignas(64) float in1_full[16][TILE];
    alignas(64) float in1_hi[16][TILE];
    alignas(64) float in1_lo[16][TILE];
    alignas(64) float acc[TILE];
    alignas(64) float a[TILE];
    alignas(64) float b[TILE];
};

thread_local std::unique_ptr<Scratch> t_scratch;

Scratch &scratch() {
    if (!t_scratch) {
        t_scratch.reset(new Scratch);
    }
    return *t_scratch;
}

float masked(float x, uint32_t mask) { return num::from_bits(num::bits(x) & mask); }

// A value's place in the order the SFPU's min/max (SFPSWAP) and the FPU's max pool (GMPOOL)
// compare in: its bits read as sign and magnitude (-0 below +0, a NaN with the sign bit clear above
// +inf, one with it set below -inf).
int32_t sign_magnitude_order(float x) {
    const uint32_t u = num::bits(x);
    return static_cast<int32_t>((u & 0x80000000u) != 0 ? u ^ 0x7FFFFFFFu : u);
}

// Cuts `full` to the bits the multiplier sees (`full_mask`) and splits it into the phase-0 part
// (`hi_mask`) and the rest.
void split(float *full, float *hi, float *lo, uint32_t hi_mask, uint32_t full_mask) {
    for (uint32_t i = 0; i < TILE; ++i) {
        full[i] = masked(full[i], full_mask);
        hi[i] = masked(full[i], hi_mask);
        lo[i] = full[i] - hi[i];
    }
}

ComputeState &cs(Ctx &c, const char *op) {
    if (!c.cs) {
        kfail("%s: compute API called from %s", op, who(c).c_str());
    }
    return *c.cs;
}

uint32_t dst_capacity(const Ctx &c) { return c.def->build.fp32_dest ? 4 : 8; }

void check_dst(Ctx &c, uint32_t idst, uint32_t n, const char *op) {
    uint32_t cap = dst_capacity(c);
    if (idst + n > cap) {
        kfail("%s: DST tile %u is beyond the %u tiles one tile_regs_acquire gets in half-sync mode with %s DST on %s",
              op, idst + n - 1, cap, c.def->build.fp32_dest ? "fp32" : "bf16", who(c).c_str());
    }
}

void need_math(Ctx &c, const char *op) {
    Regs r = cs(c, op).regs;
    if (r != Regs::Acquired && r != Regs::Legacy) {
        kfail("%s: DST is not held by math (call tile_regs_acquire first, and before tile_regs_commit) on %s", op,
              who(c).c_str());
    }
}

void need_pack(Ctx &c, const char *op) {
    Regs r = cs(c, op).regs;
    if (r != Regs::Waited && r != Regs::Legacy) {
        kfail("%s: DST is not held by pack (call tile_regs_commit then tile_regs_wait first) on %s", op,
              who(c).c_str());
    }
}

void need_idle(Ctx &c, const char *op) {
    if (cs(c, op).regs != Regs::Idle) {
        kfail("%s: uses DST internally and must be called outside tile_regs_acquire..tile_regs_release on %s", op,
              who(c).c_str());
    }
}

const char *init_name(uint32_t kind) {
    static const char *const NAMES[] = {"copy_tile_init",  "matmul_init",       "add_tiles_init",
                                        "sub_tiles_init",  "mul_tiles_init",    "reduce_init",
                                        "transpose_init",  "tilize_init",       "untilize_init",
                                        "pack_untilize_init", "binary_op_init_common", "an uninit"};
    return kind < sizeof NAMES / sizeof NAMES[0] ? NAMES[kind] : "no init";
}

void need_init(Ctx &c, uint32_t kind, const char *op) {
    ComputeState &s = cs(c, op);
    if (!s.started) {
        kfail("%s before compute_kernel_hw_startup on %s", op, who(c).c_str());
    }
    bool ok = s.init == kind;
    if (s.init == ttr_emu::INIT_BINARY_COMMON &&
        (kind == ttr_emu::INIT_ADD || kind == ttr_emu::INIT_SUB || kind == ttr_emu::INIT_MUL)) {
        ok = true;
    }
    if (!ok) {
        kfail("%s: needs %s, but the last init was %s on %s", op, init_name(kind), init_name(s.init), who(c).c_str());
    }
}

float dst_round(const Ctx &c, float x) {
    return c.def->build.fp32_dest ? num::flush(x) : num::bf16_to_f32(num::f32_to_bf16(x));
}

void check_format(Ctx &c, uint32_t cb, const char *op) {
    const CbConfig &cfg = cb_config(c, static_cast<int32_t>(cb), op);
    if (cfg.format != TTR_FORMAT_FLOAT16_B && cfg.format != TTR_FORMAT_FLOAT32) {
        kfail("%s: cb %u holds %s; the emulator's compute supports Float16_b and Float32 on %s", op, cb,
              format_name(cfg.format), who(c).c_str());
    }
    if (cfg.page != tile_bytes(cfg.format)) {
        kfail("%s: cb %u has %u-byte pages; compute needs tile-sized pages (%u bytes of %s) on %s", op, cb, cfg.page,
              tile_bytes(cfg.format), format_name(cfg.format), who(c).c_str());
    }
}

// How an op's unpacker reads a CB: into SrcA/SrcB for the FPU (matmul, element-wise, reduce,
// untilize_block), or as a datacopy (copy_tile, transpose_tile, tilize_block, pack_untilize_block),
// which the LLK routes straight into DST when the CB's unpack destination format is Float32
// (`should_unpack_to_dest` in tt-llk cunpack_common.h; tt-metal sets that format for a Float32 CB
// whose unpack_to_dest_mode is UnpackToDestFp32, jit_build/data_format.cpp).
enum class Via { SrcReg, Datacopy };

bool unpack_to_dest_fp32(const Ctx &c, uint32_t cb) {
    return c.run->prog->cbs[c.core][cb].format == TTR_FORMAT_FLOAT32 &&
           c.def->build.unpack_to_dest[cb] == TTR_UNPACK_TO_DEST_FP32;
}

// Whether `op` unpacks Float32 `cb` straight into DST; fails the kernel for an FPU read of an
// UnpackToDestFp32 CB, which the unpacker cannot convert into SrcA/SrcB (FP32 to an FP32 Src
// format is undefined, UNPACR_Regular.md; `is_unpacker_format_conversion_supported_dest`).
bool to_dest(Ctx &c, uint32_t cb, Via via, const char *op) {
    if (!unpack_to_dest_fp32(c, cb)) {
        return false;
    }
    if (via == Via::SrcReg) {
        kfail("%s: cb %u is UnpackToDestFp32 (its Float32 tiles unpack straight into DST), but %s reads it "
              "through SrcA/SrcB, which cannot take a Float32 destination format; give the CB the Default "
              "mode (its values are then cut to TF32) or copy it into DST and use an SFPU op on %s",
              op, cb, op, who(c).c_str());
    }
    return true;
}

// Cuts Float32 values to what SrcA/SrcB hold: TF32 with an fp32 DST, BF16 without one.
void src_cut(const Ctx &c, float *v, uint32_t n) {
    if (c.def->build.fp32_dest) {
        for (uint32_t i = 0; i < n; ++i) {
            v[i] = num::src_tf32(v[i]);
        }
    } else {
        for (uint32_t i = 0; i < n; ++i) {
            v[i] = num::src_bf16(v[i]);
        }
    }
}

// Unpacks tile `index` of `cb` into row-major f32 as `via` reads it: Float32 tiles bit for bit into
// DST (UnpackToDestFp32 datacopies), else cut to the Src register format; bf16 tiles fit either.
// Returns whether the values went straight to DST (then they are stored without DST rounding).
bool unpack(Ctx &c, uint32_t cb, uint32_t index, float *out, Via via, const char *op) {
    check_format(c, cb, op);
    const uint8_t *p = cb_read_tile(c, cb, index, op);
    uint32_t format = c.run->prog->cbs[c.core][cb].format;
    if (to_dest(c, cb, via, op)) {
        num::load_tile_exact(p, out);
        return true;
    }
    num::load_tile(p, format, out);
    if (format == TTR_FORMAT_FLOAT32) {
        src_cut(c, out, TILE);
    }
    return false;
}

uint32_t fidelity(const Ctx &c) { return c.def->build.fidelity & 3; }

// One element-wise product through the fidelity phases; a in SrcA, b in SrcB.
float fidelity_mul(float a, float b, uint32_t fid) {
    a = masked(a, SRCA_FULL_MASK);
    b = masked(b, SRCB_FULL_MASK);
    float a_hi = masked(a, SRCA_HI_MASK), b_hi = masked(b, SRCB_HI_MASK);
    switch (fid) {
        case TTR_LOFI:
            return a_hi * b_hi;
        case TTR_HIFI2:
            return a * b_hi;
        case TTR_HIFI3:
            return a * b_hi + a_hi * (b - b_hi);
        default:
            return a * b;
    }
}

// ---- API table entries ----

void api_hw_startup(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    Ctx &c = current();
    ComputeState &s = cs(c, "compute_kernel_hw_startup");
    cb_config(c, static_cast<int32_t>(icb0), "compute_kernel_hw_startup");
    cb_config(c, static_cast<int32_t>(icb1), "compute_kernel_hw_startup");
    cb_config(c, static_cast<int32_t>(ocb), "compute_kernel_hw_startup");
    s.started = true;
    // The packer's hardware configure writes STACC_RELU too, with no ReLU.
    s.relu_mode = RELU_NONE;
}

// The counter class (TTR_INIT_*) of an op init: what it programs.
uint32_t init_class(uint32_t kind) {
    switch (kind) {
        case ttr_emu::INIT_COPY:
        case ttr_emu::INIT_TRANSPOSE:
            return TTR_INIT_COPY;
        case ttr_emu::INIT_MATMUL:
            return TTR_INIT_MATMUL;
        case ttr_emu::INIT_ADD:
        case ttr_emu::INIT_SUB:
        case ttr_emu::INIT_MUL:
        case ttr_emu::INIT_BINARY_COMMON:
            return TTR_INIT_BINARY;
        case ttr_emu::INIT_REDUCE:
            return TTR_INIT_REDUCE;
        default:
            return TTR_INIT_LAYOUT;
    }
}

void api_op_init(uint32_t kind, uint32_t a, uint32_t b, uint32_t) {
    Ctx &c = current();
    const char *op = init_name(kind);
    ComputeState &s = cs(c, op);
    if (!s.started) {
        kfail("%s before compute_kernel_hw_startup on %s", op, who(c).c_str());
    }
    c.counters->inits[init_class(kind)]++;
    switch (kind) {
        case ttr_emu::INIT_MATMUL:
        case ttr_emu::INIT_ADD:
        case ttr_emu::INIT_SUB:
        case ttr_emu::INIT_MUL:
        case ttr_emu::INIT_REDUCE:
        case ttr_emu::INIT_BINARY_COMMON:
            cb_config(c, static_cast<int32_t>(a), op);
            cb_config(c, static_cast<int32_t>(b), op);
            break;
        case ttr_emu::INIT_UNINIT:
            break;
        default:
            cb_config(c, static_cast<int32_t>(a), op);
    }
    s.init = kind == ttr_emu::INIT_UNINIT ? UINT32_MAX : kind;
}

void api_sfpu_init(uint32_t op) {
    Ctx &c = current();
    cs(c, "sfpu init").sfpu_inits |= 1u << op;
    // binop_with_scalar_tile_init is one init; the stand-in enables its four ops one by one and
    // counts the first.
    if (op != ttr_emu::SFPU_SUB_SCALAR && op != ttr_emu::SFPU_MUL_SCALAR && op != ttr_emu::SFPU_DIV_SCALAR) {
        c.counters->inits[TTR_INIT_SFPU]++;
    }
}

// reconfig_data_format_src{a,b} / pack_reconfig_data_format: counted when they reprogram, i.e.
// always for the one-operand forms and when the two CBs' formats differ for (old, new).
void api_reconfig(uint32_t what, uint32_t old_cb, uint32_t new_cb) {
    Ctx &c = current();
    static const char *const NAMES[] = {"reconfig_data_format_srca", "reconfig_data_format_srcb",
                                        "pack_reconfig_data_format"};
    const char *op = what < 3 ? NAMES[what] : "reconfig";
    cs(c, op);
    const CbConfig &to = cb_config(c, static_cast<int32_t>(new_cb), op);
    bool differs = true;
    if (old_cb != ttr_emu::NO_CB) {
        // The unpackers' destination format also follows a CB's UnpackToDestFp32 mode.
        differs = cb_config(c, static_cast<int32_t>(old_cb), op).format != to.format ||
                  (what != ttr_emu::RECONFIG_PACK && unpack_to_dest_fp32(c, old_cb) != unpack_to_dest_fp32(c, new_cb));
    }
    if (differs) {
        c.counters->inits[what == ttr_emu::RECONFIG_PACK ? TTR_INIT_PACK_RECONFIG : TTR_INIT_UNPACK_RECONFIG]++;
    }
}

void api_regs(uint32_t step) {
    Ctx &c = current();
    ComputeState &s = cs(c, "tile_regs");
    auto zero = [&]() {
        for (uint32_t t = 0; t < dst_capacity(c); ++t) {
            memset(s.dst[t], 0, sizeof s.dst[t]);
            s.written[t] = false;
        }
    };
    switch (step) {
        case ttr_emu::REGS_ACQUIRE:
            if (s.regs != Regs::Idle) {
                kfail("tile_regs_acquire: DST is already acquired (tile_regs_release missing) on %s", who(c).c_str());
            }
            zero();
            s.regs = Regs::Acquired;
            break;
        case ttr_emu::REGS_COMMIT:
            if (s.regs != Regs::Acquired) {
                kfail("tile_regs_commit without a matching tile_regs_acquire on %s", who(c).c_str());
            }
            s.regs = Regs::Committed;
            break;
        case ttr_emu::REGS_WAIT:
            if (s.regs != Regs::Committed) {
                kfail("tile_regs_wait without a preceding tile_regs_commit on %s", who(c).c_str());
            }
            s.regs = Regs::Waited;
            break;
        case ttr_emu::REGS_RELEASE:
            if (s.regs != Regs::Waited) {
                kfail("tile_regs_release without a preceding tile_regs_wait on %s", who(c).c_str());
            }
            s.regs = Regs::Idle;
            break;
        case ttr_emu::REGS_LEGACY_ACQUIRE:
            if (s.regs != Regs::Idle) {
                kfail("acquire_dst: DST is already acquired on %s", who(c).c_str());
            }
            zero();
            s.regs = Regs::Legacy;
            break;
        default:
            if (s.regs != Regs::Legacy) {
                kfail("release_dst without a matching acquire_dst on %s", who(c).c_str());
            }
            s.regs = Regs::Idle;
    }
}

// Adds acc into a DST tile with DST rounding.
void accumulate(Ctx &c, float *dst, const float *acc) {
    if (c.def->build.fp32_dest) {
        for (uint32_t i = 0; i < TILE; ++i) {
            dst[i] = num::flush(dst[i] + acc[i]);
        }
    } else {
        for (uint32_t i = 0; i < TILE; ++i) {
            dst[i] = num::bf16_to_f32(num::f32_to_bf16(dst[i] + acc[i]));
        }
    }
}

void matmul_tile(Ctx &c, Scratch &sc, float *dst, uint32_t r, uint32_t col) {
    const uint32_t fid = fidelity(c);
    const float *a_full = sc.in0_full[r], *a_hi = sc.in0_hi[r], *a_lo = sc.in0_lo[r];
    const float *b_full = sc.in1_full[col], *b_hi = sc.in1_hi[col], *b_lo = sc.in1_lo[col];
    if (c.def->build.fp32_dest) {
        memset(sc.acc, 0, sizeof sc.acc);
        switch (fid) {
            case TTR_LOFI:
                num::matmul_acc(sc.acc, a_hi, b_hi, 0, 32);
                break;
            case TTR_HIFI2:
                num::matmul_acc(sc.acc, a_hi, b_full, 0, 32);
                break;
            case TTR_HIFI3:
                num::matmul_acc(sc.acc, a_hi, b_full, 0, 32);
                num::matmul_acc(sc.acc, a_lo, b_hi, 0, 32);
                break;
            default:
                num::matmul_acc(sc.acc, a_full, b_full, 0, 32);
        }
        accumulate(c, dst, sc.acc);
        return;
    }
    // in0 is SrcB, in1 is SrcA: phases (SrcB part, SrcA part).
    const float *phases[4][2] = {{a_hi, b_hi}, {a_hi, b_lo}, {a_lo, b_hi}, {a_lo, b_lo}};
    for (uint32_t p = 0; p <= fid; ++p) {
        for (uint32_t k0 = 0; k0 < 32; k0 += 16) {
            memset(sc.acc, 0, sizeof sc.acc);
            num::matmul_acc(sc.acc, phases[p][0], phases[p][1], k0, k0 + 16);
            accumulate(c, dst, sc.acc);
        }
    }
}

void api_matmul(uint32_t in0, uint32_t in1, uint32_t t0, uint32_t t1, uint32_t idst, uint32_t transpose, uint32_t ct,
                uint32_t rt, uint32_t kt) {
    Ctx &c = current();
    const char *op = ct * rt == 1 && kt == 1 ? "matmul_tiles" : "matmul_block";
    need_init(c, ttr_emu::INIT_MATMUL, op);
    need_math(c, op);
    if (ct == 0 || rt == 0 || ct > 16 || rt > 16) {
        kfail("%s: block %u x %u tiles is out of range on %s", op, rt, ct, who(c).c_str());
    }
    check_dst(c, idst, ct * rt, op);
    Scratch &sc = scratch();
    for (uint32_t r = 0; r < rt; ++r) {
        unpack(c, in0, t0 + r * kt, sc.in0_full[r], Via::SrcReg, op);
        split(sc.in0_full[r], sc.in0_hi[r], sc.in0_lo[r], SRCB_HI_MASK, SRCB_FULL_MASK);
    }
    for (uint32_t col = 0; col < ct; ++col) {
        unpack(c, in1, t1 + col, transpose != 0 ? sc.b : sc.in1_full[col], Via::SrcReg, op);
        if (transpose != 0) {
            for (uint32_t i = 0; i < 32; ++i) {
                for (uint32_t j = 0; j < 32; ++j) {
                    sc.in1_full[col][i * 32 + j] = sc.b[j * 32 + i];
                }
            }
        }
        split(sc.in1_full[col], sc.in1_hi[col], sc.in1_lo[col], SRCA_HI_MASK, SRCA_FULL_MASK);
    }
    ComputeState &s = *c.cs;
    for (uint32_t r = 0; r < rt; ++r) {
        for (uint32_t col = 0; col < ct; ++col) {
            uint32_t d = idst + r * ct + col;
            matmul_tile(c, sc, s.dst[d], r, col);
            s.written[d] = true;
        }
    }
    c.counters->tile_ops[TTR_OP_MATMUL][fidelity(c)] += ct * rt;
}

void api_binary(uint32_t bop, uint32_t bcast, uint32_t cb0, uint32_t cb1, uint32_t t0, uint32_t t1, uint32_t idst) {
    Ctx &c = current();
    static const char *const NAMES[] = {"add_tiles", "sub_tiles", "mul_tiles"};
    static const uint32_t INITS[] = {ttr_emu::INIT_ADD, ttr_emu::INIT_SUB, ttr_emu::INIT_MUL};
    static const uint32_t OPS[] = {TTR_OP_ADD, TTR_OP_SUB, TTR_OP_MUL};
    const uint32_t k = bop < 3 ? bop : 2;
    const char *op = NAMES[k];
    need_init(c, INITS[k], op);
    need_math(c, op);
    check_dst(c, idst, 1, op);
    Scratch &sc = scratch();
    unpack(c, cb0, t0, sc.a, Via::SrcReg, op);
    unpack(c, cb1, t1, sc.b, Via::SrcReg, op);
    const uint32_t fid = fidelity(c);
    float *dst = c.cs->dst[idst];
    for (uint32_t i = 0; i < 32; ++i) {
        for (uint32_t j = 0; j < 32; ++j) {
            float a = sc.a[i * 32 + j];
            float b = bcast == ttr_emu::BCAST_ROW      ? sc.b[j]
                      : bcast == ttr_emu::BCAST_COL    ? sc.b[i * 32]
                      : bcast == ttr_emu::BCAST_SCALAR ? sc.b[0]
                                                       : sc.b[i * 32 + j];
            float v = k == 0 ? a + b : k == 1 ? a - b : fidelity_mul(a, b, fid);
            dst[i * 32 + j] = dst_round(c, v);
        }
    }
    c.cs->written[idst] = true;
    c.counters->tile_ops[OPS[k]][fid]++;
}

void api_copy(uint32_t cb, uint32_t tile, uint32_t idst) {
    Ctx &c = current();
    need_init(c, ttr_emu::INIT_COPY, "copy_tile");
    need_math(c, "copy_tile");
    check_dst(c, idst, 1, "copy_tile");
    Scratch &sc = scratch();
    const bool exact = unpack(c, cb, tile, sc.a, Via::Datacopy, "copy_tile");
    for (uint32_t i = 0; i < TILE; ++i) {
        c.cs->dst[idst][i] = exact ? sc.a[i] : dst_round(c, sc.a[i]);
    }
    c.cs->written[idst] = true;
    c.counters->tile_ops[TTR_OP_COPY][fidelity(c)]++;
}

void api_transpose(uint32_t cb, uint32_t tile, uint32_t idst) {
    Ctx &c = current();
    need_init(c, ttr_emu::INIT_TRANSPOSE, "transpose_tile");
    need_math(c, "transpose_tile");
    check_dst(c, idst, 1, "transpose_tile");
    Scratch &sc = scratch();
    const bool exact = unpack(c, cb, tile, sc.a, Via::Datacopy, "transpose_tile");
    for (uint32_t i = 0; i < 32; ++i) {
        for (uint32_t j = 0; j < 32; ++j) {
            const float v = sc.a[j * 32 + i];
            c.cs->dst[idst][i * 32 + j] = exact ? v : dst_round(c, v);
        }
    }
    c.cs->written[idst] = true;
    c.counters->tile_ops[TTR_OP_TRANSPOSE][fidelity(c)]++;
}

void api_reduce(uint32_t pool, uint32_t dim, uint32_t cb, uint32_t scb, uint32_t tile, uint32_t stile, uint32_t idst) {
    Ctx &c = current();
    need_init(c, ttr_emu::INIT_REDUCE, "reduce_tile");
    need_math(c, "reduce_tile");
    check_dst(c, idst, 1, "reduce_tile");
    Scratch &sc = scratch();
    unpack(c, cb, tile, sc.a, Via::SrcReg, "reduce_tile");
    unpack(c, scb, stile, sc.b, Via::SrcReg, "reduce_tile");
    const float scale = sc.b[0];
    const uint32_t fid = fidelity(c);
    const bool is_max = pool == ttr_emu::POOL_MAX;
    if (is_max) {
        // GMPOOL compares the Src data itself, whatever the fidelity: a datum with a zero exponent
        // (either zero, a denormal) reads as +0, and DST's running maximum is read back cut to TF32
        // from an fp32 DST. tt-metal's MAX reduce passes a scaler of 1.0; no other is modelled.
        if (num::bits(scale) != 0x3F800000u) {
            kfail("reduce_tile: MAX with a scaler of %g; the max pool (GMPOOL) is modelled for a scaler of 1.0 on %s",
                  static_cast<double>(scale), who(c).c_str());
        }
        for (uint32_t i = 0; i < TILE; ++i) {
            if ((num::bits(sc.a[i]) & 0x7F800000u) == 0) {
                sc.a[i] = 0.0f;
            }
        }
    } else {
        for (uint32_t i = 0; i < TILE; ++i) {
            sc.a[i] = fidelity_mul(sc.a[i], scale, fid);
        }
    }
    float *dst = c.cs->dst[idst];
    const bool fresh = !c.cs->written[idst];
    auto larger = [](float a, float b) { return sign_magnitude_order(b) > sign_magnitude_order(a) ? b : a; };
    auto combine = [&](uint32_t at, float v) {
        if (is_max) {
            const float held = c.def->build.fp32_dest ? masked(dst[at], 0xFFFFE000u) : dst[at];
            dst[at] = dst_round(c, fresh ? v : larger(held, v));
        } else {
            dst[at] = dst_round(c, dst[at] + v);
        }
    };
    auto fold = [&](float acc, float v) { return is_max ? larger(acc, v) : acc + v; };
    if (dim == ttr_emu::REDUCE_ROW) {
        for (uint32_t i = 0; i < 32; ++i) {
            float acc = sc.a[i * 32];
            for (uint32_t j = 1; j < 32; ++j) {
                acc = fold(acc, sc.a[i * 32 + j]);
            }
            combine(i * 32, acc);
        }
    } else if (dim == ttr_emu::REDUCE_COL) {
        for (uint32_t j = 0; j < 32; ++j) {
            float acc = sc.a[j];
            for (uint32_t i = 1; i < 32; ++i) {
                acc = fold(acc, sc.a[i * 32 + j]);
            }
            combine(j, acc);
        }
    } else {
        float acc = sc.a[0];
        for (uint32_t i = 1; i < TILE; ++i) {
            acc = fold(acc, sc.a[i]);
        }
        combine(0, acc);
    }
    c.cs->written[idst] = true;
    c.counters->tile_ops[is_max && dim == ttr_emu::REDUCE_ROW ? TTR_OP_REDUCE_MAX_ROW : TTR_OP_REDUCE][fid]++;
}

float bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

// Whether element i (row-major) of a DST tile lies in one of the 16x16 `faces` (bit f: face f,
// numbered top-left, top-right, bottom-left, bottom-right). The faces an SFPU op leaves out keep
// their values, as tt-llk's vector modes skip them.
bool in_faces(uint32_t i, uint32_t faces) {
    const uint32_t face = i / 32 / 16 * 2 + i % 32 / 16;
    return (faces >> face & 1u) != 0;
}

// where_tile on a 32-bit format: the LLK loads the condition, true and false tiles as raw 32-bit
// words and keeps the true word where the condition word is nonzero (SFPSETCC tests the integer,
// so a -0.0 condition counts as true). A bf16 DST holds no 32-bit words.
void where(Ctx &c, const float *cond, const float *if_true, uint32_t false_dst, float *out, uint32_t faces) {
    if (!c.def->build.fp32_dest) {
        kfail("where_tile: a 32-bit format needs an fp32 DST on %s", who(c).c_str());
    }
    check_dst(c, false_dst, 1, "where_tile");
    const float *if_false = c.cs->dst[false_dst];
    for (uint32_t i = 0; i < TILE; ++i) {
        if (!in_faces(i, faces)) {
            continue;
        }
        uint32_t bits;
        memcpy(&bits, &cond[i], 4);
        out[i] = bits != 0 ? if_true[i] : if_false[i];
    }
}

// How an SFPU result lands in DST. An fp32 DST takes it with denormals flushed to signed zero
// (SFPSTORE). A bf16 DST takes its top 16 bits after that flush (SFPSTORE truncates) unless the
// LLK rounds first: exp, sqrt and rsqrt convert with RoundMode::Nearest (SFP_STOCH_RND: to
// nearest, ties away from zero; zero and denormals to +0, NaN to infinity), and
// add/sub_binary_tile<DstRoundingMode::NearestEven> round to nearest even.
float sfpu_store(const Ctx &c, uint32_t sop, uint32_t param, float x) {
    x = num::flush(x);
    if (c.def->build.fp32_dest) {
        return x;
    }
    uint32_t u = num::bits(x);
    if (sop == ttr_emu::SFPU_EXP || sop == ttr_emu::SFPU_SQRT || sop == ttr_emu::SFPU_RSQRT) {
        const uint32_t exp = u & 0x7F800000u;
        u = exp == 0 ? 0 : exp == 0x7F800000u ? u & 0xFF800000u : u + 0x8000u;
    } else if ((sop == ttr_emu::SFPU_ADD_BINARY || sop == ttr_emu::SFPU_SUB_BINARY) && param == 1) {
        u += 0x7FFFu + ((u >> 16) & 1u);
    }
    return num::from_bits(u & 0xFFFF0000u);
}

// One element of the element-wise SFPU op `sop`: x from DST tile d0, y from d1, p the scalar.
float sfpu_value(uint32_t sop, float v, float y, float p) {
    switch (sop) {
        case ttr_emu::SFPU_RELU:
            return v > 0.0f ? v : 0.0f;
        case ttr_emu::SFPU_EXP:
            return std::exp(v);
        case ttr_emu::SFPU_RECIP:
            return 1.0f / v;
        case ttr_emu::SFPU_SQRT:
            return std::sqrt(v);
        case ttr_emu::SFPU_RSQRT:
            return 1.0f / std::sqrt(v);
        case ttr_emu::SFPU_MAX:
            return sign_magnitude_order(v) >= sign_magnitude_order(y) ? v : y;
        case ttr_emu::SFPU_MIN:
            return sign_magnitude_order(v) <= sign_magnitude_order(y) ? v : y;
        case ttr_emu::SFPU_ADD_SCALAR:
            return v + p;
        case ttr_emu::SFPU_SUB_SCALAR:
            return v - p;
        case ttr_emu::SFPU_MUL_SCALAR:
        case ttr_emu::SFPU_DIV_SCALAR:  // the scalar is the divisor's reciprocal (see div_unary_tile)
            return v * p;
        case ttr_emu::SFPU_ADD_BINARY:
            return v + y;
        case ttr_emu::SFPU_SUB_BINARY:
            return v - y;
        case ttr_emu::SFPU_EQ_BINARY:
            return num::flush(v) == num::flush(y) ? 1.0f : 0.0f;
        default:
            return v > 0.0f ? (v < p ? v : p) : 0.0f;
    }
}

void api_sfpu(uint32_t sop, uint32_t d0, uint32_t d1, uint32_t odst, uint32_t param, uint32_t faces) {
    Ctx &c = current();
    static const char *const NAMES[] = {"relu_tile",      "exp_tile",       "recip_tile",     "sqrt_tile",
                                        "rsqrt_tile",     "binary_max_tile", "add_unary_tile", "sub_unary_tile",
                                        "mul_unary_tile", "div_unary_tile", "relu_max_tile",  "binary_min_tile",
                                        "add_binary_tile", "sub_binary_tile", "eq_binary_tile", "where_tile"};
    constexpr uint32_t OPS = sizeof NAMES / sizeof NAMES[0];
    const char *op = sop < OPS ? NAMES[sop] : "sfpu";
    need_math(c, op);
    if ((c.cs->sfpu_inits & (1u << sop)) == 0) {
        kfail("%s called without its _init() on %s", op, who(c).c_str());
    }
    check_dst(c, d0, 1, op);
    check_dst(c, d1, 1, op);
    check_dst(c, odst, 1, op);
    if (faces == 0 || faces > 0xFu) {
        kfail("%s: a vector mode other than RC, R or C (faces 0x%x) is not emulated on %s", op, faces,
              who(c).c_str());
    }
    const float p = bits_to_float(param);
    float *x = c.cs->dst[d0];
    const float *y = c.cs->dst[d1];
    float *o = c.cs->dst[odst];
    if (sop == ttr_emu::SFPU_WHERE) {
        where(c, x, y, param, o, faces);
    } else {
        for (uint32_t i = 0; i < TILE; ++i) {
            if (!in_faces(i, faces)) {
                continue;
            }
            o[i] = sfpu_store(c, sop, param, sfpu_value(sop, x[i], y[i], p));
        }
    }
    c.cs->written[odst] = true;
    static const uint32_t KIND[] = {TTR_SFPU_RELU,   TTR_SFPU_EXP,    TTR_SFPU_RECIP,  TTR_SFPU_SQRT,
                                    TTR_SFPU_RSQRT,  TTR_SFPU_MAX,    TTR_SFPU_SCALAR, TTR_SFPU_SCALAR,
                                    TTR_SFPU_SCALAR, TTR_SFPU_SCALAR, TTR_SFPU_RELU,   TTR_SFPU_MAX,
                                    TTR_SFPU_BINARY, TTR_SFPU_BINARY, TTR_SFPU_BINARY, TTR_SFPU_BINARY};
    static_assert(sizeof KIND / sizeof KIND[0] == OPS, "one counter kind per SFPU op");
    c.counters->sfpu_faces[sop < OPS ? KIND[sop] : static_cast<uint32_t>(TTR_SFPU_SCALAR)] +=
        static_cast<uint64_t>(__builtin_popcount(faces));
    c.counters->tile_ops[TTR_OP_SFPU][fidelity(c)]++;
}

// The packer's ReLU stage on `n` datums bound for `format`. Silicon applies it after the early
// format conversion (num::pack_value) and before L1 accumulation, so the datums are converted
// first: a threshold then compares the packed value. A datum at or below 0 (or the threshold)
// becomes +0, whatever its sign (-0 too); NaN (kept only by a Float32 pack from an fp32 DST)
// compares false and passes. No ReLU: untouched (store_tile converts).
void relu_stage(const Ctx &c, uint32_t format, float *v, uint32_t n) {
    const ComputeState &s = *c.cs;
    if (s.relu_mode == RELU_NONE) {
        return;
    }
    for (uint32_t i = 0; i < n; ++i) {
        const float x = num::pack_value(v[i], format, c.def->build.fp32_dest);
        switch (s.relu_mode) {
            case RELU_ZERO:
                v[i] = x <= 0.0f ? 0.0f : x;
                break;
            case RELU_MIN_THRESHOLD:
                v[i] = x <= s.relu_threshold ? 0.0f : x;
                break;
            default:
                v[i] = x <= 0.0f ? 0.0f : (x > s.relu_threshold ? s.relu_threshold : x);
                break;
        }
    }
}

void pack_values(Ctx &c, float *v, uint32_t cb, uint8_t *p) {
    uint32_t format = c.run->prog->cbs[c.core][cb].format;
    relu_stage(c, format, v, TILE);
    if (c.cs->l1_acc) {
        Scratch &sc = scratch();
        num::load_tile(p, format, sc.b);
        for (uint32_t i = 0; i < TILE; ++i) {
            v[i] += sc.b[i];
        }
    }
    num::store_tile(v, format, c.def->build.fp32_dest, p);
}

void api_pack(uint32_t idst, uint32_t cb, uint32_t out_index, uint32_t out_of_order) {
    Ctx &c = current();
    need_pack(c, "pack_tile");
    check_dst(c, idst, 1, "pack_tile");
    check_format(c, cb, "pack_tile");
    CbState &s = cb_state(c, cb);
    uint32_t index = out_of_order != 0 ? out_index : s.pack_next;
    uint8_t *p = cb_write_tile(c, cb, index, "pack_tile");
    Scratch &sc = scratch();
    memcpy(sc.a, c.cs->dst[idst], sizeof sc.a);
    pack_values(c, sc.a, cb, p);
    if (out_of_order == 0) {
        s.pack_next++;
    }
    c.counters->tile_ops[TTR_OP_PACK][fidelity(c)]++;
}

// Element `i` of a row-major block as the tilize unpacker reads it: bf16 exactly, Float32 bit for
// bit straight into DST (`exact`) or cut to the Src register format.
float load_elem(const Ctx &c, const uint8_t *p, uint32_t format, bool exact, size_t i) {
    if (format == TTR_FORMAT_FLOAT16_B) {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        return num::bf16_to_f32(h);
    }
    float f;
    memcpy(&f, p + i * 4, 4);
    if (!exact) {
        f = num::flush(f);
        src_cut(c, &f, 1);
    }
    return f;
}

// Element `i` of a row-major block, written by the packer (num::pack_value).
void store_elem(const Ctx &c, uint8_t *p, uint32_t format, size_t i, float v) {
    if (format == TTR_FORMAT_FLOAT16_B) {
        uint16_t h = num::pack_bf16(v);
        memcpy(p + i * 2, &h, 2);
    } else {
        float f = num::pack_value(v, format, c.def->build.fp32_dest);
        memcpy(p + i * 4, &f, 4);
    }
}

void api_tilize_block(uint32_t icb, uint32_t block, uint32_t ocb) {
    Ctx &c = current();
    const char *op = "tilize_block";
    need_init(c, ttr_emu::INIT_TILIZE, op);
    need_idle(c, op);
    check_format(c, icb, op);
    check_format(c, ocb, op);
    if (block == 0) {
        kfail("%s: block of 0 tiles on %s", op, who(c).c_str());
    }
    const uint8_t *in = cb_read_tile(c, icb, 0, op);
    cb_read_tile(c, icb, block - 1, op);
    CbState &s = cb_state(c, ocb);
    cb_write_tile(c, ocb, s.pack_next + block - 1, op);
    const uint32_t ifmt = c.run->prog->cbs[c.core][icb].format;
    const bool exact = to_dest(c, icb, Via::Datacopy, op);
    Scratch &sc = scratch();
    for (uint32_t b = 0; b < block; ++b) {
        for (uint32_t i = 0; i < 32; ++i) {
            for (uint32_t j = 0; j < 32; ++j) {
                sc.a[i * 32 + j] = load_elem(c, in, ifmt, exact, static_cast<size_t>(i) * block * 32 + b * 32 + j);
            }
        }
        pack_values(c, sc.a, ocb, cb_write_tile(c, ocb, s.pack_next, op));
        s.pack_next++;
    }
    c.counters->tile_ops[TTR_OP_TILIZE][fidelity(c)] += block;
}

// Writes row-major tile `v` into a row-major block whose rows are `row_tiles` tiles wide, at tile column `col`.
void write_rows(const Ctx &c, const float *v, uint8_t *out, uint32_t format, uint32_t row_tiles, uint32_t col) {
    for (uint32_t i = 0; i < 32; ++i) {
        for (uint32_t j = 0; j < 32; ++j) {
            store_elem(c, out, format, static_cast<size_t>(i) * row_tiles * 32 + col * 32 + j, v[i * 32 + j]);
        }
    }
}

void api_untilize_block(uint32_t icb, uint32_t block, uint32_t ocb) {
    Ctx &c = current();
    const char *op = "untilize_block";
    need_init(c, ttr_emu::INIT_UNTILIZE, op);
    need_idle(c, op);
    check_format(c, ocb, op);
    if (block == 0) {
        kfail("%s: block of 0 tiles on %s", op, who(c).c_str());
    }
    CbState &s = cb_state(c, ocb);
    uint8_t *out = cb_write_tile(c, ocb, s.pack_next, op);
    cb_write_tile(c, ocb, s.pack_next + block - 1, op);
    const uint32_t ofmt = c.run->prog->cbs[c.core][ocb].format;
    Scratch &sc = scratch();
    for (uint32_t b = 0; b < block; ++b) {
        unpack(c, icb, b, sc.a, Via::SrcReg, op);
        relu_stage(c, ofmt, sc.a, TILE);
        write_rows(c, sc.a, out, ofmt, block, b);
    }
    s.pack_next += block;
    c.counters->tile_ops[TTR_OP_UNTILIZE][fidelity(c)] += block;
}

void api_pack_untilize_block(uint32_t icb, uint32_t block_rt, uint32_t ocb, uint32_t block_ct, uint32_t full_ct,
                             uint32_t c_index) {
    Ctx &c = current();
    const char *op = "pack_untilize_block";
    need_init(c, ttr_emu::INIT_PACK_UNTILIZE, op);
    need_idle(c, op);
    check_format(c, ocb, op);
    if ((c_index + 1) * block_ct > full_ct || block_ct == 0) {
        kfail("%s: block %u of %u tiles does not fit a row of %u tiles on %s", op, c_index, block_ct, full_ct,
              who(c).c_str());
    }
    const uint32_t ofmt = c.run->prog->cbs[c.core][ocb].format;
    Scratch &sc = scratch();
    for (uint32_t r = 0; r < block_rt; ++r) {
        uint8_t *out = cb_write_tile(c, ocb, r * full_ct, op);
        cb_write_tile(c, ocb, (r + 1) * full_ct - 1, op);
        for (uint32_t col = 0; col < block_ct; ++col) {
            unpack(c, icb, r * block_ct + col, sc.a, Via::Datacopy, op);
            relu_stage(c, ofmt, sc.a, TILE);
            write_rows(c, sc.a, out, ofmt, full_ct, c_index * block_ct + col);
        }
    }
    c.counters->tile_ops[TTR_OP_UNTILIZE][fidelity(c)] += block_rt * block_ct;
}

void api_pack_untilize_dest(uint32_t ocb, uint32_t block_rt, uint32_t block_ct, uint32_t full_ct,
                            uint32_t c_index) {
    Ctx &c = current();
    const char *op = "pack_untilize_dest";
    need_init(c, ttr_emu::INIT_PACK_UNTILIZE, op);
    need_pack(c, op);
    check_format(c, ocb, op);
    if ((c_index + 1) * block_ct > full_ct || block_ct == 0) {
        kfail("%s: block %u of %u tiles does not fit a row of %u tiles on %s", op, c_index, block_ct, full_ct,
              who(c).c_str());
    }
    check_dst(c, 0, block_rt * block_ct, op);
    const uint32_t ofmt = c.run->prog->cbs[c.core][ocb].format;
    Scratch &sc = scratch();
    for (uint32_t r = 0; r < block_rt; ++r) {
        uint8_t *out = cb_write_tile(c, ocb, r * full_ct, op);
        cb_write_tile(c, ocb, (r + 1) * full_ct - 1, op);
        for (uint32_t col = 0; col < block_ct; ++col) {
            memcpy(sc.a, c.cs->dst[r * block_ct + col], sizeof sc.a);
            relu_stage(c, ofmt, sc.a, TILE);
            write_rows(c, sc.a, out, ofmt, full_ct, c_index * block_ct + col);
        }
    }
    c.counters->tile_ops[TTR_OP_UNTILIZE][fidelity(c)] += block_rt * block_ct;
}

uint32_t api_cb_read_value(uint32_t cb, uint32_t page, uint32_t word) {
    Ctx &c = current();
    const char *op = "read_tile_value";
    const CbConfig &cfg = cb_config(c, static_cast<int32_t>(cb), op);
    if (static_cast<uint64_t>(word) * 4 + 4 > cfg.page) {
        kfail("%s: word %u is beyond the %u-byte pages of cb %u on %s", op, word, cfg.page, cb, who(c).c_str());
    }
    uint32_t v;
    memcpy(&v, cb_read_tile(c, cb, page, op) + static_cast<size_t>(word) * 4, 4);
    return v;
}

void api_pack_l1_acc(uint32_t enable) {
    Ctx &c = current();
    cs(c, "pack_reconfig_l1_acc").l1_acc = enable != 0;
    c.counters->inits[TTR_INIT_PACK_RECONFIG]++;
}
// pack_relu_config: `config` is ReluConfig's packed form (mode in bits 0-1, the bf16 threshold in
// bits 16-31), as the LLK writes it to STACC_RELU. Silicon's threshold modes are undefined for a
// threshold with the sign bit set.
void api_pack_relu(uint32_t config) {
    Ctx &c = current();
    ComputeState &s = cs(c, "pack_relu_config");
    const uint32_t mode = config & 0x3u;
    const uint16_t threshold = static_cast<uint16_t>(config >> 16);
    if ((mode == RELU_MIN_THRESHOLD || mode == RELU_MAX_THRESHOLD) && (threshold & 0x8000u) != 0) {
        kfail("pack_relu_config: threshold 0x%04x (bf16) is negative; the packer's threshold ReLU is undefined "
              "for a threshold <= -0 (use a threshold >= +0) on %s",
              threshold, who(c).c_str());
    }
    s.relu_mode = mode;
    s.relu_threshold = num::bf16_to_f32(threshold);
    c.counters->inits[TTR_INIT_PACK_RECONFIG]++;
}

}  // namespace

void fill_compute_abi(ttr_emu::Abi &a) {
    a.hw_startup = api_hw_startup;
    a.op_init = api_op_init;
    a.sfpu_init = api_sfpu_init;
    a.regs = api_regs;
    a.matmul = api_matmul;
    a.binary = api_binary;
    a.copy = api_copy;
    a.reduce = api_reduce;
    a.transpose = api_transpose;
    a.sfpu = api_sfpu;
    a.pack = api_pack;
    a.tilize_block = api_tilize_block;
    a.untilize_block = api_untilize_block;
    a.pack_untilize_block = api_pack_untilize_block;
    a.pack_untilize_dest = api_pack_untilize_dest;
    a.pack_l1_acc = api_pack_l1_acc;
    a.pack_relu = api_pack_relu;
    a.cb_read_value = api_cb_read_value;
    a.reconfig = api_reconfig;
}

}  // namespace ttr
