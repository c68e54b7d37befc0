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
//! reader reads the pages from DRAM and sets its own `LOADED` to 1; the
//! sender's writer waits for `LOADED` and until `READY` counts every receiver of its group,
//! multicasts the pages, waits for the writes, sets its own `VALID` to 1 and multicasts that
//! word; the receivers wait for it and push. The CBs are reserved first thing in the reader,
//! and no other kernel reserves them, so their write pointer is the CB base on every core and
//! the sender's addresses are the receivers'. A single-core group reads from DRAM alone; a node
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
    /// ([`Multicast::reads_on_writer`]).
    pub fn compile_args(&self) -> Vec<CompileArg> {
        vec![CompileArg {
            name: "weights_on_writer".to_string(),
            value: u32::from(self.reads_on_writer),
        }]
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

    /// The sender's DRAM reads of `residents`, then (with receivers) `LOADED` set for its other
    /// data-movement kernel.
    fn load(&self, residents: &[Resident]) -> Vec<Call> {
        let mut calls: Vec<Call> = residents
            .iter()
            .map(|r| Call::DramRead {
                buffer: r.buffer.clone(),
                pages: r.pages / r.per_dram_page,
                page_bytes: r.page_bytes * r.per_dram_page,
                cb: r.cb,
            })
            .collect();
        if self.receivers() > 0 {
            calls.push(Call::SemSet {
                sem: LOADED,
                value: 1,
            });
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
            vec![Call::SemWait {
                sem: LOADED,
                value: 1,
            }]
        };
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
