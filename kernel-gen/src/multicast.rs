//! Resident CBs (a conv's weights and bias) filled by DRAM reads and NoC multicasts per group of
//! cores: a few cores of the group (its senders) each read a contiguous share of the pages and
//! multicast it into the same CBs on the group's other cores, instead of every core reading all
//! of them from DRAM, or one core reading them all (one core's DRAM read, 33 B/cycle, bound the
//! start-up when one sender did). A node has one group (all its cores) or, when a conv's split
//! slices its output channels (`plan::Split::sliced`), one per slice, each with its own pages
//! (the slice's weights and bias) and the same number of cores.
//!
//! Senders ([`Group::senders`], [`senders_of`]): at most [`SENDERS`] a group, at most one per
//! [`SLABS`] L1 pages of the weights, spread over the group's cores in split order (one per equal run of
//! them, so over its rows and their routers), in each run the core with the fewest output
//! blocks. The weights' `n` L1 pages are cut into `S · L` chunks in K order (`S` senders, `L`
//! [`Multicast::slabs`]; chunk `c` is pages `[c · n / (S · L), (c + 1) · n / (S · L))`), and sender
//! `s` reads and multicasts chunk `j · S + (s + j) mod S` as its slab `j` (a round's chunks
//! differ by a page at most; the rotation spreads the larger ones over the senders instead of
//! giving them all to the last), the first sender also the bias, with its first slab (chunk 0:
//! the compute needs it first). Slab `j` of every sender
//! together, round `j`, is then pages `[j · n / L, (j + 1) · n / L)` ([`Multicast::round_start`]):
//! the rounds land in K order.
//!
//! The destinations are the group's rectangles (at most [`RECTS`]: for one group the full rows
//! and the partial last row; for a slice's column-major run of cores a partial column, full
//! columns and a partial column), one multicast each per sender. The rectangle that holds the
//! sender gets the `_loopback_src` variants, whose destination count includes the sender (a
//! plain multicast must not include its sender); the sender's copy of its share lands on itself
//! unchanged. A sender's reader reads its share from DRAM ([`Multicast::fill`]) and its writer
//! multicasts it ([`Multicast::send`]), so the two transfers are on two RISC-Vs. Handshake, with
//! semaphores [`READY`], [`LOADED`] and one [`VALID`] per sender on every core of the node: each
//! core's reader reserves the CBs and increments `READY` on its group's first sender (but that
//! sender itself), then does its own start-up (its input ring) while the pages travel; a
//! sender's reader reads its slabs from DRAM and counts them in its own `LOADED`; the first sender's writer waits until `READY` counts every other core of its
//! group and, with several senders, sets every core's `READY` to that count by a semaphore
//! multicast, which the other senders' writers wait for (so each core signals one sender, and
//! the cores need only the first sender's coordinates); each sender's writer then multicasts
//! each slab once `LOADED` counts it (so the reads and multicasts overlap), waits for its writes
//! (without a barrier when linked, below), sets its own `VALID + s` to the slabs sent and
//! multicasts that word; every core pushes the weights round by round in K order
//! ([`Multicast::round`]), each once the `VALID` of every sender but itself counts it (the first
//! with the bias; a conv reader pushes the first before its block loop and, without shifted
//! views, the others in its first block before the im2col hand-offs that need them, so the
//! compute's first block starts on the first round: `ops::conv2d`). With one sender and one rectangle (every group on a full grid),
//! the slabs, the bias and each slab's `VALID` go as one linked NoC transaction (`linked = true`
//! on all but the last multicast): the path stays reserved between them, which
//! tt-low-level-documentation measures at 41.6 B/cycle to 110 cores against 25.0 unlinked, and
//! each `VALID` lands after the data before it without a barrier. Several senders never link: their multicasts reach the same routers at the
//! same time, and no public source says concurrent linked transactions over shared routers are
//! safe (tt-mlir issue 7297 reports multicasts on one NoC hanging, tt-metal PR 10911 a deadlock
//! from a path reservation left out), so each multicasts unlinked and barriers before each
//! `VALID`. The CBs are reserved first thing in the reader, and no other kernel reserves them, so
//! their write pointer is the CB base on every core and the senders' addresses are the
//! receivers'. A single-core group reads from DRAM alone; a node whose groups are all single
//! cores has no semaphores.
//!
//! The kernel IR ([`Multicast::fill`], [`Multicast::send`]) is per node, not per sender: every
//! sender's loop is the busiest sender's (in each slab the largest chunk of its round, and the
//! bias) with the first sender's `READY` multicast.

