//! [`Occupancy`]: the bytes a program's NoC transfers put on each NoC link and DRAM bank, as the
//! emulator routes them, so the cost model can charge contention (a step takes at least its
//! busiest link's and its busiest bank's bytes at one link's or one bank's rate,
//! [`TimelineModel::contention`](crate::TimelineModel::contention)).
//!
//! Blackhole's two NoCs are 17×12 tori; from every router one link leaves along x and one along y
//! per NoC, in the NoC's direction (NoC 0: +x, +y; NoC 1: −x, −y). The emulator routes each
//! transfer's data on the issuing kernel's NoC as the hardware does (tt-isa-documentation,
//! `WormholeB0/NoC/RoutingPaths.md`): a unicast along x then y on NoC 0, along y then x on NoC 1;
//! a multicast along x to the rectangle, along y through its rows and along x across each row. A
//! read's data travels from its source to the reader, a write's and a multicast's from the
//! writer. Requests, acknowledgements, semaphore updates and packet headers are not counted (one
//! 64-byte header flit per packet of up to 16 KiB).

use crate::device::CoreCoord;
use crate::error::{check, Result};
use crate::sys;

/// NoCs per chip.
pub const NOCS: usize = sys::TTR_NOCS as usize;
/// Routers along x on each NoC's torus.
pub const NOC_TORUS_X: usize = sys::TTR_NOC_TORUS_X as usize;
/// Routers along y.
pub const NOC_TORUS_Y: usize = sys::TTR_NOC_TORUS_Y as usize;
/// DRAM banks.
pub const DRAM_BANKS: usize = sys::TTR_DRAM_BANKS as usize;

/// The axis a link runs along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Axis {
    /// To the next router along x (NoC 0: x + 1, NoC 1: x − 1, wrapping).
    X = 0,
    /// To the next router along y (NoC 0: y + 1, NoC 1: y − 1, wrapping).
    Y = 1,
}

/// One directed NoC link: the one leaving router (x, y) of `noc` along `axis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Link {
    /// 0 or 1.
    pub noc: u8,
    /// NoC x of the router it leaves.
    pub x: u32,
    /// NoC y of the router it leaves.
    pub y: u32,
    /// Its direction.
    pub axis: Axis,
}

/// Bytes per NoC link and per DRAM bank.
#[derive(Clone, Default)]
pub struct Occupancy {
    raw: Box<sys::ttr_occupancy>,
}

impl std::fmt::Debug for Occupancy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Occupancy")
            .field("busiest_link", &self.busiest_link())
            .field("dram_bank_bytes", &self.raw.dram_bank_bytes)
            .finish()
    }
}

impl Occupancy {
    pub(crate) fn from_raw(raw: Box<sys::ttr_occupancy>) -> Occupancy {
        Occupancy { raw }
    }

    /// The emulator's route: this occupancy plus `bytes` sent on `noc` from the NoC coordinates
    /// `from` to `to_lo`..=`to_hi` (corners, lowest first), a multicast to that rectangle or a
    /// unicast (then `to_lo == to_hi`). Bad coordinates are [`Error::InvalidArgument`](crate::Error).
    pub fn route(
        mut self,
        noc: u8,
        from: CoreCoord,
        to_lo: CoreCoord,
        to_hi: CoreCoord,
        multicast: bool,
        bytes: u64,
    ) -> Result<Occupancy> {
        let core = |c: CoreCoord| sys::ttr_core { x: c.x, y: c.y };
        // SAFETY: `raw` is a valid, exclusively borrowed ttr_occupancy.
        check(unsafe {
            sys::ttr_noc_route(
                u32::from(noc),
                core(from),
                core(to_lo),
                core(to_hi),
                u32::from(multicast),
                bytes,
                &mut *self.raw,
            )
        })?;
        Ok(self)
    }

    /// Bytes over one link (0 for a link outside the torus).
    pub fn link_bytes(&self, link: Link) -> u64 {
        self.raw
            .link_bytes
            .get(usize::from(link.noc))
            .and_then(|n| n.get(link.y as usize))
            .and_then(|row| row.get(link.x as usize))
            .map_or(0, |l| l[link.axis as usize])
    }

