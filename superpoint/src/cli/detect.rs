//! `superpoint detect`: keypoints for each image, written as `overlay.png`, `keypoints.json`
//! and `descriptors.npy` in one folder per image under `--out`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use superpoint::{Detection, Input, Options, Warmup, WarmupStep};

use super::{build, npy, overlay, ModelArgs, OptionArgs, WarmupArgs};

#[derive(Debug, Args)]
pub struct DetectArgs {
    /// Image files (JPEG, PNG, BMP, GIF, TIFF, WebP, PNM).
    #[arg(required = true, value_name = "IMAGE")]
    images: Vec<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    options: OptionArgs,
    #[command(flatten)]
    warmup: WarmupArgs,
    /// Where to write the results (one folder per image).
    #[arg(long, default_value = "superpoint-out", value_name = "DIR")]
    out: PathBuf,
    /// Do not draw the overlay picture.
    #[arg(long)]
    no_overlay: bool,
}

/// A progress bar of `len` steps (hidden for a single one).
fn bar(len: u64) -> ProgressBar {
    let progress = ProgressBar::new(len).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed} < {eta}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    if len == 1 {
        progress.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    progress
}

pub fn run(args: &DetectArgs) -> anyhow::Result<()> {
    let options = args.options.options()?;
    let builder = args
        .warmup
        .apply(args.model.builder()?, Warmup::None, options.frame)?;
    let warming = bar(0);
    let shown = warming.clone();
    let builder = builder.on_warmup(move |step: &WarmupStep| {
        shown.set_length(step.total as u64);
        shown.set_position(step.done as u64);
        shown.set_message(format!("warm-up: {}", step.variant));
        shown.suspend(|| {
            eprintln!(
                "warm-up {}/{}: {} on device {}: {}",
                step.done,
                step.total,
                step.variant,
                step.device,
                if step.prepared {
                    format!("prepared in {:.1} s", step.seconds)
                } else {
                    "already prepared".to_string()
                }
            )
        });
    });
    let model = build(builder)?;
    warming.finish_and_clear();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let folders = output_folders(&args.out, &args.images);
    let progress = bar(args.images.len() as u64);
    let inputs: Vec<Input<'static>> = args.images.iter().cloned().map(Input::from).collect();
    let mut failures = 0;
    for ((image, folder), result) in args
        .images
        .iter()
        .zip(&folders)
        .zip(model.stream(inputs, options))
    {
        progress.set_message(image.display().to_string());
        let written = result
            .map_err(anyhow::Error::from)
            .and_then(|d| write_outputs(image, folder, &d, &options, !args.no_overlay).map(|()| d));
        match written {
            Ok(d) => progress.suspend(|| {
                let device = d.device.map(|id| format!(" on device {id}"));
                println!(
                    "{}: {} keypoints in {:.1} ms{} -> {}",
                    image.display(),
                    d.len(),
                    d.timing.total,
                    device.unwrap_or_default(),
                    folder.display()
                )
            }),
            Err(e) => {
                failures += 1;
                progress.suspend(|| eprintln!("{}: error: {e:#}", image.display()));
            }
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    if failures > 0 {
        anyhow::bail!("{failures} of {} images failed", args.images.len());
    }
    Ok(())
}

/// One folder per image, named after the file stem, made unique when stems repeat.
fn output_folders(out: &Path, images: &[PathBuf]) -> Vec<PathBuf> {
    let mut used = HashSet::new();
    images
        .iter()
        .map(|image| {
            let stem = image
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "image".to_string());
            let mut name = stem.clone();
            let mut n = 1;
            while !used.insert(name.clone()) {
                n += 1;
                name = format!("{stem}-{n}");
            }
            out.join(name)
        })
        .collect()
}

fn write_outputs(
    image: &Path,
    folder: &Path,
    d: &Detection,
    options: &Options,
    draw: bool,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let summary = json!({
        "image": image.display().to_string(),
        "original_size": d.image_size,
        "image_size": d.frame_size,
        "scale": d.scale,
        "num_keypoints": d.len(),
        "keypoints": d.keypoints,
        "scores": d.scores,
        "options": options,
        "backend": d.backend,
        "device": d.device,
        "timing_ms": d.timing,
    });
    let json_path = folder.join("keypoints.json");
    std::fs::write(&json_path, serde_json::to_vec(&summary)?)
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    if let Some(descriptors) = &d.descriptors {
        npy::write_f32(
            &folder.join("descriptors.npy"),
            descriptors,
            d.len(),
            d.descriptor_dim,
        )?;
    }
    if draw {
        let mut picture = image::open(image)
            .with_context(|| format!("cannot decode {} for the overlay", image.display()))?
            .to_rgb8();
        overlay::draw(&mut picture, &d.keypoints);
        let path = folder.join("overlay.png");
        picture
            .save(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
