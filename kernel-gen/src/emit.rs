//! The dispatch program as a Rust module, so a crate embeds a checked-in program with `include!`
//! instead of parsing JSON at start-up; and the files of a program's artifact folder.
//!
//! The module defines `program() -> DeviceProgram`, built from struct literals and the short
//! constructors of [`prelude`] (lists as static data: CB tables, compile-time args, the runtime
//! args' rules), and `SOURCES`, the kernel texts through `include_str!` of the shared kernel
//! files ([`KERNELS`], beside the program's folder), with the arg names of each kernel file
//! once. It is laid out by `Doc` (a list flat when it fits 100 columns, else as many items a
//! line as fit, as rustfmt fills lists of short items, an item too long for a line broken in
//! turn) and parsed back with `syn`, so a module that does not parse is an error here, not in the
//! embedding crate. Everything is in declaration and `BTreeMap` order, so the bytes depend on
//! nothing but the program.

use std::collections::BTreeMap;

use crate::device::{Core, CoreRange, Fidelity, Format};
use crate::kir::{CompileArg, Role};
use crate::layout::{DeviceTensor, Part};
use crate::plan::{BufferPlan, CbKind, CbPlan, Content};
use crate::program::{
    Compiled, CoreOrder, DeviceProgram, KernelDesc, ProgramError, Run, RunValue, RuntimeArg, Step,
    KERNELS,
};

/// What the emitted module imports (`use kernel_gen::emit::prelude::*`): the types and
/// constructors it names, and the variants of the buffer contents and tensor layouts, formats and
/// parts, which it writes bare.
pub mod prelude {
    pub use super::StaticValue::*;
    pub use super::{
        buffer, cb, compile_args, in_buffer, ranges, resident, runtime_args, staged, ArgNames,
    };
    pub use crate::device::Format::*;
    pub use crate::device::{Fidelity, Format, Grid};
    pub use crate::kir::Role;
    pub use crate::layout::DeviceTensor::*;
    pub use crate::layout::Part::*;
    pub use crate::layout::{DeviceTensor, Part};
    pub use crate::plan::resize::Axis;
    pub use crate::plan::Content::*;
    pub use crate::plan::{BufferPlan, CbKind, Content};
    pub use crate::program::{CoreOrder, DeviceProgram, KernelDesc, Step};
}

/// A run's value as the emitted module spells it ([`RunValue`] with static strings and
/// cores as `(x, y)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaticValue {
    Const(u32),
    Counting(u32, u32),
    Buffer(&'static str),
    NocX(u32, u32),
    NocY(u32, u32),
    NocXOf(i32),
    NocYOf(i32),
}

/// A buffer.
pub fn buffer(
    name: &str,
    pages: u32,
    page_bytes: u32,
    content: Content,
    l1_offset: Option<u32>,
) -> BufferPlan {
    BufferPlan {
        name: name.to_string(),
        pages,
        page_bytes,
        content,
        l1_offset,
        resident: false,
        staged_by: None,
    }
}

/// A CB.
pub fn cb(
    id: u32,
    name: &str,
    pages: u32,
    page_bytes: u32,
    format: Format,
    kind: CbKind,
) -> CbPlan {
    CbPlan {
        id,
        name: name.to_string(),
        pages,
        page_bytes,
        format,
        kind,
        buffer: None,
    }
}

/// `b` with a resident copy in every core's L1 (`BufferPlan::resident`).
pub fn resident(b: BufferPlan) -> BufferPlan {
    BufferPlan {
        resident: true,
        ..b
    }
}

/// `b` staged by step `by` into an arena slot (`BufferPlan::staged_by`).
pub fn staged(by: &str, b: BufferPlan) -> BufferPlan {
    BufferPlan {
        staged_by: Some(by.to_string()),
        ..b
    }
}

/// `c` living in the L1 copy of resident buffer `buffer` (`CbPlan::buffer`).
pub fn in_buffer(c: CbPlan, buffer: &str) -> CbPlan {
    CbPlan {
        buffer: Some(buffer.to_string()),
        ..c
    }
}

