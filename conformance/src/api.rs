//! The API conformance check: parse the stand-in headers and their real counterparts with libclang
//! and require every declaration the stand-in offers to kernels to exist in the real headers with
//! the same kind, qualified name and signature ([`crate::decls`]).
//!
//! Each kernel kind is checked on its own: the stand-in headers under `api/compute/` against the
//! real compute headers compiled inside the TRISC firmware wrapper (unpack, math and pack, whose
//! union is the compute API), every other stand-in header against the real data-movement headers
//! compiled inside the BRISC wrapper. Declarations in `ttr_emu` (the emulator's own plumbing) and
//! names starting with `ttr_`/`TTR_` are the emulator's, not offered to kernels, and are skipped.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use clang::{Clang, Index, Unsaved};

use crate::decls::{self, Decl, Kind};
use crate::jit::{Build, Jit, Processor};
use crate::{paths, Error};

/// The two kernel kinds, each with its own headers and processors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum KernelKind {
    DataMovement,
    Compute,
}

impl KernelKind {
    fn processors(self) -> &'static [Processor] {
        match self {
            KernelKind::DataMovement => &[Processor::Brisc],
            KernelKind::Compute => &Processor::COMPUTE,
        }
    }
    fn label(self) -> &'static str {
        match self {
            KernelKind::DataMovement => "data-movement",
            KernelKind::Compute => "compute",
        }
    }
}

/// A stand-in declaration (or header) the real headers do not have as written.
#[derive(Debug)]
pub struct Difference {
    pub kernel_kind: KernelKind,
    pub kind: &'static str,
    pub name: String,
    pub file: String,
    pub line: u32,
    pub detail: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} `{}` ({}:{}, {} kernels): {}",
            self.kind,
            self.name,
            self.file,
            self.line,
            self.kernel_kind.label(),
            self.detail
        )
    }
}

/// What the check found.
#[derive(Debug, Default)]
pub struct Report {
    /// Distinct stand-in declarations offered to kernels (a name offered to both kernel kinds counts once).
    pub symbols: usize,
    /// Of those, how many match the real headers for every kernel kind they are offered to.
    pub verified: usize,
    /// Stand-in public headers.
    pub headers: usize,
    pub differences: Vec<Difference>,
}

/// Runs the check of the stand-in headers under `stand_in` (the emulator's are
/// [`paths::stand_in_headers`]) against the real tree at `root` (the parent of `tt_metal/`).
pub fn check(root: &Path, stand_in: &Path) -> Result<Report, Error> {
    let clang = Clang::new().map_err(Error::Libclang)?;
    let index = Index::new(&clang, false, false);
    let jit = Jit::new(root.to_path_buf(), paths::harness());
    let headers = public_headers(stand_in)?;

    let mut report = Report {
        headers: headers.len(),
        ..Report::default()
    };
    let mut status: BTreeMap<(Kind, String, String), bool> = BTreeMap::new();
    for kernel_kind in [KernelKind::DataMovement, KernelKind::Compute] {
        let own: Vec<&PathBuf> = headers
            .iter()
            .filter(|(_, kind)| *kind == kernel_kind)
            .map(|(rel, _)| rel)
            .collect();
        let mut real_includes = Vec::new();
        for rel in &own {
            let real = root.join("tt_metal/hw/inc").join(rel);
            if real.is_file() {
                real_includes.push(rel.to_path_buf());
            } else {
                report.differences.push(Difference {
                    kernel_kind,
                    kind: "header",
                    name: rel.display().to_string(),
                    file: display(&stand_in.join(rel)),
                    line: 1,
                    detail: format!("tt-metal 0.78.0 has no tt_metal/hw/inc/{}", rel.display()),
                });
            }
        }
        let offered = stand_in_decls(&index, stand_in, &own)?;
        let real = real_decls(&index, &jit, root, kernel_kind, &real_includes)?;
        for decl in &offered {
            let key = (decl.kind, decl.name.clone(), decl.signature.clone());
            let matched = real.iter().any(|r| matches(decl, r));
            let entry = status.entry(key).or_insert(true);
            *entry &= matched;
            if !matched {
                report
                    .differences
                    .push(difference(kernel_kind, decl, &real));
            }
        }
    }
    report.symbols = status.len();
    report.verified = status.values().filter(|ok| **ok).count();
    Ok(report)
}

/// The stand-in headers a kernel may include (all but the emulator's own `ttr_emu/`), relative to
/// the stand-in root, with the kernel kind they serve.
fn public_headers(stand_in: &Path) -> Result<Vec<(PathBuf, KernelKind)>, Error> {
    let mut headers = Vec::new();
    for path in paths::files_under(stand_in, ".h")? {
        let Ok(rel) = path.strip_prefix(stand_in) else {
            continue;
        };
        if rel.starts_with("ttr_emu") {
            continue;
        }
        let kind = if rel.starts_with("api/compute") {
            KernelKind::Compute
        } else {
            KernelKind::DataMovement
        };
        headers.push((rel.to_path_buf(), kind));
    }
    Ok(headers)
}

fn hidden(name: &str) -> bool {
    name.starts_with("ttr_") || name.starts_with("TTR_")
}

