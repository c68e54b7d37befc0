//! Command-line arguments and dispatch of the `superpoint` binary.

mod bench;
mod calibrate;
mod detect;
mod doctor;
mod info;
mod model_table;
mod npy;
mod overlay;
mod serve;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use superpoint::backend::tensix::warmup::parse_sizes;
use superpoint::backend::tensix::{TensixConfig, TensixGrid, TensixPrecision};
use superpoint::{Backend, Builder, Channel, DeviceSet, Options, SuperPoint, Warmup};

/// SuperPoint keypoints and descriptors, on the CPU or a Tenstorrent device.
#[derive(Debug, Parser)]
#[command(name = "superpoint", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Detect keypoints in images; per image write overlay.png, keypoints.json and descriptors.npy.
    Detect(detect::DetectArgs),
    /// Show the version, the weights that would be used and the available backends.
    Info(ModelArgs),
    /// Modeled device time per node of one frame on the Tensix backend, on both grids, at the
    /// chosen precision.
    Bench(bench::BenchArgs),
    /// Serve the HTTP API (POST /predict, /predict_raw, /predict_plane; GET /health, /info).
    Serve(serve::ServeArgs),
    /// Check a Tensix device (a p150a, or the emulator): dispatch, memory round trips, a
    /// known-answer program, the full frame against the CPU backend, traces; PASS/FAIL per check.
    Doctor(doctor::DoctorArgs),
}

/// Which model to load.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// A safetensors checkpoint (HF or original names); default: the pinned pretrained weights
    /// from the Hugging Face cache, downloaded when absent.
    #[arg(long, value_name = "PATH")]
    weights: Option<PathBuf>,
    /// Which backend runs the network.
    #[arg(long, value_enum, default_value = "auto")]
    backend: Backend,
    /// The Tensix compute grid (12x10: Ethernet dispatch; 11x10: Tensix dispatch); default: the
    /// grid the dispatch detection gives (12x10 when tt-metal carries the ETH-dispatch patch or on
    /// the emulator, else 11x10 with a warning).
    #[arg(long, value_enum)]
    grid: Option<TensixGrid>,
    /// The Tensix precision (port: bf16, the checked-in program; accurate: Float32 activations
    /// and bf16 hi+lo weights, meets the keypoint F1 gate, compiled at first use).
    #[arg(long, value_enum, default_value = "port")]
    precision: TensixPrecision,
    /// The Tensix devices to run on, one model loaded on each: `all`, a count (`2`: devices 0
    /// and 1) or ids (`0,2`; one id alone: `3,`). The emulator presents $TTR_EMU_DEVICES devices
    /// (default 1).
    #[arg(long, default_value = "all", value_name = "all|N|ID,ID")]
    devices: String,
}

impl ModelArgs {
    /// The builder of the model these arguments ask for, without warm-up.
    fn builder(&self) -> anyhow::Result<Builder> {
        let mut builder = SuperPoint::builder()
            .backend(self.backend)
            .tensix(TensixConfig {
                grid: self.grid,
                precision: self.precision,
                ..TensixConfig::default()
            })
            .devices(DeviceSet::parse(&self.devices)?)
            .warmup(Warmup::None);
        if let Some(path) = &self.weights {
            builder = builder.weights(path);
        }
        Ok(builder)
    }

    fn load(&self) -> anyhow::Result<SuperPoint> {
        build(self.builder()?)
    }
}

/// Builds the model, printing the dispatch fallback's warning.
fn build(builder: Builder) -> anyhow::Result<SuperPoint> {
    let model = builder.build()?;
    if let Some(warning) = model.tensix().and_then(|t| t.dispatch().warning) {
        eprintln!("warning: {warning}");
    }
    Ok(model)
}

/// Which variants the Tensix backend prepares before the first image (DESIGN §8, the port's
/// `warmup_variants` and `precompile_sizes`).
#[derive(Debug, Args)]
pub struct WarmupArgs {
    /// Variants prepared before the first image on every Tensix device: none; minimal (the
    /// --frame size at NMS radius 4); common (the port's: 1920x1080, 1600x900, 1280x720 and
    /// 640x480 inputs at NMS radius 4 and 0). Default: none for detect (each input size compiles
    /// at its first image), common for serve.
    #[arg(long, value_enum)]
    warmup: Option<Warmup>,
    /// Input sizes whose device resize is prepared too, at NMS radius 4, e.g. 1600x900,1280x720.
    #[arg(long, value_name = "WxH,...")]
    precompile: Option<String>,
}

impl WarmupArgs {
    /// `builder` with the warm-up asked for (`default` when no level is given) in `frame`.
    fn apply(
        &self,
        builder: Builder,
        default: Warmup,
        frame: (usize, usize),
    ) -> anyhow::Result<Builder> {
        let sizes = match &self.precompile {
            Some(text) => parse_sizes(text)?,
            None => Vec::new(),
        };
        Ok(builder
            .warmup(self.warmup.unwrap_or(default))
            .precompile_sizes(sizes)
            .frame(frame))
    }
}

/// The input plane of colour images, as a command-line value.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ChannelArg {
    Red,
    Luma,
}

/// Detection options, named after the library's options.
#[derive(Debug, Args)]
pub struct OptionArgs {
    /// Keep at most this many keypoints, best first; -1 keeps all above the threshold.
    #[arg(long, default_value_t = 1024, allow_negative_numbers = true)]
    max_keypoints: i64,
    /// Keep pixels whose score is strictly above this.
    #[arg(long, default_value_t = 0.005, allow_negative_numbers = true)]
    keypoint_threshold: f32,
    /// Non-maximum suppression radius in pixels (0 = none).
    #[arg(long, default_value_t = 4, allow_negative_numbers = true)]
    nms_radius: i64,
    /// The network frame, WIDTHxHEIGHT (multiples of 8).
    #[arg(long, default_value = "640x480", value_name = "WxH")]
    frame: String,
    /// Which plane of colour images the network sees.
    #[arg(long, value_enum, default_value = "red")]
    channel: ChannelArg,
    /// The pixels are in BGR order (R is the third channel).
    #[arg(long)]
    bgr: bool,
    /// Do not compute descriptors.
    #[arg(long)]
    no_descriptors: bool,
}

impl OptionArgs {
    fn options(&self) -> anyhow::Result<Options> {
        let options = Options {
            max_keypoints: self.max_keypoints,
            keypoint_threshold: self.keypoint_threshold,
            return_descriptors: !self.no_descriptors,
            bgr: self.bgr,
            channel: match self.channel {
                ChannelArg::Red => Channel::Red,
                ChannelArg::Luma => Channel::Luma,
            },
            frame: superpoint::options::parse_frame(&self.frame)?,
            ..Options::default()
        }
        .with_nms_radius(self.nms_radius)?;
        options.validate()?;
        Ok(options)
    }
}

/// Runs one command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Detect(args) => detect::run(&args),
        Command::Info(args) => info::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Doctor(args) => doctor::run(&args),
    }
}
