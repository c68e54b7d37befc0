//! Resident CBs (a conv's weights and bias) filled by one DRAM read and a NoC multicast per
//! group of cores: the group's first core (the sender) reads the pages and multicasts them into
//! the same CBs on the group's other cores, instead of every core reading all of them from DRAM.
//! A node has one group (all its cores) or, when a conv's split slices its output channels
//! (`plan::Split::sliced`), one per slice, each with its own pages (the slice's weights
//! and bias) and the same number of cores.
//!
//! The destinations are the group's rectangles (at most [`RECTS`]: for one group the full rows
//! and the partial last row; for a slice's column-major run of cores a partial column, full
//! columns and a partial column), one multicast each. The rectangle that holds the sender gets
//! the `_loopback_src` variants, whose destination count includes the sender (a plain multicast
//! must not include its sender); the sender's copy of the pages lands on itself unchanged. On a
//! full grid that is one multicast per CB. The sender's reader reads the pages from DRAM
//! ([`Multicast::fill`]) and its writer multicasts them ([`Multicast::send`]), so the two
//! transfers are on two RISC-Vs. Handshake, with semaphores [`READY`], [`VALID`] and [`LOADED`]
//! on every core of the node: each receiver's reader reserves the CBs and increments `READY` on
//! its sender, then does its own start-up (its input ring) while the pages travel; the sender's
//! reader reads the pages from DRAM in [`SLABS`] slabs at most and counts them in its own
//! `LOADED`; the sender's writer waits until `READY` counts every receiver of its group,
//! multicasts each slab once `LOADED` counts it (so the reads and multicasts overlap), waits for
//! the writes, sets its own `VALID` to 1 and multicasts that word; the receivers wait for it and
//! push. When the group is one rectangle (every group on a full grid), the slabs, the bias and
//! `VALID` go as one linked NoC transaction (`linked = true` on all but the last multicast): the
//! path stays reserved between them, which tt-low-level-documentation measures at 41.6 B/cycle
//! to 110 cores against 25.0 unlinked, and `VALID` lands after the data without a barrier. The CBs are reserved first thing in the reader, and no other kernel reserves them, so
//! their write pointer is the CB base on every core and the sender's addresses are the
//! receivers'. A single-core group reads from DRAM alone; a node
//! whose groups are all single cores has no semaphores.

use crate::device::{Core, CoreRange};
use crate::kir::{Arg, Call, CompileArg, KirError, Trips};
use crate::plan::NodePlan;

/// The sender's semaphore the receivers increment once they have reserved the CBs.
pub const READY: u32 = 0;
/// The receivers' semaphore the sender sets to 1 once the pages have landed.
pub const VALID: u32 = 1;
/// The sender's semaphore its reader sets to 1 once the pages are in its L1, for its writer.
pub const LOADED: u32 = 2;
/// Destination rectangles the kernels take as runtime args (unused ones have no destinations).
pub const RECTS: usize = 3;
/// At most this many slabs of the first resident (the weights) when the sender's reader reads
/// them: it signals each slab to its writer (`LOADED` counts them), which multicasts a slab
/// while the next is read.
pub const SLABS: u32 = 4;

/// A resident CB of `pages` pages of `page_bytes` filled from a DRAM buffer whose pages hold
/// `per_dram_page` of them each.
#[derive(Debug, Clone)]
pub struct Resident {
    pub cb: u32,
    pub buffer: String,
    pub pages: u32,
    pub page_bytes: u32,
    pub per_dram_page: u32,
}

/// The reader's calls of a resident fill ([`Multicast::fill`]): `start` first thing in the
/// kernel, `finish` once the reader's own start-up is issued.
#[derive(Debug, Clone, PartialEq)]
pub struct Fill {
    pub start: Vec<Call>,
    pub finish: Vec<Call>,
}

/// L1 pages (of `per_dram_page` tiles) of slab `s` of `slabs` of `r`: pages
/// `[s · n / slabs, (s + 1) · n / slabs)` of its `n`, as `conv2d/weights.cpp.tera` splits them.
fn slab_pages(r: &Resident, slabs: u32, s: u32) -> u32 {
    let n = r.pages / r.per_dram_page;
    (s + 1) * n / slabs - s * n / slabs
}

/// One group's multicast sender and destination rectangles.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub sender: Core,
    pub rects: Vec<CoreRange>,
}

