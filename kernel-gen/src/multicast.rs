//! Resident CBs (a conv's weights and bias) filled by one DRAM read and a NoC multicast: the
//! node's first core (the sender) reads the pages and multicasts them into the same CBs on the
//! node's other cores, instead of every core reading all of them from DRAM.
//!
//! The destinations are the split's cores without the sender, as at most [`RECTS`] rectangles
//! (for the first core of a row-major split: the rest of its row, the full rows below, the
//! partial last row), since a plain `noc_async_write_multicast` must not include its sender.
//! Handshake, with semaphores [`READY`] and [`VALID`] on every core of the node: each receiver
//! reserves the CBs and increments `READY` on the sender; the sender reads the pages from DRAM,
//! waits until `READY` counts every receiver, multicasts the pages to each rectangle, waits for
//! the writes, sets its own `VALID` to 1 and multicasts that word to the rectangles; the
//! receivers wait for it and push. The CBs are reserved first thing in the kernel, so their
//! write pointer is the CB base on every core and the sender's addresses are the receivers'.
//! A single-core node reads from DRAM alone and has no semaphores.

use crate::device::{Core, CoreRange};
use crate::kir::{Arg, Call, KirError, Trips};
use crate::plan::NodePlan;

/// The sender's semaphore the receivers increment once they have reserved the CBs.
pub const READY: u32 = 0;
/// The receivers' semaphore the sender sets to 1 once the pages have landed.
pub const VALID: u32 = 1;
/// Destination rectangles the kernels take as runtime args (unused ones have no destinations).
pub const RECTS: usize = 3;

/// A resident CB filled with the first `pages` pages of a DRAM buffer.
#[derive(Debug, Clone)]
pub struct Resident {
    pub cb: u32,
    pub buffer: String,
    pub pages: u32,
    pub page_bytes: u32,
}

/// The node's multicast sender and destination rectangles.
#[derive(Debug, Clone, PartialEq)]
pub struct Multicast {
    pub sender: Core,
    pub rects: Vec<CoreRange>,
}

fn range(x0: u32, y0: u32, x1: u32, y1: u32) -> CoreRange {
    CoreRange {
        start: Core { x: x0, y: y0 },
        end: Core { x: x1, y: y1 },
    }
}

/// Rectangle `r` without core `p`: the rows above, the left and right parts of `p`'s row and
/// the rows below, those that are not empty.
fn without(r: &CoreRange, p: Core) -> Vec<CoreRange> {
    let inside = (r.start.x..=r.end.x).contains(&p.x) && (r.start.y..=r.end.y).contains(&p.y);
    if !inside {
        return vec![*r];
    }
    let mut parts = Vec::new();
    if p.y > r.start.y {
        parts.push(range(r.start.x, r.start.y, r.end.x, p.y - 1));
    }
    if p.x > r.start.x {
        parts.push(range(r.start.x, p.y, p.x - 1, p.y));
    }
    if p.x < r.end.x {
        parts.push(range(p.x + 1, p.y, r.end.x, p.y));
    }
    if p.y < r.end.y {
        parts.push(range(r.start.x, p.y + 1, r.end.x, r.end.y));
    }
    parts
}

impl Multicast {
    /// The first core of `node`'s split sends to the others.
    pub fn of(node: &NodePlan) -> Result<Multicast, KirError> {
        let sender = node
            .split
            .work
            .first()
            .map(|w| w.core)
            .ok_or_else(|| KirError::NoCores(node.name.clone()))?;
        let rects: Vec<CoreRange> = node
            .split
            .ranges
            .iter()
            .flat_map(|r| without(r, sender))
            .collect();
        if rects.len() > RECTS {
            return Err(KirError::MulticastRects {
                node: node.name.clone(),
                rects: rects.len(),
                max: RECTS,
            });
        }
        Ok(Multicast { sender, rects })
    }

    /// The number of destination cores.
    pub fn receivers(&self) -> u32 {
        self.rects.iter().map(CoreRange::len).sum()
    }

    /// Semaphores per core: [`READY`] and [`VALID`], none without receivers.
    pub fn semaphores(&self) -> u32 {
        if self.receivers() > 0 {
            2
        } else {
            0
        }
    }

