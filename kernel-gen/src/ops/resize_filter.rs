//! The device resize's filter data, computed on the host per (input size, frame size): Pillow's
//! BILINEAR coefficients ([`superpoint_graph::reference::resize::taps`], the same ones the host
//! resize uses) laid out as banded bf16 weight tiles, and the band table telling the reader where
//! each output tile's input band starts.
//!
//! Along one axis, output tile `t` (32 outputs) reads the `k` input tiles starting at input index
//! `start[t]` (the first non-zero tap of its outputs; `k` is the widest band over all tiles, so
//! every tile has the same shape). Its weight tile `kk` holds, at (r, c), the weight of input
//! `start[t] + 32·kk + c` for output `32·t + r` (zero outside the taps), scaled by `scale`.
//! Each weight is split into `hi + lo`, both rounded to 7 significant bits: the matrix unit's
//! SrcB keeps 7 of them at every fidelity, so the split carries about 14 bits of each
//! coefficient into the products exactly, where one bf16 copy would carry 7 (an error of up to
//! 2 levels on a 255 pixel). Pages: tile `t` part `p` (0 = hi, 1 = lo) band tile `kk` is page
//! `t·2k + p·k + kk`.

use superpoint_graph::reference::resize::{taps, PRECISION_BITS};

use crate::layout::{f32_to_bf16, face_index};

/// The banded filter of one axis.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisFilter {
    /// Input tiles per output tile.
    pub band_tiles: usize,
    /// First input index of each output tile's band.
    pub starts: Vec<u32>,
    /// The weight pages, bf16 bytes in page order.
    pub pages: Vec<u8>,
}

/// Rounds `x` to 7 significant bits (sign, exponent, 6 mantissa bits), half away from zero.
fn round7(x: f32) -> f32 {
    f32::from_bits(x.to_bits().wrapping_add(0x1_0000) & 0xFFFE_0000)
}

/// `x` as hi + lo parts of 7 significant bits each.
pub fn split7(x: f64) -> (f32, f32) {
    let hi = round7(x as f32);
    (hi, round7((x - f64::from(hi)) as f32))
}

/// The filter from `in_size` to `out_size` samples (`out_size` a multiple of 32), its weights
/// multiplied by `scale`.
pub fn axis_filter(in_size: usize, out_size: usize, scale: f64) -> AxisFilter {
    let taps = taps(in_size, out_size);
    let tiles = out_size / 32;
    let one = f64::from(1u32 << PRECISION_BITS);
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
    let mut pages = vec![0u8; tiles * 2 * band_tiles * 2048];
    for (t, (start, _)) in spans.iter().enumerate() {
        for r in 0..32 {
            let o = &taps[t * 32 + r];
            for (n, w) in o.weights.iter().enumerate().filter(|(_, w)| **w != 0) {
                let c = o.first + n - start;
                let (hi, lo) = split7(f64::from(*w) / one * scale);
                for (part, v) in [hi, lo].into_iter().enumerate() {
                    let page = t * 2 * band_tiles + part * band_tiles + c / 32;
                    let at = (page * 1024 + face_index(r, c % 32)) * 2;
                    pages[at..at + 2].copy_from_slice(&f32_to_bf16(v).to_le_bytes());
                }
            }
        }
    }
    AxisFilter {
        band_tiles,
        starts: spans.iter().map(|(s, _)| *s as u32).collect(),
        pages,
    }
}

/// The band table page: the column starts, then the row starts, as little-endian u32, zero-padded
/// to `bytes`.
pub fn pack_bands(columns: &AxisFilter, rows: &AxisFilter, bytes: usize) -> Vec<u8> {
    let mut out: Vec<u8> = columns
        .starts
        .iter()
        .chain(&rows.starts)
        .flat_map(|s| s.to_le_bytes())
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

    #[test]
    fn split_keeps_fourteen_bits() {
        let x = 1.0 / 255.0;
        let (hi, lo) = split7(x);
        assert_eq!(hi.to_bits() & 0x1_FFFF, 0);
        assert_eq!(lo.to_bits() & 0x1_FFFF, 0);
        assert!(((f64::from(hi) + f64::from(lo)) - x).abs() < x * 2f64.powi(-13));
        assert_eq!(split7(0.75), (0.75, 0.0));
    }

    // 64 -> 32: scale 2, support 2. Output 0 (centre 1) reads inputs 0..3 with 3/7, 3/7, 1/7;
    // output 31 (centre 63) reads 61..64 with 1/7, 3/7, 3/7. One tile of 32 outputs spans inputs
    // 0..64: two band tiles starting at 0.
    #[test]
    fn downscale_by_two_band_by_hand() {
        let f = axis_filter(64, 32, 1.0);
        assert_eq!((f.band_tiles, f.starts.clone()), (2, vec![0]));
        let w = |page, r, c| weight(&f, page, r, c);
        let hi_plus_lo = |r, c: usize| w(c / 32, r, c % 32) + w(2 + c / 32, r, c % 32);
        assert!((hi_plus_lo(0, 0) - 3.0 / 7.0).abs() < 1e-4);
        assert!((hi_plus_lo(0, 2) - 1.0 / 7.0).abs() < 1e-4);
        assert_eq!(hi_plus_lo(0, 3), 0.0);
        assert!((hi_plus_lo(31, 63) - 3.0 / 7.0).abs() < 1e-4);
        assert!((hi_plus_lo(31, 61) - 1.0 / 7.0).abs() < 1e-4);
    }

    // Identity: one band tile per output tile, starting at the tile, weight `scale` on the diagonal.
    #[test]
    fn identity_is_a_scaled_diagonal() {
        let f = axis_filter(64, 64, 1.0 / 255.0);
        assert_eq!((f.band_tiles, f.starts.clone()), (1, vec![0, 32]));
        let (hi, lo) = split7(1.0 / 255.0);
        assert_eq!(weight(&f, 2, 5, 5), hi);
        assert_eq!(weight(&f, 3, 5, 5), lo);
        assert_eq!(weight(&f, 2, 5, 6), 0.0);
    }

    #[test]
    fn bands_page_is_columns_then_rows() {
        let cols = axis_filter(64, 64, 1.0);
        let rows = axis_filter(32, 32, 1.0);
        let page = pack_bands(&cols, &rows, 64);
        assert_eq!(page.len(), 64);
        assert_eq!(&page[..12], &[0, 0, 0, 0, 32, 0, 0, 0, 0, 0, 0, 0]);
    }
}
