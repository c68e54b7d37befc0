//! The device resize's filter data, computed on the host per (input size, frame size): Pillow's
//! BILINEAR coefficients ([`superpoint_graph::reference::resize::taps`], the same ones the host
//! resize uses) laid out as banded bf16 weight tiles, and the band table telling the reader where
//! each output tile's input band starts and which weight pages it multiplies by.
//!
//! Along one axis, output tile `t` (32 outputs) reads the `k` input tiles starting at input index
//! `start[t]` (the first non-zero tap of its outputs; `k` is the widest band over all tiles, so
//! every tile has the same shape). Its weight tile `kk` holds, at (r, c), the weight of input
//! `start[t] + 32·kk + c` for output `32·t + r` (zero outside the taps), scaled by `scale`.
//! Each weight is Pillow's integer `k` (`k / 2^PRECISION_BITS` is the coefficient) split into
//! three parts, [`split3`]: `k = a·2^15 + b·2^8 + c` with `a` the nearest to `k / 2^15` of `k`'s
//! nearest multiple of 2^8, and `|b| ≤ 64`, `|c| ≤ 128`. Each part, scaled by 2^-22, has at most
//! 7 significant bits, which the matrix unit's SrcB keeps at every fidelity, so every product with
//! a u8 value is exact. Parts 0 and 1 carry `k`'s nearest multiple of 2^8: their products sum to
//! multiples of 2^-14 below 2^9 (exact in fp32, 23 bits); part 2 sums to B, a multiple of 2^-22
//! with |B| ≤ 255·`rest_sum`·2^-22, which the planner keeps small enough for the rounding to stay
//! exact ([`crate::ops::resize`]).
//!
//! Output tiles whose weight tiles are byte for byte the same (every tile of the identity, the
//! periodic tiles of an integer down-scale) share one *page set*: the buffer holds each distinct
//! set once, in the order of the first tile that uses it, and the band table names each tile's
//! set, so a reader that already holds a set skips reading it again. Pages: set `s` part `p` band
//! tile `kk` is page `s·3k + p·k + kk`.

use superpoint_graph::reference::resize::{taps, PRECISION_BITS};

use crate::layout::{f32_to_bf16, face_index};

/// The banded filter of one axis.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisFilter {
    /// Input tiles per output tile.
    pub band_tiles: usize,
    /// First input index of each output tile's band.
    pub starts: Vec<u32>,
    /// The page set of each output tile's weights.
    pub sets: Vec<u32>,
    /// The inputs each output reads (non-zero weights), as a range.
    pub reads: Vec<(u32, u32)>,
    /// The weight pages of the distinct sets, bf16 bytes in page order.
    pub pages: Vec<u8>,
    /// The largest sum of |part 2| over one output's taps, in units of 2^-PRECISION_BITS: 255
    /// times it bounds |B| (module docs).
    pub rest_sum: u32,
}

/// The weight parts per filter tile: parts 0 and 1 (the coefficient to 2^-14) and part 2 (the
/// rest).
pub const PARTS: usize = 3;

/// Part 2 of weight `k` as an integer: `k` minus its nearest multiple of 2^8, in -128..128.
fn rest(k: i32) -> i32 {
    k - ((k + 128) >> 8 << 8)
}

/// Pillow's fixed-point weight `k` as three parts whose sum is `k / 2^PRECISION_BITS` exactly,
/// each with at most 7 significant bits (module docs).
pub fn split3(k: i32) -> [f32; PARTS] {
    let m = (k + 128) >> 8;
    let a = (m + 64) >> 7;
    let b = m - a * 128;
    let unit = 2f32.powi(-(PRECISION_BITS as i32));
    [a << 15, b << 8, rest(k)].map(|p| p as f32 * unit)
}

