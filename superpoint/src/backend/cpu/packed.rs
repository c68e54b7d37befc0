//! Packed convolution weights, memoised per weight tensor so that a model packs (and
//! Winograd-transforms) its weights once, on first use, instead of on every frame.
//!
//! An entry is found by the address of the weight data, the input channel count and the
//! instruction-set level (the packing follows the vector width), and is used
//! only if its copy of the weights still has the same bits (an address can be reused by other
//! weights after the first are dropped; then the entry is replaced).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use superpoint_graph::ConvWeights;

use super::conv::Packed;
use super::isa::Isa;

/// Entries kept at most; past that the cache starts over (a model has 12 convolutions).
const MAX_ENTRIES: usize = 64;

/// The packed weights of the convolutions a [`super::CpuKernels`] has run.
#[derive(Debug, Default)]
pub(crate) struct PackCache {
    entries: Mutex<HashMap<(usize, usize, Isa), Arc<Entry>>>,
}

#[derive(Debug)]
struct Entry {
    /// The weights `packed` was made from.
    weight: Vec<f32>,
    packed: Packed,
}

/// Packed weights lent out by the cache.
pub(crate) struct Lent(Arc<Entry>);

impl std::ops::Deref for Lent {
    type Target = Packed;
    fn deref(&self) -> &Packed {
        &self.0.packed
    }
}

impl PackCache {
    /// `w` packed for an input with `channels` channels, at level `isa`.
    pub(crate) fn get(&self, isa: Isa, w: &ConvWeights, channels: usize) -> Lent {
        let key = (w.weight.as_ptr() as usize, channels, isa);
        let lock = || self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = lock().get(&key).filter(|e| same_bits(&e.weight, &w.weight)) {
            return Lent(Arc::clone(entry));
        }
        // Pack without holding the lock; two threads may both pack the same weights once.
        let entry = Arc::new(Entry {
            weight: w.weight.clone(),
            packed: Packed::new(isa, w, channels),
        });
        let mut entries = lock();
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key, Arc::clone(&entry));
        Lent(entry)
    }
}

/// Whether `a` and `b` hold the same bits. Runs on every convolution of every frame, so it
/// compares blocks without stopping early inside one (which vectorises, unlike the element-wise
/// `==` of two f32 slices, whose per-element early exit ran at about 1 % of a frame).
fn same_bits(a: &[f32], b: &[f32]) -> bool {
    const BLOCK: usize = 64;
    a.len() == b.len()
        && a.chunks(BLOCK).zip(b.chunks(BLOCK)).all(|(x, y)| {
            x.iter()
                .zip(y)
                .fold(true, |same, (p, q)| same & (p.to_bits() == q.to_bits()))
        })
}

#[cfg(test)]
mod tests {
    use super::super::conv::testing::Rng;
    use super::super::conv::{self, Packed};
    use super::super::isa::Isa;
    use super::super::tensor::Hwc;
    use super::{same_bits, PackCache};

    /// One differing element anywhere (in a whole block or the last partial one), a length
    /// difference or a sign of zero makes the weights different; the same bits, NaN included,
    /// are the same weights.
    #[test]
    fn same_bits_finds_any_difference() {
        let a: Vec<f32> = (0..200).map(|i| i as f32 * 0.25 - 7.0).collect();
        assert!(same_bits(&a, &a.clone()));
        for i in [0, 63, 64, 100, 191, 199] {
            let mut b = a.clone();
            b[i] = f32::from_bits(b[i].to_bits() ^ 1);
            assert!(!same_bits(&a, &b), "element {i}");
        }
        assert!(!same_bits(&a, &a[..199]));
        assert!(!same_bits(&[0.0], &[-0.0]));
        assert!(same_bits(&[f32::NAN], &[f32::NAN]));
    }

    /// Weights changed in place (same address) must be packed again, not served from the cache.
    #[test]
    fn weights_changed_in_place_are_packed_again() {
        let mut rng = Rng::new(9);
        let x = Hwc::from_planar(&rng.tensor(19, 6, 7));
        let mut w = rng.conv(19, 11, 3);
        let other = rng.conv(19, 11, 3);
        let cache = PackCache::default();
        let isa = Isa::detected();
        let first = conv::conv2d(isa, &x, &w, 1, false, false, &cache);
        let address = w.weight.as_ptr();
        w.weight.copy_from_slice(&other.weight);
        assert_eq!(
            address,
            w.weight.as_ptr(),
            "the test needs the same address"
        );
        let second = conv::conv2d(isa, &x, &w, 1, false, false, &cache);
        let fresh = conv::run(
            isa,
            &x,
            &w,
            &Packed::new(isa, &w, x.channels()),
            1,
            false,
            false,
        );
        assert_eq!(second, fresh, "stale packed weights were used");
        assert_ne!(first, second);
    }
}
