//! `SelectKeypoints{threshold, border, ..}` on the device → the Candidates layout, and the host's
//! merge of the two candidate buffers (DESIGN §2 step 5).
//!
//! The device part is scalar data-movement work over the map's tile split (`Split`; core `i`
//! owns region `i`): for every pixel inside the border it appends `(raster index, score bits)`
//! when the score is > threshold (strict, compared on the f32 bit patterns the device holds, the
//! RISC-V having no FPU), staging a tile's records in L1 and writing them after the tile (one
//! 8-byte page each, as the layout has it), then its count (`templates/select_keypoints/candidates.cpp.tera`). When the map is the output of an NMS
//! planned in the same program, the selection is fused into the NMS writer, which holds every
//! output value anyway ([`place`](crate::plan::select_keypoints::place)); otherwise (a map left by an earlier program or uploaded) it
//! is a program of its own that reads the map tiles. Fused, with a positive normal threshold
//! ([`candidate_bits`](crate::plan::select_keypoints::candidate_bits)), the NMS compute kernel hands the writer a bit tile (word (i, g): the
//! pixels of row i, columns 8g..8g+8 that are not above the threshold) and the writer reads those
//! 4 words per row instead of 32 scores, then only the candidates' scores
//! (`templates/select_keypoints/candidate_bits.cpp.tera`): the same records in the same order.
//! `max_keypoints` and the order are the host's: [`merge`].

use superpoint_graph::reference::select::order_and_cut;
use superpoint_graph::Keypoint;

use crate::kir::{
    args, cb_id, cb_plan, filled_pages, input, names, Arg, Call, CompileArg, CoreArgs, CountSource,
    Kernel, KirError, Lowering, Role, Trips,
};
use crate::layout::host::decode_candidates;
use crate::layout::tensor::{CANDIDATE_BYTES, COUNT_STRIDE, MAP_PAGE_BYTES};
use crate::layout::DeviceTensor;
use crate::plan::select_keypoints::{SelectPlan, RECORDS_PER_TILE};
use crate::plan::NodePlan;

impl Lowering for SelectPlan {
    fn op(&self) -> &'static str {
        "select_keypoints"
    }

    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError> {
        kernels(node, self)
    }
}

/// Candidate bits per word of the bit tile ([`candidate_bits`](crate::plan::select_keypoints::candidate_bits)): a word holds a sum of distinct
/// powers of two below 2^8, exact in any format the FPU reads or accumulates in.
const BITS_PER_WORD: u32 = 8;
/// L1 bytes the writer touches per record when it scans by candidate bits: the score word, then
/// the index and score stored into the staging slot.
const RECORD_L1_BYTES: u32 = 12;

/// The selection's compile-time args, after the `tiles_x` the kernel already has.
pub fn compile_args(p: &SelectPlan) -> Vec<CompileArg> {
    args(&[
        ("height", p.height),
        ("width", p.width),
        ("border", p.border),
        ("threshold_bits", p.threshold_bits),
        ("capacity", p.capacity),
        ("record_bytes", CANDIDATE_BYTES),
        ("count_slot_bytes", COUNT_STRIDE),
    ])
}

/// The runtime args of region `region`, after the kernel's own.
pub fn runtime_args(p: &SelectPlan, region: u32) -> Vec<Arg> {
    vec![
        Arg::BufferAddress(p.records.clone()),
        Arg::BufferAddress(p.counts.clone()),
        Arg::Const(region),
    ]
}

/// Their names.
pub const RUNTIME_ARG_NAMES: [&str; 3] = ["records_addr", "counts_addr", "region"];

/// Where the per-record loop of a scan by candidate bits gets its trips: region `i`'s count, one
/// trip per record, at most a tile's worth per tile.
pub fn count_source(p: &SelectPlan) -> CountSource {
    CountSource {
        buffer: p.counts.clone(),
        page_bytes: COUNT_STRIDE,
        per_trip: 1,
        per_block: RECORDS_PER_TILE,
    }
}

/// The writer's fills before the tiles of a scan by candidate bits: the threshold tile
/// (`fill_words`) and the bit weights (`zero_fill`, then one word per weight row), each pushed
/// once for the compute kernel.
pub fn bit_fills(node: &NodePlan) -> Result<Vec<Call>, KirError> {
    let (threshold, threshold_bytes) =
        cb_plan(node, "cb_threshold").map(|c| (c.id, c.page_bytes))?;
    let (weights, weights_bytes) = cb_plan(node, "cb_bit_weights").map(|c| (c.id, c.page_bytes))?;
    let mut calls = vec![Call::CbReserve {
        cb: threshold,
        pages: 1,
    }];
    calls.extend(filled_pages(threshold, 1, threshold_bytes));
    calls.extend([
        Call::CbPush {
            cb: threshold,
            pages: 1,
        },
        Call::CbReserve {
            cb: weights,
            pages: 1,
        },
    ]);
    calls.extend(filled_pages(weights, 1, weights_bytes));
    calls.extend([
        Call::L1Gather { bytes: 32 * 4 },
        Call::CbPush {
            cb: weights,
            pages: 1,
        },
    ]);
    Ok(calls)
}

/// The compile-time arg of the kernels that make or scan candidate bits (after the others).
pub fn bit_compile_args() -> Vec<CompileArg> {
    args(&[("bits_per_word", BITS_PER_WORD)])
}

