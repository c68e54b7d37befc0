//! The dispatch program as a Rust module, so a crate embeds a checked-in program with `include!`
//! instead of parsing JSON at start-up.
//!
//! The module is built with `quote` as one expression per value (`Emit`), parsed back with `syn`
//! (so a module that does not parse is an error here, not in the embedding crate) and printed
//! with `prettyplease`. It defines `program() -> DeviceProgram` and `SOURCES`, the kernel texts
//! through `include_str!` of the files next to it. Everything is in declaration and `BTreeMap`
//! order, so the bytes depend on nothing but the program.

use proc_macro2::{Literal, TokenStream};
use quote::{quote, ToTokens};

use crate::device::{Core, CoreRange, Fidelity, Format, Grid};
use crate::kir::{Arg, CompileArg, CoreArgs, Role};
use crate::layout::{DeviceTensor, Part};
use crate::ops::resize::Axis;
use crate::plan::{BufferPlan, CbKind, CbPlan, Content};
use crate::program::{Compiled, DeviceProgram, KernelDesc, ProgramError, Step};

/// A value that can write the Rust expression constructing itself.
trait Emit {
    fn emit(&self) -> TokenStream;
}

impl Emit for u32 {
    fn emit(&self) -> TokenStream {
        Literal::u32_unsuffixed(*self).into_token_stream()
    }
}

impl Emit for usize {
    fn emit(&self) -> TokenStream {
        Literal::usize_unsuffixed(*self).into_token_stream()
    }
}