    /// The names of [`Multicast::args`]: `weights_sender` (1 on the sender), the sender's NoC
    /// `sender_x` / `sender_y`, then per rectangle `mcast<i>_x0`, `_y0`, `_x1`, `_y1` (NoC
    /// coordinates of its corners) and `_dests` (its cores); all 0 for an unused slot and on
    /// the receivers, which do not multicast.
    pub fn arg_names() -> Vec<String> {
        let mut names: Vec<String> = ["weights_sender", "sender_x", "sender_y"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for i in 0..RECTS {
            for field in ["x0", "y0", "x1", "y1", "dests"] {
                names.push(format!("mcast{i}_{field}"));
            }
        }
        names
    }

    /// The runtime args of `core`.
    pub fn args(&self, core: Core) -> Vec<Arg> {
        let sender = core == self.sender;
        let mut args = vec![
            Arg::Const(u32::from(sender)),
            Arg::NocX(self.sender),
            Arg::NocY(self.sender),
        ];
        for i in 0..RECTS {
            match self.rects.get(i).filter(|_| sender) {
                Some(r) => args.extend([
                    Arg::NocX(r.start),
                    Arg::NocY(r.start),
                    Arg::NocX(r.end),
                    Arg::NocY(r.end),
                    Arg::Const(r.len()),
                ]),
                None => args.extend(std::iter::repeat_n(Arg::Const(0), 5)),
            }
        }
        args
    }

    /// The calls that fill `residents` and push them: reserve, the sender's DRAM reads and
    /// multicasts, the receivers' handshake, push.
    pub fn fill(&self, residents: &[Resident]) -> Vec<Call> {
        let receivers = self.receivers();
        let rects = self.rects.len() as u32;
        let mut calls: Vec<Call> = residents
            .iter()
            .map(|r| Call::CbReserve {
                cb: r.cb,
                pages: r.pages,
            })
            .collect();
        let mut sender: Vec<Call> = residents
            .iter()
            .map(|r| Call::DramRead {
                buffer: r.buffer.clone(),
                pages: r.pages,
                page_bytes: r.page_bytes,
                cb: r.cb,
            })
            .collect();
        if receivers > 0 {
            sender.push(Call::SemWait {
                sem: READY,
                value: receivers,
            });
            sender.extend(residents.iter().map(|r| Call::McastWrite {
                cb: r.cb,
                pages: r.pages,
                page_bytes: r.page_bytes,
                dests: receivers,
                rects,
            }));
            sender.push(Call::SemSet {
                sem: VALID,
                value: 1,
            });
            sender.push(Call::SemMcast {
                sem: VALID,
                dests: receivers,
                rects,
            });
        }
        calls.push(Call::Loop {
            trips: Trips::OnSender,
            body: sender,
        });
        if receivers > 0 {
            calls.push(Call::Loop {
                trips: Trips::OnReceivers,
                body: vec![
                    Call::SemInc { sem: READY },
                    Call::SemWait {
                        sem: VALID,
                        value: 1,
                    },
                ],
            });
        }
        calls.extend(residents.iter().map(|r| Call::CbPush {
            cb: r.cb,
            pages: r.pages,
        }));
        calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Grid;

    fn core(x: u32, y: u32) -> Core {
        Core { x, y }
    }

    #[test]
    fn the_first_core_leaves_the_rest_of_its_row_and_the_rows_below() {
        // 12×10 grid, 30 cores: rows 0 and 1 full, 6 cores of row 2.
        let ranges = Grid::ETH_DISPATCH.first_cores(30);
        let rects: Vec<CoreRange> = ranges.iter().flat_map(|r| without(r, core(0, 0))).collect();
        assert_eq!(
            rects,
            vec![range(1, 0, 11, 0), range(0, 1, 11, 1), range(0, 2, 5, 2)]
        );
        assert_eq!(rects.iter().map(CoreRange::len).sum::<u32>(), 29);
    }

    #[test]
    fn an_inner_core_leaves_four_parts() {
        let rects = without(&range(0, 0, 4, 4), core(2, 1));
        assert_eq!(
            rects,
            vec![
                range(0, 0, 4, 0),
                range(0, 1, 1, 1),
                range(3, 1, 4, 1),
                range(0, 2, 4, 4)
            ]
        );
        assert_eq!(rects.iter().map(CoreRange::len).sum::<u32>(), 24);
    }

    #[test]
    fn a_single_core_has_no_destinations() {
        assert!(without(&range(0, 0, 0, 0), core(0, 0)).is_empty());
        assert_eq!(
            without(&range(3, 3, 4, 4), core(0, 0)),
            vec![range(3, 3, 4, 4)]
        );
    }
}