/// Core ranges from `(x0, y0, x1, y1)`.
pub fn ranges(list: &[(u32, u32, u32, u32)]) -> Vec<CoreRange> {
    list.iter()
        .map(|&(x0, y0, x1, y1)| CoreRange {
            start: Core { x: x0, y: y0 },
            end: Core { x: x1, y: y1 },
        })
        .collect()
}

/// The names of a kernel file's args, in order: compile-time and runtime.
#[derive(Debug, Clone, Copy)]
pub struct ArgNames {
    pub compile: &'static [&'static str],
    pub runtime: &'static [&'static str],
}

/// Compile-time args: `names` with their `values`.
pub fn compile_args(names: &[&str], values: &[u32]) -> Vec<CompileArg> {
    names
        .iter()
        .zip(values)
        .map(|(name, &value)| CompileArg {
            name: name.to_string(),
            value,
        })
        .collect()
}

/// Runtime args: `names` with their runs `(cores, value)`.
pub fn runtime_args(names: &[&str], runs: &[&[(u32, StaticValue)]]) -> Vec<RuntimeArg> {
    names
        .iter()
        .zip(runs)
        .map(|(name, runs)| RuntimeArg {
            name: name.to_string(),
            runs: runs
                .iter()
                .map(|&(cores, value)| Run {
                    cores,
                    value: match value {
                        StaticValue::Const(v) => RunValue::Const(v),
                        StaticValue::Counting(first, step) => RunValue::Counting { first, step },
                        StaticValue::Buffer(name) => RunValue::Buffer(name.to_string()),
                        StaticValue::NocX(x, y) => RunValue::NocX(Core { x, y }),
                        StaticValue::NocY(x, y) => RunValue::NocY(Core { x, y }),
                        StaticValue::NocXOf(offset) => RunValue::NocXOf(offset),
                        StaticValue::NocYOf(offset) => RunValue::NocYOf(offset),
                    },
                })
                .collect(),
        })
        .collect()
}

/// Columns of the emitted module.
const WIDTH: usize = 100;

/// A piece of the emitted module: text, or a bracketed list (`head open items close tail`) laid
/// out flat where it fits the line, else one item per line, or with `fill` as many as fit.
enum Doc {
    Text(String),
    List {
        head: String,
        open: &'static str,
        items: Vec<Doc>,
        close: &'static str,
        tail: &'static str,
        fill: bool,
    },
}

impl Doc {
    fn text(t: impl Into<String>) -> Doc {
        Doc::Text(t.into())
    }

    fn list(head: impl Into<String>, items: Vec<Doc>, fill: bool) -> Doc {
        Doc::List {
            head: head.into(),
            open: "[",
            items,
            close: "]",
            tail: "",
            fill,
        }
    }

    /// `f(before&[items])`: a call whose last argument is a slice.
    fn call(f: &str, before: &str, items: Vec<Doc>) -> Doc {
        Doc::List {
            head: format!("{f}({before}&"),
            open: "[",
            items,
            close: "]",
            tail: ")",
            fill: true,
        }
    }

    /// `name { field: value, ... }`, as many fields a line as fit.
    fn strukt(name: &str, fields: Vec<(&str, Doc)>) -> Doc {
        Doc::List {
            head: format!("{name} "),
            open: "{",
            items: fields.into_iter().map(|(f, d)| d.prefixed(f)).collect(),
            close: "}",
            tail: "",
            fill: true,
        }
    }

    /// `field: self`.
    fn prefixed(self, field: &str) -> Doc {
        match self {
            Doc::Text(t) => Doc::Text(format!("{field}: {t}")),
            Doc::List {
                head,
                open,
                items,
                close,
                tail,
                fill,
            } => Doc::List {
                head: format!("{field}: {head}"),
                open,
                items,
                close,
                tail,
                fill,
            },
        }
    }

