//! Every emitted kernel of the test graphs compiles with the host C++ compiler against the
//! emulator's stand-in kernel API headers with `-Wall -Werror`, wrapped the way the emulator's
//! JIT wraps it (its generated defines and compile-time args first). The JIT's entry-point
//! footer (`ttr_emu/entry.h`) is left out: it is not kernel code, and under `-Wall` it trips
//! `-Waddress` on its weak `kernel_main` test.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{chain, Layer};
use kernel_gen::kir::Role;
use kernel_gen::program::KernelDesc;
use kernel_gen::{compile, Compiled, Fidelity, PlanParams};

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tt-runtime/include/tt_emu_api")
}

fn wrapped(kernel: &KernelDesc, source: &str) -> String {
    let mut w = String::from("#define TTR_CT_ARGS_LIST");
    for a in &kernel.compile_args {
        w.push_str(&format!(" {}u,", a.value));
    }
    w.push_str(&format!(
        "\n#define TTR_CT_ARG_COUNT {}\n",
        kernel.compile_args.len()
    ));
    w.push_str("#define ARCH_BLACKHOLE 1\n#define KERNEL_BUILD 1\n#define NUM_DRAM_BANKS 8\n");
    match kernel.role {
        Role::Compute => {
            let fidelity = match kernel.fidelity {
                Some(Fidelity::LoFi) => 0,
                Some(Fidelity::HiFi2) => 2,
                Some(Fidelity::HiFi3) => 3,
                _ => 4,
            };
            w.push_str(&format!(
                "#define COMPILE_FOR_TRISC 1\n#define MATH_FIDELITY {fidelity}\n#define DST_ACCUM_MODE {}\n#define APPROX false\n",
                kernel.fp32_dest_acc == Some(true)
            ));
        }
        Role::Reader => w.push_str("#define COMPILE_FOR_BRISC 1\n#define NOC_INDEX 0\n"),
        Role::Writer => w.push_str("#define COMPILE_FOR_NCRISC 1\n#define NOC_INDEX 1\n"),
    }
    w.push_str("#include \"ttr_emu/prelude.h\"\n");
    w.push_str(source);
    w
}

fn compile_all(compiled: &Compiled, dir: &Path) {
    let mut files = Vec::new();
    for step in &compiled.program.steps {
        for k in &step.kernels {
            let path = dir.join(format!("{}.cpp", k.name));
            std::fs::write(&path, wrapped(k, &compiled.sources[&k.source])).expect("write");
            files.push(path);
        }
    }
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_string());
    let out = Command::new(cxx)
        .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-I"])
        .arg(include_dir())
        .args(&files)
        .output()
        .expect("run the host C++ compiler");
    assert!(
        out.status.success(),
        "kernels do not compile cleanly:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_emitted_kernel_compiles_with_wall_werror() {
    let graphs: [&[Layer]; 2] = [
        &[
            ("conv_a", 1, 3, 3, true),
            ("conv_b", 3, 5, 3, true),
            ("pool", 0, 0, 0, false),
        ],
        &[("convPa", 1, 256, 3, true), ("convPb", 256, 65, 1, false)],
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    for layers in graphs {
        let compiled = compile(&chain(64, 32, layers), &PlanParams::default()).expect("compiles");
        compile_all(&compiled, dir.path());
    }
}

#[test]
fn the_checked_in_640x480_convolutions_compile_with_wall_werror() {
    let graph = superpoint_graph::superpoint(640, 480).pruned(&["convPb", "convDb"]);
    let compiled = compile(&graph, &PlanParams::default()).expect("compiles");
    let dir = tempfile::tempdir().expect("temp dir");
    compile_all(&compiled, dir.path());
}

#[test]
fn the_640x480_softmax_fold_and_l2_normalize_compile_with_wall_werror() {
    let graph = superpoint_graph::superpoint(640, 480).pruned(&["scores", "descriptors_dense"]);
    let params = PlanParams {
        external: ["convPb", "convDb"].iter().map(|s| s.to_string()).collect(),
        ..PlanParams::default()
    };
    let compiled = compile(&graph, &params).expect("compiles");
    let dir = tempfile::tempdir().expect("temp dir");
    compile_all(&compiled, dir.path());
}

#[test]
fn the_nms_chain_kernels_compile_with_wall_werror_for_every_device_radius() {
    use superpoint_graph::names::{KEYPOINTS, NMS, SCORES};
    let dir = tempfile::tempdir().expect("temp dir");
    for radius in 1..=8 {
        let graph = superpoint_graph::superpoint_with(&superpoint_graph::SuperPointParams {
            frame_width: 640,
            frame_height: 480,
            nms_radius: radius,
            ..superpoint_graph::SuperPointParams::default()
        });
        // NMS with the selection fused, the selection alone from an NMS map, NMS alone.
        for (output, external) in [(KEYPOINTS, SCORES), (KEYPOINTS, NMS), (NMS, SCORES)] {
            let params = PlanParams {
                external: std::collections::BTreeSet::from([external.to_string()]),
                ..PlanParams::default()
            };
            let compiled = compile(&graph.pruned(&[output]), &params).expect("compiles");
            compile_all(&compiled, dir.path());
        }
    }
}

#[test]
fn sampling_kernels_compile_with_wall_werror() {
    use superpoint_graph::names;
    let graph = superpoint_graph::superpoint(64, 32).pruned(&[names::DESCRIPTORS]);
    let params = PlanParams {
        external: std::collections::BTreeSet::from([
            names::DESCRIPTORS_DENSE.to_string(),
            names::KEYPOINTS.to_string(),
        ]),
        ..PlanParams::default()
    };
    let compiled = compile(&graph, &params).expect("compiles");
    let dir = tempfile::tempdir().expect("temp dir");
    compile_all(&compiled, dir.path());
}

#[test]
fn the_whole_640x480_program_at_accurate_compiles_with_wall_werror() {
    let variant =
        kernel_gen::variants::main_program(640, 480, None, kernel_gen::Grid::ETH_DISPATCH);
    let params = PlanParams {
        precision: kernel_gen::Precision::ACCURATE,
        ..variant.params
    };
    let compiled = compile(&variant.graph, &params).expect("compiles");
    let dir = tempfile::tempdir().expect("temp dir");
    compile_all(&compiled, dir.path());
}