/// The filter from `in_size` to `out_size` samples (`out_size` a multiple of 32).
pub fn axis_filter(in_size: usize, out_size: usize) -> AxisFilter {
    let taps = taps(in_size, out_size);
    let tiles = out_size / 32;
    // The inputs each output really reads: Pillow's support can end in zero weights.
    let reads: Vec<(usize, usize)> = taps
        .iter()
        .map(|o| {
            let lo = o.weights.iter().position(|w| *w != 0).unwrap_or(0);
            let hi = o
                .weights
                .iter()
                .rposition(|w| *w != 0)
                .map_or(lo, |i| i + 1);
            (o.first + lo, o.first + hi)
        })
        .collect();
    let spans: Vec<(usize, usize)> = reads
        .chunks(32)
        .take(tiles)
        .map(|outputs| {
            let start = outputs.iter().map(|r| r.0).min().unwrap_or(0);
            let end = outputs.iter().map(|r| r.1).max().unwrap_or(start);
            (start, end.max(start))
        })
        .collect();
    let band_tiles = spans
        .iter()
        .map(|(s, e)| (e - s).div_ceil(32))
        .max()
        .unwrap_or(1)
        .max(1);
    let set_bytes = PARTS * band_tiles * 2048;
    let mut pages: Vec<u8> = Vec::new();
    let mut sets = Vec::with_capacity(tiles);
    for (t, (start, _)) in spans.iter().enumerate() {
        let mut set = vec![0u8; set_bytes];
        for r in 0..32 {
            let o = &taps[t * 32 + r];
            for (n, w) in o.weights.iter().enumerate().filter(|(_, w)| **w != 0) {
                let c = o.first + n - start;
                for (part, v) in split3(*w).into_iter().enumerate() {
                    let page = part * band_tiles + c / 32;
                    let at = (page * 1024 + face_index(r, c % 32)) * 2;
                    set[at..at + 2].copy_from_slice(&f32_to_bf16(v).to_le_bytes());
                }
            }
        }
        let index = match pages.chunks(set_bytes).position(|s| *s == set[..]) {
            Some(known) => known,
            None => {
                pages.extend(set);
                pages.len() / set_bytes - 1
            }
        };
        sets.push(index as u32);
    }
    let rest_sum = taps
        .iter()
        .map(|o| o.weights.iter().map(|k| rest(*k).unsigned_abs()).sum())
        .max()
        .unwrap_or(0);
    AxisFilter {
        band_tiles,
        starts: spans.iter().map(|(s, _)| *s as u32).collect(),
        sets,
        reads: reads.iter().map(|(a, b)| (*a as u32, *b as u32)).collect(),
        pages,
        rest_sum,
    }
}

impl AxisFilter {
    /// The number of distinct page sets.
    pub fn set_count(&self) -> usize {
        self.pages.len() / (PARTS * self.band_tiles * 2048)
    }

    /// For each output tile, then each run of `unit` of its outputs (`unit` divides 32): the band
    /// rows (input index minus the tile's band start) those outputs read, as a range.
    pub fn unit_spans(&self, unit: usize) -> Vec<(u32, u32)> {
        self.reads
            .chunks(unit)
            .enumerate()
            .map(|(u, outputs)| {
                let start = self.starts[u * unit / 32];
                let lo = outputs.iter().map(|r| r.0).min().unwrap_or(start);
                let hi = outputs.iter().map(|r| r.1).max().unwrap_or(lo);
                (lo - start, hi.max(lo) - start)
            })
            .collect()
    }
}

