//! Phase facts of a kernel on one core, read off the kernel IR for the timeline cost model
//! ([`tt_runtime::TimelineModel`]): what share of its work comes before its block loop (the
//! prologue: weights fill or send, the input ring's first reads), how many blocks it runs,
//! whether its prologue waits for or sends a multicast (and how much of it comes before that
//! wait), and where in one block it hands work to the next stage and waits for the previous
//! one's ([`handoffs`]); for pages multicast in rounds ([`crate::multicast`]), whether the
//! prologue waits only for the first, when a sender signals its first, and where the first block
//! last waits for them ([`landed_wait`]). The emulator's counters give the totals; these facts
//! say how they spread over time.

use tt_runtime::{SfpuOp as CountedSfpu, TimelineModel};

use crate::kir::{self, Arena, Call, OnCore, ReduceOp, SfpuOp, Trips};
use crate::multicast::{LOADED, VALID};
use crate::plan::staged::{STAGE_BIAS_CB, STAGE_WEIGHTS_CB};

/// The ids of a stager's CBs in the staged slots.
const STAGE_CBS: [u32; 2] = [STAGE_WEIGHTS_CB.0, STAGE_BIAS_CB.0];

/// The timeline facts of one kernel body on one core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phases {
    /// The body's work on the core by the weights the shares come from (cycles; [`weight`]).
    pub work: f64,
    /// Share (0..=1) of the body's work before its first block loop.
    pub prologue_share: f64,
    /// Trips of that block loop on the core (0: no block loop).
    pub blocks: u64,
    /// Of those, the blocks of a [`Trips::FirstBlocks`] loop (which do more than the rest).
    pub first_blocks: u64,
    /// Share (0..=1) of the body's work in them.
    pub first_blocks_share: f64,
    /// The prologue waits on a semaphore of a multicast sender (a receiver core, or a sender
    /// waiting for the other senders of its group).
    pub waits_for_sender: bool,
    /// Share (0..=`prologue_share`) of the body's work before that wait.
    pub before_wait_share: f64,
    /// On a sender, the share of the body's work before it first sets [`LOADED`] for the
    /// core's multicasting kernel (its first slab read; 0 when it does not).
    pub loads_share: f64,
    /// The prologue multicasts pages the step's cores wait for (a sender core; not the staging
    /// of a later conv's weights).
    pub sends: bool,
    /// The prologue waits only for the senders' first round of pages ([`VALID`] at 1), and
    /// the block loops for the later ones (a conv reader that pushes them in its first block).
    pub waits_first_round: bool,
    /// With `sends`: the share (0..=`prologue_share`) of the body's work before its first
    /// [`VALID`] multicast (its first slab's signal); `prologue_share` without one.
    pub first_signal_share: f64,
    /// The prologue pushes a CB or sets [`LOADED`] (pages the core's other kernels wait for).
    pub feeds: bool,
}

/// Cycles of `n` NoC transfers moving `bytes` in all, at most `bulk` bytes a cycle, as the
/// timeline model charges counted ones ([`TimelineModel::transfer_cycles`]).
fn transfers(n: u32, bytes: f64, bulk: f64) -> f64 {
    TimelineModel::BLACKHOLE.transfer_cycles(u64::from(n), bytes, bulk)
}

/// The kind the emulator counts an SFPU operation as, whose cycles the timeline charges.
fn sfpu_kind(op: SfpuOp) -> CountedSfpu {
    match op {
        SfpuOp::Max => CountedSfpu::Max,
        SfpuOp::Exp => CountedSfpu::Exp,
        SfpuOp::Recip => CountedSfpu::Recip,
        SfpuOp::Rsqrt => CountedSfpu::Rsqrt,
        SfpuOp::AddScalar | SfpuOp::MulScalar => CountedSfpu::Scalar,
        SfpuOp::ReluMax => CountedSfpu::Relu,
        SfpuOp::AddBinary | SfpuOp::SubBinary | SfpuOp::Eq | SfpuOp::Where => CountedSfpu::Binary,
    }
}

