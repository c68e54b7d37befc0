//! The conv that reads the frame ([`crate::ops::frame_conv`] has its kernels): its input shape,
//! its split by image rows and its CBs.

use superpoint_graph::Node;

use tt_runtime::occupancy::{NOC_TORUS_X, NOC_TORUS_Y};

use crate::device::{Core, Format, Grid, Precision};
use crate::layout::{ActivationShape, DeviceTensor};

use super::conv::{identity_bias_exact, BIAS_CB_NAME, WEIGHTS_CB_NAME};
use super::{
    cb, cb_of, largest_divisor_within, CbKind, ConvPlan, NodePlan, OpPlan, PlanError, Split,
};

/// Output block stages of the output stream.
const STAGES: u32 = 2;

/// The CB of the output blocks' tiles the reader writes ([`plan_node`]).
pub const OUT_READER_CB_NAME: &str = "cb_out_reader";

/// The activation shape of a conv's input when it is the frame: `Some` for a frame of
/// `format` read by a one-channel 3×3 pad-1 conv, `None` for an input in another layout, and an
/// error for a frame any other conv would read (it reads only that conv's layout).
pub fn input_shape(
    node: &str,
    input: &str,
    tensor: DeviceTensor,
    format: Format,
    (in_channels, kernel, pad): (usize, usize, usize),
) -> Result<Option<ActivationShape>, PlanError> {
    let DeviceTensor::FrameRows {
        height,
        width,
        format: frame_format,
    } = tensor
    else {
        return Ok(None);
    };
    if frame_format != format {
        return Err(PlanError::FormatMismatch {
            node: node.to_string(),
            input: input.to_string(),
            input_format: frame_format,
            format,
        });
    }
    if (in_channels, kernel, pad) != (1, 3, 1) || width % 32 != 0 {
        return Err(PlanError::NotOnDevice {
            node: node.to_string(),
            input: input.to_string(),
        });
    }
    Ok(Some(ActivationShape {
        channels: 1,
        height: height as usize,
        width: width as usize,
        format,
    }))
}

/// The DST acquires of transposes a batch of the frame conv's output blocks may take: 640-wide
/// frames (20 blocks a row) get batches of 10 at 4 fp32 DST tiles, two per row instead of five.
pub const BATCH_ACQUIRES: u32 = 3;

/// The frame conv's node: split by image rows, its CBs. `cb_im2col` holds one batch of output
/// blocks' im2col tiles: the most that divide an image row's blocks within
/// [`BATCH_ACQUIRES`] DST acquires of transposes (the compute's per-batch inits and ReLU switches
/// are paid once per batch, the transposes share one init across the acquires); with bf16
/// activations at HiFi2 or above the bias is the last row of the weights' K tile, which the
/// im2col's ones multiply ([`ConvPlan::bias_row`]), else the compute copies it into DST. With an even count of blocks a row and a batch (W a multiple of
/// 64), half the blocks' output tiles go through `cb_out_reader` to the reader, which writes them
/// on its NoC while the writer writes the others' on the other: the output's pages, spread over
/// every core's L1, travel on both NoCs' links instead of on one NoC's. Which half: the odd
/// blocks of each image row, or the even ones on the cores whose writes cross fewer links so
/// ([`ConvPlan::reader_even`], [`reader_writes_even`]).
pub fn plan_node(node: &Node, precision: Precision, grid: Grid, conv: ConvPlan) -> NodePlan {
    let format = precision.format;
    let row_tiles = conv.width / 32;
    let weight_pages = conv.weight_parts * conv.k_tiles * conv.out_tiles;
    // Where the identity tile would put the bias into DST exactly, the bias is a row of K.
    let bias_row = identity_bias_exact(precision);
    let batch = largest_divisor_within(row_tiles, BATCH_ACQUIRES * precision.dst_tiles());
    let mut cbs = vec![
        cb_of(format, 0, "cb_im2col", batch, CbKind::Stream),
        cb(1, WEIGHTS_CB_NAME, weight_pages, CbKind::Resident),
        cb_of(format, 2, BIAS_CB_NAME, conv.out_tiles, CbKind::Resident),
        cb_of(format, 3, "cb_rows", 2 * row_tiles, CbKind::Stream),
        cb_of(format, 4, "cb_taps", row_tiles, CbKind::Stream),
    ];
    cbs.push(cb_of(
        format,
        16,
        "cb_out",
        STAGES * conv.group,
        CbKind::Stream,
    ));
    let split = Split::new(grid, conv.height);
    let mut reader_even = Vec::new();
    if row_tiles % 2 == 0 && batch % 2 == 0 {
        cbs.push(cb_of(
            format,
            17,
            OUT_READER_CB_NAME,
            STAGES * conv.group,
            CbKind::Stream,
        ));
        reader_even = reader_writes_even(grid, &split, row_tiles, conv.out_tiles);
    }
    NodePlan {
        name: node.name.clone(),
        inputs: node.inputs.clone(),
        output: node.name.clone(),
        precision,
        split,
        cbs,
        op: OpPlan::Conv2d(ConvPlan {
            identity_bias: false,
            bias_row,
            reader_even,
            ..conv
        }),
    }
}