/// The band table page, little-endian u32, zero-padded to `bytes`: each output column tile's
/// (band start, page set), then each output row tile's (band start, page set) followed by the
/// band rows each run of `unit` of its output rows reads ([`AxisFilter::unit_spans`]).
pub fn pack_bands(columns: &AxisFilter, rows: &AxisFilter, unit: usize, bytes: usize) -> Vec<u8> {
    let per_tile = 32 / unit;
    let spans = rows.unit_spans(unit);
    let column_words = columns
        .starts
        .iter()
        .zip(&columns.sets)
        .flat_map(|(start, set)| [*start, *set]);
    let row_words = rows
        .starts
        .iter()
        .zip(&rows.sets)
        .enumerate()
        .flat_map(|(t, (start, set))| {
            [*start, *set].into_iter().chain(
                spans[t * per_tile..(t + 1) * per_tile]
                    .iter()
                    .flat_map(|(lo, hi)| [*lo, *hi]),
            )
        });
    let mut out: Vec<u8> = column_words
        .chain(row_words)
        .flat_map(u32::to_le_bytes)
        .collect();
    out.resize(bytes.max(out.len()), 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::bf16_to_f32;

    fn weight(f: &AxisFilter, page: usize, r: usize, c: usize) -> f32 {
        let at = (page * 1024 + face_index(r, c)) * 2;
        bf16_to_f32(u16::from_le_bytes([f.pages[at], f.pages[at + 1]]))
    }

    /// Significant bits of `x`'s significand (0 for 0).
    fn significant_bits(x: f32) -> u32 {
        let m = x.to_bits() & 0x7F_FFFF;
        if x == 0.0 {
            0
        } else {
            24 - m.trailing_zeros().min(23)
        }
    }

    // Every weight Pillow can produce, 0..=2^22: the parts sum to it exactly, in bf16, 7 bits each,
    // parts 0 + 1 a multiple of 2^-14 and part 2 at most 2^-15.
    #[test]
    fn split_is_exact_in_seven_bit_parts() {
        let unit = 2f64.powi(-22);
        for k in 0..=(1 << PRECISION_BITS) {
            let p = split3(k);
            let sum: f64 = p.iter().map(|v| f64::from(*v)).sum();
            assert_eq!(sum, f64::from(k) * unit, "k = {k}");
            for v in p {
                assert!(significant_bits(v) <= 7, "k = {k}: part {v}");
                assert_eq!(bf16_to_f32(f32_to_bf16(v)), v, "k = {k}");
            }
            assert_eq!((f64::from(p[0]) + f64::from(p[1])) % 2f64.powi(-14), 0.0);
            assert!(f64::from(p[2]).abs() <= 2f64.powi(-15), "k = {k}");
        }
        assert_eq!(split3(3 << 20), [0.75, 0.0, 0.0]);
        assert_eq!(split3(1 << 22), [1.0, 0.0, 0.0]);
        // 0x12345: nearest multiple of 2^8 is 0x123·2^8 (c = 0x45), and 0x123 = 2·2^7 + 0x23.
        assert_eq!(
            split3(0x12345).map(|v| (f64::from(v) / unit) as i32),
            [0x10000, 0x2300, 0x45]
        );
    }

    // 64 -> 32: scale 2, support 2. Output 0 (centre 1) reads inputs 0..3 with 3/7, 3/7, 1/7;
    // output 31 (centre 63) reads 61..64 with 1/7, 3/7, 3/7. One tile of 32 outputs spans inputs
    // 0..64: two band tiles starting at 0.
    #[test]
    fn downscale_by_two_band_by_hand() {
        let f = axis_filter(64, 32);
        assert_eq!((f.band_tiles, f.starts.clone()), (2, vec![0]));
        let w = |page, r, c| weight(&f, page, r, c);
        let sum = |r, c: usize| {
            (0..PARTS)
                .map(|p| w(2 * p + c / 32, r, c % 32))
                .sum::<f32>()
        };
        assert!((sum(0, 0) - 3.0 / 7.0).abs() < 1e-6);
        assert!((sum(0, 2) - 1.0 / 7.0).abs() < 1e-6);
        assert_eq!(sum(0, 3), 0.0);
        assert!((sum(31, 63) - 3.0 / 7.0).abs() < 1e-6);
        assert!((sum(31, 61) - 1.0 / 7.0).abs() < 1e-6);
    }

    // |part 2| summed over an output's taps: 0 for the identity (weight 2^22). For 64 -> 32 the
    // inner outputs weigh 1/8, 3/8, 3/8, 1/8 (multiples of 2^8, rest 0); the edge ones 3/7, 3/7,
    // 1/7: round(2^22·3/7) = 1797559 = 7022·256 - 73 and round(2^22/7) = 599186 = 2341·256 - 110.
    #[test]
    fn rest_sum_by_hand() {
        assert_eq!(axis_filter(64, 64).rest_sum, 0);
        assert_eq!(axis_filter(64, 32).rest_sum, 73 + 73 + 110);
    }

    // Identity: one band tile per output tile, starting at the tile, weight 1 on the diagonal
    // (all in part 0); every tile has the same weights, so one page set of 3 pages serves all.
    #[test]
    fn identity_is_a_diagonal() {
        let f = axis_filter(64, 64);
        assert_eq!((f.band_tiles, f.starts.clone()), (1, vec![0, 32]));
        assert_eq!((f.sets.clone(), f.set_count()), (vec![0, 0], 1));
        assert_eq!(f.pages.len(), PARTS * 2048);
        assert_eq!(weight(&f, 0, 5, 5), 1.0);
        assert_eq!(weight(&f, 1, 5, 5), 0.0);
        assert_eq!(weight(&f, 2, 5, 5), 0.0);
        assert_eq!(weight(&f, 0, 5, 6), 0.0);
        assert_eq!(axis_filter(640, 640).sets, vec![0; 20]);
    }

    // 512 -> 128 (scale 4, support 4): output o weighs inputs 4o - 2 .. 4o + 6, so the interior
    // tiles 1 and 2 see the same weights at the same place in their bands (their starts 128
    // apart); tile 0's band is cut by the left edge and tile 3's outputs near the right edge
    // renormalise their clipped taps, so each has its own set.
    #[test]
    fn integer_downscale_shares_interior_sets() {
        let f = axis_filter(512, 128);
        assert_eq!(f.sets, vec![0, 1, 1, 2]);
        assert_eq!(f.set_count(), 3);
        assert_eq!(f.starts[2] - f.starts[1], 128);
    }

    // Every output's weights, read back through its tile's page set, are Pillow's taps exactly
    // (parts summed in f64), and zero elsewhere in the band, for down-, up-, odd and identity
    // sizes.
    #[test]
    fn page_sets_hold_every_tiles_taps() {
        let unit = 2f64.powi(-(PRECISION_BITS as i32));
        for (input, output) in [
            (64, 64),
            (512, 128),
            (200, 96),
            (50, 96),
            (300, 64),
            (511, 480),
        ] {
            let f = axis_filter(input, output);
            let k = f.band_tiles;
            for (o, t) in taps(input, output).iter().enumerate() {
                let (tile, r) = (o / 32, o % 32);
                let start = f.starts[tile] as usize;
                for x in start..start + 32 * k {
                    let expected = x
                        .checked_sub(t.first)
                        .and_then(|n| t.weights.get(n))
                        .map_or(0.0, |w| f64::from(*w) * unit);
                    let c = x - start;
                    let got: f64 = (0..PARTS)
                        .map(|p| {
                            let page = f.sets[tile] as usize * PARTS * k + p * k + c / 32;
                            f64::from(weight(&f, page, r, c % 32))
                        })
                        .sum();
                    assert_eq!(got, expected, "{input} -> {output}: output {o}, input {x}");
                }
            }
        }
    }

    // Identity: output o reads input o. 64 -> 32 (scale 2, support 2): interior output o reads
    // 2o - 1 ..= 2o + 2, so outputs 0..16 read 0..33 (output 15: 29..33) and 16..32 read 31..64
    // (output 16 from 31; output 31: 61..64).
    #[test]
    fn unit_spans_by_hand() {
        let identity = axis_filter(64, 64);
        assert_eq!(identity.unit_spans(32), vec![(0, 32), (0, 32)]);
        assert_eq!(
            identity.unit_spans(16),
            vec![(0, 16), (16, 32), (0, 16), (16, 32)]
        );
        let half = axis_filter(64, 32);
        assert_eq!(half.unit_spans(32), vec![(0, 64)]);
        assert_eq!(half.unit_spans(16), vec![(0, 33), (31, 64)]);
    }

    // The two column tiles of 64 -> 64 as (start, set), then the four row tiles of 512 -> 128 as
    // (start, set, then the band rows of each half tile).
    #[test]
    fn bands_page_is_columns_then_rows() {
        let cols = axis_filter(64, 64);
        let rows = axis_filter(512, 128);
        let page = pack_bands(&cols, &rows, 16, 128);
        assert_eq!(page.len(), 128);
        let words: Vec<u32> = page
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        assert_eq!(&words[..4], &[0, 0, 32, 0]);
        let spans = rows.unit_spans(16);
        for (t, set) in [0, 1, 1, 2].into_iter().enumerate() {
            let (a, b) = (spans[2 * t], spans[2 * t + 1]);
            assert_eq!(
                &words[4 + 6 * t..10 + 6 * t],
                &[rows.starts[t], set, a.0, a.1, b.0, b.1],
                "row tile {t}"
            );
        }
        assert_eq!(&words[28..], &[0; 4]);
        assert_eq!(pack_bands(&cols, &rows, 32, 0).len(), 4 * (4 + 4 * 4));
    }
}
