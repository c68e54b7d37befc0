//! `SuperPoint::warmup`: on the Tensix backend (the emulator) it loads the main program for the
//! input size and the NMS variant of the radius and runs one frame through them (capturing their
//! traces, as the port's warm-up does), once; sizes and options are checked first; the CPU
//! backend has nothing to prepare.

mod common;

use common::cases;
use superpoint::{Backend, Error, Options, SuperPoint};

fn model(backend: Backend) -> SuperPoint {
    SuperPoint::builder()
        .weights(cases()[0].weights_path())
        .backend(backend)
        .build()
        .expect("the model opens")
}

#[test]
fn warmup_loads_the_main_program_and_the_radius_variant_and_captures_their_traces_once() {
    let model = model(Backend::Tensix);
    let tensix = model.tensix().expect("tensix");
    assert!(tensix.info().programs.is_empty(), "nothing loads at open");
    let options = Options {
        nms_radius: 2,
        ..Options::default()
    };
    model.warmup((640, 480), &options).expect("warm-up");
    let loaded: Vec<_> = tensix
        .info()
        .programs
        .into_iter()
        .map(|p| (p.kind, p.frame, p.input, p.frames, p.trace_captured))
        .collect();
    assert_eq!(
        loaded,
        [
            ("main".to_string(), [640, 480], [640, 480], 1, true),
            ("nms2".to_string(), [640, 480], [640, 480], 1, true),
        ]
    );
    // Warming the same variant again loads and runs nothing more.
    model.warmup((640, 480), &options).expect("again");
    let frames: Vec<_> = tensix.info().programs.iter().map(|p| p.frames).collect();
    assert_eq!(frames, [1, 1]);
}

#[test]
fn warmup_checks_the_size_and_the_options_first() {
    for backend in [Backend::Cpu, Backend::Tensix] {
        let model = model(backend);
        let err = model
            .warmup((4, 480), &Options::default())
            .expect_err("a 4-pixel side is refused");
        assert!(matches!(err, Error::ImageSize { width: 4, .. }), "{err}");
        let err = model
            .warmup(
                (640, 480),
                &Options {
                    max_keypoints: -2,
                    ..Options::default()
                },
            )
            .expect_err("a bad option is refused");
        assert!(
            matches!(
                err,
                Error::InvalidOption {
                    name: "max_keypoints",
                    ..
                }
            ),
            "{err}"
        );
        if let Some(tensix) = model.tensix() {
            assert!(tensix.info().programs.is_empty(), "nothing was loaded");
        }
    }
}

#[test]
fn warmup_on_the_cpu_backend_has_nothing_to_prepare() {
    let model = model(Backend::Cpu);
    assert!(model.tensix().is_none());
    model
        .warmup((1920, 1080), &Options::default())
        .expect("nothing to do");
}