/// NoC links a transfer from NoC coordinates `from` to `to` crosses on `noc`: NoC 0 along +x
/// then +y, NoC 1 along −y then −x, around tori of [`NOC_TORUS_X`] × [`NOC_TORUS_Y`] routers.
fn links(noc: u8, from: (u32, u32), to: (u32, u32)) -> u32 {
    let forward = |a: u32, b: u32, n: usize| (b + n as u32 - a) % n as u32;
    if noc == 0 {
        forward(from.0, to.0, NOC_TORUS_X) + forward(from.1, to.1, NOC_TORUS_Y)
    } else {
        forward(to.0, from.0, NOC_TORUS_X) + forward(to.1, from.1, NOC_TORUS_Y)
    }
}

/// The cores of `split` (image rows of `row_tiles` output blocks of `out_tiles` pages, the pages
/// interleaved over the grid's cores as the L1 arena places them: page p on core p mod cores, row
/// major) whose output writes cross fewer NoC links, on the emulator's placement
/// ([`Grid::nominal_noc`]), when the reader (NoC 0) writes the even blocks of each row and the
/// writer (NoC 1) the odd ones than the other way round; a tie keeps the reader on the odd ones.
/// On 640×480 and 12×10 this takes the busiest link's output bytes from 1440 KiB to 852 KiB
/// (the test below): with the same half a row on each NoC, the writes that would wrap around a
/// torus go the short way more often. The choice is made before the arena places the output:
/// where the output ends up in DRAM instead (the Float32 programs' conv1a) it weighs routes the
/// writes do not take (there, at 640×480, conv1a's busiest link still fell below its DRAM
/// banks' bound by the v2 model, but not by design).
pub fn reader_writes_even(grid: Grid, split: &Split, row_tiles: u32, out_tiles: u32) -> Vec<Core> {
    let cores = grid.cores();
    split
        .work
        .iter()
        .filter(|w| {
            let Some(from) = grid.nominal_noc(w.core) else {
                return false;
            };
            // Links crossed with the reader on the even blocks, less with it on the odd ones.
            let mut gain = 0i64;
            for y in w.start..w.start + w.count {
                for j in 0..row_tiles {
                    let (even, odd) = if j % 2 == 0 { (0, 1) } else { (1, 0) };
                    for t in 0..out_tiles {
                        let page = (y * row_tiles + j) * out_tiles + t;
                        if let Some(to) = grid.nominal_noc(grid.core(page % cores)) {
                            gain +=
                                i64::from(links(even, from, to)) - i64::from(links(odd, from, to));
                        }
                    }
                }
            }
            gain < 0
        })
        .map(|w| w.core)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, PlanParams};
    use superpoint_graph::{superpoint, Graph, Op};

    fn frame_then(op: Op) -> Graph {
        let mut graph = superpoint(64, 32).pruned(&["conv1a"]);
        if let Some(conv) = graph.nodes.iter_mut().find(|n| n.name == "conv1a") {
            conv.op = op;
        }
        graph
    }

    /// Only a one-channel 3×3 pad-1 conv reads the frame's layout; a 1×1 conv or a max-pool
    /// on it is refused by name.
    #[test]
    fn other_readers_of_the_frame_are_refused() {
        let refused = Err(PlanError::NotOnDevice {
            node: "conv1a".to_string(),
            input: superpoint_graph::superpoint::names::RESIZE.to_string(),
        });
        let one_by_one = Op::Conv2d {
            weights: "conv1a".to_string(),
            in_channels: 1,
            out_channels: 64,
            kernel: 1,
            pad: 0,
            relu: true,
        };
        let params = PlanParams::default();
        assert_eq!(plan(&frame_then(one_by_one), &params).map(|_| ()), refused);
        assert_eq!(
            plan(&frame_then(Op::MaxPool2), &params).map(|_| ()),
            refused
        );
    }

    /// Links counted by hand on the 17×12 tori: (1,2) → (3,4) is 2 + 2 along NoC 0 (as
    /// tt-runtime's occupancy test routes it) and 15 + 10 the other way round on NoC 1.
    #[test]
    fn links_go_forward_on_noc_0_and_backward_on_noc_1() {
        assert_eq!(links(0, (1, 2), (3, 4)), 4);
        assert_eq!(links(1, (1, 2), (3, 4)), 25);
        assert_eq!(links(1, (3, 4), (1, 2)), 4);
        assert_eq!(links(0, (5, 6), (5, 6)), 0);
    }

    /// A 3×1 grid (NoC x 1, 2, 3 on row 2), three image rows of two one-page blocks, pages
    /// interleaved over the three cores. Core 0 writes pages 0 (itself) and 1 (x 2): the reader on
    /// the odd block crosses 1 link, on the even one 16 (x 1 → 2 the long way round on NoC 1).
    /// Core 1 writes pages 2 (x 3) and 3 (x 1): 16 + 16 with the reader on the odd block, 1 + 1
    /// on the even one. Core 2 writes pages 4 (x 2) and 5 (itself): 1 against 16. So core 1 alone
    /// puts its reader on the even blocks.
    #[test]
    fn the_reader_takes_the_even_blocks_where_they_cross_fewer_links() {
        let grid = Grid { x: 3, y: 1 };
        let split = Split::new(grid, 3);
        assert_eq!(
            reader_writes_even(grid, &split, 2, 1),
            vec![Core { x: 1, y: 0 }]
        );
    }

    /// The frame conv's output writes at 640×480 on 12×10 (20 blocks of 2 pages a row, 4 rows a
    /// core), routed by the emulator's router (`tt_runtime::Occupancy`): with every reader on the
    /// odd blocks the busiest link carries 1440 KiB; with the readers [`reader_writes_even`]
    /// picks on the even ones, under 80 % of that.
    #[test]
    fn the_chosen_halves_unload_the_busiest_link() {
        let grid = Grid::ETH_DISPATCH;
        let split = Split::new(grid, 480);
        let busiest = |even: &[Core]| {
            let at = |core| {
                let (x, y) = grid.nominal_noc(core).expect("on the grid");
                tt_runtime::CoreCoord::new(x, y)
            };
            let mut occupancy = tt_runtime::Occupancy::default();
            for w in &split.work {
                for y in w.start..w.start + w.count {
                    for j in 0..20 {
                        for t in 0..2 {
                            let to = at(grid.core(((y * 20 + j) * 2 + t) % 120));
                            let reader = (j % 2 == 0) == even.contains(&w.core);
                            occupancy = occupancy
                                .route(u8::from(!reader), at(w.core), to, to, false, 2048)
                                .expect("routes");
                        }
                    }
                }
            }
            occupancy.busiest_link().map_or(0, |(_, bytes)| bytes)
        };
        let chosen = reader_writes_even(grid, &split, 20, 2);
        assert!(!chosen.is_empty() && chosen.len() < 120);
        let (before, after) = (busiest(&[]), busiest(&chosen));
        assert_eq!(before, 1440 * 1024);
        assert!(after * 5 < before * 4, "{after} of {before}");
    }
}