use crate::device::{Core, CoreRange};
use crate::kir::{Arg, Call, CompileArg, KirError, Trips};
pub use crate::plan::split::{sender_count, share, SENDERS, SLABS};
use crate::plan::NodePlan;

/// The first sender's semaphore the other cores of its group increment once they have reserved
/// the CBs; with several senders it then sets it on every core of the group to their count,
/// for the other senders.
pub const READY: u32 = 0;
/// A sender's semaphore its reader sets to the slabs of its share in its L1, for its writer.
pub const LOADED: u32 = 1;
/// The first of the senders' semaphores on every core: sender `s` sets `VALID + s` to the number
/// of its slabs that have landed.
pub const VALID: u32 = 2;
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

impl Resident {
    /// Its pages in L1 (of `per_dram_page` tiles each).
    fn l1_pages(&self) -> u32 {
        self.pages / self.per_dram_page
    }
}

/// The first of `n` pages of chunk `c` of `chunks` (`c = chunks`: the end), as
/// `conv2d/weights_share.cpp.tera` cuts them.
fn chunk_start(n: u32, chunks: u32, c: u32) -> u32 {
    c * n / chunks.max(1)
}

/// The senders of a group of `cores` (in split order, with their output blocks) whose first
/// resident has `pages` L1 pages: [`sender_count`] of them, one per equal run of the cores
/// ([`share`]), in each run the first core with the fewest blocks (the run's first core when
/// the split made it light, `plan::Split::sender_light`).
pub fn senders_of(cores: &[(Core, u32)], pages: u32) -> Vec<Core> {
    let n = cores.len() as u32;
    let count = sender_count(n, pages);
    (0..count)
        .filter_map(|s| {
            let (start, end) = share(n, count, s);
            cores[start as usize..end as usize]
                .iter()
                .min_by_key(|(_, blocks)| *blocks)
                .map(|(core, _)| *core)
        })
        .collect()
}

/// One group's multicast senders and destination rectangles.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub senders: Vec<Core>,
    pub rects: Vec<CoreRange>,
}

impl Group {
    fn holds(&self, core: Core) -> bool {
        self.rects.iter().any(|r| contains(r, core))
    }

    /// The cores each sender's pages reach, the sender not counted (every sender is a core of
    /// the group).
    fn receivers(&self) -> u32 {
        let cores: u32 = self.rects.iter().map(CoreRange::len).sum();
        cores.saturating_sub(1)
    }

    /// The rectangles a sender's multicast reaches someone in: all but one that holds only it.
    fn used_rects(&self, sender: Core) -> u32 {
        self.rects
            .iter()
            .filter(|r| r.len() > u32::from(contains(r, sender)))
            .count() as u32
    }
}

/// The node's multicast groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Multicast {
    pub groups: Vec<Group>,
    /// The senders' writers read the pages from DRAM (some sender also computes output blocks,
    /// which keep its reader busy); otherwise their readers do.
    pub reads_on_writer: bool,
    /// L1 pages of the first resident (the weights), which the senders share.
    pub pages: u32,
    /// The resident CBs live in L1 copies the host wrote at load (`plan::CbPlan::buffer`):
    /// no group, no sender, no semaphore; every core pushes the pages at once.
    pub in_l1: bool,
}

fn contains(r: &CoreRange, p: Core) -> bool {
    (r.start.x..=r.end.x).contains(&p.x) && (r.start.y..=r.end.y).contains(&p.y)
}

