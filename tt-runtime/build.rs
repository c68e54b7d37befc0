//! Builds the emulator (C++17, `cc`) behind `include/ttr.h` and generates the raw Rust bindings
//! of that header with `bindgen`.

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
    let emu_api = include.join("tt_emu_api");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=src/emu");

    let mut sources = Vec::new();
    collect(&manifest.join("src/emu"), &mut sources);
    sources.retain(|p| p.extension().is_some_and(|e| e == "cpp"));
    sources.sort();
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .opt_level(3)
        .files(&sources)
        .include(&include)
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