/// The scalar work of a scan by candidate bits: per tile, the words of the bit tile it reads
/// (one per group of `BITS_PER_WORD` columns of each of the 32 rows); per record (a
/// [`Trips::Counted`] loop over the region's count, [`count_source`]), the score read and the
/// record staged.
pub fn bit_scan_calls() -> (Call, Call) {
    (
        Call::L1Gather {
            bytes: 32 * (32 / BITS_PER_WORD) * 4,
        },
        Call::Loop {
            trips: Trips::Counted,
            body: vec![Call::L1Gather {
                bytes: RECORD_L1_BYTES,
            }],
        },
    )
}

/// The calls a kernel makes for the candidates: `start` before the tiles, `per_tile` (the worst
/// case, every pixel of the tile a candidate) and `end` after them.
pub struct RecordCalls {
    pub start: Call,
    pub per_tile: Call,
    pub end: Vec<Call>,
}

/// The record calls of `p` with the planned CBs of `node`.
pub fn record_calls(node: &NodePlan, p: &SelectPlan) -> Result<RecordCalls, KirError> {
    let records = cb_id(node, "cb_records")?;
    let count = cb_id(node, "cb_count")?;
    Ok(RecordCalls {
        start: Call::CbReserve {
            cb: records,
            pages: 1,
        },
        per_tile: Call::DramPart {
            buffer: p.records.clone(),
            write: true,
            transfers: RECORDS_PER_TILE,
            bytes: CANDIDATE_BYTES,
            offset_step: 0,
            cb: records,
        },
        end: vec![
            Call::CbReserve {
                cb: count,
                pages: 1,
            },
            Call::DramWrite {
                buffer: p.counts.clone(),
                pages: 1,
                page_bytes: COUNT_STRIDE,
                cb: count,
            },
        ],
    })
}

/// The one data-movement kernel of a selection program of its own.
fn kernels(node: &NodePlan, p: &SelectPlan) -> Result<Vec<Kernel>, KirError> {
    let map = input(node, 0)?;
    let map_cb = cb_id(node, "cb_map")?;
    let calls = record_calls(node, p)?;
    let mut arg_names = names(&["map_addr", "tile_start", "tile_count"]);
    arg_names.extend(names(&RUNTIME_ARG_NAMES));
    let mut compile = args(&[("tiles_x", p.tiles_x)]);
    compile.extend(compile_args(p));
    let mut body = vec![
        Call::CbReserve {
            cb: map_cb,
            pages: 1,
        },
        calls.start,
        Call::Loop {
            trips: Trips::Blocks,
            body: vec![
                Call::DramRead {
                    buffer: map.clone(),
                    pages: 1,
                    page_bytes: MAP_PAGE_BYTES,
                    cb: map_cb,
                },
                Call::L1Gather {
                    bytes: MAP_PAGE_BYTES,
                },
                calls.per_tile,
            ],
        },
    ];
    body.extend(calls.end);
    let reader = Kernel {
        role: Role::Reader,
        template: "select_keypoints/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: compile,
        runtime_arg_names: arg_names,
        runtime_args: node
            .split
            .work
            .iter()
            .zip(0u32..)
            .map(|(w, region)| {
                let mut args = vec![
                    Arg::BufferAddress(map.clone()),
                    Arg::Const(w.start),
                    Arg::Const(w.count),
                ];
                args.extend(runtime_args(p, region));
                CoreArgs { core: w.core, args }
            })
            .collect(),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body,
    };
    Ok(vec![reader])
}

/// DESIGN §2 step 5 on the device's candidates: the records of every region (`records`,
/// `counts`: the two buffers of `candidates`) merged, ordered by descending score with ties by
/// ascending raster index, and cut to `max_keypoints` (−1 keeps all), each with its slot
/// (`region·capacity + record`, the row of its sampled descriptor). `None` when the buffers do
/// not hold a valid Candidates layout (see [`decode_candidates`]).
pub fn merge(
    records: &[u8],
    counts: &[u8],
    candidates: &DeviceTensor,
    max_keypoints: i64,
) -> Option<Vec<(u32, Keypoint)>> {
    let DeviceTensor::Candidates {
        height,
        width,
        regions,
        capacity,
    } = *candidates
    else {
        return None;
    };
    let mut list = decode_candidates(records, counts, regions, capacity, width, height)?;
    order_and_cut(&mut list, |(_, k)| k, max_keypoints);
    Some(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::host::encode_candidates;

    #[test]
    fn merge_orders_across_regions_and_cuts() {
        let k = |x, y, score| Keypoint { x, y, score };
        // Region 0 found (5,1) then (1,0); region 1 found a tie with (5,1) at a later raster index.
        let lists = vec![vec![k(5, 1, 0.5), k(1, 0, 0.25)], vec![k(2, 3, 0.5)]];
        let (records, counts) = encode_candidates(&lists, 1024, 10).expect("fits");
        let tensor = DeviceTensor::Candidates {
            height: 4,
            width: 10,
            regions: 2,
            capacity: 1024,
        };
        let all = merge(&records, &counts, &tensor, -1).expect("valid");
        assert_eq!(
            all,
            vec![(0, k(5, 1, 0.5)), (1024, k(2, 3, 0.5)), (1, k(1, 0, 0.25))]
        );
        let two = merge(&records, &counts, &tensor, 2).expect("valid");
        assert_eq!(two.len(), 2);
        let map = DeviceTensor::Map {
            height: 4,
            width: 10,
        };
        assert_eq!(merge(&records, &counts, &map, -1), None);
    }
}
