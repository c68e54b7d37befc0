//! Whether a convolution takes the 2×2 max-pool after it into its own step (the kernels are
//! [`crate::ops::conv_pool`]'s): the pool must be the conv's only consumer and nothing else may
//! read the conv's output. The fused step is split by units of the pool's output: with W a
//! multiple of 64 unit `u` is pooled row `r = u / (W/64)`, pooled columns `32 s ..`
//! (`s = u mod W/64`), computed from the conv's blocks `2 s, 2 s + 1` of image rows `2 r` and
//! `2 r + 1`; with W a multiple of 32 only, half of that (16 pooled columns from conv block `s`
//! of each row, `s = u mod W/32`: [`unit_blocks`]). A core's run of units
//! may start and end mid-row; its conv reader walks the span of blocks from its first unit's
//! upper left block to its last unit's lower right one ([`span`]), and its compute skips the
//! span's blocks that other cores' units compute.

use std::collections::BTreeSet;

use superpoint_graph::{Graph, Node, Op};

use crate::device::{Fidelity, Format, Grid, Limits};

use super::conv::IDENTITY_CB;
use super::split::Split;
use super::{
    cb, cbs_l1_bytes, largest_divisor_within, CbKind, ConvPlan, CoreWork, NodePlan, OpPlan,
    PlanParams,
};

/// The max-pool that `conv` may be fused with: its only consumer, with neither the conv's output
/// nor the pool's input wanted elsewhere (a graph output, kept in DRAM, outliving the program,
/// or the pool an external input).
pub(crate) fn consumer<'g>(
    graph: &'g Graph,
    conv: &Node,
    keep_in_dram: &BTreeSet<String>,
    params: &PlanParams,
) -> Option<&'g Node> {
    let mut consumers = graph.nodes.iter().filter(|n| n.inputs.contains(&conv.name));
    let pool = consumers.next()?;
    let wanted = keep_in_dram.contains(&conv.name)
        || params.outlive.contains(&conv.name)
        || graph.outputs.contains(&conv.name)
        || params.external.contains(&pool.name);
    (consumers.next().is_none() && matches!(pool.op, Op::MaxPool2) && !wanted).then_some(pool)
}

/// The conv blocks of one image row a unit of a fused step of conv `c` pools: 2 (a pooled
/// block, from 64 columns), or with [`ConvPlan::half_units`] 1 (half a pooled block, 16 pooled
/// columns from 32, which the writer writes as the half tile it is).
pub fn unit_blocks(c: &ConvPlan) -> u32 {
    if c.half_units {
        1
    } else {
        2
    }
}

/// The conv blocks a core of a fused step of conv `c` walks for its run `w` of units (the
/// module doc): the first block of its first unit's upper row and the count up to the last
/// block of its last unit's lower row (none for no units).
pub fn span(c: &ConvPlan, w: &CoreWork) -> (u32, u32) {
    let row_blocks = c.width / 32;
    let wide = unit_blocks(c);
    let per_row = (row_blocks / wide).max(1);
    let upper_left = |u: u32| 2 * (u / per_row) * row_blocks + wide * (u % per_row);
    let first = upper_left(w.start);
    match w.count.checked_sub(1) {
        Some(last) => {
            let lower_right = upper_left(w.start + last) + row_blocks + wide - 1;
            (first, lower_right + 1 - first)
        }
        None => (first, 0),
    }
}

/// The output blocks a core of `node` walks for its share `w` of the split, first and count:
/// the share itself, or a fused pool's span of conv blocks for its units ([`span`]).
pub fn walked(node: &NodePlan, w: &CoreWork) -> (u32, u32) {
    match &node.op {
        OpPlan::Conv2d(c) if c.pooled => span(c, w),
        _ => (w.start, w.count),
    }
}

/// At most this many times the conv blocks its busiest core computes alone may the busiest
/// core of the fused step compute, whose units are coarser (2 × 2 or 2 × 1 blocks): the pool's
/// own program costs more than a tenth of its conv on SuperPoint's convs (pool2 8.2 µs against
/// conv2b's 27.6 on 11×10, whose fused units give its busiest core 24 blocks for 22).
const UNIT_IMBALANCE: f64 = 1.1;

