//! The checked-in Rust modules of the programs (`program.rs`, [`kernel_gen::emit`]) build the same
//! programs as the checked-in `program.json` beside them, and embed the same kernel texts as the
//! shared kernel files; each is at most 2,000 lines.

use std::path::Path;

use kernel_gen::program::KERNELS;
use kernel_gen::DeviceProgram;

const ARTIFACTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/artifacts");

/// Each checked-in program's folder and module: `program()` and `SOURCES`.
macro_rules! embedded {
    ($($module:ident: $folder:literal),* $(,)?) => {
        $(mod $module {
            include!(concat!("../artifacts/", $folder, "/program.rs"));
        })*
        const PROGRAMS: &[(&str, fn() -> DeviceProgram, &[(&str, &str)])] =
            &[$(($folder, $module::program, $module::SOURCES)),*];
    };
}

embedded! {
    main: "superpoint_640x480_12x10",
    nms1: "superpoint_640x480_12x10_nms1",
    nms2: "superpoint_640x480_12x10_nms2",
    nms3: "superpoint_640x480_12x10_nms3",
    nms4: "superpoint_640x480_12x10_nms4",
    nms5: "superpoint_640x480_12x10_nms5",
    nms6: "superpoint_640x480_12x10_nms6",
    nms7: "superpoint_640x480_12x10_nms7",
    nms8: "superpoint_640x480_12x10_nms8",
}

#[test]
fn every_program_folder_is_embedded_here() {
    let mut folders: Vec<String> = std::fs::read_dir(ARTIFACTS)
        .expect("artifacts")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f != KERNELS)
        .collect();
    folders.sort();
    let embedded: Vec<&str> = PROGRAMS.iter().map(|p| p.0).collect();
    assert_eq!(folders, embedded);
}

#[test]
fn embedded_programs_equal_the_json() {
    for (folder, program, _) in PROGRAMS {
        let dir = Path::new(ARTIFACTS).join(folder);
        let json = std::fs::read_to_string(dir.join("program.json")).expect("program.json");
        let parsed: DeviceProgram = serde_json::from_str(&json).expect("program.json parses");
        assert_eq!(program(), parsed, "{folder}");
        let lines = std::fs::read_to_string(dir.join("program.rs"))
            .expect("program.rs")
            .lines()
            .count();
        assert!(lines <= 2000, "{folder}/program.rs has {lines} lines");
    }
}

#[test]
fn embedded_sources_are_the_kernel_files() {
    for (folder, program, sources) in PROGRAMS {
        let mut named: Vec<String> = program()
            .steps
            .iter()
            .flat_map(|s| s.kernels.iter().map(|k| k.source.clone()))
            .collect();
        named.sort();
        named.dedup();
        let embedded: Vec<&str> = sources.iter().map(|(path, _)| *path).collect();
        assert_eq!(
            embedded, named,
            "{folder}: one source per distinct kernel file"
        );
        for (path, text) in *sources {
            let file = std::fs::read_to_string(Path::new(ARTIFACTS).join(KERNELS).join(path))
                .expect("kernel file");
            assert_eq!(&file, text, "{path}");
        }
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
    let public: Vec<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Fn(f) if matches!(f.vis, syn::Visibility::Public(_)) => {
                Some(f.sig.ident.to_string())
            }
            syn::Item::Const(c) if matches!(c.vis, syn::Visibility::Public(_)) => {
                Some(c.ident.to_string())
            }
            _ => None,
        })
        .collect();
    assert_eq!(public, ["program", "SOURCES"]);
}
