//! Warm-up like the reference port's: which variants (input plane size, network frame, NMS
//! radius) get their programs loaded and their traces captured before the first request, so
//! that no caller waits for a compile. The port warms the common ones at start-up (inputs of
//! 1920×1080, 1600×900, 1280×720 and 640×480 resized into the frame on the device; NMS radius 4
//! and 0), or only the frame itself at radius 4 (`minimal`), plus the sizes it is asked to
//! precompile (`precompile_sizes`).

use serde::Serialize;

use crate::options::Options;

/// Which variants a model prepares when it is built. The library's default is none, so that a
/// model opens without running a frame (`superpoint serve` warms the common ones up).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Warmup {
    /// None: every variant compiles and loads at its first frame.
    #[default]
    None,
    /// The network frame's own size at the default NMS radius.
    Minimal,
    /// The port's common variants: inputs of [`COMMON_SIZES`] at the radii [`COMMON_RADII`].
    Common,
}

/// Input sizes (width, height) of the common variants: the port's.
pub const COMMON_SIZES: [(usize, usize); 4] = [(1920, 1080), (1600, 900), (1280, 720), (640, 480)];

/// NMS radii of the common variants: the main program's, and 0 (the host's NMS on the device's
/// score map, which needs no program of its own).
pub const COMMON_RADII: [usize; 2] = [4, 0];

/// One variant to prepare: planes of `input` size resized on the device into `frame`, with NMS
/// of `nms_radius`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WarmupVariant {
    /// Input plane (width, height).
    pub input: (usize, usize),
    /// Network frame (width, height).
    pub frame: (usize, usize),
    pub nms_radius: usize,
}

impl WarmupVariant {
    /// The options of a frame of this variant.
    pub fn options(&self) -> Options {
        Options {
            frame: self.frame,
            nms_radius: self.nms_radius,
            ..Options::default()
        }
    }
}

impl std::fmt::Display for WarmupVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{} -> {}x{}, NMS radius {}",
            self.input.0, self.input.1, self.frame.0, self.frame.1, self.nms_radius
        )
    }
}

impl Warmup {
    /// The variants of this level for `frame`, then each of `precompile` at the default NMS
    /// radius, each once, in that order.
    pub fn variants(
        self,
        frame: (usize, usize),
        precompile: &[(usize, usize)],
    ) -> Vec<WarmupVariant> {
        let default_radius = Options::default().nms_radius;
        let level: Vec<WarmupVariant> = match self {
            Warmup::None => Vec::new(),
            Warmup::Minimal => vec![WarmupVariant {
                input: frame,
                frame,
                nms_radius: default_radius,
            }],
            Warmup::Common => COMMON_SIZES
                .iter()
                .flat_map(|&input| {
                    COMMON_RADII.iter().map(move |&nms_radius| WarmupVariant {
                        input,
                        frame,
                        nms_radius,
                    })
                })
                .collect(),
        };
        let asked = precompile.iter().map(|&input| WarmupVariant {
            input,
            frame,
            nms_radius: default_radius,
        });
        let mut out: Vec<WarmupVariant> = Vec::new();
        for v in level.into_iter().chain(asked) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }
}

/// One variant prepared on one device, as warm-up reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WarmupStep {
    pub variant: WarmupVariant,
    /// The device it was prepared on.
    pub device: u32,
    /// False when its programs had already run (nothing to do).
    pub prepared: bool,
    pub seconds: f64,
    /// Steps done so far, this one included, out of `total` (variants × devices).
    pub done: usize,
    pub total: usize,
}

/// Called after each warm-up step (progress bars, logs).
pub type WarmupProgress<'a> = dyn Fn(&WarmupStep) + Send + Sync + 'a;

/// Parses a list of sizes written `WxH,WxH` (e.g. `1600x900,1280x720`), as `--precompile` takes.
pub fn parse_sizes(text: &str) -> crate::error::Result<Vec<(usize, usize)>> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(crate::options::parse_frame)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_levels_give_the_ports_variants_and_precompiled_sizes_once() {
        let frame = (640, 480);
        assert!(Warmup::None.variants(frame, &[]).is_empty());
        let v = |input, nms_radius| WarmupVariant {
            input,
            frame,
            nms_radius,
        };
        assert_eq!(Warmup::Minimal.variants(frame, &[]), vec![v((640, 480), 4)]);
        let common = Warmup::Common.variants(frame, &[(1600, 900), (800, 600)]);
        assert_eq!(
            common,
            vec![
                v((1920, 1080), 4),
                v((1920, 1080), 0),
                v((1600, 900), 4),
                v((1600, 900), 0),
                v((1280, 720), 4),
                v((1280, 720), 0),
                v((640, 480), 4),
                v((640, 480), 0),
                v((800, 600), 4),
            ]
        );
        assert_eq!(
            Warmup::None.variants((320, 256), &[(1280, 720)]),
            vec![WarmupVariant {
                input: (1280, 720),
                frame: (320, 256),
                nms_radius: 4
            }]
        );
        assert_eq!(
            parse_sizes("1600x900, 1280x720").unwrap(),
            vec![(1600, 900), (1280, 720)]
        );
        assert!(parse_sizes("1600x").is_err());
    }
}
