//! Recycled tensor buffers (and the growth rule of workers' scratch buffers, [`scratch`]). A
//! 640×480 frame allocates about 250 MB of activations; fresh allocations that large come from
//! the OS as untouched pages, and touching them (a page fault and a page clear per 4 KiB) costs
//! about a third of a convolution's time. Large buffers of
//! dropped [`super::Hwc`]s are kept here (at most [`MAX_BYTES`] in all, process-wide) and handed
//! to the next output of a kernel that overwrites all of it.
//!
//! Every kept buffer is initialised up to its capacity, so that handing it out for any length up
//! to that capacity writes nothing (growing a shorter `Vec` would zero the difference, a memset
//! of up to tens of MB per layer). A buffer [`take`] handed out is still initialised up to its
//! capacity when it comes back ([`Returned::Whole`]: its owner only overwrote elements), and is
//! kept at full length.

use std::sync::{Mutex, PoisonError};

/// Buffers smaller than this (in f32) are left to the allocator.
const MIN_LEN: usize = 1 << 18;
/// Bytes of buffers kept at most; past that the oldest are freed.
const MAX_BYTES: usize = 512 << 20;

/// Kept buffers, each with its length equal to its capacity.
static KEPT: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

fn kept() -> std::sync::MutexGuard<'static, Vec<Vec<f32>>> {
    KEPT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What is known of a buffer given back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Returned {
    /// It came from [`take`] and nothing shrank or reallocated it since: all its capacity is
    /// initialised.
    Whole,
    /// Anything else: only its length is known to be initialised.
    Other,
}

/// Keeps `buf` for reuse if it is large enough to be worth it.
pub(crate) fn give_back(mut buf: Vec<f32>, returned: Returned) {
    match returned {
        // SAFETY: a `Whole` buffer's capacity is initialised: `take` handed it out at full
        // length (truncating an f32 `Vec` leaves its memory as it was) and its owner only
        // overwrote elements since.
        Returned::Whole => unsafe { buf.set_len(buf.capacity()) },
        Returned::Other if buf.len() == buf.capacity() => {}
        Returned::Other => return,
    }
    if buf.len() < MIN_LEN {
        return;
    }
    let mut kept = kept();
    kept.push(buf);
    let mut bytes: usize = kept.iter().map(|b| b.len() * 4).sum();
    while bytes > MAX_BYTES {
        bytes -= kept.remove(0).len() * 4;
    }
}

/// A buffer of `len` f32 whose contents are unspecified (finite or not): the caller overwrites
/// every element, and gives it back as [`Returned::Whole`]. The smallest kept buffer that fits,
/// else a new one.
pub(crate) fn take(len: usize) -> Vec<f32> {
    let reused = if len < MIN_LEN {
        None
    } else {
        let mut kept = kept();
        let best = kept
            .iter()
            .enumerate()
            .filter(|(_, b)| b.len() >= len)
            .min_by_key(|(_, b)| b.len())
            .map(|(i, _)| i);
        best.map(|i| kept.swap_remove(i))
    };
    let mut buf = reused.unwrap_or_else(|| {
        let mut fresh = vec![0.0; len];
        // The allocator may round the capacity up: initialise all of it.
        fresh.resize(fresh.capacity(), 0.0);
        fresh
    });
    buf.truncate(len);
    buf
}

/// The first `len` elements of a worker's scratch buffer `buf`, grown if it is shorter (the new
/// part zeroed) but never shrunk, so that chunks and layers of every size reuse it without
/// writing it: the caller overwrites every element it reads.
pub(crate) fn scratch(buf: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
    &mut buf[..len]
}

#[cfg(test)]
mod tests {
    use superpoint_graph::reference;

    use super::super::conv::testing::{check, Rng};
    use super::super::conv::Packed;
    use super::super::head::dustbin_fold;
    use super::super::isa::Isa;
    use super::super::nms::nms;
    use super::super::pool::max_pool2;
    use super::super::tensor::Hwc;
    use super::{give_back, Returned, MIN_LEN};

    /// Kernels that take recycled buffers overwrite all of them: with the pool full of NaN
    /// buffers, every path still matches the reference (outputs of at least `MIN_LEN` floats).
    #[test]
    fn stale_buffer_contents_never_reach_an_output() {
        for _ in 0..4 {
            give_back(vec![f32::NAN; 2 * MIN_LEN], Returned::Other);
        }
        let mut rng = Rng::new(10);
        let isa = Isa::detected();
        // 64×65×65 outputs hold more than MIN_LEN floats: Winograd, direct and shifted GEMMs.
        let x = rng.tensor(16, 65, 65);
        let w = rng.conv(16, 64, 3);
        check(isa, &x, &w, &Packed::new(isa, &w, 16), 1);
        let x1 = rng.tensor(1, 65, 65);
        let w1 = rng.conv(1, 64, 3);
        check(isa, &x1, &w1, &Packed::new(isa, &w1, 1), 1);
        let w2 = rng.conv(16, 64, 1);
        check(isa, &x, &w2, &Packed::new(isa, &w2, 16), 0);

        give_back(vec![f32::NAN; 2 * MIN_LEN], Returned::Other);
        let big = Hwc::from_planar(&rng.tensor(64, 130, 130));
        let pooled = max_pool2(isa, &big).to_planar();
        let want = superpoint_graph::reference::pool::max_pool2(&big.to_planar());
        assert_eq!(pooled, want);

        // The fold of fewer channels than a cell has pixels writes zeros for the missing ones,
        // and NMS (its output and its row maxima) writes every element: 560×560 outputs.
        for _ in 0..3 {
            give_back(vec![f32::NAN; 2 * MIN_LEN], Returned::Other);
        }
        let cells = rng.tensor(7, 70, 70);
        let folded = dustbin_fold(isa, &Hwc::from_planar(&cells), 8).to_planar();
        assert_eq!(folded, reference::fold::dustbin_fold(&cells, 8));
        let map = rng.tensor(1, 560, 560);
        let kept = nms(isa, &Hwc::from_planar(&map), 4).to_planar();
        assert_eq!(kept, reference::nms::nms(&map, 4));
    }
}