impl Emit for bool {
    fn emit(&self) -> TokenStream {
        quote!(#self)
    }
}

impl Emit for String {
    fn emit(&self) -> TokenStream {
        quote!(String::from(#self))
    }
}

impl<T: Emit> Emit for Option<T> {
    fn emit(&self) -> TokenStream {
        match self {
            Some(v) => {
                let v = v.emit();
                quote!(Some(#v))
            }
            None => quote!(None),
        }
    }
}

impl<T: Emit> Emit for Vec<T> {
    fn emit(&self) -> TokenStream {
        let items = self.iter().map(Emit::emit);
        quote!(Vec::from([#(#items),*]))
    }
}

/// `impl Emit` for a struct: `Path { field: value, ... }` over the listed fields.
macro_rules! emit_struct {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl Emit for $ty {
            fn emit(&self) -> TokenStream {
                $(let $field = self.$field.emit();)*
                quote!(kernel_gen::$ty { $($field: #$field),* })
            }
        }
    };
}

/// `impl Emit` for a fieldless enum.
macro_rules! emit_unit_enum {
    ($ty:ident { $($variant:ident),* $(,)? }) => {
        impl Emit for $ty {
            fn emit(&self) -> TokenStream {
                match self {
                    $($ty::$variant => quote!(kernel_gen::$ty::$variant),)*
                }
            }
        }
    };
}

emit_struct!(Core { x, y });
emit_struct!(CoreRange { start, end });
emit_struct!(Grid { x, y });
emit_struct!(CompileArg { name, value });
emit_struct!(BufferPlan {
    name,
    pages,
    page_bytes,
    content,
    l1_offset
});
emit_struct!(CbPlan {
    id,
    name,
    pages,
    page_bytes,
    format,
    kind
});
emit_struct!(Step {
    node,
    op,
    ranges,
    cbs,
    semaphores,
    kernels
});
emit_struct!(DeviceProgram {
    grid,
    l1_arena,
    buffers,
    steps
});
emit_unit_enum!(Fidelity {
    LoFi,
    HiFi2,
    HiFi3,
    HiFi4
});
emit_unit_enum!(Format { Bf16, Fp32 });
emit_unit_enum!(Role {
    Reader,
    Compute,
    Writer
});
emit_unit_enum!(CbKind {
    Stream,
    Resident,
    Scratch
});
emit_unit_enum!(Part { Main, Counts });

/// A runtime arg as the emitted module spells it: static data, not a constructor call per value,
/// so a program with tens of thousands of args compiles in moments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaticArg {
    Const(u32),
    Buffer(&'static str),
    /// NoC x / y of the worker at logical core (x, y).
    NocX(u32, u32),
    NocY(u32, u32),
}

/// The per-core runtime args of a kernel from their static form `(x, y, args)`.
pub fn core_args(list: &[(u32, u32, &[StaticArg])]) -> Vec<CoreArgs> {
    list.iter()
        .map(|(x, y, args)| CoreArgs {
            core: Core { x: *x, y: *y },
            args: args
                .iter()
                .map(|a| match a {
                    StaticArg::Const(v) => Arg::Const(*v),
                    StaticArg::Buffer(name) => Arg::BufferAddress((*name).to_string()),
                    StaticArg::NocX(x, y) => Arg::NocX(Core { x: *x, y: *y }),
                    StaticArg::NocY(x, y) => Arg::NocY(Core { x: *x, y: *y }),
                })
                .collect(),
        })
        .collect()
}

fn emit_core_args(list: &[CoreArgs]) -> TokenStream {
    let cores = list.iter().map(|c| {
        let (x, y) = (c.core.x.emit(), c.core.y.emit());
        let args = c.args.iter().map(|a| match a {
            Arg::Const(v) => {
                let v = v.emit();
                quote!(Const(#v))
            }
            Arg::BufferAddress(name) => quote!(Buffer(#name)),
            Arg::NocX(core) => {
                let (x, y) = (core.x.emit(), core.y.emit());
                quote!(NocX(#x, #y))
            }
            Arg::NocY(core) => {
                let (x, y) = (core.x.emit(), core.y.emit());
                quote!(NocY(#x, #y))
            }
        });
        quote!((#x, #y, &[#(#args),*]))
    });
    quote!(kernel_gen::emit::core_args(&[#(#cores),*]))
}

impl Emit for KernelDesc {
    fn emit(&self) -> TokenStream {
        let name = self.name.emit();
        let role = self.role.emit();
        let source = self.source.emit();
        let ranges = self.ranges.emit();
        let compile_args = self.compile_args.emit();
        let fidelity = self.fidelity.emit();
        let fp32_dest_acc = self.fp32_dest_acc.emit();
        let unpack_to_dest_fp32 = self.unpack_to_dest_fp32.emit();
        let noc = self.noc.emit();
        let runtime_arg_names = self.runtime_arg_names.emit();
        let runtime_args = emit_core_args(&self.runtime_args);
        quote!(kernel_gen::KernelDesc {
            name: #name,
            role: #role,
            source: #source,
            ranges: #ranges,
            compile_args: #compile_args,
            fidelity: #fidelity,
            fp32_dest_acc: #fp32_dest_acc,
            unpack_to_dest_fp32: #unpack_to_dest_fp32,
            noc: #noc,
            runtime_arg_names: #runtime_arg_names,
            runtime_args: #runtime_args,
        })
    }
}

/// The expression constructing a struct-like enum variant from its bound fields:
/// `variant!(Content::Output { tensor, part })`.
macro_rules! variant {
    ($($path:ident)::+ { $($field:ident),* $(,)? }) => {{
        $(let $field = $field.emit();)*
        quote!(kernel_gen::$($path)::+ { $($field: #$field),* })
    }};
}

impl Emit for Axis {
    fn emit(&self) -> TokenStream {
        match self {
            Axis::Horizontal => quote!(kernel_gen::ops::resize::Axis::Horizontal),
            Axis::Vertical => quote!(kernel_gen::ops::resize::Axis::Vertical),
        }
    }
}

impl Emit for DeviceTensor {
    fn emit(&self) -> TokenStream {
        match self {
            DeviceTensor::Plane { height, width } => {
                variant!(DeviceTensor::Plane { height, width })
            }
            DeviceTensor::Activation {
                channels,
                height,
                width,
                format,
            } => variant!(DeviceTensor::Activation {
                channels,
                height,
                width,
                format
            }),
            DeviceTensor::PixelRows {
                channels,
                height,
                width,
                format,
            } => variant!(DeviceTensor::PixelRows {
                channels,
                height,
                width,
                format
            }),
            DeviceTensor::FrameRows {
                height,
                width,
                format,
            } => variant!(DeviceTensor::FrameRows {
                height,
                width,
                format
            }),
            DeviceTensor::Map { height, width } => variant!(DeviceTensor::Map { height, width }),
            DeviceTensor::Candidates {
                height,
                width,
                regions,
                capacity,
            } => variant!(DeviceTensor::Candidates {
                height,
                width,
                regions,
                capacity
            }),
            DeviceTensor::Descriptors {
                regions,
                capacity,
                dim,
            } => variant!(DeviceTensor::Descriptors {
                regions,
                capacity,
                dim
            }),
        }
    }
}

impl Emit for Content {
    fn emit(&self) -> TokenStream {
        match self {
            Content::Input { tensor } => variant!(Content::Input { tensor }),
            Content::Output { tensor, part } => variant!(Content::Output { tensor, part }),
            Content::External { node, tensor, part } => {
                variant!(Content::External { node, tensor, part })
            }
            Content::Scratch { node, tensor } => variant!(Content::Scratch { node, tensor }),
            Content::ConvWeights { entry } => variant!(Content::ConvWeights { entry }),
            Content::ConvBias { entry } => variant!(Content::ConvBias { entry }),
            Content::ConvWeightsHiLo { entry } => variant!(Content::ConvWeightsHiLo { entry }),
            Content::ConvBiasFp32 { entry } => variant!(Content::ConvBiasFp32 { entry }),
            Content::ResizeWeights {
                axis,
                input,
                output,
            } => variant!(Content::ResizeWeights {
                axis,
                input,
                output
            }),
            Content::ResizeBands {
                in_width,
                in_height,
                width,
                height,
                unit_rows,
                bytes,
            } => variant!(Content::ResizeBands {
                in_width,
                in_height,
                width,
                height,
                unit_rows,
                bytes
            }),
        }
    }
}

/// The `StaticArg` variants the program's runtime args use, so the module imports no unused name.
fn used_variants(program: &DeviceProgram) -> Vec<proc_macro2::Ident> {
    let mut used = [false; 4];
    for arg in program
        .steps
        .iter()
        .flat_map(|s| &s.kernels)
        .flat_map(|k| &k.runtime_args)
        .flat_map(|c| &c.args)
    {
        let i = match arg {
            Arg::BufferAddress(_) => 0,
            Arg::Const(_) => 1,
            Arg::NocX(_) => 2,
            Arg::NocY(_) => 3,
        };
        used[i] = true;
    }
    ["Buffer", "Const", "NocX", "NocY"]
        .iter()
        .zip(used)
        .filter(|(_, u)| *u)
        .map(|(name, _)| proc_macro2::Ident::new(name, proc_macro2::Span::call_site()))
        .collect()
}

/// The Rust module embedding `compiled`; its `SOURCES` name the kernel files relative to the
/// module's own file, so the module must be written next to them.
pub fn rust_module(compiled: &Compiled) -> Result<String, ProgramError> {
    let program = compiled.program.emit();
    let variants = used_variants(&compiled.program);
    let sources = compiled
        .sources
        .keys()
        .map(|path| quote!((#path, include_str!(#path))));
    let tokens = quote! {
        use kernel_gen::emit::StaticArg::{#(#variants),*};

        /// The dispatch program.
        pub fn program() -> kernel_gen::DeviceProgram {
            #program
        }

        /// Every kernel source by its path in the program, embedded from the files next to this module.
        pub const SOURCES: &[(&str, &str)] = &[#(#sources),*];
    };
    let file = syn::parse2::<syn::File>(tokens).map_err(|e| ProgramError::Rust(e.to_string()))?;
    Ok(format!(
        "// Generated by `cargo run -p kernel-gen`; do not edit.\n{}",
        prettyplease::unparse(&file)
    ))
}