impl Multicast {
    /// One group per slice of `node`'s split (all its cores when unsliced), each with its
    /// senders ([`senders_of`]) for `residents`.
    pub fn of(node: &NodePlan, residents: &[Resident]) -> Result<Multicast, KirError> {
        let split = &node.split;
        let pages = residents.first().map_or(1, Resident::l1_pages);
        // The residents' own CBs: a stager's CBs in the slots it fills (`plan::staged`) live in
        // buffers too, and say nothing of how its own weights arrive.
        let in_l1 = node
            .cbs
            .iter()
            .any(|c| c.buffer.is_some() && residents.iter().any(|r| r.cb == c.id));
        if in_l1 {
            return Ok(Multicast {
                groups: Vec::new(),
                reads_on_writer: false,
                pages,
                in_l1: true,
            });
        }
        let slices = if split.slices.is_empty() {
            vec![split.ranges.clone()]
        } else {
            split.slices.clone()
        };
        let groups = slices
            .into_iter()
            .enumerate()
            .map(|(slice, rects)| {
                let cores: Vec<(Core, u32)> = split
                    .work
                    .iter()
                    .filter(|w| w.slice == slice as u32)
                    .map(|w| (w.core, w.count))
                    .collect();
                if cores.is_empty() {
                    return Err(KirError::NoCores(node.name.clone()));
                }
                if rects.len() > RECTS {
                    return Err(KirError::MulticastRects {
                        node: node.name.clone(),
                        rects: rects.len(),
                        max: RECTS,
                    });
                }
                Ok(Group {
                    senders: senders_of(&cores, pages),
                    rects,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let busy = |sender: &Core| split.work.iter().any(|w| w.core == *sender && w.count > 0);
        let reads_on_writer = groups.iter().any(|g| g.senders.iter().any(busy));
        let mut multicast = Multicast {
            groups,
            reads_on_writer,
            pages,
            in_l1: false,
        };
        multicast.reads_on_writer &= multicast.receivers() > 0;
        let receivers: Vec<u32> = multicast.groups.iter().map(Group::receivers).collect();
        let senders: Vec<usize> = multicast.groups.iter().map(|g| g.senders.len()).collect();
        if receivers.iter().any(|r| *r != receivers[0]) || senders.iter().any(|s| *s != senders[0])
        {
            return Err(KirError::UnequalGroups {
                node: node.name.clone(),
                receivers,
            });
        }
        Ok(multicast)
    }

    /// The number of cores each sender's pages reach, itself not counted.
    pub fn receivers(&self) -> u32 {
        self.groups.first().map_or(0, Group::receivers)
    }

    /// Senders per group (every group has as many).
    pub fn senders_per_group(&self) -> u32 {
        self.groups.first().map_or(1, |g| g.senders.len() as u32)
    }

    /// The senders of each group.
    pub fn senders(&self) -> Vec<Vec<Core>> {
        self.groups.iter().map(|g| g.senders.clone()).collect()
    }

    /// Semaphores per core: [`READY`], [`LOADED`] and a [`VALID`] per sender, none without
    /// receivers.
    pub fn semaphores(&self) -> u32 {
        if self.receivers() > 0 {
            VALID + self.senders_per_group()
        } else {
            0
        }
    }

    /// Multicasts per resident CB and sender: those of the sender with the most rectangles that
    /// have receivers.
    fn rects(&self) -> u32 {
        self.groups
            .iter()
            .flat_map(|g| g.senders.iter().map(|s| g.used_rects(*s)))
            .max()
            .unwrap_or(0)
    }

    /// The compile args of the kernels that fill and send the pages: `weights_on_writer`
    /// ([`Multicast::reads_on_writer`]), `weight_slabs` ([`Multicast::slabs`]),
    /// `weight_senders` (senders per group) and `weights_in_l1` ([`Multicast::in_l1`]).
    pub fn compile_args(&self) -> Vec<CompileArg> {
        [
            ("weights_on_writer", u32::from(self.reads_on_writer)),
            ("weight_slabs", self.slabs()),
            ("weight_senders", self.senders_per_group()),
            ("weights_in_l1", u32::from(self.in_l1)),
        ]
        .into_iter()
        .map(|(name, value)| CompileArg {
            name: name.to_string(),
            value,
        })
        .collect()
    }

    /// The largest chunk of round `j` (every sender's slab `j`), in L1 pages: the busiest
    /// sender's slab `j`.
    fn largest_chunk(&self, j: u32) -> u32 {
        let senders = self.senders_per_group();
        let chunks = senders * self.slabs();
        (j * senders..(j + 1) * senders)
            .map(|c| chunk_start(self.pages, chunks, c + 1) - chunk_start(self.pages, chunks, c))
            .max()
            .unwrap_or(0)
    }

    /// The first L1 page of the weights' round `j` (every sender's slab `j`: pages
    /// `[j · n / L, (j + 1) · n / L)` of `n`, [`Multicast::slabs`] `L`; `j = L`: the end).
    pub fn round_start(&self, j: u32) -> u32 {
        chunk_start(self.pages, self.slabs(), j)
    }

    /// The rounds that hold the weights' first `tiles` tiles, of `per_page` tiles an L1 page:
    /// the fewest whose pages reach them (all of them for `tiles` past the end).
    pub fn rounds_holding(&self, tiles: u32, per_page: u32) -> u32 {
        let rounds = self.slabs();
        (0..rounds)
            .find(|j| self.round_start(j + 1) * per_page >= tiles)
            .map_or(rounds, |j| j + 1)
    }

    /// The slabs each sender's share is read and multicast in, and the rounds the weights land
    /// and are pushed in: [`SLABS`], at most one per page of the smallest share; 1 when the
    /// writers read the pages themselves ([`Multicast::reads_on_writer`]) or the pages are in
    /// L1 already ([`Multicast::in_l1`]).
    pub fn slabs(&self) -> u32 {
        if self.reads_on_writer || self.in_l1 {
            return 1;
        }
        (self.pages / self.senders_per_group()).clamp(1, SLABS)
    }

    /// The names of [`Multicast::args`]: `weights_sender` (`s + 1` on sender `s` of its group,
    /// else 0), `sender_x` / `sender_y` (the NoC coordinates of the group's first sender), per
    /// rectangle of the group `mcast<i>_x0`, `_y0`, `_x1`, `_y1` (NoC coordinates of its
    /// corners) and `_dests` (its cores), all 0 for an unused slot, and `weights_self_rect`
    /// (`i + 1` for the rectangle that holds the core: a sender's multicast there is the
    /// loopback variant). Every core of a group gets the same but `weights_sender` and
    /// `weights_self_rect`.
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
        names.push("weights_self_rect".to_string());
        names
    }

    /// Whether the senders' writers ([`Multicast::send`]) take the arg named `name`: all but
    /// the first sender's coordinates.
    fn sends_with(name: &str) -> bool {
        name != "sender_x" && name != "sender_y"
    }

    /// [`Multicast::arg_names`] for the writers.
    pub fn send_arg_names() -> Vec<String> {
        Multicast::arg_names()
            .into_iter()
            .filter(|name| Multicast::sends_with(name))
            .collect()
    }

    /// [`Multicast::args`] of `core` for the writers.
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
        let index = group.senders.iter().position(|s| *s == core);
        let first = group.senders.first().copied().unwrap_or(core);
        let mut args = vec![
            Arg::Const(index.map_or(0, |i| i as u32 + 1)),
            Arg::NocX(first),
            Arg::NocY(first),
        ];
        for i in 0..RECTS {
            match group.rects.get(i) {
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
        let holding = group.rects.iter().position(|r| contains(r, core));
        args.push(Arg::Const(holding.map_or(0, |i| i as u32 + 1)));
        args
    }

    /// The busiest sender's DRAM reads of `residents`: in each of its [`Multicast::slabs`] slabs
    /// the largest chunk of that round of the first, the others with its first; with
    /// receivers, `LOADED` set to the slabs read after each, for its other data-movement kernel.
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
        let mut calls = Vec::new();
        for j in 0..self.slabs() {
            calls.push(read(first, self.largest_chunk(j)));
            if j == 0 {
                calls.extend(rest.iter().map(|r| read(r, r.l1_pages())));
            }
            if self.receivers() > 0 {
                calls.push(Call::SemSet {
                    sem: LOADED,
                    value: j + 1,
                });
            }
        }
        calls
    }

    /// The reader's calls that fill `residents`, before its own start-up (e.g. its input ring)
    /// so that work overlaps the weights' arrival: reserve, `READY` incremented on the first
    /// sender of the core's group (but on it), on a sender its DRAM reads and `LOADED` set for
    /// its writer. The pages are pushed by [`Multicast::round`].
    pub fn fill(&self, residents: &[Resident]) -> Vec<Call> {
        let mut start: Vec<Call> = residents
            .iter()
            .map(|r| Call::CbReserve {
                cb: r.cb,
                pages: r.pages,
            })
            .collect();
        if self.receivers() > 0 {
            start.push(Call::Loop {
                trips: Trips::AllButFirstSender,
                body: vec![Call::SemInc { sem: READY }],
            });
        }
        if !self.reads_on_writer && !self.in_l1 {
            start.push(Call::Loop {
                trips: Trips::OnSender,
                body: self.load(residents),
            });
        }
        start
    }

    /// The reader's calls that push round `j` of `residents` once it has landed: on a sender
    /// whose writer reads its slab ([`Multicast::reads_on_writer`]), the wait for that read
    /// (round 0); the wait for every other sender's `VALID` to count `j + 1` slabs; the push of
    /// the round's pages of the first resident, one L1 page at a time (the CB's capacity is a
    /// whole number of them), and in round 0 the others whole.
    pub fn round(&self, residents: &[Resident], j: u32) -> Vec<Call> {
        let mut calls = Vec::new();
        if self.reads_on_writer && j == 0 {
            calls.push(Call::Loop {
                trips: Trips::OnSender,
                body: vec![Call::SemWait {
                    sem: LOADED,
                    value: 1,
                }],
            });
        }
        if self.receivers() > 0 {
            calls.push(Call::Loop {
                trips: Trips::OtherSenders,
                body: vec![Call::SemWait {
                    sem: VALID,
                    value: j + 1,
                }],
            });
        }
        if let Some((first, rest)) = residents.split_first() {
            if j == 0 {
                calls.extend(rest.iter().map(|r| Call::CbPush {
                    cb: r.cb,
                    pages: r.pages,
                }));
            }
            calls.push(Call::Loop {
                trips: Trips::Fixed(self.round_start(j + 1) - self.round_start(j)),
                body: vec![Call::CbPush {
                    cb: first.cb,
                    pages: first.per_dram_page,
                }],
            });
        }
        calls
    }

    /// The writer's calls that multicast `residents` from each sender: its DRAM reads
    /// ([`Multicast::reads_on_writer`]) or the wait for the reader's ([`Multicast::fill`]), the
    /// wait for `READY` to count every other core of its group (with several senders, the first
    /// sender's multicast of it, for the others), one multicast per slab of its
    /// and rectangle (the bias with the first), each followed by its `VALID` set to the slabs
    /// sent and multicast. None without receivers.
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
        if self.senders_per_group() > 1 {
            sender.push(Call::SemMcast {
                sem: READY,
                dests: receivers,
                rects,
            });
        }
        let mcast = |r: &Resident, pages: u32| Call::McastWrite {
            cb: r.cb,
            pages,
            page_bytes: r.page_bytes,
            dests: receivers,
            rects,
        };
        if let Some((first, rest)) = residents.split_first() {
            for j in 0..self.slabs() {
                if !self.reads_on_writer {
                    sender.push(Call::SemWait {
                        sem: LOADED,
                        value: j + 1,
                    });
                }
                sender.push(mcast(first, self.largest_chunk(j) * first.per_dram_page));
                if j == 0 {
                    sender.extend(rest.iter().map(|r| mcast(r, r.pages)));
                }
                sender.extend([
                    Call::SemSet {
                        sem: VALID,
                        value: j + 1,
                    },
                    Call::SemMcast {
                        sem: VALID,
                        dests: receivers,
                        rects,
                    },
                ]);
            }
        }
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

    /// One group of the first `cores` of `grid` with `senders` (the first, core 0) and the
    /// weights' `pages`.
    fn multicast(grid: Grid, cores: u32, senders: &[u32], pages: u32) -> Multicast {
        Multicast {
            groups: vec![Group {
                senders: senders.iter().map(|i| grid.core(*i)).collect(),
                rects: grid.first_cores(cores),
            }],
            reads_on_writer: false,
            pages,
            in_l1: false,
        }
    }

    #[test]
    fn receivers_are_the_other_cores_of_the_split() {
        // 12×10, 30 cores: rows 0 and 1 (with the sender) and 6 cores of row 2.
        let m = multicast(Grid::ETH_DISPATCH, 30, &[0], 10);
        assert_eq!(m.receivers(), 29);
        assert_eq!(m.semaphores(), 3);
        let g = &m.groups[0];
        let flags: Vec<bool> = g.rects.iter().map(|r| contains(r, g.senders[0])).collect();
        assert_eq!(flags, [true, false]);
        assert_eq!(
            multicast(Grid::TENSIX_DISPATCH, 110, &[0], 10).receivers(),
            109
        );
        // Four senders: still the 29 other cores each, READY, LOADED and four VALIDs.
        let four = multicast(Grid::ETH_DISPATCH, 30, &[0, 8, 15, 22], 10);
        assert_eq!((four.receivers(), four.semaphores()), (29, 6));
    }

    #[test]
    fn senders_spread_over_the_group_on_its_lightest_cores() {
        // 150 blocks on 120 cores, sender-light (core 0 none, cores 1..=31 two, the rest one):
        // one sender per run of 30 cores, the first with the fewest blocks in each: cores 0,
        // 32, 60 and 90, in rows 0, 2, 5 and 7 of 12×10.
        let grid = Grid::ETH_DISPATCH;
        let counts = [0].into_iter().chain([2; 31]).chain([1; 88]);
        let cores: Vec<(Core, u32)> = counts
            .enumerate()
            .map(|(i, n)| (grid.core(i as u32), n))
            .collect();
        let senders = senders_of(&cores, 144);
        assert_eq!(
            senders,
            [0, 32, 60, 90].map(|i| grid.core(i)).to_vec(),
            "{senders:?}"
        );
        let rows: Vec<u32> = senders.iter().map(|c| c.y).collect();
        assert_eq!(rows, [0, 2, 5, 7]);
        // No more senders than cores or than one per SLABS pages; a single core sends alone.
        assert_eq!(senders_of(&cores, 8), vec![grid.core(0), grid.core(60)]);
        assert_eq!(senders_of(&cores, 7), vec![grid.core(0)]);
        assert_eq!(senders_of(&cores[..3], 144).len(), 3);
        assert_eq!(senders_of(&cores[..1], 144), vec![grid.core(0)]);
        // Shares of 10 pages over 4 senders: 2, 3, 2, 3, covering every page once.
        let shares: Vec<(u32, u32)> = (0..4).map(|s| share(10, 4, s)).collect();
        assert_eq!(shares, [(0, 2), (2, 5), (5, 7), (7, 10)]);
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

    /// The calls of the sender's loop of `calls`.
    fn on_sender(calls: &[Call]) -> Option<Vec<(char, u32)>> {
        calls.iter().find_map(|c| match c {
            Call::Loop {
                trips: Trips::OnSender,
                body,
            } => Some(slab_calls(body)),
            _ => None,
        })
    }

    #[test]
    fn the_readers_slabs_are_multicast_as_they_are_counted() {
        // 10 L1 pages of 2 tiles: slabs of 2, 3, 2, 3 pages (s · 10 / 4 boundaries; the bias
        // with the first), each counted in LOADED by the reader and waited for by the writer
        // before its multicast, which it follows with its VALID at the slabs sent.
        let m = multicast(Grid::ETH_DISPATCH, 30, &[0], 10);
        let r = residents(10);
        assert_eq!(m.slabs(), SLABS);
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
        assert_eq!(on_sender(&m.fill(&r)).as_deref(), Some(&expected[..]));
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
        assert_eq!(on_sender(&m.send(&r)).as_deref(), Some(&tiles[..]));
        let Some(Call::Loop { body: send, .. }) = m.send(&r).pop() else {
            panic!("no sender loop");
        };
        let valid: Vec<u32> = send
            .iter()
            .filter_map(|c| match c {
                Call::SemSet { sem: VALID, value } => Some(*value),
                _ => None,
            })
            .collect();
        assert_eq!(valid, [1, 2, 3, 4]);
        // The rounds (one slab each here) land in K order: pages from 0, 2, 5, 7 to 10; the
        // first 4 tiles are round 0's, the fifth round 1's, and past the end all 4 rounds.
        let starts: Vec<u32> = (0..=4).map(|j| m.round_start(j)).collect();
        assert_eq!(starts, [0, 2, 5, 7, 10]);
        let holding: Vec<u32> = [1, 4, 5, 14, 15, u32::MAX]
            .iter()
            .map(|t| m.rounds_holding(*t, 2))
            .collect();
        assert_eq!(holding, [1, 1, 2, 3, 4, 4]);
        // Round 0 waits for the other senders' first slab and pushes the bias and its 2 pages,
        // a page (2 tiles) at a time; round 1 waits for their second.
        assert_eq!(
            m.round(&r, 0),
            [
                Call::Loop {
                    trips: Trips::OtherSenders,
                    body: vec![Call::SemWait {
                        sem: VALID,
                        value: 1
                    }],
                },
                Call::CbPush { cb: 2, pages: 2 },
                Call::Loop {
                    trips: Trips::Fixed(2),
                    body: vec![Call::CbPush { cb: 1, pages: 2 }],
                },
            ]
        );
        assert!(m.round(&r, 1).contains(&Call::Loop {
            trips: Trips::Fixed(3),
            body: vec![Call::CbPush { cb: 1, pages: 2 }],
        }));
        // Fewer pages than slabs: one slab a page; the writer reading them itself: one slab.
        assert_eq!(multicast(Grid::ETH_DISPATCH, 30, &[0], 3).slabs(), 3);
        let on_writer = Multicast {
            reads_on_writer: true,
            ..m
        };
        assert_eq!(on_writer.slabs(), 1);
    }

    #[test]
    fn several_senders_read_their_shares_in_slabs_of_the_smallest() {
        // 10 pages over 4 senders in 2 slabs (10 / 4 pages a share, whole): 8 chunks of 1, 1,
        // 1, 2 | 1, 1, 1, 2 pages (c · 10 / 8 boundaries), sender s's slabs chunks s and
        // 4 + (s + 1) mod 4 (the two chunks of 2 pages on senders 3 and 0), so round 0 (every sender's first slab) is pages 0..5 and round 1 pages 5..10; the
        // kernel IR's loop is the busiest sender's, the largest chunk of each round.
        let m = multicast(Grid::ETH_DISPATCH, 30, &[0, 8, 15, 22], 10);
        assert_eq!(m.slabs(), 2);
        assert_eq!((m.round_start(1), m.round_start(2)), (5, 10));
        let r = residents(10);
        let expected = [('r', 2), ('s', 1), ('r', 2), ('s', 2)];
        assert_eq!(on_sender(&m.fill(&r)).as_deref(), Some(&expected[..]));
        // Every core but the first sender increments READY on it; every core waits for the
        // VALID of every other sender to count each round.
        let looped = |calls: &[Call], over: Trips| -> Vec<Call> {
            calls
                .iter()
                .filter_map(|c| match c {
                    Call::Loop { trips, body } if *trips == over => Some(body.clone()),
                    _ => None,
                })
                .flatten()
                .collect()
        };
        assert_eq!(
            looped(&m.fill(&r), Trips::AllButFirstSender),
            [Call::SemInc { sem: READY }]
        );
        for j in 0..2 {
            assert_eq!(
                looped(&m.round(&r, j), Trips::OtherSenders),
                [Call::SemWait {
                    sem: VALID,
                    value: j + 1
                }]
            );
        }
        // The first sender passes READY on to the others by a semaphore multicast.
        let send = looped(&m.send(&r), Trips::OnSender);
        assert!(send.contains(&Call::SemMcast {
            sem: READY,
            dests: 29,
            rects: 2
        }));
        let one = multicast(Grid::ETH_DISPATCH, 30, &[0], 10);
        assert!(!looped(&one.send(&r), Trips::OnSender)
            .iter()
            .any(|c| matches!(c, Call::SemMcast { sem: READY, .. })));
    }

    #[test]
    fn weights_in_l1_are_pushed_at_once_without_senders_or_semaphores() {
        // 10 L1 pages of 2 tiles already in every core's L1: the reader reserves both CBs and,
        // in its one round, pushes the bias and the 10 pages; no core reads, sends or waits.
        let m = Multicast {
            groups: Vec::new(),
            reads_on_writer: false,
            pages: 10,
            in_l1: true,
        };
        let r = residents(10);
        assert_eq!((m.receivers(), m.semaphores(), m.slabs()), (0, 0, 1));
        assert_eq!(
            m.fill(&r),
            [
                Call::CbReserve { cb: 1, pages: 20 },
                Call::CbReserve { cb: 2, pages: 2 }
            ]
        );
        assert_eq!(
            m.round(&r, 0),
            [
                Call::CbPush { cb: 2, pages: 2 },
                Call::Loop {
                    trips: Trips::Fixed(10),
                    body: vec![Call::CbPush { cb: 1, pages: 2 }],
                },
            ]
        );
        assert!(m.send(&r).is_empty());
        let args = m.args(Core { x: 3, y: 2 });
        assert!(args.iter().all(|a| *a == Arg::Const(0)), "{args:?}");
        let flag = m
            .compile_args()
            .into_iter()
            .find(|a| a.name == "weights_in_l1");
        assert_eq!(flag.map(|a| a.value), Some(1));
    }

    #[test]
    fn a_single_core_has_no_receivers_and_no_semaphores() {
        let m = multicast(Grid::ETH_DISPATCH, 1, &[0], 10);
        assert_eq!((m.receivers(), m.semaphores()), (0, 0));
    }

    #[test]
    fn every_core_of_a_group_gets_its_first_sender_and_rectangles() {
        let grid = Grid::ETH_DISPATCH;
        let m = multicast(grid, 30, &[0, 15], 10);
        let names = Multicast::arg_names();
        assert_eq!(names.len(), 3 + 5 * RECTS + 1);
        let receiver = m.args(Core { x: 5, y: 1 });
        let first = m.args(grid.core(0));
        let second = m.args(grid.core(15));
        let last_row = m.args(Core { x: 2, y: 2 });
        // weights_sender: 0 on a core that is no sender, s + 1 on sender s.
        assert_eq!(
            [&receiver[0], &first[0], &second[0]],
            [&Arg::Const(0), &Arg::Const(1), &Arg::Const(2)]
        );
        // The first sender's coordinates and the rectangles, the same on every core: rows 0
        // and 1 (24 cores), the partial row 2 (6 cores), an unused slot.
        let shared = names.len() - 1;
        for args in [&first, &second, &last_row] {
            assert_eq!(args[1..shared], receiver[1..shared]);
        }
        assert_eq!(
            receiver[1..3],
            [Arg::NocX(grid.core(0)), Arg::NocY(grid.core(0))]
        );
        assert_eq!(
            (&receiver[3 + 4], &receiver[3 + 5 + 4]),
            (&Arg::Const(24), &Arg::Const(6))
        );
        assert!(receiver[3 + 10..shared].iter().all(|a| *a == Arg::Const(0)));
        // weights_self_rect: the rectangle holding the core.
        assert_eq!(
            [&receiver[shared], &second[shared], &last_row[shared]],
            [&Arg::Const(1), &Arg::Const(1), &Arg::Const(2)]
        );
        // The writers take all but the first sender's coordinates.
        assert_eq!(m.send_args(grid.core(15)).len(), names.len() - 2);
        assert_eq!(m.send_args(grid.core(15))[1..], second[3..]);
        // A core in no group gets zeros.
        let m = multicast(grid, 3, &[0], 10);
        assert!(m
            .args(Core { x: 5, y: 5 })
            .iter()
            .all(|a| *a == Arg::Const(0)));
    }

    /// Two groups of 5 rows on 12×10 (a conv sliced in two): each core's args name its own
    /// group's sender and rows, each sender multicasts to its own rows only,
    /// and the send waits for the 59 other cores of one group.
    #[test]
    fn each_group_has_its_sender_and_rectangle() {
        let rows = |y: u32| CoreRange {
            start: Core { x: 0, y },
            end: Core { x: 11, y: y + 4 },
        };
        let m = Multicast {
            groups: vec![
                Group {
                    senders: vec![Core { x: 0, y: 0 }],
                    rects: vec![rows(0)],
                },
                Group {
                    senders: vec![Core { x: 0, y: 5 }],
                    rects: vec![rows(5)],
                },
            ],
            reads_on_writer: false,
            pages: 10,
            in_l1: false,
        };
        assert_eq!(m.receivers(), 59);
        assert_eq!(
            m.senders(),
            vec![vec![Core { x: 0, y: 0 }], vec![Core { x: 0, y: 5 }]]
        );
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
        let rect = 3;
        assert_eq!(
            sender[rect..rect + 5],
            [
                Arg::NocX(Core { x: 0, y: 5 }),
                Arg::NocY(Core { x: 0, y: 5 }),
                Arg::NocX(Core { x: 11, y: 9 }),
                Arg::NocY(Core { x: 11, y: 9 }),
                Arg::Const(60),
            ]
        );
        assert_eq!(sender[1..], receiver[1..]);
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