/// `conv` (planned alone) with the max-pool `pool` fused ([`ConvPlan::pooled`]), or `None` where
/// the fused kernels do not apply, the units' split would leave its busiest core more than
/// [`UNIT_IMBALANCE`] times the conv blocks of the conv's own, half units would leave a core's
/// span blocks of other cores' units (a half unit is one block of each row, so a run that
/// starts or ends mid-row has its reader build the views of as many blocks again: conv3b's
/// 5-unit rows on 110 cores, where v2 puts the fused step 0.7 µs above the two apart), or the
/// CBs would not fit in
/// `limits` beside the arena's `reserve`: the conv's output is the pool's, its group leaves half
/// of DST for the upper row's tiles, its split is the pool's output blocks' (the module doc), as
/// the conv's was its own (even with resident weights, the multicast senders lighter without,
/// each slice's group of cores all units), and its CBs trade the conv's output stream for the
/// kept row (`cb_row`), the vertical maxima of one unit (`cb_vmax`), the selection tiles, the
/// identity tile and the pooled tiles (`cb_out`, two units' tiles: the compute fills one while
/// the writer writes the other).
pub(crate) fn fuse(
    grid: Grid,
    conv: &NodePlan,
    pool: &Node,
    pool_format: Format,
    limits: &Limits,
    reserve: u32,
) -> Option<NodePlan> {
    let OpPlan::Conv2d(c) = &conv.op else {
        return None;
    };
    let precision = conv.precision;
    let row_blocks = c.width / 32;
    let applies = !c.frame_rows
        && c.fused.is_empty()
        && precision.format == Format::Bf16
        && pool_format == Format::Bf16
        && precision.fidelity >= Fidelity::HiFi2
        && precision.dst_tiles() >= 2
        && c.width % 32 == 0
        && c.height % 2 == 0;
    if !applies {
        return None;
    }
    let pages = c.resident_weight_tiles() / c.weight_page_tiles;
    let most = |s: &Split| s.work.iter().map(|w| w.count).max().unwrap_or(0);
    // The conv blocks the busiest core computes, the units' split and the fused plan.
    let units_split = |half_units: bool| {
        let pooled = ConvPlan {
            pooled: true,
            half_units,
            ..c.clone()
        };
        let wide = unit_blocks(&pooled);
        let units = conv.split.blocks / (2 * wide);
        let split = if c.slices > 1 {
            Split::sliced(grid, units, c.slices, pages)?
        } else if c.weights_in_l1 {
            Split::new(grid, units)
        } else {
            Split::sender_light(grid, units, pages)
        };
        Some((most(&split) * 2 * wide, split, pooled))
    };
    // Whether a core's span holds blocks of other cores' units.
    let skips = |split: &Split, pooled: &ConvPlan| {
        let wide = unit_blocks(pooled);
        split
            .work
            .iter()
            .any(|w| span(pooled, w).1 > 2 * wide * w.count)
    };
    let whole = (c.width % 64 == 0).then(|| units_split(false)).flatten();
    let half = units_split(true);
    // Half units where they put fewer conv blocks on the busiest core than whole units do (those
    // runs cross rows too, so the spans hold about as many other cores' blocks either way:
    // conv2b on 11×10, 22 blocks for 24), or where W is not a multiple of 64 and no span skips.
    let (busiest, split, pooled) = match (whole, half) {
        (Some(w), Some(h)) if h.0 < w.0 => h,
        (Some(w), _) => w,
        (None, Some(h)) if !skips(&h.1, &h.2) => h,
        _ => return None,
    };
    if f64::from(busiest) > UNIT_IMBALANCE * f64::from(most(&conv.split)) {
        return None;
    }
    let wide = unit_blocks(&pooled);
    let group = largest_divisor_within(c.slice_tiles(), precision.dst_tiles() / 2);
    let slice_tiles = c.slice_tiles();
    let mut cbs: Vec<_> = conv
        .cbs
        .iter()
        .filter(|b| b.name != "cb_out" && b.name != "cb_identity")
        .cloned()
        .collect();
    cbs.extend([
        cb(5, "cb_row", row_blocks * slice_tiles, CbKind::Stream),
        cb(6, "cb_select", 4, CbKind::Resident),
        cb(7, "cb_vmax", wide * slice_tiles, CbKind::Stream),
        cb(IDENTITY_CB, "cb_identity", 1, CbKind::Resident),
        cb(16, "cb_out", 2 * slice_tiles, CbKind::Stream),
    ]);
    if cbs_l1_bytes(&cbs, limits.l1_alignment) + u64::from(reserve) > u64::from(limits.l1_usable())
    {
        return None;
    }
    Some(NodePlan {
        output: pool.name.clone(),
        split,
        cbs,
        op: OpPlan::Conv2d(ConvPlan {
            group,
            identity_bias: true,
            ..pooled
        }),
        ..conv.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Grid;
    use crate::plan::plan;
    use superpoint_graph::superpoint;

    /// (step name, output, pooled) of every conv step, and the pool steps, of SuperPoint at
    /// 640×480 on `grid`.
    fn steps(grid: Grid) -> Vec<(String, String, bool)> {
        let params = PlanParams {
            grid,
            ..PlanParams::default()
        };
        let planned = plan(&superpoint(640, 480), &params).expect("plans");
        planned
            .nodes
            .iter()
            .filter_map(|n| match &n.op {
                OpPlan::Conv2d(c) => Some((n.name.clone(), n.output.clone(), c.pooled)),
                OpPlan::MaxPool2(_) => Some((n.name.clone(), n.output.clone(), false)),
                _ => None,
            })
            .collect()
    }

    fn step(steps: &[(String, String, bool)], name: &str) -> Option<(String, bool)> {
        steps
            .iter()
            .find(|s| s.0 == name)
            .map(|s| (s.1.clone(), s.2))
    }

    /// On both grids conv1b and conv2b take their pools (W 640 and 320, multiples of 64). conv3b
    /// (W 160) takes pool3 in half units on 12×10, in two output-channel slices (300 units over
    /// 60 cores: a pooled row a core, 10 blocks for the 10 of its own sliced split; unsliced, 3
    /// units on the busiest core would be 6 blocks for 5), and not on 11×10, whose runs of 5 or
    /// 6 units cross pooled rows. The convs followed by a conv take none (and each step's output
    /// is its first conv's: the fused `convPa+convDa` writes convPa's, and convDa's).
    #[test]
    fn pools_fuse_where_the_units_split_evenly() {
        for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
            let steps = steps(grid);
            assert_eq!(step(&steps, "conv1b"), Some(("pool1".into(), true)));
            assert_eq!(step(&steps, "conv2b"), Some(("pool2".into(), true)));
            assert_eq!(step(&steps, "conv1a"), Some(("conv1a".into(), false)));
            assert_eq!(step(&steps, "pool1"), None);
            assert_eq!(step(&steps, "pool2"), None);
            assert!(steps
                .iter()
                .filter(|s| !s.2)
                .all(|s| s.0.split('+').next() == Some(s.1.as_str())));
        }
        let on_12x10 = steps(Grid::ETH_DISPATCH);
        assert_eq!(step(&on_12x10, "conv3b"), Some(("pool3".into(), true)));
        assert_eq!(step(&on_12x10, "pool3"), None);
        let on_11x10 = steps(Grid::TENSIX_DISPATCH);
        assert_eq!(step(&on_11x10, "conv3b"), Some(("conv3b".into(), false)));
        assert_eq!(step(&on_11x10, "pool3"), Some(("pool3".into(), false)));
    }

    /// conv2b's 600 pooled blocks on 110 cores give the busiest core 6 (24 conv blocks, where the
    /// conv alone has 22); its 1200 half units give it 11 (22 blocks), so on 11×10 its units are
    /// half pooled blocks; on 12×10 (5 pooled blocks, 20 conv blocks a core either way) and for
    /// conv1b on both grids they stay whole.
    #[test]
    fn half_units_where_they_balance_better() {
        let half_units = |grid, conv: &str| {
            let params = PlanParams {
                grid,
                ..PlanParams::default()
            };
            let planned = plan(&superpoint(640, 480), &params).expect("plans");
            planned.nodes.iter().find(|n| n.name == conv).map(|n| {
                let OpPlan::Conv2d(c) = &n.op else {
                    panic!("{conv} is a conv");
                };
                let most = n.split.work.iter().map(|w| w.count).max().unwrap_or(0);
                (c.half_units, most * 2 * unit_blocks(c))
            })
        };
        assert_eq!(
            half_units(Grid::TENSIX_DISPATCH, "conv2b"),
            Some((true, 22))
        );
        assert_eq!(half_units(Grid::ETH_DISPATCH, "conv2b"), Some((false, 20)));
        assert_eq!(
            half_units(Grid::TENSIX_DISPATCH, "conv1b"),
            Some((false, 88))
        );
        assert_eq!(half_units(Grid::ETH_DISPATCH, "conv1b"), Some((false, 80)));
    }

    /// conv1b's fused step on 11×10 (the shipped plan): 2400 pooled blocks over 110 cores, the first 90 taking 22
    /// and the others 21 (its weights resident: an even split). Core 1's units 22..=43 are
    /// pooled rows 2 (columns 2..=9), 3 (all ten) and 4 (columns 0..=3): from block
    /// 2·2·20 + 2·2 = 84 (row 4, column 4) to block 2·4·20 + 2·3 + 20 + 1 = 187 (row 9, column
    /// 7), 104 blocks, of which its units compute 88: the 4 of row 5 before column 4 and the
    /// 12 of row 8 from column 8 are its neighbours'.
    #[test]
    fn a_run_that_starts_and_ends_mid_row_spans_its_neighbours_blocks() {
        let variant = crate::variants::main_program(640, 480, None, Grid::TENSIX_DISPATCH);
        let planned = crate::staging::plan(&variant.graph, &variant.params).expect("plans");
        let node = planned
            .nodes
            .iter()
            .find(|n| n.name == "conv1b")
            .expect("conv1b");
        let OpPlan::Conv2d(c) = &node.op else {
            panic!("conv1b is a conv");
        };
        let counts: Vec<u32> = node.split.work.iter().map(|w| w.count).collect();
        assert_eq!(counts.len(), 110);
        assert!(counts[..90].iter().all(|n| *n == 22) && counts[90..].iter().all(|n| *n == 21));
        assert_eq!(
            (node.split.work[1].start, node.split.work[1].count),
            (22, 22)
        );
        assert_eq!(span(c, &node.split.work[1]), (84, 104));
        // The first core starts a row and ends one unit into row 4: 0 ..= 2·2·20 + 2 + 20 + 1.
        assert_eq!(span(c, &node.split.work[0]), (0, 104));
        assert_eq!(
            span(
                c,
                &CoreWork {
                    count: 0,
                    ..node.split.work[1]
                }
            ),
            (84, 0)
        );
    }

    /// The conv's output stays a buffer (and the pool a program) when something else reads it:
    /// kept in DRAM, a graph output, or read after the program.
    #[test]
    fn a_conv_output_read_elsewhere_is_not_fused() {
        let graph = superpoint(640, 480);
        let unfused = |params: PlanParams| {
            let planned = plan(&graph, &params).expect("plans");
            planned.nodes.iter().any(|n| n.name == "pool1")
                && planned.buffers.iter().any(|b| b.name == "conv1b")
        };
        assert!(unfused(PlanParams {
            keep_in_dram: BTreeSet::from(["conv1b".to_string()]),
            ..PlanParams::default()
        }));
        assert!(unfused(PlanParams {
            outlive: BTreeSet::from(["conv1b".to_string()]),
            ..PlanParams::default()
        }));
        let mut with_output = graph.clone();
        with_output.outputs.push("conv1b".into());
        let planned = plan(&with_output, &PlanParams::default()).expect("plans");
        assert!(planned.nodes.iter().any(|n| n.name == "pool1"));
        // LoFi would round the activations the selection matmuls pass through.
        let lofi = PlanParams {
            precision: crate::device::Precision {
                fidelity: Fidelity::LoFi,
                ..crate::device::Precision::PORT
            },
            ..PlanParams::default()
        };
        assert!(unfused(lofi));
    }
}