/// Cycles of one call, only to split a body's work between its phases: NoC transfers as the
/// timeline model charges them (an issue each, their size's rate, at most the measured DRAM
/// rates for a buffer in DRAM and the core-to-core rate for one in L1 or a copy inside the
/// core; multicasts at their measured cost for the cores they reach), RISC-V stores at 5 cycles
/// a word, tile operations at their FPU or unpack cycles (packing none: the packer runs beside
/// the math, which the timeline charges instead), SFPU operations at the timeline's cycles for
/// their kind. The NoC flight of barriers has no call and is not weighed.
fn weight(call: &Call, arena: &Arena) -> f64 {
    const TILE: f64 = 2048.0;
    let model = &TimelineModel::BLACKHOLE;
    // The most bytes a cycle of a transfer between L1 and `buffer`, written to it or read.
    let bulk = |buffer: &str, write: bool| {
        if arena.holds(buffer) {
            model.l1_bytes_per_cycle
        } else if write {
            model.dram_write_bytes_per_cycle
        } else {
            model.dram_read_bytes_per_cycle
        }
    };
    let bytes = |n: u32, size: u32| f64::from(n) * f64::from(size);
    match call {
        Call::DramRead {
            buffer,
            pages,
            page_bytes,
            ..
        }
        | Call::DramWrite {
            buffer,
            pages,
            page_bytes,
            ..
        } => transfers(
            *pages,
            bytes(*pages, *page_bytes),
            bulk(buffer, matches!(call, Call::DramWrite { .. })),
        ),
        Call::DramPart {
            buffer,
            write,
            transfers: n,
            bytes: size,
            ..
        } => transfers(*n, bytes(*n, *size), bulk(buffer, *write)),
        // One unlinked multicast a destination rectangle, as the senders issue them.
        Call::McastWrite {
            pages,
            page_bytes,
            dests,
            rects,
            ..
        } => {
            let rects = (*rects).max(1);
            f64::from(rects)
                * model.multicast_cycles(
                    bytes(*pages, *page_bytes),
                    f64::from(*dests) / f64::from(rects),
                )
        }
        // Whole pages, or rows (a page's first or last rows fixed, `tiles` 0) at least.
        Call::L1Copy {
            tiles,
            row_bytes,
            transfers: n,
            ..
        } => transfers(
            *n,
            (f64::from(*tiles) * TILE).max(bytes(*n, *row_bytes)),
            model.l1_bytes_per_cycle,
        ),
        Call::L1Gather { bytes } => f64::from(*bytes) / 4.0 * 5.0,
        Call::Matmul { ct, rt, kt } => f64::from(ct * rt * kt) * 32.0,
        Call::Reduce {
            op: ReduceOp::MaxRow,
            tiles,
        } => f64::from(*tiles) * 98.0,
        Call::Copy { tiles } | Call::Transpose { tiles } | Call::Reduce { tiles, .. } => {
            f64::from(*tiles) * 32.0
        }
        Call::Binary { tiles, .. } => f64::from(*tiles) * 64.0,
        Call::Sfpu { op, tiles, faces } => {
            f64::from(*tiles) * f64::from(*faces) / 4.0 * model.sfpu_cycles[sfpu_kind(*op) as usize]
        }
        _ => 0.0,
    }
}

/// Whether `trips` is the loop over the core's output blocks, and the blocks it and the loops
/// after it step through on core `on` (a [`Trips::FirstBlocks`] loop and the
/// [`Trips::BlocksBetween`] and [`Trips::LaterBlocks`] loops after it step through all of them,
/// a [`Trips::FirstUnit`] loop and the [`Trips::LaterUnits`] one all units).
fn block_trips(trips: &Trips, on: OnCore) -> Option<u64> {
    match trips {
        Trips::Blocks | Trips::FirstBlocks(_) => Some(u64::from(on.blocks)),
        Trips::Units(_) | Trips::FirstUnit(_) => Some(u64::from(on.units)),
        _ => None,
    }
}

