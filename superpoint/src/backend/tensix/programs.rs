//! Which generated program runs a request: the main program (the whole network from the u8 plane,
//! specialised per frame, input plane size, grid and precision) and the NMS-variant programs
//! (NMS r = 1..8 other than the main program's, candidates and sampling from the main program's
//! score map and dense descriptors, at the main program's precision, whose format the dense
//! descriptors are in). The 640×480 main program on the 12×10 grid at the port's precision with
//! an identity resize is the checked-in artifact (embedded at build time); every other program is
//! compiled by `kernel-gen` from the same definitions ([`kernel_gen::variants`]) at first use.

use std::collections::BTreeMap;

use kernel_gen::variants::Variant;
use kernel_gen::{variants, Compiled, DeviceProgram, Grid};
use superpoint_graph::SuperPointParams;

use super::error::TensixError;
use super::TensixPrecision;

/// The checked-in default program (`program()` and `SOURCES`).
mod embedded {
    include!("../../../../kernel-gen/artifacts/superpoint_640x480_12x10/program.rs");
}

/// The NMS radius the main program is compiled with.
pub fn main_radius() -> usize {
    SuperPointParams::default().nms_radius
}

/// The keypoint threshold every program's candidate selection is compiled with.
pub fn compiled_threshold() -> f32 {
    SuperPointParams::default().keypoint_threshold
}

/// Steps of the checked-in default program (what its trace replays per frame).
pub fn default_steps() -> usize {
    embedded::program().steps.len()
}

/// `variant` compiled at `precision`; its name says so unless that is the port's.
fn at(mut variant: Variant, precision: TensixPrecision) -> Variant {
    if precision != TensixPrecision::Port {
        variant.name.push('_');
        variant.name.push_str(precision.name());
    }
    variant.params.precision = precision.precision();
    variant
}

/// The definition of the main program for a `frame` (W, H) from an `input`-sized plane (the
/// frame when `None`) on `grid` at `precision`.
pub fn main_variant(
    frame: (u32, u32),
    input: Option<(u32, u32)>,
    grid: Grid,
    precision: TensixPrecision,
) -> Variant {
    at(
        variants::main_program(frame.0, frame.1, input, grid),
        precision,
    )
}

/// The checked-in program [`main_program`] runs for these arguments instead of compiling one:
/// the 640×480 main program on 12×10 at the port's precision from an identity resize.
pub fn checked_in_program(
    frame: (u32, u32),
    input: (u32, u32),
    grid: Grid,
    precision: TensixPrecision,
) -> Option<DeviceProgram> {
    let checked_in = frame == (640, 480) && grid == Grid::ETH_DISPATCH;
    (input == frame && checked_in && precision == TensixPrecision::Port).then(embedded::program)
}

/// The main program for a `frame` (W, H) from an `input`-sized plane on `grid` at `precision`.
pub fn main_program(
    frame: (u32, u32),
    input: (u32, u32),
    grid: Grid,
    precision: TensixPrecision,
) -> Result<Compiled, TensixError> {
    let identity = input == frame;
    if let Some(program) = checked_in_program(frame, input, grid, precision) {
        return Ok(Compiled {
            program,
            sources: embedded::SOURCES
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        });
    }
    compile(&main_variant(
        frame,
        (!identity).then_some(input),
        grid,
        precision,
    ))
}

/// The NMS-variant program with `radius` for a `frame` on `grid` at `precision`, reading the
/// score map and dense descriptors where `main` (that frame's main program) leaves them.
pub fn nms_program(
    frame: (u32, u32),
    radius: usize,
    grid: Grid,
    precision: TensixPrecision,
    main: &DeviceProgram,
) -> Result<Compiled, TensixError> {
    compile(&at(
        variants::nms_program(frame.0, frame.1, radius, grid, variants::shared_l1(main)),
        precision,
    ))
}

fn compile(v: &variants::Variant) -> Result<Compiled, TensixError> {
    kernel_gen::compile(&v.graph, &v.params).map_err(|e| TensixError::Compile {
        program: v.name.clone(),
        why: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use kernel_gen::{Fidelity, Precision};

    use super::*;

    #[test]
    fn the_embedded_default_is_what_kernel_gen_compiles() {
        let embedded = main_program(
            (640, 480),
            (640, 480),
            Grid::ETH_DISPATCH,
            TensixPrecision::Port,
        )
        .expect("embedded");
        let v = variants::main_program(640, 480, None, Grid::ETH_DISPATCH);
        let compiled = kernel_gen::compile(&v.graph, &v.params).expect("compiles");
        assert_eq!(embedded, compiled);
    }

    #[test]
    fn the_accurate_programs_are_compiled_at_accurate_under_their_own_name() {
        let port = main_variant((640, 480), None, Grid::ETH_DISPATCH, TensixPrecision::Port);
        assert_eq!(port.name, "superpoint_640x480_12x10");
        assert_eq!(port.params.precision, Precision::PORT);
        let accurate = main_variant(
            (640, 480),
            None,
            Grid::ETH_DISPATCH,
            TensixPrecision::Accurate,
        );
        assert_eq!(accurate.name, "superpoint_640x480_12x10_accurate");
        assert_eq!(accurate.params.precision, Precision::ACCURATE);
        let main = main_program(
            (640, 480),
            (640, 480),
            Grid::ETH_DISPATCH,
            TensixPrecision::Accurate,
        )
        .expect("the accurate program compiles");
        let nms = nms_program(
            (640, 480),
            2,
            Grid::ETH_DISPATCH,
            TensixPrecision::Accurate,
            &main.program,
        )
        .expect("the accurate NMS variant compiles");
        // Every kernel that takes the activation format reads and writes Float32, and every
        // convolution multiplies at HiFi4.
        for compiled in [&main, &nms] {
            let kernels: Vec<_> = compiled
                .program
                .steps
                .iter()
                .flat_map(|s| s.kernels.iter().map(move |k| (s, k)))
                .collect();
            let formats: Vec<u32> = kernels
                .iter()
                .flat_map(|(_, k)| &k.compile_args)
                .filter(|a| a.name == "fp32")
                .map(|a| a.value)
                .collect();
            assert!(!formats.is_empty() && formats.iter().all(|&v| v == 1));
            for (step, k) in &kernels {
                if step.op == "conv2d" && k.fidelity.is_some() {
                    assert_eq!(k.fidelity, Some(Fidelity::HiFi4), "{}", k.name);
                }
            }
        }
    }
}