    fn flat(&self) -> String {
        match self {
            Doc::Text(t) => t.clone(),
            Doc::List {
                head,
                open,
                items,
                close,
                tail,
                ..
            } => {
                let inner: Vec<String> = items.iter().map(Doc::flat).collect();
                let pad = if *open == "{" && !items.is_empty() {
                    " "
                } else {
                    ""
                };
                format!("{head}{open}{pad}{}{pad}{close}{tail}", inner.join(", "))
            }
        }
    }

    /// Writes the doc on lines of its own at `indent`, `suffix` after it.
    fn write(&self, indent: usize, suffix: &str, out: &mut String) {
        let flat = self.flat();
        let pad = " ".repeat(indent);
        let Doc::List {
            head,
            open,
            items,
            close,
            tail,
            fill,
        } = self
        else {
            out.push_str(&format!("{pad}{flat}{suffix}\n"));
            return;
        };
        if indent + flat.len() + suffix.len() <= WIDTH || items.is_empty() {
            out.push_str(&format!("{pad}{flat}{suffix}\n"));
            return;
        }
        out.push_str(&format!("{pad}{head}{open}\n"));
        let inner = indent + 4;
        let mut line = String::new();
        let flush = |line: &mut String, out: &mut String| {
            if !line.is_empty() {
                out.push_str(&format!("{}{line}\n", " ".repeat(inner)));
                line.clear();
            }
        };
        for item in items {
            let item_flat = item.flat();
            if !fill || inner + item_flat.len() + 1 > WIDTH {
                flush(&mut line, out);
                item.write(inner, ",", out);
                continue;
            }
            if !line.is_empty() && inner + line.len() + 1 + item_flat.len() + 1 > WIDTH {
                flush(&mut line, out);
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&item_flat);
            line.push(',');
        }
        flush(&mut line, out);
        out.push_str(&format!("{pad}{close}{tail}{suffix}\n"));
    }
}

/// A string literal.
fn lit(s: &str) -> String {
    format!("{s:?}")
}

/// `"s".into()`.
fn string(s: &str) -> Doc {
    Doc::text(format!("{}.into()", lit(s)))
}

fn option<T>(v: &Option<T>, f: impl Fn(&T) -> String) -> Doc {
    Doc::text(
        v.as_ref()
            .map_or("None".to_string(), |v| format!("Some({})", f(v))),
    )
}

fn format_of(f: Format) -> &'static str {
    match f {
        Format::Bf16 => "Bf16",
        Format::Fp32 => "Fp32",
    }
}

fn tensor(t: &DeviceTensor) -> Doc {
    let fields = |name: &str, fields: Vec<(&str, String)>| {
        Doc::strukt(
            name,
            fields.into_iter().map(|(f, v)| (f, Doc::text(v))).collect(),
        )
    };
    match *t {
        DeviceTensor::Plane { height, width } => fields(
            "Plane",
            vec![("height", height.to_string()), ("width", width.to_string())],
        ),
        DeviceTensor::Activation {
            channels,
            height,
            width,
            format,
        } => fields(
            "Activation",
            vec![
                ("channels", channels.to_string()),
                ("height", height.to_string()),
                ("width", width.to_string()),
                ("format", format_of(format).to_string()),
            ],
        ),
        DeviceTensor::PixelRows {
            channels,
            height,
            width,
            format,
        } => fields(
            "PixelRows",
            vec![
                ("channels", channels.to_string()),
                ("height", height.to_string()),
                ("width", width.to_string()),
                ("format", format_of(format).to_string()),
            ],
        ),
        DeviceTensor::FrameRows {
            height,
            width,
            format,
        } => fields(
            "FrameRows",
            vec![
                ("height", height.to_string()),
                ("width", width.to_string()),
                ("format", format_of(format).to_string()),
            ],
        ),
        DeviceTensor::Map { height, width } => fields(
            "Map",
            vec![("height", height.to_string()), ("width", width.to_string())],
        ),
        DeviceTensor::Candidates {
            height,
            width,
            regions,
            capacity,
        } => fields(
            "Candidates",
            vec![
                ("height", height.to_string()),
                ("width", width.to_string()),
                ("regions", regions.to_string()),
                ("capacity", capacity.to_string()),
            ],
        ),
        DeviceTensor::Descriptors {
            regions,
            capacity,
            dim,
        } => fields(
            "Descriptors",
            vec![
                ("regions", regions.to_string()),
                ("capacity", capacity.to_string()),
                ("dim", dim.to_string()),
            ],
        ),
    }
}