/// The phase facts of `body` on core `on`.
pub fn phases(body: &[Call], on: OnCore, arena: &Arena) -> Phases {
    let split = body
        .iter()
        .position(|c| matches!(c, Call::Loop { trips, .. } if block_trips(trips, on).is_some()));
    let (prologue, rest) = body.split_at(split.unwrap_or(body.len()));
    let blocks = rest.first().map_or(0, |c| match c {
        Call::Loop { trips, .. } => block_trips(trips, on).unwrap_or(0),
        _ => 0,
    });
    // The first blocks: a [`Trips::FirstBlocks`] loop and the [`Trips::BlocksBetween`] loops
    // right after it.
    let leading = match rest.first() {
        Some(Call::Loop {
            trips: Trips::FirstBlocks(_),
            ..
        }) => rest
            .iter()
            .take_while(|c| {
                matches!(
                    c,
                    Call::Loop {
                        trips: Trips::FirstBlocks(_) | Trips::BlocksBetween(..),
                        ..
                    }
                )
            })
            .count(),
        _ => 0,
    };
    let first_blocks = rest[..leading]
        .iter()
        .map(|c| match c {
            Call::Loop { trips, .. } => u64::from(trips.on(on)),
            _ => 0,
        })
        .sum::<u64>();
    let mut in_first = 0.0;
    kir::walk(&rest[..leading], on, 1, &mut |call, times| {
        in_first += times as f64 * weight(call, arena);
    });
    let (mut before, mut before_wait, mut loaded, mut signal) = (0.0, 0.0, None, None);
    let (mut waits, mut sends, mut later_rounds, mut feeds) = (false, false, false, false);
    kir::walk(prologue, on, 1, &mut |call, times| {
        before += times as f64 * weight(call, arena);
        // Pages pushed, or loaded for the core's reader to push (`LOADED`: a sender's writer
        // that reads its share itself).
        feeds |=
            times > 0 && matches!(call, Call::CbPush { .. } | Call::SemSet { sem: LOADED, .. });
        match call {
            // A sender waits only for the other senders of its group (their VALID).
            Call::SemWait { sem, value } if times > 0 && (!on.sender || *sem == VALID) => {
                if !waits {
                    waits = true;
                    before_wait = before;
                }
                later_rounds |= *sem == VALID && *value > 1;
            }
            // The staging of a later conv's weights (`crate::ops::stage`): no core of the
            // step waits for it.
            Call::McastWrite { cb, .. } if times > 0 && !STAGE_CBS.contains(cb) => sends = true,
            Call::SemSet { sem: LOADED, .. } if times > 0 && loaded.is_none() => {
                loaded = Some(before)
            }
            Call::SemMcast { sem: VALID, .. } if times > 0 && signal.is_none() => {
                signal = Some(before)
            }
            _ => {}
        }
    });
    let mut rounds_in_blocks = false;
    kir::walk(rest, on, 1, &mut |call, times| {
        rounds_in_blocks |= times > 0 && matches!(call, Call::SemWait { sem: VALID, .. });
    });
    let mut all = 0.0;
    kir::walk(body, on, 1, &mut |call, times| {
        all += times as f64 * weight(call, arena);
    });
    let share = |work: f64| if all > 0.0 { work / all } else { 0.0 };
    Phases {
        work: all,
        prologue_share: share(before),
        before_wait_share: share(before_wait),
        loads_share: if sends {
            0.0
        } else {
            share(loaded.unwrap_or(0.0))
        },
        blocks,
        first_blocks,
        first_blocks_share: share(in_first),
        waits_for_sender: waits,
        sends,
        waits_first_round: waits && !later_rounds && rounds_in_blocks,
        first_signal_share: share(signal.unwrap_or(before)),
        feeds,
    }
}

/// How one block of a kernel hands work to the next stage and takes it from the previous one
/// (the CBs that link them), as shares of the block's work done before its first and its last
/// push on a CB the next stage waits on, and before its first and its last wait on a CB the
/// previous stage pushes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Handoffs {
    pub first_push_share: f64,
    pub last_push_share: f64,
    pub first_wait_share: f64,
    pub last_wait_share: f64,
}

impl Handoffs {
    /// A block handed over in one push at its end and waited for whole at its start.
    pub const WHOLE_BLOCK: Handoffs = Handoffs {
        first_push_share: 1.0,
        last_push_share: 1.0,
        first_wait_share: 0.0,
        last_wait_share: 0.0,
    };
}

/// The work of calls on one core, and the work before the first and before the last call that
/// the predicate matches.
#[derive(Default)]
struct Span {
    work: f64,
    first: Option<f64>,
    last: Option<f64>,
}

fn span(calls: &[Call], on: OnCore, arena: &Arena, hit: &dyn Fn(&Call) -> bool) -> Span {
    let mut s = Span::default();
    for call in calls {
        let (inner, trips) = match call {
            Call::Loop { trips, body } => (span(body, on, arena, hit), f64::from(trips.on(on))),
            Call::Dst { body, .. } => (span(body, on, arena, hit), 1.0),
            _ => {
                if hit(call) {
                    s.first.get_or_insert(s.work);
                    s.last = Some(s.work);
                }
                s.work += weight(call, arena);
                continue;
            }
        };
        if trips == 0.0 {
            continue;
        }
        if let Some(first) = inner.first {
            s.first.get_or_insert(s.work + first);
        }
        if let Some(last) = inner.last {
            s.last = Some(s.work + (trips - 1.0) * inner.work + last);
        }
        s.work += trips * inner.work;
    }
    s
}

/// The body of the loop that runs the core's first block: of the [`Trips::FirstBlocks`] loop
/// when it runs on the core, else of the [`Trips::Blocks`] or [`Trips::LaterBlocks`] one; none
/// without a loop over single blocks.
fn first_block(body: &[Call], on: OnCore) -> Option<&[Call]> {
    body.iter().find_map(|call| match call {
        Call::Loop {
            trips: Trips::Blocks,
            body,
        } => Some(&body[..]),
        Call::Loop {
            trips: trips @ (Trips::FirstBlocks(_) | Trips::LaterBlocks(_)),
            body,
        } if trips.on(on) > 0 => Some(&body[..]),
        _ => None,
    })
}

