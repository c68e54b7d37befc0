// Conformance harness: a declaration-only, deliberately loose model of SFPI's sfpi.h, the SFPU
// vector library of Tenstorrent's RISC-V toolchain (built on `__builtin_rvtt_*` compiler builtins a
// host compiler does not have). Every vector type is one permissive class, every SFPI function a
// template returning a value convertible to anything, every instruction-modifier constant 0. This
// lets a host compiler get through the Blackhole LLK's SFPU code the compute API headers include, so
// a syntax check proves a kernel's calls into the real API headers resolve; it proves nothing about
// the SFPU code itself, which only the device toolchain can check.
#pragma once

#include <cstdint>
#include <type_traits>

#define sfpi_inline inline __attribute__((always_inline))

/// The builtins' vector operand type.
struct __rvtt_vec_t {};
template <class... A>
__rvtt_vec_t __builtin_rvtt_sfpmad(A...);
template <class... A>
__rvtt_vec_t __builtin_rvtt_sfpiadd_i(A...);
template <class... A>
__rvtt_vec_t __builtin_rvtt_sfpassign_lv(A...);
template <class... A>
void __builtin_rvtt_ttreplay(A...);

namespace sfpi {

/// A value of any SFPI type: converts to and combines with anything.
struct Any {
    template <class T>
    operator T() const;
    __rvtt_vec_t get() const;
};

#define TTR_SFPI_BINARY(op)                     \
    template <class A, class B>                 \
    auto operator op(const A &, const B &)      \
        -> std::enable_if_t<is_sfpi_v<A> || is_sfpi_v<B>, Any>;
#define TTR_SFPI_ASSIGN(op)                     \
    template <class A, class B>                 \
    auto operator op(A &a, const B &)           \
        -> std::enable_if_t<is_sfpi_v<A>, A &>;

template <int Tag>
struct Vec;
struct sFloat16a;
struct sFloat16b;
template <class T>
struct is_sfpi : std::false_type {};
template <int Tag>
struct is_sfpi<Vec<Tag>> : std::true_type {};
template <>
struct is_sfpi<Any> : std::true_type {};
template <class T>
constexpr bool is_sfpi_v = is_sfpi<std::remove_cv_t<std::remove_reference_t<T>>>::value;

enum class DataLayout { Default, F32, I32, U32, U16, M32, SM32, FSrcB, TILE, ROW_MAJOR };

template <int Tag>
struct Vec {
    Vec();
    Vec(const Vec &);
    Vec(__rvtt_vec_t);
    template <class U, class = std::enable_if_t<std::is_arithmetic_v<U> || std::is_enum_v<U>>>
    Vec(U);
    template <int Other>
    Vec(const Vec<Other> &);
    Vec(const sFloat16a &);
    Vec(const sFloat16b &);
    Vec &operator=(const Vec &);
    template <class U>
    Vec &operator=(const U &);
    __rvtt_vec_t get() const;
    Any operator-() const;
    Any operator~() const;
    Vec &operator++();
    Vec operator++(int);
    Vec &operator--();
    Vec operator--(int);
    template <DataLayout L>
    Vec &mode();
    void in_use() const;
};
TTR_SFPI_BINARY(+)
TTR_SFPI_BINARY(-)
TTR_SFPI_BINARY(*)
TTR_SFPI_BINARY(/)
TTR_SFPI_BINARY(&)
TTR_SFPI_BINARY(|)
TTR_SFPI_BINARY(^)
TTR_SFPI_BINARY(<<)
TTR_SFPI_BINARY(>>)
TTR_SFPI_BINARY(<)
TTR_SFPI_BINARY(<=)
TTR_SFPI_BINARY(>)
TTR_SFPI_BINARY(>=)
TTR_SFPI_BINARY(==)
TTR_SFPI_BINARY(!=)
TTR_SFPI_BINARY(&&)
TTR_SFPI_BINARY(||)
TTR_SFPI_ASSIGN(+=)
TTR_SFPI_ASSIGN(-=)
TTR_SFPI_ASSIGN(*=)
TTR_SFPI_ASSIGN(&=)
TTR_SFPI_ASSIGN(|=)
TTR_SFPI_ASSIGN(^=)
TTR_SFPI_ASSIGN(<<=)
TTR_SFPI_ASSIGN(>>=)
template <class A>
auto operator!(const A &) -> std::enable_if_t<is_sfpi_v<A>, Any>;
#undef TTR_SFPI_BINARY
#undef TTR_SFPI_ASSIGN

using vFloat = Vec<0>;
using vInt = Vec<1>;
using vUInt = Vec<2>;
using vSMag = Vec<3>;
using vMag = Vec<4>;
using vSMag16 = Vec<5>;
using vSMag8 = Vec<6>;
using vUInt8 = Vec<7>;
using vUInt16 = Vec<8>;
using vFloat16a = Vec<9>;
using vFloat16b = Vec<10>;
using vBool = Vec<11>;
using vCond = Vec<12>;

/// Scalar 16-bit floats the LLK builds from float constants.
struct sFloat16a {
    template <class U>
    sFloat16a(U);
};
struct sFloat16b {
    template <class U>
    sFloat16b(U);
};

/// A destination- or local-register lane set: reads as any vector, takes any vector.
struct RegRef {
    template <class T>
    operator T() const;
    template <class U>
    RegRef &operator=(const U &);
    template <DataLayout L>
    RegRef &mode();
    __rvtt_vec_t get() const;
    void in_use() const;
};
template <>
struct is_sfpi<RegRef> : std::true_type {};
struct DstReg {
    RegRef operator[](int) const;
    DstReg &operator++();
    DstReg operator++(int);
    DstReg &operator+=(int);
};
extern DstReg dst_reg;
enum LRegs { LReg0, LReg1, LReg2, LReg3, LReg4, LReg5, LReg6, LReg7, LRegCount };
extern RegRef l_reg[LRegCount];
extern RegRef vConst0, vConst1, vConstNeg1, vConst0p8373, vConstFloatPrgm0, vConstFloatPrgm1, vConstFloatPrgm2,
    vConstIntPrgm0, vConstIntPrgm1, vConstIntPrgm2, vConstTileId;

enum class RoundMode { Nearest, NearestEven, NearestStochastic };
enum class ExponentMode { Biased, NoDebias };
enum class MantissaMode { ImplicitOne, NoImplicitOne };
enum class ShiftMode { Logical, Arithmetic };
enum class FractionalHalf { Low, High };

/// The SFPI functions the LLK calls, each taking anything (and any template arguments).
#define TTR_SFPI_FUNCTION(name)  \
    template <class... A>        \
    Any name(A &&...);           \
    template <class T, class... A> \
    Any name(A &&...);           \
    template <auto V, class... A> \
    Any name(A &&...);
TTR_SFPI_FUNCTION(abs)
TTR_SFPI_FUNCTION(addexp)
TTR_SFPI_FUNCTION(approx_recip)
TTR_SFPI_FUNCTION(as)
TTR_SFPI_FUNCTION(clamp)
TTR_SFPI_FUNCTION(convert)
TTR_SFPI_FUNCTION(copysgn)
TTR_SFPI_FUNCTION(exexp)
TTR_SFPI_FUNCTION(exexp_nodebias)
TTR_SFPI_FUNCTION(exman)
TTR_SFPI_FUNCTION(exman8)
TTR_SFPI_FUNCTION(exman9)
TTR_SFPI_FUNCTION(float_to_fp16b)
TTR_SFPI_FUNCTION(fractional_mul)
TTR_SFPI_FUNCTION(int32_to_float)
TTR_SFPI_FUNCTION(is_finite)
TTR_SFPI_FUNCTION(is_inf)
TTR_SFPI_FUNCTION(is_nan)
TTR_SFPI_FUNCTION(is_neg)
TTR_SFPI_FUNCTION(is_pos)
TTR_SFPI_FUNCTION(lut)
TTR_SFPI_FUNCTION(max)
TTR_SFPI_FUNCTION(min)
TTR_SFPI_FUNCTION(min_max)
TTR_SFPI_FUNCTION(reinterpret)
TTR_SFPI_FUNCTION(setexp)
TTR_SFPI_FUNCTION(setman)
TTR_SFPI_FUNCTION(setsgn)
TTR_SFPI_FUNCTION(setsgn2)
TTR_SFPI_FUNCTION(shft)
TTR_SFPI_FUNCTION(symmetric_clamp)
TTR_SFPI_FUNCTION(vec_min_max)
#undef TTR_SFPI_FUNCTION

/// Instruction-modifier constants the LLK passes to SFPI and TTI_ macros. Placeholder values: a
/// syntax check needs constant expressions; the encodings matter only to the device assembler.
constexpr unsigned SFPARECIP_MOD1_RECIP = 0, SFPCAST_MOD1_INT32_TO_FP32_RNE = 0, SFPCAST_MOD1_SM32_TO_FP32_RNE = 0,
                   SFPENCC_MOD1_EU_R1 = 0, SFPEXEXP_MOD1_SET_CC_COMP_EXP = 0, SFPEXEXP_MOD1_SET_CC_SGN_EXP = 0,
                   SFPEXMAN_MOD1_PAD9 = 0, SFPIADD_MOD1_ARG_2SCOMP_LREG_DST = 0, SFPIADD_MOD1_ARG_IMM = 0,
                   SFPIADD_MOD1_ARG_LREG_DST = 0, SFPIADD_MOD1_CC_GTE0 = 0, SFPIADD_MOD1_CC_LT0 = 0,
                   SFPIADD_MOD1_CC_NONE = 0, SFPLOADI_MOD0_FLOATA = 0, SFPLOADI_MOD0_FLOATB = 0,
                   SFPLOADI_MOD0_LOWER = 0, SFPLOADI_MOD0_SHORT = 0, SFPLOADI_MOD0_UPPER = 0,
                   SFPLOADI_MOD0_USHORT = 0, SFPLOAD_MOD0_FMT_SRCB = 0, SFPMAD_MOD1_OFFSET_NONE = 0,
                   SFPMUL24_MOD1_LOWER = 0, SFPMUL24_MOD1_UPPER = 0, SFPSETCC_MOD1_LREG_EQ0 = 0,
                   SFPSETCC_MOD1_LREG_GTE0 = 0, SFPSETCC_MOD1_LREG_LT0 = 0, SFPSETCC_MOD1_LREG_NE0 = 0,
                   SFPSHFT2_MOD1_SHFT_IMM = 0, SFPSHFT2_MOD1_SHFT_LREG = 0, SFPSHFT2_MOD1_SUBVEC_SHFLROR1 = 0,
                   SFPSHFT2_MOD1_SUBVEC_SHFLSHR1 = 0, SFPSTOCHRND_MOD1_FP32_TO_FP16B = 0,
                   SFPSTOCHRND_MOD1_FP32_TO_INT16 = 0, SFPSTOCHRND_MOD1_FP32_TO_INT8 = 0,
                   SFPSTOCHRND_MOD1_FP32_TO_UINT16 = 0, SFPSTOCHRND_MOD1_FP32_TO_UINT8 = 0,
                   SFPSTOCHRND_RND_EVEN = 0, SFPSTORE_MOD0_FMT_SRCB = 0, SFPSWAP_MOD1_SWAP = 0,
                   SFPSWAP_MOD1_VEC_MIN_MAX = 0, SFP_DESTREG_STRIDE = 2;

/// Lane predication: `v_if (cond) { ... } v_elseif (cond) { ... } v_else { ... } v_endif;`.
struct CCCtrl {
    CCCtrl();
    ~CCCtrl();
    template <class C>
    void cc_if(const C &);
    template <class C>
    void cc_elseif(const C &);
    void cc_else();
};
}  // namespace sfpi

#define v_if(x)                 \
    {                           \
        ::sfpi::CCCtrl ttr_cc_; \
        ttr_cc_.cc_if(x);
#define v_elseif(x) ttr_cc_.cc_elseif(x);
#define v_else ttr_cc_.cc_else();
#define v_endif }
#define v_block {
#define v_endblock }
#define v_and(x) ttr_cc_.cc_if(x)
