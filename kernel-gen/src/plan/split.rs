//! How a node's output blocks are split over the cores: contiguous runs on the first cores of
//! the grid, the first cores taking one more ([`Split::new`]); the multicast senders taking fewer
//! ([`Split::sender_light`]); or groups of cores each computing a slice of a conv's output
//! channels ([`Split::sliced`]).

use serde::{Deserialize, Serialize};

use crate::device::{Core, CoreRange, Grid};

/// At most this many multicast senders per group of cores ([`crate::multicast`]): four unlinked
/// multicasts to a full grid (24.6 B/cycle each) already pass the 64 B/cycle of the one link a
/// receiver takes them in on.
pub const SENDERS: u32 = 4;

/// At most this many slabs of a sender's share of the first resident (the weights) when its
/// reader reads them: it signals each slab to its writer (`LOADED` counts them), which
/// multicasts a slab while the next is read.
pub const SLABS: u32 = 4;

/// The L1 pages `[start, end)` of `n` that sender `s` of `senders` reads and multicasts, as
/// `conv2d/weights_share.cpp.tera` computes them.
pub fn share(n: u32, senders: u32, s: u32) -> (u32, u32) {
    (s * n / senders, (s + 1) * n / senders)
}

/// Senders of a group of `cores` cores whose first resident has `pages` L1 pages:
/// `min(SENDERS, cores, pages / SLABS)`, at least one: every sender's share has [`SLABS`]
/// pages, so its reads and multicasts still overlap (a share of one or two pages would be read,
/// then multicast, each multicast paying an unlinked multicast's fixed cost).
pub fn sender_count(cores: u32, pages: u32) -> u32 {
    SENDERS.min(cores).min(pages / SLABS).max(1)
}

/// The contiguous run of output blocks one core computes, for the output tiles of its slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreWork {
    pub core: Core,
    pub start: u32,
    pub count: u32,
    /// The output-channel slice the core computes ([`Split::slices`]); 0 when unsliced.
    #[serde(default)]
    pub slice: u32,
}

/// Output blocks (32 pixels) split over the cores of the grid; a conv's split may also slice
/// its output channels (`Split::sliced`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub blocks: u32,
    pub ranges: Vec<CoreRange>,
    pub work: Vec<CoreWork>,
    /// The cores of each output-channel slice as rectangles, slice `s` of
    /// [`super::ConvPlan::slices`] computing output tiles `s · slice_tiles ..` of every block; its
    /// cores follow each other in `work`, the first its weights' multicast sender. Empty: one
    /// slice, all of `ranges`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<Vec<CoreRange>>,
}

/// `total` over `n` shares, the first `total % n` taking one more.
fn even(total: u32, n: u32, i: u32) -> u32 {
    total / n + u32::from(i < total % n)
}

/// Blocks per core of `blocks` over `cores` cores where the multicast senders of a group whose
/// weights have `pages` L1 pages ([`crate::multicast::senders_of`]: the first core of each of
/// [`sender_count`] equal runs) take together the fewest that keep every other core at or
/// below the most a core takes in an even split, shared evenly between them; the others share
/// the rest, the first of them taking one more.
fn sender_light_counts(blocks: u32, cores: u32, pages: u32) -> Vec<u32> {
    if cores < 2 {
        return vec![blocks; cores as usize];
    }
    let light = sender_count(cores, pages);
    let most = blocks.div_ceil(cores);
    let senders = blocks.saturating_sub((cores - light) * most);
    let rest = blocks - senders;
    let (mut sender, mut other) = (0, 0);
    (0..cores)
        .map(|i| {
            if (0..light).any(|s| share(cores, light, s).0 == i) {
                sender += 1;
                even(senders, light, sender - 1)
            } else {
                other += 1;
                even(rest, cores - light, other - 1)
            }
        })
        .collect()
}

