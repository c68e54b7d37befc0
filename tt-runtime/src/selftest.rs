//! Self-checks of an opened device that need nothing but the runtime: DRAM and per-core L1
//! round trips, a known-answer program, and trace replay against a direct launch. A card owner
//! runs them through `superpoint doctor`; the tests run them on the emulator.
//!
//! The known-answer program is the reference grid matmul ([`GridMatmul`]) on operands that are
//! small integers (-2..=2): every product and every partial sum is an integer of magnitude at
//! most 256, exact in bf16 and f32, so the result does not depend on the summation order, the
//! math fidelity or the packer's rounding. Silicon must therefore give the same bytes as the
//! emulator, which produced the checked-in [`GOLDEN`] (`cargo run -p tt-runtime --example
//! selftest_golden` rewrites it).

use crate::buffer::Buffer;
use crate::device::{CoreCoord, Device};
use crate::error::Result;
use crate::host::{tilize, to_bf16_bytes};
use crate::program::{DataFormat, MathFidelity};
use crate::workload::GridMatmul;

/// The known-answer program: 2 rows of 4 cores (the in0 operand multicast along each row),
/// K = 64, one bf16 output tile per core.
pub const KNOWN_ANSWER: GridMatmul = GridMatmul {
    rows: 2,
    cols: 4,
    kt: 2,
    ct: 1,
    fidelity: MathFidelity::HiFi2,
    fp32_dest: true,
    out_format: DataFormat::Float16B,
};

/// The seed of the known-answer operands.
pub const KNOWN_ANSWER_SEED: u64 = 0x5eed_d0c7;

/// The emulator's output of the known-answer program: C as bf16 tiles, row-major tile order.
pub const GOLDEN: &[u8] = include_bytes!("../selftest/known_answer.bin");

/// A byte-for-byte comparison of what came back against what was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparison {
    /// Bytes compared (the longer of the two lengths).
    pub bytes: u64,
    /// Bytes that differ, a length difference counting as differing bytes.
    pub differing: u64,
    /// Offset of the first differing byte.
    pub first: Option<u64>,
}

impl Comparison {
    /// `got` against `want`.
    pub fn of(got: &[u8], want: &[u8]) -> Comparison {
        let common = got.len().min(want.len());
        let mut differing = got.len().abs_diff(want.len()) as u64;
        let mut first = (got.len() != want.len()).then_some(common as u64);
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            if g != w {
                differing += 1;
                first = Some(first.map_or(i as u64, |f| f.min(i as u64)));
            }
        }
        Comparison {
            bytes: got.len().max(want.len()) as u64,
            differing,
            first,
        }
    }

    /// No byte differs.
    pub fn equal(&self) -> bool {
        self.differing == 0
    }

    /// Two comparisons as one (offsets of the second shifted past the first).
    fn then(self, next: Comparison) -> Comparison {
        Comparison {
            bytes: self.bytes + next.bytes,
            differing: self.differing + next.differing,
            first: self.first.or(next.first.map(|f| self.bytes + f)),
        }
    }
}

/// `len` pseudo-random bytes from `seed` (splitmix64), so every buffer and core gets its own
/// pattern and misplaced data shows.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Writes a pattern and its complement (every bit both ways) to a `bytes`-byte DRAM buffer
/// interleaved over the banks in `page`-byte pages, and compares each read-back.
pub fn dram_round_trip(dev: &Device, bytes: u64, page: u32, seed: u64) -> Result<Comparison> {
    let buffer = dev.dram_buffer(bytes, page)?;
    let len = usize::try_from(bytes).map_err(|_| crate::error::Error::TooLarge("bytes"))?;
    let data = pattern(len, seed);
    let inverse: Vec<u8> = data.iter().map(|b| !b).collect();
    let mut total = Comparison::of(&[], &[]);
    for want in [data, inverse] {
        buffer.write(&want)?;
        total = total.then(Comparison::of(&buffer.read_vec()?, &want));
    }
    Ok(total)
}

/// The L1 round trip of every worker core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L1RoundTrip {
    /// Worker cores written and read.
    pub cores: u32,
    /// All cores' bytes compared together.
    pub comparison: Comparison,
    /// The first core whose read-back differs.
    pub first_bad_core: Option<CoreCoord>,
}

/// Writes a pattern of its own (and then its complement) to a `bytes_per_core` L1 buffer on
/// every worker core, all cores first so a write landing on the wrong core shows, then reads each
/// back and compares.
pub fn l1_round_trip(dev: &Device, bytes_per_core: u32, seed: u64) -> Result<L1RoundTrip> {
    let info = dev.info()?;
    let buffer = dev.l1_buffer(bytes_per_core)?;
    let cores: Vec<CoreCoord> = (0..info.grid_y)
        .flat_map(|y| (0..info.grid_x).map(move |x| CoreCoord::new(x, y)))
        .collect();
    let mut total = Comparison::of(&[], &[]);
    let mut first_bad_core = None;
    for invert in [false, true] {
        let want = |i: usize| {
            let p = pattern(bytes_per_core as usize, seed ^ ((i as u64) << 32));
            if invert {
                p.iter().map(|b| !b).collect()
            } else {
                p
            }
        };
        for (i, core) in cores.iter().enumerate() {
            buffer.write_core(*core, 0, &want(i))?;
        }
        for (i, core) in cores.iter().enumerate() {
            let c = read_core(&buffer, *core, bytes_per_core)?;
            let comparison = Comparison::of(&c, &want(i));
            if !comparison.equal() && first_bad_core.is_none() {
                first_bad_core = Some(*core);
            }
            total = total.then(comparison);
        }
    }
    Ok(L1RoundTrip {
        cores: cores.len() as u32,
        comparison: total,
        first_bad_core,
    })
}

