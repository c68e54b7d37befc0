//! The checked-in Rust module of the default program (`program.rs`, emitted with `quote`)
//! builds the same program as the checked-in `program.json`, and embeds the same kernel texts as
//! the files next to it.

use std::path::Path;

use kernel_gen::DeviceProgram;

mod default {
    include!("../artifacts/superpoint_640x480_12x10/program.rs");
}

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/artifacts/superpoint_640x480_12x10"
);

#[test]
fn embedded_program_equals_the_json() {
    let json = std::fs::read_to_string(Path::new(DIR).join("program.json")).expect("program.json");
    let parsed: DeviceProgram = serde_json::from_str(&json).expect("program.json parses");
    assert_eq!(default::program(), parsed);
}

#[test]
fn embedded_sources_are_the_kernel_files() {
    let program = default::program();
    let named: Vec<&str> = program
        .steps
        .iter()
        .flat_map(|s| s.kernels.iter().map(|k| k.source.as_str()))
        .collect();
    assert_eq!(default::SOURCES.len(), named.len());
    for (path, text) in default::SOURCES {
        assert!(
            named.contains(path),
            "{path} is not a kernel of the program"
        );
        let file = std::fs::read_to_string(Path::new(DIR).join(path)).expect("kernel file");
        assert_eq!(&file, text, "{path}");
    }
}

#[test]
fn emitted_module_parses_and_is_deterministic() {
    let graph = superpoint_graph::superpoint(64, 32).pruned(&["convPb", "convDb"]);
    let params = kernel_gen::PlanParams::default();
    let once = kernel_gen::compile(&graph, &params).expect("compiles");
    let twice = kernel_gen::compile(&graph, &params).expect("compiles");
    let text = kernel_gen::emit::rust_module(&once).expect("emits");
    assert_eq!(text, kernel_gen::emit::rust_module(&twice).expect("emits"));
    let file = syn::parse_file(&text).expect("the printed module parses");
    assert_eq!(file.items.len(), 3, "use, program(), SOURCES");
}
