//! A dispatch program as text a reviewer reads in a sitting: its buffers, then each step's
//! cores, CBs with their sizes and semaphores, and each kernel's file, compute config,
//! compile-time args and runtime args, those every core agrees on together and the others by
//! their rules ([`crate::program::rules`]). The snapshots of `snapshots/` hold it, so their diff
//! is what a change does to a program.

use std::fmt::Write;

use crate::device::{CoreRange, Format};
use crate::layout::{DeviceTensor, Part};
use crate::plan::{BufferPlan, CbKind, Content};
use crate::program::{CoreOrder, DeviceProgram, KernelDesc, Run, RunValue, Step};

/// Columns the summary's wrapped lists fill.
const WIDTH: usize = 100;

fn ranges(list: &[CoreRange]) -> String {
    list.iter()
        .map(|r| format!("({},{})-({},{})", r.start.x, r.start.y, r.end.x, r.end.y))
        .collect::<Vec<_>>()
        .join(" ")
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Bf16 => "bf16",
        Format::Fp32 => "fp32",
    }
}

fn tensor(t: &DeviceTensor) -> String {
    match *t {
        DeviceTensor::Plane { height, width } => format!("u8 plane {width}x{height}"),
        DeviceTensor::Activation {
            channels,
            height,
            width,
            format,
        } => format!(
            "activation {channels}ch {width}x{height} {}",
            format_name(format)
        ),
        DeviceTensor::PixelRows {
            channels,
            height,
            width,
            format,
        } => format!(
            "pixel rows {channels}ch {width}x{height} {}",
            format_name(format)
        ),
        DeviceTensor::FrameRows {
            height,
            width,
            format,
        } => format!("frame rows {width}x{height} {}", format_name(format)),
        DeviceTensor::Map { height, width } => format!("map {width}x{height}"),
        DeviceTensor::Candidates {
            height,
            width,
            regions,
            capacity,
        } => format!("candidates of {width}x{height}, {regions} regions of {capacity}"),
        DeviceTensor::Descriptors {
            regions,
            capacity,
            dim,
        } => format!("descriptors {dim}-dim, {regions} regions of {capacity}"),
    }
}

fn part(p: Part) -> &'static str {
    match p {
        Part::Main => "",
        Part::Counts => " (counts)",
    }
}

fn content(c: &Content) -> String {
    match c {
        Content::Input { tensor: t } => format!("host input: {}", tensor(t)),
        Content::Output { tensor: t, part: p } => format!("output: {}{}", tensor(t), part(*p)),
        Content::External {
            node,
            tensor: t,
            part: p,
        } => format!("external `{node}`: {}{}", tensor(t), part(*p)),
        Content::Scratch { node, tensor: t } => format!("scratch of `{node}`: {}", tensor(t)),
        Content::ConvWeights { entry } => format!("conv weights `{entry}` bf16"),
        Content::ConvBias { entry } => format!("conv bias `{entry}` bf16"),
        Content::ConvWeightsHiLo { entry } => format!("conv weights `{entry}` bf16 hi + lo"),
        Content::ConvBiasFp32 { entry } => format!("conv bias `{entry}` fp32"),
        Content::ResizeWeights {
            axis,
            input,
            output,
        } => format!("resize weights {axis:?} {input} -> {output}"),
        Content::ResizeBands {
            in_width,
            in_height,
            width,
            height,
            ..
        } => format!("resize bands {in_width}x{in_height} -> {width}x{height}"),
        Content::FrameLevels { format } => format!("frame value of each u8 level, {format:?}"),
    }
}

fn buffer(b: &BufferPlan) -> String {
    let place = match b.l1_offset {
        Some(o) => format!("L1 @{o}"),
        None if b.resident => "L1 copies".to_string(),
        None => "DRAM".to_string(),
    };
    format!(
        "  {:<24} {:<10} {} x {} B: {}",
        b.name,
        place,
        b.pages,
        b.page_bytes,
        content(&b.content)
    )
}

fn kind(k: CbKind) -> &'static str {
    match k {
        CbKind::Stream => "stream",
        CbKind::Resident => "resident",
        CbKind::Scratch => "scratch",
    }
}

