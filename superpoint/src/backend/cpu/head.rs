//! The per-pixel post-processing of the two heads on channels-last tensors: softmax over
//! channels, dustbin drop + cell fold into the score map, and L2 normalisation over channels.
//! Each pixel's channels are contiguous; the sums are taken in f64 like the reference.

use rayon::prelude::*;
use superpoint_graph::reference::l2norm::EPS;

use super::tensor::Hwc;

/// Pixels per parallel task of the per-pixel loops.
const PIXELS_PER_TASK: usize = 256;

/// Softmax over the channels of every pixel.
pub(crate) fn softmax(x: &Hwc) -> Hwc {
    let c = x.channels();
    let mut out = Hwc::for_overwrite(c, x.height(), x.width());
    if out.data().is_empty() {
        return out;
    }
    out.data_mut()
        .par_chunks_mut(PIXELS_PER_TASK * c)
        .zip(x.data().par_chunks(PIXELS_PER_TASK * c))
        .for_each(|(o, i)| {
            let mut e = vec![0.0f64; c];
            for (op, ip) in o.chunks_exact_mut(c).zip(i.chunks_exact(c)) {
                let m = ip
                    .iter()
                    .map(|&v| f64::from(v))
                    .fold(f64::NEG_INFINITY, f64::max);
                for (ec, &v) in e.iter_mut().zip(ip) {
                    *ec = (f64::from(v) - m).exp();
                }
                let sum: f64 = e.iter().sum();
                for (oc, ec) in op.iter_mut().zip(&e) {
                    *oc = (ec / sum) as f32;
                }
            }
        });
    out
}

/// Drops the dustbin and folds channel k of cell (cy, cx) to pixel (cell·cy + k / cell,
/// cell·cx + k % cell) of a one-channel map.
pub(crate) fn dustbin_fold(x: &Hwc, cell: usize) -> Hwc {
    let (c, hc, wc) = (x.channels(), x.height(), x.width());
    let (h, w) = (hc * cell, wc * cell);
    let mut out = Hwc::zeros(1, h, w);
    if out.data().is_empty() {
        return out;
    }
    let used = (cell * cell).min(c);
    out.data_mut()
        .par_chunks_mut(cell * w)
        .enumerate()
        .for_each(|(cy, band)| {
            let src = x.row(cy);
            for (cx, px) in src.chunks_exact(c).enumerate() {
                for (k, &v) in px[..used].iter().enumerate() {
                    band[(k / cell) * w + cell * cx + k % cell] = v;
                }
            }
        });
    out
}

/// Every pixel's channel vector divided by its L2 norm (at least `EPS`).
pub(crate) fn l2_normalize(x: &Hwc) -> Hwc {
    let c = x.channels();
    let mut out = Hwc::for_overwrite(c, x.height(), x.width());
    if out.data().is_empty() {
        return out;
    }
    out.data_mut()
        .par_chunks_mut(PIXELS_PER_TASK * c)
        .zip(x.data().par_chunks(PIXELS_PER_TASK * c))
        .for_each(|(o, i)| {
            for (op, ip) in o.chunks_exact_mut(c).zip(i.chunks_exact(c)) {
                let norm = ip
                    .iter()
                    .map(|&v| f64::from(v) * f64::from(v))
                    .sum::<f64>()
                    .sqrt()
                    .max(EPS);
                for (oc, &v) in op.iter_mut().zip(ip) {
                    *oc = (f64::from(v) / norm) as f32;
                }
            }
        });
    out
}