/// The body of a [`Trips::FirstUnit`] loop that runs on the core, and its blocks a unit.
fn first_unit(body: &[Call], on: OnCore) -> Option<(&[Call], u32)> {
    body.iter().find_map(|call| match call {
        Call::Loop {
            trips: trips @ Trips::FirstUnit(n),
            body,
        } if trips.on(on) > 0 => Some((&body[..], (*n).max(1))),
        _ => None,
    })
}

/// The share of the work of the core's first block of `body` (as [`handoffs`] finds it) done
/// before its last wait for pages a multicast lands in rounds: a [`VALID`] semaphore wait (a
/// reader that pushes the later rounds in its first block) or a wait on one of the CBs
/// `landed` (a compute, for the pages its reader pushes round by round). A kernel whose loop
/// runs once per unit of `n` blocks ([`Trips::FirstUnit`]: the fused pool's compute) spreads a
/// unit's work over its `n` blocks, so its first block is the first `1/n` of its first unit's
/// work (at most all of that block). `None` when the first block waits for none.
pub fn landed_wait(body: &[Call], on: OnCore, landed: &[u32], arena: &Arena) -> Option<f64> {
    let (block, per_block) = match first_block(body, on) {
        Some(block) => (block, 1),
        None => first_unit(body, on)?,
    };
    let waited = span(block, on, arena, &|c| match c {
        Call::SemWait { sem, .. } => *sem == VALID,
        Call::CbWait { cb, .. } => landed.contains(cb),
        _ => false,
    });
    waited.last.map(|at| {
        if waited.work > 0.0 {
            (at / waited.work * f64::from(per_block)).min(1.0)
        } else {
            0.0
        }
    })
}