fn part(p: Part) -> Doc {
    Doc::text(match p {
        Part::Main => "Main",
        Part::Counts => "Counts",
    })
}

fn content(c: &Content) -> Doc {
    let entry = |name: &str, entry: &str| Doc::strukt(name, vec![("entry", string(entry))]);
    match c {
        Content::Input { tensor: t } => Doc::strukt("Input", vec![("tensor", tensor(t))]),
        Content::Output { tensor: t, part: p } => {
            Doc::strukt("Output", vec![("tensor", tensor(t)), ("part", part(*p))])
        }
        Content::External {
            node,
            tensor: t,
            part: p,
        } => Doc::strukt(
            "External",
            vec![
                ("node", string(node)),
                ("tensor", tensor(t)),
                ("part", part(*p)),
            ],
        ),
        Content::Scratch { node, tensor: t } => Doc::strukt(
            "Scratch",
            vec![("node", string(node)), ("tensor", tensor(t))],
        ),
        Content::ConvWeights { entry: e } => entry("ConvWeights", e),
        Content::ConvBias { entry: e } => entry("ConvBias", e),
        Content::ConvWeightsHiLo { entry: e } => entry("ConvWeightsHiLo", e),
        Content::ConvBiasFp32 { entry: e } => entry("ConvBiasFp32", e),
        Content::ResizeWeights {
            axis,
            input,
            output,
        } => Doc::strukt(
            "ResizeWeights",
            vec![
                ("axis", Doc::text(format!("Axis::{axis:?}"))),
                ("input", Doc::text(input.to_string())),
                ("output", Doc::text(output.to_string())),
            ],
        ),
        Content::ResizeBands {
            in_width,
            in_height,
            width,
            height,
            unit_rows,
            bytes,
        } => Doc::strukt(
            "ResizeBands",
            [
                ("in_width", in_width),
                ("in_height", in_height),
                ("width", width),
                ("height", height),
                ("unit_rows", unit_rows),
                ("bytes", bytes),
            ]
            .into_iter()
            .map(|(f, v)| (f, Doc::text(v.to_string())))
            .collect(),
        ),
        Content::FrameLevels { format } => Doc::strukt(
            "FrameLevels",
            vec![("format", Doc::text(format_of(*format).to_string()))],
        ),
    }
}

fn buffer_doc(b: &BufferPlan) -> Doc {
    let wrapped = b.resident || b.staged_by.is_some();
    Doc::List {
        head: match &b.staged_by {
            Some(by) => format!("staged({}, buffer", lit(by)),
            None if b.resident => "resident(buffer".to_string(),
            None => "buffer".to_string(),
        },
        open: "(",
        items: vec![
            Doc::text(lit(&b.name)),
            Doc::text(b.pages.to_string()),
            Doc::text(b.page_bytes.to_string()),
            content(&b.content),
            option(&b.l1_offset, u32::to_string),
        ],
        close: ")",
        tail: if wrapped { ")" } else { "" },
        fill: true,
    }
}

fn ranges_doc(list: &[CoreRange]) -> Doc {
    Doc::call(
        "ranges",
        "",
        list.iter()
            .map(|r| {
                Doc::text(format!(
                    "({}, {}, {}, {})",
                    r.start.x, r.start.y, r.end.x, r.end.y
                ))
            })
            .collect(),
    )
}

fn cb_doc(c: &CbPlan) -> Doc {
    let kind = match c.kind {
        CbKind::Stream => "CbKind::Stream",
        CbKind::Resident => "CbKind::Resident",
        CbKind::Scratch => "CbKind::Scratch",
    };
    let cb = format!(
        "cb({}, {}, {}, {}, {}, {kind})",
        c.id,
        lit(&c.name),
        c.pages,
        c.page_bytes,
        format_of(c.format)
    );
    Doc::text(match &c.buffer {
        Some(buffer) => format!("in_buffer({cb}, {})", lit(buffer)),
        None => cb,
    })
}

