//! Builds one implementation of `include/ttr.h` and generates the raw Rust bindings of that header
//! with `bindgen`. By default the implementation is the emulator (`src/emu`, C++17); with the `metal`
//! feature it is the tt-metal backend (`src/metal`, C++20, linked against `$TT_METAL_HOME/build/lib`).
//! Exactly one of the two is compiled, so the crate links one set of `ttr_*` symbols; both include
//! the rules they share from `src/common`.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// FNV-1a over the stand-in kernel headers: part of every kernel's cache key.
fn headers_hash(root: &Path) -> String {
    let mut files = Vec::new();
    collect(root, &mut files);
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        let name = f
            .strip_prefix(root)
            .unwrap_or(&f)
            .to_string_lossy()
            .into_owned();
        let body = fs::read(&f).unwrap_or_default();
        for b in name.as_bytes().iter().chain(body.iter()) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

fn main() {
    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let include = manifest.join("include");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=src/emu");
    println!("cargo:rerun-if-changed=src/metal");
    println!("cargo:rerun-if-changed=src/common");

    if env::var_os("CARGO_FEATURE_METAL").is_some() {
        build_metal(&manifest, &include);
    } else {
        build_emulator(&manifest, &include);
    }
    generate_bindings(&include);
}

/// The emulator behind `ttr.h` (the default).
fn build_emulator(manifest: &Path, include: &Path) {
    let emu_api = include.join("tt_emu_api");
    let mut sources = Vec::new();
    collect(&manifest.join("src/emu"), &mut sources);
    sources.retain(|p| p.extension().is_some_and(|e| e == "cpp"));
    sources.sort();
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .opt_level(3)
        .files(&sources)
        .include(include)
        .define(
            "TTR_EMU_INCLUDE_DIR",
            format!("\"{}\"", emu_api.display()).as_str(),
        )
        .define(
            "TTR_EMU_HEADERS_HASH",
            format!("\"{}\"", headers_hash(&emu_api)).as_str(),
        )
        .flag("-fno-strict-aliasing")
        .warnings(true)
        .extra_warnings(true)
        .compile("ttr_emu");
    println!("cargo:rustc-link-lib=dl");
}

/// Stops the build with a message instead of a panic backtrace.
fn fail(lines: &[String]) -> ! {
    for line in lines {
        println!("cargo:warning={line}");
        eprintln!("error: {line}");
    }
    std::process::exit(1);
}

/// Directories under `root` (at most `depth` levels down) named `include`, sorted.
fn include_dirs_below(root: &Path, depth: u32, out: &mut Vec<PathBuf>) {
    if depth == 0 {
        return;
    }
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        if dir.file_name().is_some_and(|n| n == "include") {
            out.push(dir);
        } else {
            include_dirs_below(&dir, depth - 1, out);
        }
    }
}

/// The tt-metal backend behind `ttr.h` (feature `metal`): C++20 against the host API headers of the
/// tt-metal tree at `$TT_METAL_HOME`, linked against its `build/lib`.
fn build_metal(manifest: &Path, include: &Path) {
    for var in [
        "TT_METAL_HOME",
        "TT_METAL_LIB_DIR",
        "TTR_METAL_INCLUDE_DIRS",
        "TTR_METAL_CXXFLAGS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let Some(home) = env::var_os("TT_METAL_HOME").filter(|h| !h.is_empty()) else {
        fail(&[
            "the `metal` feature builds tt-runtime on the tt-metal host API and needs TT_METAL_HOME".into(),
            "set TT_METAL_HOME to a tt-metal checkout at 8b98410e730 that has been built (build/lib/libtt_metal.so),"
                .into(),
            "or build without `--features metal` to get the emulator; see tt-runtime/README.md".into(),
        ]);
    };
    let home = PathBuf::from(home);
    let api = home.join("tt_metal/api");
    if !api.join("tt-metalium/host_api.hpp").is_file() {
        fail(&[format!(
            "TT_METAL_HOME={} does not look like a tt-metal tree: tt_metal/api/tt-metalium/host_api.hpp is missing",
            home.display()
        )]);
    }
    let lib_dir = env::var_os("TT_METAL_LIB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join("build/lib"));
    if !lib_dir.join("libtt_metal.so").is_file() {
        fail(&[
            format!("{} has no libtt_metal.so", lib_dir.display()),
            "build tt-metal first (./build_metal.sh in TT_METAL_HOME), or point TT_METAL_LIB_DIR at its lib directory"
                .into(),
        ]);
    }

    // Host API include roots of a built tree, then the header-only dependencies tt-metal fetched
    // with CPM (fmt, magic_enum, nlohmann_json, reflect, boost, spdlog, tt-logger, ...).
    let mut dirs: Vec<PathBuf> = [
        "tt_metal/api",
        "tt_metal/hostdevcommon/api",
        "tt_metal/third_party/umd/device/api",
        "tt_metal/third_party/tracy/public",
        "tt_metal/include",
        "tt_stl",
        "tt_metal",
        "build/include",
    ]
    .iter()
    .map(|d| home.join(d))
    .filter(|d| d.is_dir())
    .collect();
    let cpm = home.join(".cpmcache");
    include_dirs_below(&cpm, 4, &mut dirs);
    if let Ok(reflect) = fs::read_dir(cpm.join("reflect")) {
        let mut r: Vec<PathBuf> = reflect
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        r.sort();
        dirs.extend(r);
    }
    include_dirs_below(&home.join("build/_deps"), 3, &mut dirs);
    if let Some(extra) = env::var_os("TTR_METAL_INCLUDE_DIRS") {
        dirs.extend(env::split_paths(&extra));
    }

    let mut sources = Vec::new();
    collect(&manifest.join("src/metal"), &mut sources);
    sources.retain(|p| p.extension().is_some_and(|e| e == "cpp"));
    sources.sort();
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++20")
        .opt_level(2)
        .files(&sources)
        .include(include)
        .includes(&dirs)
        // tt-metal links fmt header-only, and builds spdlog with SPDLOG_FMT_EXTERNAL_HO (spdlog on
        // that fmt, not its bundled copy); its headers expect the same here.
        .define("FMT_HEADER_ONLY", None)
        .define("SPDLOG_FMT_EXTERNAL", None)
        .flag_if_supported("-Wno-deprecated-declarations")
        .warnings(true);
    if let Ok(flags) = env::var("TTR_METAL_CXXFLAGS") {
        for flag in flags.split_whitespace() {
            build.flag(flag);
        }
    }
    build.compile("ttr_metal");

    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=tt_metal");
    // Lets this crate's own tests and examples find the libraries; dependents set LD_LIBRARY_PATH.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display());
}

/// Raw bindings of `ttr.h`, the same for both implementations.
fn generate_bindings(include: &Path) {
    let bindings = bindgen::Builder::default()
        .header(include.join("ttr.h").to_string_lossy())
        .allowlist_function("ttr_.*")
        .allowlist_type("ttr_.*")
        .allowlist_var("TTR_.*")
        .derive_default(true)
        .layout_tests(false)
        .generate()
        .expect("bindgen could not parse include/ttr.h (is libclang-dev installed?)");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    bindings
        .write_to_file(out.join("ttr_sys.rs"))
        .expect("cannot write the generated bindings");
}