/// The cores `first .. first + n` of `grid` in column-major order (y fastest) as rectangles:
/// the rest of a partly taken column, the full columns, the start of a column; at most three.
fn column_run(grid: Grid, first: u32, n: u32) -> Vec<CoreRange> {
    let column = |x: u32, y0: u32, y1: u32| CoreRange {
        start: Core { x, y: y0 },
        end: Core { x, y: y1 },
    };
    let mut rects = Vec::new();
    let (mut at, end) = (first, first + n);
    if at % grid.y != 0 && at < end {
        let stop = end.min((at / grid.y + 1) * grid.y);
        rects.push(column(at / grid.y, at % grid.y, (stop - 1) % grid.y));
        at = stop;
    }
    let full = (end - at) / grid.y;
    if full > 0 {
        rects.push(CoreRange {
            start: Core {
                x: at / grid.y,
                y: 0,
            },
            end: Core {
                x: at / grid.y + full - 1,
                y: grid.y - 1,
            },
        });
        at += full * grid.y;
    }
    if at < end {
        rects.push(column(at / grid.y, 0, end - at - 1));
    }
    rects
}

/// The same core with x and y swapped.
fn transposed(c: Core) -> Core {
    Core { x: c.y, y: c.x }
}

/// The grid with its axes swapped: its row-major order is `grid`'s column-major order.
fn transposed_grid(grid: Grid) -> Grid {
    Grid {
        x: grid.y,
        y: grid.x,
    }
}

/// Core `at` of `grid` in column-major (`by_columns`) or row-major order.
fn run_core(grid: Grid, at: u32, by_columns: bool) -> Core {
    if by_columns {
        transposed(transposed_grid(grid).core(at))
    } else {
        grid.core(at)
    }
}

/// [`column_run`], or its row-major counterpart (the same on the transposed grid).
fn run_rects(grid: Grid, first: u32, n: u32, by_columns: bool) -> Vec<CoreRange> {
    if by_columns {
        return column_run(grid, first, n);
    }
    column_run(transposed_grid(grid), first, n)
        .into_iter()
        .map(|r| CoreRange {
            start: transposed(r.start),
            end: transposed(r.end),
        })
        .collect()
}

/// The work of `slices` groups of `n` cores, each taking every block split as in
/// [`Split::sender_light`] (`pages` L1 pages of weights a slice), core `i` of group `slice` at
/// `core(slice, i)`.
fn group_work(
    blocks: u32,
    slices: u32,
    n: u32,
    pages: u32,
    core: impl Fn(u32, u32) -> Core,
) -> Vec<CoreWork> {
    let mut work = Vec::new();
    for slice in 0..slices {
        let mut start = 0;
        for (i, count) in (0..).zip(sender_light_counts(blocks, n, pages)) {
            work.push(CoreWork {
                core: core(slice, i),
                start,
                count,
                slice,
            });
            start += count;
        }
    }
    work
}

impl Split {
    /// `blocks` blocks over at most all cores of `grid`, the first `blocks % cores` cores taking one more.
    pub(crate) fn new(grid: Grid, blocks: u32) -> Split {
        let cores = grid.cores().min(blocks).max(1);
        let mut start = 0;
        let work = (0..cores)
            .map(|i| {
                let count = blocks / cores + u32::from(i < blocks % cores);
                let w = CoreWork {
                    core: grid.core(i),
                    start,
                    count,
                    slice: 0,
                };
                start += count;
                w
            })
            .collect();
        Split {
            blocks,
            ranges: grid.first_cores(cores),
            work,
            slices: Vec::new(),
        }
    }

    /// Like [`Split::new`] on the same cores, but the multicast senders, which also read the
    /// node's resident pages (`pages` L1 pages of weights) from DRAM and multicast them
    /// ([`crate::multicast`]), take the fewest blocks that keep every other core at or below
    /// the most blocks a core takes in [`Split::new`]; the others share the rest, the first of
    /// them taking one more. 150 blocks on 120 cores, one sender: the first core none, the next
    /// 31 two each (instead of the first core two and the fill).
    pub(crate) fn sender_light(grid: Grid, blocks: u32, pages: u32) -> Split {
        let even = Split::new(grid, blocks);
        let mut start = 0;
        let work = sender_light_counts(blocks, even.work.len() as u32, pages)
            .into_iter()
            .zip(&even.work)
            .map(|(count, w)| {
                let w = CoreWork { start, count, ..*w };
                start += count;
                w
            })
            .collect();
        Split { work, ..even }
    }