fn static_value(v: &RunValue) -> String {
    match v {
        RunValue::Const(c) => format!("Const({c})"),
        RunValue::Counting { first, step } => format!("Counting({first}, {step})"),
        RunValue::Buffer(name) => format!("Buffer({})", lit(name)),
        RunValue::NocX(c) => format!("NocX({}, {})", c.x, c.y),
        RunValue::NocY(c) => format!("NocY({}, {})", c.x, c.y),
        RunValue::NocXOf(o) => format!("NocXOf({o})"),
        RunValue::NocYOf(o) => format!("NocYOf({o})"),
    }
}

fn runs_doc(a: &RuntimeArg) -> Doc {
    Doc::list(
        "&",
        a.runs
            .iter()
            .map(|r| Doc::text(format!("({}, {})", r.cores, static_value(&r.value))))
            .collect(),
        true,
    )
}

/// The Rust name of the [`ArgNames`] constant of kernel file `file`.
fn names_const(file: &str) -> String {
    file.trim_end_matches(".cpp")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A kernel file's arg names: compile-time, runtime.
type Names = (Vec<String>, Vec<String>);

fn names_of(k: &KernelDesc) -> Names {
    (
        k.compile_args.iter().map(|a| a.name.clone()).collect(),
        k.runtime_args.iter().map(|a| a.name.clone()).collect(),
    )
}

fn kernel_doc(k: &KernelDesc) -> Doc {
    let role = match k.role {
        Role::Reader => "Role::Reader",
        Role::Compute => "Role::Compute",
        Role::Writer => "Role::Writer",
    };
    let fidelity = |f: &Fidelity| format!("Fidelity::{f:?}");
    let order = match k.core_order {
        CoreOrder::RowMajor => "CoreOrder::RowMajor",
        CoreOrder::ColumnMajor => "CoreOrder::ColumnMajor",
    };
    let names = names_const(&k.source);
    Doc::strukt(
        "KernelDesc",
        vec![
            ("name", string(&k.name)),
            ("role", Doc::text(role)),
            ("source", string(&k.source)),
            ("ranges", ranges_doc(&k.ranges)),
            (
                "compile_args",
                Doc::call(
                    "compile_args",
                    &format!("{names}.compile, "),
                    k.compile_args
                        .iter()
                        .map(|a| Doc::text(a.value.to_string()))
                        .collect(),
                ),
            ),
            ("fidelity", option(&k.fidelity, fidelity)),
            ("fp32_dest_acc", option(&k.fp32_dest_acc, bool::to_string)),
            (
                "unpack_to_dest_fp32",
                Doc::list(
                    "vec!",
                    k.unpack_to_dest_fp32
                        .iter()
                        .map(|c| Doc::text(c.to_string()))
                        .collect(),
                    true,
                ),
            ),
            ("noc", option(&k.noc, u32::to_string)),
            ("core_order", Doc::text(order)),
            (
                "runtime_args",
                Doc::call(
                    "runtime_args",
                    &format!("{names}.runtime, "),
                    k.runtime_args.iter().map(runs_doc).collect(),
                ),
            ),
        ],
    )
}

/// The [`ArgNames`] constant of each kernel file the program names.
fn names_items(p: &DeviceProgram, out: &mut String) -> Result<(), ProgramError> {
    let mut files: BTreeMap<&str, Names> = BTreeMap::new();
    for k in p.steps.iter().flat_map(|s| &s.kernels) {
        let names = names_of(k);
        if files.get(k.source.as_str()).is_some_and(|n| *n != names) {
            return Err(ProgramError::ArgNames {
                file: k.source.clone(),
            });
        }
        files.insert(&k.source, names);
    }
    for (file, (compile, runtime)) in files {
        let list = |names: &[String]| {
            Doc::list("&", names.iter().map(|n| Doc::text(lit(n))).collect(), true)
        };
        out.push_str(&format!("\n/// The arg names of `{file}`.\n"));
        Doc::strukt(
            &format!("const {}: ArgNames = ArgNames", names_const(file)),
            vec![("compile", list(&compile)), ("runtime", list(&runtime))],
        )
        .write(0, ";", out);
    }
    Ok(())
}

fn step_doc(s: &Step) -> Doc {
    Doc::strukt(
        "Step",
        vec![
            ("node", string(&s.node)),
            ("op", string(&s.op)),
            ("ranges", ranges_doc(&s.ranges)),
            (
                "cbs",
                Doc::list("vec!", s.cbs.iter().map(cb_doc).collect(), false),
            ),
            ("semaphores", Doc::text(s.semaphores.to_string())),
            (
                "kernels",
                Doc::list("vec!", s.kernels.iter().map(kernel_doc).collect(), false),
            ),
        ],
    )
}

/// `program()`, built from `buffers()` and one function per step, so the steps' lists start at
/// a shallow indent.
fn program_items(p: &DeviceProgram, out: &mut String) {
    out.push_str("/// The dispatch program.\npub fn program() -> DeviceProgram {\n");
    let steps = (0..p.steps.len())
        .map(|i| Doc::text(format!("step_{i}()")))
        .collect();
    Doc::strukt(
        "DeviceProgram",
        vec![
            (
                "grid",
                Doc::text(format!("Grid {{ x: {}, y: {} }}", p.grid.x, p.grid.y)),
            ),
            ("l1_arena", Doc::text(p.l1_arena.to_string())),
            ("buffers", Doc::text("buffers()")),
            ("steps", Doc::list("vec!", steps, true)),
        ],
    )
    .write(4, "", out);
    out.push_str("}\n\n/// The buffers.\nfn buffers() -> Vec<BufferPlan> {\n");
    Doc::list("vec!", p.buffers.iter().map(buffer_doc).collect(), false).write(4, "", out);
    out.push_str("}\n");
    for (i, step) in p.steps.iter().enumerate() {
        out.push_str(&format!(
            "\n/// Step {i}: `{}` ({}).\nfn step_{i}() -> Step {{\n",
            step.node, step.op
        ));
        step_doc(step).write(4, "", out);
        out.push_str("}\n");
    }
}

impl Compiled {
    /// The files of the program's folder: `program.json` and `program.rs` ([`rust_module`]);
    /// its kernels ([`Compiled::sources`]) go to the shared [`KERNELS`] folder beside it.
    pub fn program_files(&self) -> Result<BTreeMap<String, String>, ProgramError> {
        Ok(BTreeMap::from([
            ("program.json".to_string(), self.program.to_json()?),
            ("program.rs".to_string(), rust_module(self)?),
        ]))
    }
}

/// The Rust module embedding `compiled`; its `SOURCES` name the kernel files in the
/// [`KERNELS`] folder beside the module's own folder, so the module must be written in a folder
/// next to that one.
pub fn rust_module(compiled: &Compiled) -> Result<String, ProgramError> {
    let mut out = String::from(
        "// Generated by `cargo run -p kernel-gen`; do not edit.\n\
         use kernel_gen::emit::prelude::*;\n\n",
    );
    program_items(&compiled.program, &mut out);
    out.push_str(
        "\n/// Every kernel source by its name in the program, embedded from the shared kernel \
         files.\n",
    );
    let sources = compiled
        .sources
        .keys()
        .map(|file| Doc::List {
            head: String::new(),
            open: "(",
            items: vec![
                Doc::text(lit(file)),
                Doc::text(format!(
                    "include_str!({})",
                    lit(&format!("../{KERNELS}/{file}"))
                )),
            ],
            close: ")",
            tail: "",
            fill: false,
        })
        .collect();
    Doc::list("pub const SOURCES: &[(&str, &str)] = &", sources, false).write(0, ";", &mut out);
    names_items(&compiled.program, &mut out)?;
    syn::parse_file(&out).map_err(|e| ProgramError::Rust(e.to_string()))?;
    Ok(out)
}