fn includes_of(headers: &[impl AsRef<Path>]) -> String {
    headers
        .iter()
        .map(|rel| format!("#include \"{}\"\n", rel.as_ref().display()))
        .collect()
}

fn stand_in_decls(
    index: &Index,
    stand_in: &Path,
    headers: &[&PathBuf],
) -> Result<Vec<Decl>, Error> {
    let source = stand_in.join("__conformance_all.cpp");
    let contents = includes_of(headers);
    let args = ["-x", "c++", "-std=c++17", "-m32"]
        .map(String::from)
        .to_vec();
    let mut args = args;
    args.push(format!("-I{}", stand_in.display()));
    let tu = parse(index, &source, &args, &contents)?;
    let keep = |path: &Path| path.starts_with(stand_in) && path != source;
    Ok(decls::extract(&tu, &keep, &hidden))
}

fn real_decls(
    index: &Index,
    jit: &Jit,
    root: &Path,
    kernel_kind: KernelKind,
    headers: &[PathBuf],
) -> Result<Vec<Decl>, Error> {
    let kernel = paths::harness().join("__conformance_all.cpp");
    let contents = includes_of(headers);
    let tt_metal = root.join("tt_metal");
    // The JIT-generated descriptors (modelled in the harness) are part of what a kernel sees.
    let generated = paths::harness().join("chlkc_descriptors.h");
    let keep = |path: &Path| {
        path.starts_with(&tt_metal) || path == generated || path == Path::new("<command line>")
    };
    let mut all = Vec::new();
    for processor in kernel_kind.processors() {
        let build = Build {
            processor: *processor,
            kernel: &kernel,
            compile_args: &[],
            noc: 0,
        };
        let mut args = vec!["-x".to_string(), "c++".to_string()];
        args.extend(jit.args(&build));
        let wrapper = jit.wrapper(*processor);
        let tu = parse_with(index, &wrapper, &args, &kernel, &contents)?;
        all.extend(decls::extract(&tu, &keep, &hidden));
    }
    all.sort();
    all.dedup_by(|a, b| a.kind == b.kind && a.name == b.name && a.signature == b.signature);
    Ok(all)
}

fn parse<'i>(
    index: &'i Index,
    source: &Path,
    args: &[String],
    contents: &str,
) -> Result<clang::TranslationUnit<'i>, Error> {
    parse_with(index, source, args, source, contents)
}

/// Parses `source` with `virtual_file` served from memory, failing on any error diagnostic.
fn parse_with<'i>(
    index: &'i Index,
    source: &Path,
    args: &[String],
    virtual_file: &Path,
    contents: &str,
) -> Result<clang::TranslationUnit<'i>, Error> {
    let unsaved = [Unsaved::new(virtual_file, contents)];
    let tu = index
        .parser(source)
        .arguments(args)
        .unsaved(&unsaved)
        .detailed_preprocessing_record(true)
        .skip_function_bodies(true)
        .parse()
        .map_err(|error| Error::Parse {
            path: source.to_path_buf(),
            detail: error.to_string(),
        })?;
    let errors: Vec<String> = tu
        .get_diagnostics()
        .into_iter()
        .filter(|d| d.get_severity() >= clang::diagnostic::Severity::Error)
        .map(|d| d.to_string())
        .collect();
    if !errors.is_empty() {
        return Err(Error::Parse {
            path: source.to_path_buf(),
            detail: errors.join("\n"),
        });
    }
    Ok(tu)
}

/// Same kind, name and signature; an object-like macro also matches a real variable of its name
/// (the emulator defines `DST_ACCUM_MODE` and friends as macros where the JIT generates constants).
fn matches(stand_in: &Decl, real: &Decl) -> bool {
    if stand_in.name != real.name {
        return false;
    }
    if stand_in.kind == Kind::Macro
        && stand_in.signature == "object-like"
        && real.kind == Kind::Variable
    {
        return true;
    }
    stand_in.kind == real.kind && stand_in.signature == real.signature
}

fn difference(kernel_kind: KernelKind, decl: &Decl, real: &[Decl]) -> Difference {
    let candidates: Vec<String> = real
        .iter()
        .filter(|r| r.name == decl.name)
        .map(|r| {
            format!(
                "{} `{}` ({}:{})",
                r.kind.name(),
                r.signature,
                display(&r.file),
                r.line
            )
        })
        .collect();
    let detail = if candidates.is_empty() {
        format!(
            "stand-in `{}`; not declared by the real headers",
            decl.signature
        )
    } else {
        format!(
            "stand-in `{}`; real: {}",
            decl.signature,
            candidates.join("; ")
        )
    };
    Difference {
        kernel_kind,
        kind: decl.kind.name(),
        name: decl.name.clone(),
        file: display(&decl.file),
        line: decl.line,
        detail,
    }
}

/// A path relative to the workspace or to the tt-metal cache, for messages.
fn display(path: &Path) -> String {
    let workspace = paths::workspace();
    if let Ok(rel) = path.strip_prefix(&workspace) {
        let text = rel.display().to_string();
        return match text.find("tt_metal/") {
            Some(at) if text.starts_with(".cache") => text[at..].to_string(),
            _ => text,
        };
    }
    path.display().to_string()
}