    /// Every block on each of `slices` groups of `⌊cores / slices⌋` cores, consecutive in
    /// row-major or column-major order (so each is at most three rectangles, one multicast
    /// each; the order whose groups take fewer), group `s` computing slice `s` of the output
    /// tiles; within a group the blocks are split as in [`Split::sender_light`] (a slice's
    /// weights having `pages` L1 pages). Where those groups need more than one rectangle each,
    /// [`Split::tiled`] groups, one rectangle each, that give no core more blocks are taken
    /// instead. `None` when a group would have no core.
    pub(crate) fn sliced(grid: Grid, blocks: u32, slices: u32, pages: u32) -> Option<Split> {
        let n = grid.cores().checked_div(slices)?.min(blocks);
        if n == 0 {
            return None;
        }
        let rects = |by_columns: bool| -> Vec<Vec<CoreRange>> {
            (0..slices)
                .map(|slice| run_rects(grid, slice * n, n, by_columns))
                .collect()
        };
        let most = |r: &[Vec<CoreRange>]| r.iter().map(Vec::len).max().unwrap_or(0);
        let by_columns = most(&rects(true)) < most(&rects(false));
        if most(&rects(by_columns)) > 1 {
            if let Some(tiled) = Split::tiled(grid, blocks, slices, pages, n) {
                return Some(tiled);
            }
        }
        let work = group_work(blocks, slices, n, pages, |slice, i| {
            run_core(grid, slice * n + i, by_columns)
        });
        Some(Split {
            blocks,
            ranges: run_rects(grid, 0, slices * n, by_columns),
            work,
            slices: rects(by_columns),
        })
    }
}

