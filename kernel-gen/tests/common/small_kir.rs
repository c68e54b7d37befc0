//! Small hand-made kernel IR: nodes, kernels and CBs on chosen core rectangles, for tests of the
//! kernel-config and dispatch-command figures and the checks that bound them.

use kernel_gen::kir::{Kernel, NodeKir};
use kernel_gen::{Arg, CbKind, CbPlan, Core, CoreArgs, CoreRange, Format, Role};

pub fn rect(x0: u32, y0: u32, x1: u32, y1: u32) -> CoreRange {
    CoreRange {
        start: Core { x: x0, y: y0 },
        end: Core { x: x1, y: y1 },
    }
}

pub fn cb(id: u32) -> CbPlan {
    CbPlan {
        id,
        name: format!("cb_{id}"),
        pages: 1,
        page_bytes: 2048,
        format: Format::Bf16,
        kind: CbKind::Stream,
        buffer: None,
    }
}

/// A kernel on `ranges` with `args[i]` runtime args on core `cores[i]`.
pub fn kernel(role: Role, ranges: Vec<CoreRange>, args: &[(Core, usize)]) -> Kernel {
    let most = args.iter().map(|(_, n)| *n).max().unwrap_or(0);
    Kernel {
        role,
        template: String::new(),
        ranges,
        compile_args: Vec::new(),
        runtime_arg_names: (0..most).map(|i| format!("a{i}")).collect(),
        runtime_args: args
            .iter()
            .map(|(core, n)| CoreArgs {
                core: *core,
                args: vec![Arg::Const(0); *n],
            })
            .collect(),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: Vec::new(),
    }
}

pub fn node(
    ranges: Vec<CoreRange>,
    cbs: Vec<CbPlan>,
    semaphores: u32,
    kernels: Vec<Kernel>,
) -> NodeKir {
    NodeKir {
        node: "n".into(),
        op: "test".into(),
        ranges,
        cbs,
        semaphores,
        blocks: Vec::new(),
        units: Vec::new(),
        senders: Vec::new(),
        stagers: Vec::new(),
        counted: None,
        kernels,
    }
}

/// 120 single-core rectangles with CB ids up to 63 (64 · 16 = 1 KiB each): commands of 35, 35,
/// 35 and 15 sub-commands, 16 + align16(16 + 35 · 12 = 436) = 448 + 35 KiB = 36304, padded to
/// 36352, three times, and 16 + align16(196) = 208 + 15 KiB = 15584, padded to 15616.
pub fn scattered() -> NodeKir {
    let ranges = (0..120)
        .map(|i| rect(i % 12, i / 12, i % 12, i / 12))
        .collect();
    node(ranges, vec![cb(63)], 0, Vec::new())
}

/// Two cores a = (0, 0) and b = (1, 0). Group {a}: the reader's 5 args, 20 B, aligned to 32. Group
/// {b}: 5 + the compute kernel's 15 = 80 B. With one CB id (16 B), b needs 96 B of the region.
pub fn two_core_config() -> NodeKir {
    let (a, b) = (Core { x: 0, y: 0 }, Core { x: 1, y: 0 });
    node(
        vec![rect(0, 0, 1, 0)],
        vec![cb(0)],
        0,
        vec![
            kernel(Role::Reader, vec![rect(0, 0, 1, 0)], &[(a, 5), (b, 5)]),
            kernel(Role::Compute, vec![rect(1, 0, 1, 0)], &[(b, 15)]),
        ],
    )
}