/// The [`Handoffs`] of one block of `body` on core `on`: `pushes` are the CBs the next stage
/// waits on, `waits` the CBs the previous stage pushes (the first block: of the
/// [`Trips::FirstBlocks`] loop when it runs on the core, else of the [`Trips::LaterBlocks`] one). A body without a loop over single
/// blocks (none, or one trip per several blocks) hands over [`Handoffs::WHOLE_BLOCK`].
pub fn handoffs(
    body: &[Call],
    on: OnCore,
    pushes: &[u32],
    waits: &[u32],
    arena: &Arena,
) -> Handoffs {
    let Some(block) = first_block(body, on) else {
        return Handoffs::WHOLE_BLOCK;
    };
    let pushed = span(
        block,
        on,
        arena,
        &|c| matches!(c, Call::CbPush { cb, .. } if pushes.contains(cb)),
    );
    let waited = span(
        block,
        on,
        arena,
        &|c| matches!(c, Call::CbWait { cb, .. } if waits.contains(cb)),
    );
    let share = |at: Option<f64>, work: f64| at.filter(|_| work > 0.0).map(|at| at / work);
    // A kernel linked to no next stage hands it nothing: the next stage never waits for it.
    let unlinked = if pushes.is_empty() { 0.0 } else { 1.0 };
    Handoffs {
        first_push_share: share(pushed.first, pushed.work).unwrap_or(unlinked),
        last_push_share: share(pushed.last, pushed.work).unwrap_or(unlinked),
        first_wait_share: share(waited.first, waited.work).unwrap_or(0.0),
        last_wait_share: share(waited.last, waited.work).unwrap_or(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Core of a group with one sender.
    fn on(blocks: u32, sender: bool) -> OnCore {
        OnCore {
            blocks,
            units: 0,
            counted: blocks,
            sender,
            first_sender: sender,
            other_senders: u32::from(!sender),
            stager: false,
        }
    }

    /// A conv-like reader: wait for the weights (receivers), read 3 ring pages, then per block
    /// one page.
    fn reader() -> Vec<Call> {
        let read = |pages| Call::DramRead {
            buffer: "in".into(),
            pages,
            page_bytes: 2048,
            cb: 0,
        };
        vec![
            Call::Loop {
                trips: Trips::OtherSenders,
                body: vec![Call::SemWait {
                    sem: VALID,
                    value: 1,
                }],
            },
            read(3),
            Call::Loop {
                trips: Trips::Blocks,
                body: vec![read(1)],
            },
        ]
    }

    #[test]
    fn transfers_weigh_their_issue_and_their_size_rate() {
        // Prologue: one 2 KiB page from DRAM, 8 + 2048 / 33 cycles (the DRAM read rate binds
        // below the 2 KiB class's 58 B/cycle); from a buffer in L1, 8 + 2048 / 58.
        // Each block: 16 row fixes of 32 bytes inside L1, 16 · (8 + 32 / 3) cycles (the
        // 64-byte class's 3 B/cycle), the bytes taken from the rows since no page is whole.
        let body = |buffer: &str| {
            vec![
                Call::DramRead {
                    buffer: buffer.into(),
                    pages: 1,
                    page_bytes: 2048,
                    cb: 0,
                },
                Call::Loop {
                    trips: Trips::Blocks,
                    body: vec![Call::L1Copy {
                        from: 0,
                        cb: 0,
                        tiles: 0,
                        row_bytes: 32,
                        transfers: 16,
                    }],
                },
            ]
        };
        let fixes = 4.0 * 16.0 * (8.0 + 32.0 / 3.0);
        let in_dram = phases(&body("in"), on(4, false), &Arena::default());
        let read = 8.0 + 2048.0 / 33.0;
        assert!((in_dram.work - (read + fixes)).abs() < 1e-9);
        assert!((in_dram.prologue_share - read / (read + fixes)).abs() < 1e-12);
        let arena = Arena {
            bytes: 4096,
            offsets: [("in".to_string(), 0)].into(),
            resident: 0,
        };
        let in_l1 = phases(&body("in"), on(4, false), &arena);
        let read = 8.0 + 2048.0 / 58.0;
        assert!((in_l1.work - (read + fixes)).abs() < 1e-9);
    }

    #[test]
    fn sfpu_ops_weigh_their_kinds_cycles_over_their_faces() {
        // Prologue: the accurate exp on faces 0 and 1 of a tile, 1150 / 2; each block a binary
        // maximum of a whole tile, 109 (the timeline's constants), and a pack, which weighs
        // nothing.
        let body = vec![
            Call::Sfpu {
                op: SfpuOp::Exp,
                tiles: 1,
                faces: 2,
            },
            Call::Loop {
                trips: Trips::Blocks,
                body: vec![
                    Call::Sfpu {
                        op: SfpuOp::Max,
                        tiles: 1,
                        faces: 4,
                    },
                    Call::Pack { cb: 0, tiles: 1 },
                ],
            },
        ];
        let p = phases(&body, on(4, false), &Arena::default());
        assert!((p.work - (575.0 + 4.0 * 109.0)).abs() < 1e-9);
        assert!((p.prologue_share - 575.0 / 1011.0).abs() < 1e-12);
    }

    #[test]
    fn the_prologue_is_what_comes_before_the_block_loop() {
        let p = phases(&reader(), on(9, false), &Arena::default());
        // 3 pages before, 9 in the loop.
        assert!((p.prologue_share - 0.25).abs() < 1e-12);
        assert_eq!(p.blocks, 9);
        assert!(p.waits_for_sender);
        assert!(!p.sends);
        // The only sender does not wait for itself; one of two waits for the other.
        assert!(!phases(&reader(), on(9, true), &Arena::default()).waits_for_sender);
        let two = OnCore {
            first_sender: false,
            other_senders: 1,
            stager: false,
            ..on(9, true)
        };
        assert!(phases(&reader(), two, &Arena::default()).waits_for_sender);
        // Nothing before the wait.
        assert_eq!(p.before_wait_share, 0.0);
        // The ring read before the wait: all the prologue's work comes before it.
        let mut ring_first = reader();
        ring_first.swap(0, 1);
        let p = phases(&ring_first, on(9, false), &Arena::default());
        assert!(p.waits_for_sender);
        assert!((p.before_wait_share - 0.25).abs() < 1e-12);
        // No block loop: all prologue, no blocks.
        let flat = phases(&reader()[..2], on(9, false), &Arena::default());
        assert_eq!((flat.prologue_share, flat.blocks), (1.0, 0));
    }

    #[test]
    fn first_blocks_that_do_more_count_as_block_work() {
        let read = |pages| Call::DramRead {
            buffer: "in".into(),
            pages,
            page_bytes: 2048,
            cb: 0,
        };
        let push = Call::CbPush { cb: 1, pages: 1 };
        let body = vec![
            read(2),
            Call::Loop {
                trips: Trips::FirstBlocks(4),
                body: vec![read(1), push.clone(), read(2)],
            },
            Call::Loop {
                trips: Trips::LaterBlocks(4),
                body: vec![read(1), push],
            },
        ];
        // 9 blocks: 2 pages before the loops, 4 × 3 + 5 × 1 in them; all 9 are block steps,
        // the first 4 with 12 of the 19 pages.
        let p = phases(&body, on(9, false), &Arena::default());
        assert!((p.prologue_share - 2.0 / 19.0).abs() < 1e-12);
        assert_eq!((p.blocks, p.first_blocks), (9, 4));
        assert!((p.first_blocks_share - 12.0 / 19.0).abs() < 1e-12);
        // 3 blocks, all first ones: 2 before, 9 in the loop.
        let p = phases(&body, on(3, false), &Arena::default());
        assert!((p.prologue_share - 2.0 / 11.0).abs() < 1e-12);
        assert_eq!((p.blocks, p.first_blocks), (3, 3));
        // The first block hands over as the first loop's blocks do: its push after 1 of 3 pages.
        let h = handoffs(&body, on(9, false), &[1], &[], &Arena::default());
        assert!((h.first_push_share - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(Trips::FirstBlocks(4).on(on(9, false)), 4);
        assert_eq!(Trips::LaterBlocks(4).on(on(3, false)), 0);
        assert_eq!(Trips::MissingBlocks(4).on(on(3, false)), 1);
        assert_eq!(Trips::MissingBlocks(4).on(on(9, false)), 0);
        assert_eq!(Trips::MissingBlocks(4).on(on(0, false)), 0);
    }

    #[test]
    fn a_first_block_of_its_own_before_the_other_first_blocks_counts_with_them() {
        let read = |pages| Call::DramRead {
            buffer: "in".into(),
            pages,
            page_bytes: 2048,
            cb: 0,
        };
        let valid = Call::Loop {
            trips: Trips::OtherSenders,
            body: vec![Call::SemWait {
                sem: VALID,
                value: 2,
            }],
        };
        let push = Call::CbPush { cb: 1, pages: 1 };
        // 9 blocks: block 0 reads 3 pages and waits for round 2 after them, blocks 1..4 read 3
        // pages each, blocks 4.. 1 each; 2 pages before. The first blocks are 4 with 12 of the
        // 19 pages, as with one FirstBlocks(4) loop; the first block's last wait for the
        // rounds comes after all of its pages.
        let body = vec![
            read(2),
            Call::Loop {
                trips: Trips::FirstBlocks(1),
                body: vec![read(3), valid, push.clone()],
            },
            Call::Loop {
                trips: Trips::BlocksBetween(1, 4),
                body: vec![read(3), push.clone()],
            },
            Call::Loop {
                trips: Trips::LaterBlocks(4),
                body: vec![read(1), push],
            },
        ];
        let p = phases(&body, on(9, false), &Arena::default());
        assert_eq!((p.blocks, p.first_blocks), (9, 4));
        assert!((p.first_blocks_share - 12.0 / 19.0).abs() < 1e-12);
        assert!((p.prologue_share - 2.0 / 19.0).abs() < 1e-12);
        assert_eq!(
            landed_wait(&body, on(9, false), &[], &Arena::default()),
            Some(1.0)
        );
        // 2 blocks: the first and one of the others.
        let p = phases(&body, on(2, false), &Arena::default());
        assert_eq!((p.blocks, p.first_blocks), (2, 2));
        assert_eq!(Trips::BlocksBetween(1, 4).on(on(2, false)), 1);
        assert_eq!(Trips::BlocksBetween(1, 4).on(on(0, false)), 0);
    }

    #[test]
    fn a_first_unit_spreads_its_wait_for_the_rounds_over_its_blocks() {
        let matmul = Call::Matmul {
            ct: 1,
            rt: 1,
            kt: 1,
        };
        let matmuls = |n| Call::Loop {
            trips: Trips::Fixed(n),
            body: vec![matmul.clone()],
        };
        // A core of `blocks` blocks in units of 4 (the fused pool's split: its units).
        let units = |blocks: u32| OnCore {
            units: blocks / 4,
            ..on(blocks, false)
        };
        // Units of 4 blocks, 8 matmuls each; the first unit waits for resident CB 1 before its
        // first and its second matmul. The last wait comes after 1 of the unit's 8 matmuls,
        // and a block step is a quarter of the unit: after half of the first block.
        let body = vec![
            Call::Loop {
                trips: Trips::FirstUnit(4),
                body: vec![
                    Call::CbWait { cb: 1, pages: 2 },
                    matmul.clone(),
                    Call::CbWait { cb: 1, pages: 4 },
                    matmuls(7),
                ],
            },
            Call::Loop {
                trips: Trips::LaterUnits(4),
                body: vec![matmuls(8)],
            },
        ];
        let landed = landed_wait(&body, units(12), &[1], &Arena::default());
        assert!(landed.is_some_and(|s| (s - 0.5).abs() < 1e-12));
        // Units are the block loop: 3 of them on 12 blocks, all in the loops.
        let p = phases(&body, units(12), &Arena::default());
        assert_eq!((p.blocks, p.first_blocks), (3, 0));
        assert_eq!(p.prologue_share, 0.0);
        assert_eq!(
            [Trips::FirstUnit(4), Trips::LaterUnits(4)].map(|t| t.on(units(12))),
            [1, 2]
        );
        // A core without a unit runs neither and waits in no first block.
        assert_eq!(landed_wait(&body, units(3), &[1], &Arena::default()), None);
        // A wait past the first block's share counts as at its end.
        let late = vec![Call::Loop {
            trips: Trips::FirstUnit(4),
            body: vec![matmuls(6), Call::CbWait { cb: 1, pages: 4 }, matmuls(2)],
        }];
        assert_eq!(
            landed_wait(&late, units(4), &[1], &Arena::default()),
            Some(1.0)
        );
    }

    #[test]
    fn a_prologue_feeds_the_other_kernels_when_it_pushes() {
        // The reader's prologue reads pages but pushes none.
        assert!(!phases(&reader(), on(9, false), &Arena::default()).feeds);
        // Pushed before the block loop: the compute waits for them.
        let mut pushing = reader();
        pushing.insert(2, Call::CbPush { cb: 0, pages: 3 });
        assert!(phases(&pushing, on(9, false), &Arena::default()).feeds);
        // Pushed only in the block loop: block work, not the prologue's.
        let mut in_blocks = reader();
        if let Some(Call::Loop { body, .. }) = in_blocks.last_mut() {
            body.push(Call::CbPush { cb: 0, pages: 1 });
        }
        assert!(!phases(&in_blocks, on(9, false), &Arena::default()).feeds);
        // Loaded for the core's reader to push (a sender's writer reading its share), on a
        // sender only.
        let mut loading = reader();
        loading.insert(
            2,
            Call::Loop {
                trips: Trips::OnSender,
                body: vec![Call::SemSet {
                    sem: LOADED,
                    value: 1,
                }],
            },
        );
        assert!(phases(&loading, on(9, true), &Arena::default()).feeds);
        assert!(!phases(&loading, on(9, false), &Arena::default()).feeds);
    }

    #[test]
    fn a_sender_that_loads_the_pages_says_how_much_comes_first() {
        let read = |pages| Call::DramRead {
            buffer: "w".into(),
            pages,
            page_bytes: 2048,
            cb: 1,
        };
        let body = vec![
            Call::Loop {
                trips: Trips::OnSender,
                body: vec![
                    read(3),
                    Call::SemSet {
                        sem: LOADED,
                        value: 1,
                    },
                ],
            },
            Call::Loop {
                trips: Trips::Blocks,
                body: vec![read(1)],
            },
        ];
        // 3 pages before LOADED, 9 in the loop.
        assert!((phases(&body, on(9, true), &Arena::default()).loads_share - 0.25).abs() < 1e-12);
        assert_eq!(
            phases(&body, on(9, false), &Arena::default()).loads_share,
            0.0
        );
    }

    #[test]
    fn rounds_of_multicast_pages_are_waited_for_as_they_land() {
        let read = |pages| Call::DramRead {
            buffer: "in".into(),
            pages,
            page_bytes: 2048,
            cb: 0,
        };
        let valid = |value| Call::Loop {
            trips: Trips::OtherSenders,
            body: vec![Call::SemWait { sem: VALID, value }],
        };
        let push = |cb| Call::CbPush { cb, pages: 1 };
        // A reader that waits for round 1 before its loop and for rounds 2 and 3 in its first
        // block (after 1 and 2 of its 3 pages there): its prologue waits for the first round
        // only, and its first block last waits after 2 of 3 pages.
        let reader = vec![
            read(3),
            valid(1),
            push(1),
            Call::Loop {
                trips: Trips::FirstBlocks(1),
                body: vec![
                    read(1),
                    valid(2),
                    push(1),
                    read(1),
                    valid(3),
                    push(1),
                    read(1),
                ],
            },
            Call::Loop {
                trips: Trips::LaterBlocks(1),
                body: vec![read(3)],
            },
        ];
        let p = phases(&reader, on(4, false), &Arena::default());
        assert!(p.waits_for_sender && p.waits_first_round);
        let landed = landed_wait(&reader, on(4, false), &[1], &Arena::default());
        assert!(landed.is_some_and(|s| (s - 2.0 / 3.0).abs() < 1e-12));
        // All rounds before the loop: not the first only; no wait in the first block.
        let mut all = reader[..3].to_vec();
        all.extend([valid(2), valid(3), reader[4].clone()]);
        assert!(!phases(&all, on(4, false), &Arena::default()).waits_first_round);
        assert_eq!(
            landed_wait(&all, on(4, false), &[1], &Arena::default()),
            None
        );
        // A compute waiting on resident CB 1 in its first block after half of its matmuls.
        let matmul = Call::Matmul {
            ct: 1,
            rt: 1,
            kt: 1,
        };
        let compute = vec![Call::Loop {
            trips: Trips::FirstBlocks(1),
            body: vec![
                Call::CbWait { cb: 1, pages: 2 },
                matmul.clone(),
                Call::CbWait { cb: 1, pages: 4 },
                matmul,
            ],
        }];
        let landed = landed_wait(&compute, on(4, false), &[1], &Arena::default());
        assert!(landed.is_some_and(|s| (s - 0.5).abs() < 1e-12));
        assert_eq!(
            landed_wait(&compute, on(4, false), &[2], &Arena::default()),
            None
        );
        // A sender that multicasts two slabs of 4 pages, each followed by its VALID: it signals
        // its first after half of its multicast.
        let mcast = Call::McastWrite {
            cb: 1,
            pages: 4,
            page_bytes: 2048,
            dests: 9,
            rects: 1,
        };
        let signal = Call::SemMcast {
            sem: VALID,
            dests: 9,
            rects: 1,
        };
        let sender = vec![Call::Loop {
            trips: Trips::OnSender,
            body: vec![mcast.clone(), signal.clone(), mcast, signal],
        }];
        let p = phases(&sender, on(0, true), &Arena::default());
        assert!(p.sends);
        assert!((p.first_signal_share - 0.5).abs() < 1e-12);
        assert!((p.prologue_share - 1.0).abs() < 1e-12);
    }

    #[test]
    fn handoffs_are_where_a_block_first_pushes_and_last_waits() {
        let read = |pages| Call::DramRead {
            buffer: "in".into(),
            pages,
            page_bytes: 2048,
            cb: 0,
        };
        // A reader pushing CB 0 a third of its block at a time (3 pages, then the push); its
        // first hand-off comes after a third of the block.
        let reader = vec![Call::Loop {
            trips: Trips::Blocks,
            body: vec![Call::Loop {
                trips: Trips::Fixed(3),
                body: vec![read(3), Call::CbPush { cb: 0, pages: 3 }],
            }],
        }];
        let h = handoffs(&reader, on(4, false), &[0], &[], &Arena::default());
        assert!((h.first_push_share - 1.0 / 3.0).abs() < 1e-12);
        assert!((h.last_push_share - 1.0).abs() < 1e-12);
        assert_eq!((h.first_wait_share, h.last_wait_share), (0.0, 0.0));
        // A compute of two groups (each 9 matmuls of 1×1, 32 cycles, then a 1-tile pack, which
        // runs beside the math and weighs nothing) that waits for CB 0 before each of its first
        // group's three thirds of K and pushes CB 1 after each group: its waits come after 0 and
        // 6 of its 18 matmuls, its pushes after 9 and 18.
        let matmuls = |n| Call::Loop {
            trips: Trips::Fixed(n),
            body: vec![Call::Matmul {
                ct: 1,
                rt: 1,
                kt: 1,
            }],
        };
        let group_end = vec![
            Call::Pack { cb: 1, tiles: 1 },
            Call::CbPush { cb: 1, pages: 1 },
        ];
        let block = [
            vec![Call::Loop {
                trips: Trips::Fixed(3),
                body: vec![Call::CbWait { cb: 0, pages: 3 }, matmuls(3)],
            }],
            group_end.clone(),
            vec![matmuls(9)],
            group_end,
        ]
        .concat();
        let compute = vec![Call::Loop {
            trips: Trips::Blocks,
            body: block.clone(),
        }];
        let h = handoffs(&compute, on(4, false), &[1], &[0], &Arena::default());
        assert_eq!(h.first_wait_share, 0.0);
        assert!((h.last_wait_share - 6.0 / 18.0).abs() < 1e-12);
        assert!((h.first_push_share - 9.0 / 18.0).abs() < 1e-12);
        assert!((h.last_push_share - 1.0).abs() < 1e-12);
        // A CB no other stage uses is no hand-off; no block loop, or one over several blocks,
        // hands over whole blocks.
        assert_eq!(
            handoffs(&compute, on(4, false), &[7], &[7], &Arena::default()),
            Handoffs::WHOLE_BLOCK
        );
        let units = vec![Call::Loop {
            trips: Trips::Units(2),
            body: block,
        }];
        assert_eq!(
            handoffs(&units, on(4, false), &[1], &[0], &Arena::default()),
            Handoffs::WHOLE_BLOCK
        );
    }

    // A kernel linked to no next stage (the identity resize's reader and writer, which share no
    // CB) hands nothing over: push shares 0, so no stage waits for it.
    #[test]
    fn a_kernel_linked_to_no_next_stage_hands_nothing_over() {
        let reader = vec![Call::Loop {
            trips: Trips::Blocks,
            body: vec![Call::L1Gather { bytes: 64 }],
        }];
        let h = handoffs(&reader, on(4, false), &[], &[], &Arena::default());
        assert_eq!((h.first_push_share, h.last_push_share), (0.0, 0.0));
        assert_eq!((h.first_wait_share, h.last_wait_share), (0.0, 0.0));
    }
}