impl Split {
    /// Every block on each of `slices` groups that are equal rectangles of the grid, the
    /// largest of at most `n` cores of which `slices` fit side by side (row by row from the
    /// grid's corner), split within a group as in [`Split::sliced`]; `None` where none fits, or
    /// where they would give a core more blocks than `n` cores a group do. One multicast a
    /// group: on 11×10 four groups of 25 cores (5×5) take the 150 blocks of a 80×60 conv in at
    /// most 6 a core, as groups of 27 in rows do, whose weights go out in two rectangles each.
    fn tiled(grid: Grid, blocks: u32, slices: u32, pages: u32, n: u32) -> Option<Split> {
        let (w, h) = (1..=grid.x)
            .flat_map(|w| (1..=grid.y).map(move |h| (w, h)))
            .filter(|&(w, h)| (grid.x / w) * (grid.y / h) >= slices && w * h <= n)
            .max_by_key(|&(w, h)| (w * h, w))?;
        if blocks.div_ceil(w * h) > blocks.div_ceil(n) {
            return None;
        }
        let across = grid.x / w;
        let rect = |slice: u32| {
            let start = Core {
                x: slice % across * w,
                y: slice / across * h,
            };
            CoreRange {
                start,
                end: Core {
                    x: start.x + w - 1,
                    y: start.y + h - 1,
                },
            }
        };
        let work = group_work(blocks, slices, w * h, pages, |slice, i| {
            let origin = rect(slice).start;
            Core {
                x: origin.x + i % w,
                y: origin.y + i / w,
            }
        });
        Some(Split {
            blocks,
            ranges: (0..slices).map(rect).collect(),
            work,
            slices: (0..slices).map(|slice| vec![rect(slice)]).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_gives_the_first_cores_one_more_block() {
        let s = Split::new(Grid { x: 4, y: 2 }, 10);
        let counts: Vec<u32> = s.work.iter().map(|w| w.count).collect();
        assert_eq!(counts, vec![2, 2, 1, 1, 1, 1, 1, 1]);
        assert_eq!(s.work[2].start, 4);
        assert_eq!(s.work[7].core, Core { x: 3, y: 1 });
        assert_eq!(s.ranges.len(), 1);
    }

    #[test]
    fn sender_light_split_keeps_the_most_blocks_a_core_takes() {
        // 150 blocks on 120 cores: at most 2 a core, so the sender takes none and cores 1..=31
        // two each, the other 88 one each.
        let s = Split::sender_light(Grid::ETH_DISPATCH, 150, 1);
        let counts: Vec<u32> = s.work.iter().map(|w| w.count).collect();
        assert_eq!(counts.len(), 120);
        assert_eq!(counts[0], 0);
        assert!(counts[1..=31].iter().all(|&c| c == 2));
        assert!(counts[32..].iter().all(|&c| c == 1));
        assert_eq!((s.work[1].start, s.work[32].start), (0, 62));
        assert_eq!(counts.iter().sum::<u32>(), 150);
        // 10 blocks on 4×2: at most 2, 7 × 2 = 14 > 10 so the sender takes 0 and the others
        // 10 over 7 (three of 2, four of 1).
        let s = Split::sender_light(Grid { x: 4, y: 2 }, 10, 1);
        let counts: Vec<u32> = s.work.iter().map(|w| w.count).collect();
        assert_eq!(counts, vec![0, 2, 2, 2, 1, 1, 1, 1]);
        // Even splits stay even: 16 on 8 cores, 2 each.
        let s = Split::sender_light(Grid { x: 4, y: 2 }, 16, 1);
        assert!(s.work.iter().all(|w| w.count == 2));
        // One core takes everything.
        let s = Split::sender_light(Grid { x: 1, y: 1 }, 5, 1);
        assert_eq!((s.work.len(), s.work[0].count), (1, 5));
    }

    #[test]
    fn several_senders_are_light_at_the_start_of_each_run() {
        // 150 blocks on 120 cores, weights of 144 pages: 4 senders, the first cores of the runs
        // 0, 30, 60 and 90 (crate::multicast::senders_of); at most 2 a core, and 116 × 2 ≥ 150,
        // so the senders take none and the other 116 share 150: 34 of them two, 82 one.
        let s = Split::sender_light(Grid::ETH_DISPATCH, 150, 144);
        let counts: Vec<u32> = s.work.iter().map(|w| w.count).collect();
        for sender in [0, 30, 60, 90] {
            assert_eq!(counts[sender], 0, "core {sender}");
        }
        let others: Vec<u32> = (0..120)
            .filter(|i| i % 30 != 0)
            .map(|i| counts[i])
            .collect();
        assert_eq!(others.iter().filter(|c| **c == 2).count(), 34);
        assert_eq!(others.iter().filter(|c| **c == 1).count(), 82);
        assert!(others[..34].iter().all(|c| *c == 2));
        assert_eq!(counts.iter().sum::<u32>(), 150);
        // The senders the multicast picks are those light cores.
        let cores: Vec<(Core, u32)> = s.work.iter().map(|w| (w.core, w.count)).collect();
        let senders = crate::multicast::senders_of(&cores, 144);
        assert_eq!(senders, [0, 30, 60, 90].map(|i| s.work[i].core).to_vec());
        // No slack (16 blocks on 8 cores, 2 each): the senders take their even share.
        let s = Split::sender_light(Grid { x: 4, y: 2 }, 16, 144);
        assert!(s.work.iter().all(|w| w.count == 2));
    }

    #[test]
    fn split_with_fewer_blocks_than_cores_uses_a_partial_row() {
        let s = Split::new(Grid::ETH_DISPATCH, 14);
        assert_eq!(s.work.len(), 14);
        assert_eq!(s.ranges.len(), 2);
        assert_eq!(s.ranges[1].end, Core { x: 1, y: 1 });
    }

    /// 12×10 in 4 slices: groups of 30 cores as 3 columns (one rectangle, where rows would
    /// take two), 5 blocks each of 150 with no slack for the sender. 11×10 in 4: groups of 27
    /// as at most three rectangles either way, so rows: 2 rows and 5 cores, ⌈150/27⌉ = 6 blocks
    /// at most, the sender none (26 × 6 ≥ 150); the 2 cores left over get no work.
    #[test]
    fn sliced_splits_give_each_slice_a_group_of_rectangles() {
        let s = Split::sliced(Grid::ETH_DISPATCH, 150, 4, 1).expect("4 groups of 30");
        assert_eq!(s.work.len(), 120);
        for (slice, rects) in s.slices.iter().enumerate() {
            let x = 3 * slice as u32;
            assert_eq!(
                rects,
                &vec![CoreRange {
                    start: Core { x, y: 0 },
                    end: Core { x: x + 2, y: 9 },
                }]
            );
            let group: Vec<&CoreWork> = s.work.iter().filter(|w| w.slice == slice as u32).collect();
            assert_eq!(group.len(), 30);
            assert_eq!(group[0].core, Core { x, y: 0 });
            assert!(group.iter().all(|w| w.count == 5));
            assert_eq!(group[29].start, 145);
        }
        assert_eq!(s.ranges, Grid::ETH_DISPATCH.first_cores(120));

        // 11×10 in 4: groups of 27 would each be 2 rows and 5 cores (three rectangles in row or
        // column order); 5×5 squares (2 × 2 of them in the grid's first 10 columns) take the
        // 150 blocks in at most 6 a core too (⌈150/25⌉ = ⌈150/27⌉), one rectangle each; 25 × 6
        // = 150 leaves the sender no slack. The grid's last column gets no work.
        let s = Split::sliced(Grid::TENSIX_DISPATCH, 150, 4, 1).expect("4 groups of 25");
        assert_eq!(s.work.len(), 100);
        for slice in 0..4u32 {
            let origin = Core {
                x: slice % 2 * 5,
                y: slice / 2 * 5,
            };
            let rect = CoreRange {
                start: origin,
                end: Core {
                    x: origin.x + 4,
                    y: origin.y + 4,
                },
            };
            assert_eq!(s.slices[slice as usize], vec![rect]);
            let group: Vec<&CoreWork> = s.work.iter().filter(|w| w.slice == slice).collect();
            assert_eq!(group.len(), 25);
            assert_eq!(group[0].core, origin);
            assert!(group
                .iter()
                .all(|w| (rect.start.x..=rect.end.x).contains(&w.core.x)
                    && (rect.start.y..=rect.end.y).contains(&w.core.y)));
            assert!(group.iter().all(|w| w.count == 6));
            assert_eq!(group[24].start, 144);
        }
        assert_eq!(s.ranges, (0..4).map(|i| s.slices[i][0]).collect::<Vec<_>>());
        // 11×10 in 3: 36 cores a group would take rows 0..3 and part of 3 (two rectangles);
        // 11×3 strips take ⌈150/33⌉ = 5 blocks at most, as 36 would.
        let s = Split::sliced(Grid::TENSIX_DISPATCH, 150, 3, 1).expect("3 groups of 33");
        assert_eq!(
            s.slices[2],
            vec![CoreRange {
                start: Core { x: 0, y: 6 },
                end: Core { x: 10, y: 8 },
            }]
        );
        // Where rectangles would give a core more blocks, the groups stay consecutive: 160
        // blocks on 4 × 27 cores are 6 at most, on 5×5 squares 7.
        let s = Split::sliced(Grid::TENSIX_DISPATCH, 160, 4, 1).expect("4 groups of 27");
        assert_eq!(s.work.len(), 108);
        assert_eq!(s.slices[1].len(), 3);
        // More slices than cores: no group.
        assert_eq!(Split::sliced(Grid { x: 2, y: 1 }, 10, 4, 1), None);
    }
}