impl Group {
    fn holds(&self, core: Core) -> bool {
        self.rects.iter().any(|r| contains(r, core))
    }

    fn receivers(&self) -> u32 {
        self.rects
            .iter()
            .map(|r| r.len() - u32::from(contains(r, self.sender)))
            .sum()
    }
}

/// The node's multicast groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Multicast {
    pub groups: Vec<Group>,
    /// The senders' writers read the pages from DRAM (the senders also compute output blocks,
    /// which keep their readers busy); otherwise their readers do.
    pub reads_on_writer: bool,
}

fn contains(r: &CoreRange, p: Core) -> bool {
    (r.start.x..=r.end.x).contains(&p.x) && (r.start.y..=r.end.y).contains(&p.y)
}

impl Multicast {
    /// One group per slice of `node`'s split (all its cores when unsliced), each sent to by its
    /// first core in the split.
    pub fn of(node: &NodePlan) -> Result<Multicast, KirError> {
        let split = &node.split;
        let slices = if split.slices.is_empty() {
            vec![split.ranges.clone()]
        } else {
            split.slices.clone()
        };
        let groups = slices
            .into_iter()
            .enumerate()
            .map(|(slice, rects)| {
                let sender = split
                    .work
                    .iter()
                    .find(|w| w.slice == slice as u32)
                    .map(|w| w.core)
                    .ok_or_else(|| KirError::NoCores(node.name.clone()))?;
                if rects.len() > RECTS {
                    return Err(KirError::MulticastRects {
                        node: node.name.clone(),
                        rects: rects.len(),
                        max: RECTS,
                    });
                }
                Ok(Group { sender, rects })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let busy = |sender: Core| split.work.iter().any(|w| w.core == sender && w.count > 0);
        let reads_on_writer = groups.iter().any(|g| busy(g.sender));
        let mut multicast = Multicast {
            groups,
            reads_on_writer,
        };
        multicast.reads_on_writer &= multicast.receivers() > 0;
        let receivers: Vec<u32> = multicast.groups.iter().map(Group::receivers).collect();
        if receivers.iter().any(|r| *r != receivers[0]) {
            return Err(KirError::UnequalGroups {
                node: node.name.clone(),
                receivers,
            });
        }
        Ok(multicast)
    }

    /// The number of cores each group's pages reach, its sender not counted.
    pub fn receivers(&self) -> u32 {
        self.groups.first().map_or(0, Group::receivers)
    }

    /// The senders, one per group.
    pub fn senders(&self) -> Vec<Core> {
        self.groups.iter().map(|g| g.sender).collect()
    }

    /// Semaphores per core: [`READY`], [`VALID`] and [`LOADED`], none without receivers.
    pub fn semaphores(&self) -> u32 {
        if self.receivers() > 0 {
            3
        } else {
            0
        }
    }

    /// Multicasts per resident CB: those of the group with the most rectangles that have
    /// receivers.
    fn rects(&self) -> u32 {
        self.groups
            .iter()
            .map(|g| {
                g.rects
                    .iter()
                    .filter(|r| r.len() > u32::from(contains(r, g.sender)))
                    .count() as u32
            })
            .max()
            .unwrap_or(0)
    }

    /// The compile args of the kernels that fill and send the pages: `weights_on_writer`
    /// ([`Multicast::reads_on_writer`]) and `weight_slabs` ([`Multicast::slabs`]).
    pub fn compile_args(&self, residents: &[Resident]) -> Vec<CompileArg> {
        vec![
            CompileArg {
                name: "weights_on_writer".to_string(),
                value: u32::from(self.reads_on_writer),
            },
            CompileArg {
                name: "weight_slabs".to_string(),
                value: self.slabs(residents),
            },
        ]
    }

    /// The slabs the first resident is read and multicast in: [`SLABS`], at most one per page
    /// of it in L1; 1 when the writer reads the pages itself ([`Multicast::reads_on_writer`]).
    pub fn slabs(&self, residents: &[Resident]) -> u32 {
        if self.reads_on_writer {
            return 1;
        }
        residents
            .first()
            .map_or(1, |r| (r.pages / r.per_dram_page).clamp(1, SLABS))
    }

    /// The names of [`Multicast::args`]: `weights_sender` (1 on the sender), the sender's NoC
    /// `sender_x` / `sender_y`, then per rectangle `mcast<i>_x0`, `_y0`, `_x1`, `_y1` (NoC
    /// coordinates of its corners), `_dests` (its cores) and `_self` (1 if it holds the sender:
    /// loopback); all 0 for an unused slot and on the receivers, which do not multicast.
    pub fn arg_names() -> Vec<String> {
        let mut names: Vec<String> = ["weights_sender", "sender_x", "sender_y"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for i in 0..RECTS {
            for field in ["x0", "y0", "x1", "y1", "dests", "self"] {
                names.push(format!("mcast{i}_{field}"));
            }
        }
        names
    }

    /// Whether the sender's writer ([`Multicast::send`]) takes the arg named `name`: all but
    /// the sender's coordinates.
    fn sends_with(name: &str) -> bool {
        name != "sender_x" && name != "sender_y"
    }

    /// [`Multicast::arg_names`] for the sender's writer.
    pub fn send_arg_names() -> Vec<String> {
        Multicast::arg_names()
            .into_iter()
            .filter(|name| Multicast::sends_with(name))
            .collect()
    }

    /// [`Multicast::args`] of `core` for the sender's writer.
    pub fn send_args(&self, core: Core) -> Vec<Arg> {
        Multicast::arg_names()
            .iter()
            .zip(self.args(core))
            .filter(|(name, _)| Multicast::sends_with(name))
            .map(|(_, arg)| arg)
            .collect()
    }

    /// The runtime args of `core` (all 0 for a core in no group).
    pub fn args(&self, core: Core) -> Vec<Arg> {
        let Some(group) = self.groups.iter().find(|g| g.holds(core)) else {
            return vec![Arg::Const(0); Multicast::arg_names().len()];
        };
        let sender = core == group.sender;
        let mut args = vec![
            Arg::Const(u32::from(sender)),
            Arg::NocX(group.sender),
            Arg::NocY(group.sender),
        ];
        for i in 0..RECTS {
            match group.rects.get(i).filter(|_| sender) {
                Some(r) => args.extend([
                    Arg::NocX(r.start),
                    Arg::NocY(r.start),
                    Arg::NocX(r.end),
                    Arg::NocY(r.end),
                    Arg::Const(r.len()),
                    Arg::Const(u32::from(contains(r, group.sender))),
                ]),
                None => args.extend(std::iter::repeat_n(Arg::Const(0), 6)),
            }
        }
        args
    }

    /// The sender's DRAM reads of `residents`: the first in [`Multicast::slabs`] slabs, the
    /// others with its last; with receivers, `LOADED` set to the slabs read after each, for its
    /// other data-movement kernel.
    fn load(&self, residents: &[Resident]) -> Vec<Call> {
        let read = |r: &Resident, pages: u32| Call::DramRead {
            buffer: r.buffer.clone(),
            pages,
            page_bytes: r.page_bytes * r.per_dram_page,
            cb: r.cb,
        };
        let Some((first, rest)) = residents.split_first() else {
            return Vec::new();
        };
        let slabs = self.slabs(residents);
        let mut calls = Vec::new();
        for s in 0..slabs {
            calls.push(read(first, slab_pages(first, slabs, s)));
            if s + 1 == slabs {
                calls.extend(rest.iter().map(|r| read(r, r.pages / r.per_dram_page)));
            }
            if self.receivers() > 0 {
                calls.push(Call::SemSet {
                    sem: LOADED,
                    value: s + 1,
                });
            }
        }
        calls
    }

    /// The reader's calls that fill `residents` and push them, in two parts with the reader's
    /// own start-up (e.g. its input ring) between them, so that work overlaps the weights'
    /// arrival. [`Fill::start`]: reserve, on the sender its DRAM reads and `LOADED` set for its
    /// writer, on a receiver `READY` incremented on its sender. [`Fill::finish`]: on the sender
    /// the wait for its writer's reads ([`Multicast::reads_on_writer`]), on a receiver the wait
    /// for `VALID`; push.
    pub fn fill(&self, residents: &[Resident]) -> Fill {
        let receivers = self.receivers();
        let mut start: Vec<Call> = residents
            .iter()
            .map(|r| Call::CbReserve {
                cb: r.cb,
                pages: r.pages,
            })
            .collect();
        let mut finish = Vec::new();
        if self.reads_on_writer {
            finish.push(Call::Loop {
                trips: Trips::OnSender,
                body: vec![Call::SemWait {
                    sem: LOADED,
                    value: 1,
                }],
            });
        } else {
            start.push(Call::Loop {
                trips: Trips::OnSender,
                body: self.load(residents),
            });
        }
        if receivers > 0 {
            start.push(Call::Loop {
                trips: Trips::OnReceivers,
                body: vec![Call::SemInc { sem: READY }],
            });
            finish.push(Call::Loop {
                trips: Trips::OnReceivers,
                body: vec![Call::SemWait {
                    sem: VALID,
                    value: 1,
                }],
            });
        }
        finish.extend(residents.iter().map(|r| Call::CbPush {
            cb: r.cb,
            pages: r.pages,
        }));
        Fill { start, finish }
    }

    /// The writer's calls that multicast `residents` from the sender: its DRAM reads
    /// ([`Multicast::reads_on_writer`]) or the wait for the reader's ([`Multicast::fill`]), the
    /// wait for `READY` to count every receiver, one multicast per CB and rectangle, then
    /// `VALID` set and multicast. None without receivers.
    pub fn send(&self, residents: &[Resident]) -> Vec<Call> {
        let receivers = self.receivers();
        if receivers == 0 {
            return Vec::new();
        }
        let rects = self.rects();
        let mut sender = if self.reads_on_writer {
            self.load(residents)
        } else {
            Vec::new()
        };
        sender.push(Call::SemWait {
            sem: READY,
            value: receivers,
        });
        let mcast = |r: &Resident, pages: u32| Call::McastWrite {
            cb: r.cb,
            pages,
            page_bytes: r.page_bytes,
            dests: receivers,
            rects,
        };
        if let Some((first, rest)) = residents.split_first() {
            let slabs = self.slabs(residents);
            for s in 0..slabs {
                if !self.reads_on_writer {
                    sender.push(Call::SemWait {
                        sem: LOADED,
                        value: s + 1,
                    });
                }
                sender.push(mcast(
                    first,
                    slab_pages(first, slabs, s) * first.per_dram_page,
                ));
            }
            sender.extend(rest.iter().map(|r| mcast(r, r.pages)));
        }
        sender.extend([
            Call::SemSet {
                sem: VALID,
                value: 1,
            },
            Call::SemMcast {
                sem: VALID,
                dests: receivers,
                rects,
            },
        ]);
        vec![Call::Loop {
            trips: Trips::OnSender,
            body: sender,
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Grid;

    fn multicast(grid: Grid, cores: u32) -> Multicast {
        Multicast {
            groups: vec![Group {
                sender: Core { x: 0, y: 0 },
                rects: grid.first_cores(cores),
            }],
            reads_on_writer: false,
        }
    }

    #[test]
    fn receivers_are_the_other_cores_of_the_split() {
        // 12×10, 30 cores: rows 0 and 1 (with the sender) and 6 cores of row 2.
        let m = multicast(Grid::ETH_DISPATCH, 30);
        assert_eq!(m.receivers(), 29);
        assert_eq!(m.semaphores(), 3);
        let g = &m.groups[0];
        let flags: Vec<bool> = g.rects.iter().map(|r| contains(r, g.sender)).collect();
        assert_eq!(flags, [true, false]);
        assert_eq!(multicast(Grid::TENSIX_DISPATCH, 110).receivers(), 109);
    }

    fn residents(weight_pages: u32) -> [Resident; 2] {
        let resident = |cb, pages, per_dram_page| Resident {
            cb,
            buffer: format!("b{cb}"),
            pages,
            page_bytes: 2048,
            per_dram_page,
        };
        [resident(1, weight_pages * 2, 2), resident(2, 2, 1)]
    }

    /// The reads a `load` or `send` issues and the `LOADED` values it sets or waits for.
    fn slab_calls(calls: &[Call]) -> Vec<(char, u32)> {
        calls
            .iter()
            .filter_map(|c| match c {
                Call::DramRead { pages, cb: 1, .. } => Some(('r', *pages)),
                Call::McastWrite { pages, cb: 1, .. } => Some(('m', *pages)),
                Call::SemSet { sem: LOADED, value } => Some(('s', *value)),
                Call::SemWait { sem: LOADED, value } => Some(('w', *value)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_readers_slabs_are_multicast_as_they_are_counted() {
        // 10 L1 pages of 2 tiles: slabs of 2, 3, 2, 3 pages (s · 10 / 4 boundaries), each
        // counted in LOADED by the reader and waited for by the writer before its multicast.
        let m = multicast(Grid::ETH_DISPATCH, 30);
        let r = residents(10);
        assert_eq!(m.slabs(&r), SLABS);
        let fill = m.fill(&r);
        let reads = fill.start.iter().find_map(|c| match c {
            Call::Loop {
                trips: Trips::OnSender,
                body,
            } => Some(slab_calls(body)),
            _ => None,
        });
        let expected = [
            ('r', 2),
            ('s', 1),
            ('r', 3),
            ('s', 2),
            ('r', 2),
            ('s', 3),
            ('r', 3),
            ('s', 4),
        ];
        assert_eq!(reads.as_deref(), Some(&expected[..]));
        let sent = match &m.send(&r)[..] {
            [Call::Loop { body, .. }] => slab_calls(body),
            other => panic!("one loop on the sender, got {other:?}"),
        };
        let tiles = [
            ('w', 1),
            ('m', 4),
            ('w', 2),
            ('m', 6),
            ('w', 3),
            ('m', 4),
            ('w', 4),
            ('m', 6),
        ];
        assert_eq!(sent, tiles);
        // Fewer pages than slabs: one slab a page; the writer reading them itself: one slab.
        assert_eq!(m.slabs(&residents(3)), 3);
        let on_writer = Multicast {
            reads_on_writer: true,
            ..m
        };
        assert_eq!(on_writer.slabs(&r), 1);
    }

    #[test]
    fn a_single_core_has_no_receivers_and_no_semaphores() {
        let m = multicast(Grid::ETH_DISPATCH, 1);
        assert_eq!((m.receivers(), m.semaphores()), (0, 0));
    }

    #[test]
    fn receivers_get_no_rectangles() {
        let m = multicast(Grid::ETH_DISPATCH, 30);
        let names = Multicast::arg_names();
        let receiver = m.args(Core { x: 3, y: 1 });
        let sender = m.args(m.groups[0].sender);
        assert_eq!(names.len(), 3 + 6 * RECTS);
        assert_eq!((receiver.len(), sender.len()), (names.len(), names.len()));
        assert!(receiver[3..].iter().all(|a| *a == Arg::Const(0)));
        // Slot 1 of the sender: the partial row, 6 cores, not holding the sender.
        assert_eq!(sender[3 + 6 + 4..3 + 12], [Arg::Const(6), Arg::Const(0)]);
    }

    /// Two groups of 5 rows on 12×10 (a conv sliced in two): each core's args name its own
    /// group's sender, each sender multicasts to its own rows only (loopback: it is in them),
    /// and the send waits for the 59 receivers of one group.
    #[test]
    fn each_group_has_its_sender_and_rectangle() {
        let rows = |y: u32| CoreRange {
            start: Core { x: 0, y },
            end: Core { x: 11, y: y + 4 },
        };
        let m = Multicast {
            groups: vec![
                Group {
                    sender: Core { x: 0, y: 0 },
                    rects: vec![rows(0)],
                },
                Group {
                    sender: Core { x: 0, y: 5 },
                    rects: vec![rows(5)],
                },
            ],
            reads_on_writer: false,
        };
        assert_eq!(m.receivers(), 59);
        assert_eq!(m.senders(), vec![Core { x: 0, y: 0 }, Core { x: 0, y: 5 }]);
        let receiver = m.args(Core { x: 3, y: 7 });
        assert_eq!(
            receiver[..3],
            [
                Arg::Const(0),
                Arg::NocX(Core { x: 0, y: 5 }),
                Arg::NocY(Core { x: 0, y: 5 })
            ]
        );
        let sender = m.args(Core { x: 0, y: 5 });
        assert_eq!(
            sender[3..9],
            [
                Arg::NocX(Core { x: 0, y: 5 }),
                Arg::NocY(Core { x: 0, y: 5 }),
                Arg::NocX(Core { x: 11, y: 9 }),
                Arg::NocY(Core { x: 11, y: 9 }),
                Arg::Const(60),
                Arg::Const(1)
            ]
        );
        let waits: Vec<u32> = m
            .send(&[])
            .iter()
            .filter_map(|c| match c {
                Call::Loop { body, .. } => body.iter().find_map(|b| match b {
                    Call::SemWait { sem: READY, value } => Some(*value),
                    _ => None,
                }),
                _ => None,
            })
            .collect();
        assert_eq!(waits, vec![59]);
    }
}