fn read_core(buffer: &Buffer, core: CoreCoord, bytes: u32) -> Result<Vec<u8>> {
    let mut out = vec![0u8; bytes as usize];
    buffer.read_core(core, 0, &mut out)?;
    Ok(out)
}

/// The known-answer operands A (M x K) and B (K x N), row-major, integers in -2..=2.
pub fn known_answer_operands(seed: u64) -> (Vec<f32>, Vec<f32>) {
    let (m, k, n) = known_answer_dims();
    let ints = |len: usize, seed: u64| -> Vec<f32> {
        pattern(len, seed)
            .into_iter()
            .map(|b| f32::from(b % 5) - 2.0)
            .collect()
    };
    (ints(m * k, seed), ints(k * n, !seed))
}

/// (M, K, N) of the known-answer matmul in elements.
pub fn known_answer_dims() -> (usize, usize, usize) {
    let s = KNOWN_ANSWER;
    (
        (s.rows * 32) as usize,
        (s.kt * 32) as usize,
        (s.nt() * 32) as usize,
    )
}

/// What the known-answer program left in C, launched directly and replayed from a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownAnswerRun {
    /// C after a direct launch.
    pub direct: Vec<u8>,
    /// C after C was overwritten and the captured trace replayed.
    pub replay: Vec<u8>,
}

/// Runs the known-answer program on its seeded operands: once directly, then (C overwritten
/// with a pattern) from a captured trace.
pub fn run_known_answer(dev: &Device) -> Result<KnownAnswerRun> {
    let run = KNOWN_ANSWER.build(dev)?;
    let (m, k, n) = known_answer_dims();
    let (a, b) = known_answer_operands(KNOWN_ANSWER_SEED);
    run.a.write(&to_bf16_bytes(&tilize(&a, m, k)))?;
    run.b.write(&to_bf16_bytes(&tilize(&b, k, n)))?;
    dev.enqueue(&run.program)?;
    dev.finish()?;
    let direct = run.c.read_vec()?;
    let size = usize::try_from(run.c.size()).map_err(|_| crate::error::Error::TooLarge("C"))?;
    run.c.write(&pattern(size, KNOWN_ANSWER_SEED))?;
    let trace = dev.capture_trace(|d| d.enqueue(&run.program))?;
    dev.replay(&trace)?;
    dev.finish()?;
    let replay = run.c.read_vec()?;
    Ok(KnownAnswerRun { direct, replay })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_count_differing_bytes_and_find_the_first() {
        assert_eq!(
            Comparison::of(b"abcd", b"abcd"),
            Comparison {
                bytes: 4,
                differing: 0,
                first: None
            }
        );
        let c = Comparison::of(b"abXdY", b"abcde");
        assert_eq!((c.differing, c.first), (2, Some(2)));
        // A short read-back differs in every missing byte, from where it stops.
        let short = Comparison::of(b"ab", b"abcd");
        assert_eq!((short.bytes, short.differing, short.first), (4, 2, Some(2)));
        let both = Comparison::of(b"ab", b"ab").then(Comparison::of(b"xy", b"xz"));
        assert_eq!((both.bytes, both.differing, both.first), (4, 1, Some(3)));
    }

    #[test]
    fn patterns_differ_by_seed_and_are_stable() {
        let p = pattern(20, 1);
        assert_eq!(p.len(), 20);
        assert_eq!(p, pattern(20, 1));
        assert_ne!(p, pattern(20, 2));
        assert_eq!(&pattern(8, 1)[..], &p[..8]);
    }

    #[test]
    fn the_operands_are_small_integers_so_every_sum_is_exact() {
        let (a, b) = known_answer_operands(KNOWN_ANSWER_SEED);
        let (m, k, n) = known_answer_dims();
        assert_eq!((a.len(), b.len()), (m * k, k * n));
        for v in a.iter().chain(&b) {
            assert!(v.fract() == 0.0 && (-2.0..=2.0).contains(v), "{v}");
        }
        // |sum| <= K * 4 = 256: integers up to 256 are exact in bf16's 8 significant bits.
        assert!(k * 4 <= 256);
        // Every value occurs.
        for want in [-2.0, -1.0, 0.0, 1.0, 2.0] {
            assert!(a.contains(&want) && b.contains(&want));
        }
    }
}