    /// Every link that carried bytes, with its bytes, NoC 0 first, then row by row.
    pub fn links(&self) -> Vec<(Link, u64)> {
        let mut out = Vec::new();
        for (noc, rows) in self.raw.link_bytes.iter().enumerate() {
            for (y, row) in rows.iter().enumerate() {
                for (x, pair) in row.iter().enumerate() {
                    for (axis, &bytes) in [Axis::X, Axis::Y].into_iter().zip(pair) {
                        if bytes > 0 {
                            // The torus is 2 × 12 × 17: every index fits.
                            let link = Link {
                                noc: noc as u8,
                                x: x as u32,
                                y: y as u32,
                                axis,
                            };
                            out.push((link, bytes));
                        }
                    }
                }
            }
        }
        out
    }

    /// The link that carried the most bytes (the first of equals), if any carried bytes.
    pub fn busiest_link(&self) -> Option<(Link, u64)> {
        self.links()
            .into_iter()
            .reduce(|best, l| if l.1 > best.1 { l } else { best })
    }

    /// Bytes read from and written to each DRAM bank.
    pub fn dram_bank_bytes(&self) -> [u64; DRAM_BANKS] {
        self.raw.dram_bank_bytes
    }

    /// The bank that moved the most bytes (the first of equals), if any moved bytes.
    pub fn busiest_bank(&self) -> Option<(usize, u64)> {
        self.raw
            .dram_bank_bytes
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, b)| b > 0)
            .reduce(|best, b| if b.1 > best.1 { b } else { best })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: u32, y: u32) -> CoreCoord {
        CoreCoord::new(x, y)
    }

    fn link(noc: u8, x: u32, y: u32, axis: Axis) -> (Link, u64) {
        (Link { noc, x, y, axis }, 100)
    }

    /// The links of one route of 100 bytes, sorted as [`Occupancy::links`] lists them.
    fn route(
        noc: u8,
        from: CoreCoord,
        lo: CoreCoord,
        hi: CoreCoord,
        mcast: bool,
    ) -> Vec<(Link, u64)> {
        Occupancy::default()
            .route(noc, from, lo, hi, mcast, 100)
            .expect("route")
            .links()
    }

    fn sorted(mut links: Vec<(Link, u64)>) -> Vec<(Link, u64)> {
        links.sort_by_key(|(l, _)| (l.noc, l.y, l.x, l.axis));
        links
    }

    #[test]
    fn noc0_unicasts_go_along_x_then_y() {
        // (1,2) → (3,4): x 1→2→3 on row 2, then y 2→3→4 in column 3.
        let want = vec![
            link(0, 1, 2, Axis::X),
            link(0, 2, 2, Axis::X),
            link(0, 3, 2, Axis::Y),
            link(0, 3, 3, Axis::Y),
        ];
        assert_eq!(route(0, at(1, 2), at(3, 4), at(3, 4), false), sorted(want));
    }

    #[test]
    fn noc1_unicasts_go_along_y_then_x() {
        // (3,4) → (1,2): y 4→3→2 in column 3, then x 3→2→1 on row 2.
        let want = vec![
            link(1, 3, 4, Axis::Y),
            link(1, 3, 3, Axis::Y),
            link(1, 3, 2, Axis::X),
            link(1, 2, 2, Axis::X),
        ];
        assert_eq!(route(1, at(3, 4), at(1, 2), at(1, 2), false), sorted(want));
    }

    #[test]
    fn unicasts_wrap_around_the_torus() {
        // NoC 0, (15,10) → (1,2): x 15→16→0→1 on row 10, y 10→11→0→1→2 in column 1.
        let want = vec![
            link(0, 15, 10, Axis::X),
            link(0, 16, 10, Axis::X),
            link(0, 0, 10, Axis::X),
            link(0, 1, 10, Axis::Y),
            link(0, 1, 11, Axis::Y),
            link(0, 1, 0, Axis::Y),
            link(0, 1, 1, Axis::Y),
        ];
        assert_eq!(
            route(0, at(15, 10), at(1, 2), at(1, 2), false),
            sorted(want)
        );
        // NoC 1, (1,2) → (15,10): y 2→1→0→11→10 in column 1, x 1→0→16→15 on row 10.
        let want = vec![
            link(1, 1, 2, Axis::Y),
            link(1, 1, 1, Axis::Y),
            link(1, 1, 0, Axis::Y),
            link(1, 1, 11, Axis::Y),
            link(1, 1, 10, Axis::X),
            link(1, 0, 10, Axis::X),
            link(1, 16, 10, Axis::X),
        ];
        assert_eq!(
            route(1, at(1, 2), at(15, 10), at(15, 10), false),
            sorted(want)
        );
    }

    #[test]
    fn multicasts_follow_the_x_major_tree() {
        // NoC 0 from (1,2) to columns 3..5, rows 4..5: x 1→2→3 to the first column, y 2→3→4→5
        // down column 3, and at rows 4 and 5 x 3→4→5 across the rectangle.
        let want = vec![
            link(0, 1, 2, Axis::X),
            link(0, 2, 2, Axis::X),
            link(0, 3, 2, Axis::Y),
            link(0, 3, 3, Axis::Y),
            link(0, 3, 4, Axis::Y),
            link(0, 3, 4, Axis::X),
            link(0, 4, 4, Axis::X),
            link(0, 3, 5, Axis::X),
            link(0, 4, 5, Axis::X),
        ];
        assert_eq!(route(0, at(1, 2), at(3, 4), at(5, 5), true), sorted(want));
        // NoC 1 from (6,6) to the same rectangle: x 6→5 to its first column (the highest), y
        // 6→5→4 up column 5, and at rows 5 and 4 x 5→4→3.
        let want = vec![
            link(1, 6, 6, Axis::X),
            link(1, 5, 6, Axis::Y),
            link(1, 5, 5, Axis::Y),
            link(1, 5, 5, Axis::X),
            link(1, 4, 5, Axis::X),
            link(1, 5, 4, Axis::X),
            link(1, 4, 4, Axis::X),
        ];
        assert_eq!(route(1, at(6, 6), at(3, 4), at(5, 5), true), sorted(want));
    }

    #[test]
    fn a_sender_inside_its_rectangle_reaches_the_columns_behind_it_around_the_torus() {
        // NoC 0 from (4,4) to columns 3..5 of row 4: x 4→5, then on around 6…16→0…3: every x
        // link of row 4 but the one leaving column 3.
        let want: Vec<(Link, u64)> = (0..17)
            .filter(|&x| x != 3)
            .map(|x| link(0, x, 4, Axis::X))
            .collect();
        assert_eq!(route(0, at(4, 4), at(3, 4), at(5, 4), true), sorted(want));
    }

    #[test]
    fn routes_add_up_and_the_busiest_link_is_the_shared_one() {
        // Two unicasts on NoC 0 from (1,2): to (3,2) and (2,5); they share the link leaving (1,2).
        let o = Occupancy::default()
            .route(0, at(1, 2), at(3, 2), at(3, 2), false, 100)
            .and_then(|o| o.route(0, at(1, 2), at(2, 5), at(2, 5), false, 50))
            .expect("routes");
        let shared = Link {
            noc: 0,
            x: 1,
            y: 2,
            axis: Axis::X,
        };
        assert_eq!(o.link_bytes(shared), 150);
        assert_eq!(o.busiest_link(), Some((shared, 150)));
        assert_eq!(o.links().iter().map(|l| l.1).sum::<u64>(), 2 * 100 + 4 * 50);
        assert_eq!(o.busiest_bank(), None);
    }

    #[test]
    fn bad_routes_are_typed_errors() {
        let o = || Occupancy::default();
        assert!(o()
            .route(2, at(1, 2), at(3, 4), at(3, 4), false, 1)
            .is_err());
        assert!(o()
            .route(0, at(17, 2), at(3, 4), at(3, 4), false, 1)
            .is_err());
        assert!(o().route(0, at(1, 2), at(5, 4), at(3, 4), true, 1).is_err());
        assert!(o()
            .route(0, at(1, 2), at(3, 4), at(5, 4), false, 1)
            .is_err());
    }
}