/// `items` after `label`, separated by `, `, wrapped at [`WIDTH`] with continuation lines
/// indented to the first item.
fn wrapped(out: &mut String, label: &str, items: &[String]) {
    let mut line = label.to_string();
    let indent = " ".repeat(label.len());
    for (i, item) in items.iter().enumerate() {
        let sep = if i + 1 < items.len() { "," } else { "" };
        if line.len() > indent.len() && line.len() + 1 + item.len() + sep.len() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.clone();
        } else if line.len() > indent.len() {
            line.push(' ');
        }
        line.push_str(item);
        line.push_str(sep);
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

fn value(v: &RunValue) -> String {
    match v {
        RunValue::Const(c) => c.to_string(),
        RunValue::Counting { first, step } => {
            let k = if *step == 1 {
                "k".to_string()
            } else {
                format!("{step}k")
            };
            if *first == 0 {
                k
            } else {
                format!("{first} + {k}")
            }
        }
        RunValue::Buffer(name) => format!("&{name}"),
        RunValue::NocX(c) => format!("noc_x({},{})", c.x, c.y),
        RunValue::NocY(c) => format!("noc_y({},{})", c.x, c.y),
        RunValue::NocXOf(o) => format!("noc_x(core {o:+})"),
        RunValue::NocYOf(o) => format!("noc_y(core {o:+})"),
    }
}

fn runs(list: &[Run]) -> Vec<String> {
    list.iter()
        .map(|r| format!("{} x{}", value(&r.value), r.cores))
        .collect()
}

fn kernel(out: &mut String, step: &Step, k: &KernelDesc) {
    let mut head = format!("  {} {}", k.role.name(), k.source);
    if k.ranges != step.ranges {
        let _ = write!(head, " on {}", ranges(&k.ranges));
    }
    if let (Some(fidelity), Some(fp32)) = (k.fidelity, k.fp32_dest_acc) {
        let _ = write!(
            head,
            ", {fidelity:?}, {} DST",
            if fp32 { "fp32" } else { "bf16" }
        );
    }
    if !k.unpack_to_dest_fp32.is_empty() {
        let cbs: Vec<String> = k.unpack_to_dest_fp32.iter().map(u32::to_string).collect();
        let _ = write!(head, ", CBs {} unpacked to the fp32 DST", cbs.join(" "));
    }
    if let Some(noc) = k.noc {
        let _ = write!(head, ", NoC {noc}");
    }
    out.push_str(&head);
    out.push('\n');
    let compile: Vec<String> = k
        .compile_args
        .iter()
        .map(|a| format!("{}={}", a.name, a.value))
        .collect();
    wrapped(out, "    compile:  ", &compile);
    let cores: u32 = k.ranges.iter().map(CoreRange::len).sum();
    let common: Vec<String> = k
        .runtime_args
        .iter()
        .filter(|a| a.runs.len() == 1)
        .map(|a| {
            format!(
                "{}={}",
                a.name,
                a.runs.first().map_or(String::new(), |r| value(&r.value))
            )
        })
        .collect();
    if !common.is_empty() {
        wrapped(out, "    common:   ", &common);
    }
    let per_core: Vec<_> = k.runtime_args.iter().filter(|a| a.runs.len() > 1).collect();
    if !per_core.is_empty() {
        let order = match k.core_order {
            CoreOrder::RowMajor => "row-major",
            CoreOrder::ColumnMajor => "column-major",
        };
        let _ = writeln!(
            out,
            "    per core ({cores} cores {order}, k counts along a run):"
        );
        for a in per_core {
            wrapped(out, &format!("      {:<16}", a.name), &runs(&a.runs));
        }
    }
}

/// The program `name` as text (module docs).
pub fn summary(name: &str, program: &DeviceProgram) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{name}: {}x{} grid, L1 arena {} B a core, {} buffers, {} steps",
        program.grid.x,
        program.grid.y,
        program.l1_arena,
        program.buffers.len(),
        program.steps.len()
    );
    out.push_str("\nbuffers (pages x page bytes):\n");
    for b in &program.buffers {
        out.push_str(&buffer(b));
        out.push('\n');
    }
    for (i, step) in program.steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "\nstep {i}: `{}` ({}) on {}, {} semaphores",
            step.node,
            step.op,
            ranges(&step.ranges),
            step.semaphores
        );
        let cbs: Vec<String> = step
            .cbs
            .iter()
            .map(|c| {
                let cb = format!(
                    "{} {} {} x {} B {} {}",
                    c.id,
                    c.name,
                    c.pages,
                    c.page_bytes,
                    format_name(c.format),
                    kind(c.kind)
                );
                match &c.buffer {
                    Some(buffer) => format!("{cb} in `{buffer}`"),
                    None => cb,
                }
            })
            .collect();
        wrapped(&mut out, "  CBs: ", &cbs);
        for k in &step.kernels {
            kernel(&mut out, step, k);
        }
    }
    out
}
