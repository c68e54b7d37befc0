//! What the tt-metal installation behind the runtime supports, found before a device opens.
//!
//! tt-metal fixes where dispatch runs once per process, at the first device open, so a failed
//! open with dispatch on the Ethernet cores cannot be retried with Tensix dispatch: whether ETH
//! dispatch can work has to be known beforehand. Upstream tt-metal at the pinned 0.78 cannot open
//! a p150 with ETH dispatch; tt-metal PR #57142 (shipped as `patches/tt-metal-eth-dispatch.patch`)
//! makes two changes, and [`detect`] looks for both in the tree at `TT_METAL_HOME`:
//!
//! * the idle-ERISC kernel budget: `MEM_IERISC_KERNEL_SIZE` in Blackhole's `dev_mem_map.h` is
//!   24 KiB upstream, too small for the dispatch kernels; the patch makes it 40 KiB. The header
//!   defines it through other macros, so they are expanded and evaluated ([`crate::cmacro`]);
//! * the ETH core descriptor: upstream lists 14 ETH dispatch cores where a p150 has 12; the
//!   patch makes `core_descriptor.cpp` skip entries absent from the chip's
//!   `logical_eth_core_to_chan_map`, so that name appearing in the file is the evidence.
//!
//! The emulator (the default build) stands in for a patched tt-metal unless
//! `TTR_EMU_TT_METAL=stock` asks it to behave as a stock one, so that the fallback to Tensix
//! dispatch can be exercised end to end without a card.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmacro::{self, Defines};
use crate::device::Dispatch;
use crate::error::{Error, Result};

/// The environment variable naming the tt-metal tree the `metal` build runs on.
pub const TT_METAL_HOME: &str = "TT_METAL_HOME";
/// The environment variable that makes the emulator stand in for a `stock` (unpatched) or a
/// `patched` (the default) tt-metal.
pub const EMULATOR_ENV: &str = "TTR_EMU_TT_METAL";
/// Blackhole's memory map, relative to `TT_METAL_HOME`.
pub const DEV_MEM_MAP: &str = "tt_metal/hw/inc/internal/tt-1xx/blackhole/dev_mem_map.h";
/// The core-descriptor loader, relative to `TT_METAL_HOME`.
pub const CORE_DESCRIPTOR: &str = "tt_metal/llrt/core_descriptor.cpp";
/// The macro holding the idle-ERISC kernel text budget.
pub const KERNEL_SIZE_MACRO: &str = "MEM_IERISC_KERNEL_SIZE";
/// The name the patched descriptor loader checks ETH dispatch cores against.
pub const DESCRIPTOR_MARKER: &str = "logical_eth_core_to_chan_map";
/// The idle-ERISC kernel budget the patch sets (upstream: 24 KiB).
pub const PATCHED_KERNEL_SIZE: u64 = 40 * 1024;
/// The patch, relative to this repository's root.
pub const PATCH: &str = "patches/tt-metal-eth-dispatch.patch";

/// What was found about the two changes of the ETH-dispatch patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// `MEM_IERISC_KERNEL_SIZE` in bytes.
    pub kernel_size: u64,
    /// Whether the descriptor loader skips ETH dispatch cores the chip lacks (`None`: the
    /// loader's source is not in the tree).
    pub descriptor_patched: Option<bool>,
}

impl Evidence {
    fn patched(&self) -> bool {
        self.kernel_size >= PATCHED_KERNEL_SIZE && self.descriptor_patched == Some(true)
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{KERNEL_SIZE_MACRO} = {} bytes ({} KiB: 24 upstream, {} patched), {}",
            self.kernel_size,
            self.kernel_size / 1024,
            PATCHED_KERNEL_SIZE / 1024,
            match self.descriptor_patched {
                Some(true) => "the descriptor loader skips ETH dispatch cores the chip lacks",
                Some(false) =>
                    "the descriptor loader does not skip ETH dispatch cores the chip lacks",
                None => "no descriptor loader source in the tree",
            }
        )
    }
}

/// Whether the installation can open a p150 with dispatch on the Ethernet cores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EthDispatch {
    /// Both changes of the patch are present.
    Patched(Evidence),
    /// At least one is missing: an ETH-dispatch open would fail.
    Stock(Evidence),
    /// It could not be determined; the reason says what was missing or unreadable.
    Unknown(String),
}

impl EthDispatch {
    /// "patched", "stock" or "unknown".
    pub fn name(&self) -> &'static str {
        match self {
            EthDispatch::Patched(_) => "patched",
            EthDispatch::Stock(_) => "stock",
            EthDispatch::Unknown(_) => "unknown",
        }
    }
}

impl fmt::Display for EthDispatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EthDispatch::Patched(e) => write!(f, "patched: {e}"),
            EthDispatch::Stock(e) => write!(f, "stock: {e}"),
            EthDispatch::Unknown(why) => write!(f, "unknown: {why}"),
        }
    }
}

/// Where the runtime's device comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The emulator, standing in for a patched or (`TTR_EMU_TT_METAL=stock`) a stock tt-metal.
    Emulator,
    /// The tt-metal tree at `TT_METAL_HOME`.
    TtMetal(PathBuf),
    /// A `metal` build with `TT_METAL_HOME` unset.
    Unset,
}

/// The runtime's installation and whether it can dispatch from the Ethernet cores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    pub source: Source,
    pub eth_dispatch: EthDispatch,
}

/// The evidence the emulator reports: a patched tree's, or a stock one's.
fn emulated(stock: bool) -> Evidence {
    Evidence {
        kernel_size: if stock {
            24 * 1024
        } else {
            PATCHED_KERNEL_SIZE
        },
        descriptor_patched: Some(!stock),
    }
}

impl Installation {
    /// The emulator standing in for a stock (`stock`) or a patched tt-metal.
    pub fn emulator(stock: bool) -> Installation {
        let evidence = emulated(stock);
        Installation {
            source: Source::Emulator,
            eth_dispatch: if stock {
                EthDispatch::Stock(evidence)
            } else {
                EthDispatch::Patched(evidence)
            },
        }
    }

    /// The tt-metal tree at `home`, inspected.
    pub fn tt_metal(home: &Path) -> Installation {
        Installation {
            source: Source::TtMetal(home.to_path_buf()),
            eth_dispatch: detect(home),
        }
    }

    /// The installation this build drives: the emulator (reading `TTR_EMU_TT_METAL`), or with
    /// the `metal` feature the tree at `TT_METAL_HOME`. An unknown `TTR_EMU_TT_METAL` value is
    /// an error.
    pub fn of_this_build() -> Result<Installation> {
        if cfg!(feature = "metal") {
            return Ok(match std::env::var_os(TT_METAL_HOME) {
                Some(home) if !home.is_empty() => Installation::tt_metal(Path::new(&home)),
                _ => Installation {
                    source: Source::Unset,
                    eth_dispatch: EthDispatch::Unknown(format!(
                        "{TT_METAL_HOME} is not set; point it at the tt-metal tree this build links"
                    )),
                },
            });
        }
        match std::env::var(EMULATOR_ENV).as_deref() {
            Err(std::env::VarError::NotPresent) | Ok("") | Ok("patched") => {
                Ok(Installation::emulator(false))
            }
            Ok("stock") => Ok(Installation::emulator(true)),
            Ok(other) => Err(Error::InvalidArgument(format!(
                "{EMULATOR_ENV}='{other}': use 'stock' (the emulator behaves as an unpatched tt-metal) or 'patched' (the default)"
            ))),
            Err(std::env::VarError::NotUnicode(_)) => Err(Error::InvalidArgument(format!(
                "{EMULATOR_ENV} is not UTF-8: use 'stock' or 'patched'"
            ))),
        }
    }

    /// Whether this is the emulator standing in for a stock tt-metal.
    pub fn emulates_stock(&self) -> bool {
        self.source == Source::Emulator && matches!(self.eth_dispatch, EthDispatch::Stock(_))
    }

    /// The placement [`Dispatch::Auto`] resolves to, with the warning to show when it falls
    /// back to Tensix dispatch.
    pub fn auto_dispatch(&self) -> (Dispatch, Option<String>) {
        match &self.eth_dispatch {
            EthDispatch::Patched(_) => (Dispatch::Eth, None),
            found => (
                Dispatch::Tensix,
                Some(format!(
                    "{}: ETH dispatch is {found}, so dispatch runs on a Tensix column and the compute grid is 11x10. \
                     For the full 12x10 grid apply {PATCH} to that tt-metal with `git apply`, rebuild it, and see README \"Running on a p150a\"",
                    self.describe_source()
                )),
            ),
        }
    }

    /// "the emulator" or "tt-metal at PATH".
    pub fn describe_source(&self) -> String {
        match &self.source {
            Source::Emulator => format!(
                "the emulator standing in for a {} tt-metal ({EMULATOR_ENV}=stock|patched)",
                self.eth_dispatch.name()
            ),
            Source::TtMetal(home) => format!("tt-metal at {}", home.display()),
            Source::Unset => format!("tt-metal ({TT_METAL_HOME} unset)"),
        }
    }

    /// The tt-metal version: "emulator", or `git describe` of the tree at `TT_METAL_HOME`
    /// (e.g. `v0.78.0-dev20260820-25-g8b98410e730`); an error says why it is unknown.
    pub fn version(&self) -> std::result::Result<String, String> {
        match &self.source {
            Source::Emulator => Ok("emulator".to_string()),
            Source::Unset => Err(format!("{TT_METAL_HOME} is not set")),
            Source::TtMetal(home) => git_describe(home),
        }
    }
}

fn git_describe(home: &Path) -> std::result::Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(home)
        .args(["describe", "--tags", "--always", "--dirty"])
        .output()
        .map_err(|e| format!("cannot run git in {}: {e}", home.display()))?;
    if !out.status.success() {
        return Err(format!(
            "`git describe` in {} failed: {}",
            home.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether the tt-metal tree at `home` carries the ETH-dispatch patch (the module doc says what
/// is looked at).
pub fn detect(home: &Path) -> EthDispatch {
    let map = home.join(DEV_MEM_MAP);
    let text = match std::fs::read_to_string(&map) {
        Ok(t) => t,
        Err(e) => {
            return EthDispatch::Unknown(format!(
                "cannot read {}: {e}; is {TT_METAL_HOME} a tt-metal tree?",
                map.display()
            ))
        }
    };
    let kernel_size = match Defines::parse(&text).evaluate(KERNEL_SIZE_MACRO) {
        Ok(v) => v,
        Err(e) => {
            return EthDispatch::Unknown(format!(
                "cannot evaluate {KERNEL_SIZE_MACRO} in {}: {e}",
                map.display()
            ))
        }
    };
    let descriptor = home.join(CORE_DESCRIPTOR);
    let descriptor_patched = match std::fs::read_to_string(&descriptor) {
        Ok(source) => Some(cmacro::strip_comments(&source).contains(DESCRIPTOR_MARKER)),
        // Without the descriptor source only a stock kernel budget is conclusive.
        Err(e) if kernel_size >= PATCHED_KERNEL_SIZE => {
            return EthDispatch::Unknown(format!(
                "{KERNEL_SIZE_MACRO} is patched ({kernel_size} bytes) but {} cannot be read ({e}), so the descriptor change cannot be confirmed",
                descriptor.display()
            ))
        }
        Err(_) => None,
    };
    let evidence = Evidence {
        kernel_size,
        descriptor_patched,
    };
    if evidence.patched() {
        EthDispatch::Patched(evidence)
    } else {
        EthDispatch::Stock(evidence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STOCK_MAP: &str = "\
#define MEM_ERISC_KERNEL_SIZE (24 * 1024)
// Idle ERISC memory map
#define MEM_IERISC_KERNEL_SIZE MEM_ERISC_KERNEL_SIZE
";
    const PATCHED_MAP: &str = "\
#define MEM_ERISC_KERNEL_SIZE (24 * 1024)
#define MEM_IERISC_TEXT_SIZE (40 * 1024)
#define MEM_IERISC_KERNEL_SIZE \\
    MEM_IERISC_TEXT_SIZE
";
    const STOCK_DESCRIPTOR: &str = "\
for (const auto& core_node : desc_yaml[dispatch_cores_string]) {
    // logical_eth_core_to_chan_map is not consulted here
    if (logical_active_eth_cores.contains(logical_coord)) { continue; }
}
";
    const PATCHED_DESCRIPTOR: &str = "\
for (const auto& core_node : desc_yaml[dispatch_cores_string]) {
    if (!soc_desc.logical_eth_core_to_chan_map.contains(logical_coord)) { continue; }
}
";

    /// A fake tt-metal tree with the given memory map and descriptor loader (None: absent).
    fn tree(map: Option<&str>, descriptor: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (rel, text) in [(DEV_MEM_MAP, map), (CORE_DESCRIPTOR, descriptor)] {
            if let Some(text) = text {
                let path = dir.path().join(rel);
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                std::fs::write(path, text).expect("write");
            }
        }
        dir
    }

    #[test]
    fn a_stock_tree_is_stock_and_auto_falls_back_with_the_patch_named() {
        let t = tree(Some(STOCK_MAP), Some(STOCK_DESCRIPTOR));
        let found = detect(t.path());
        assert_eq!(
            found,
            EthDispatch::Stock(Evidence {
                kernel_size: 24 * 1024,
                descriptor_patched: Some(false)
            })
        );
        let (dispatch, warning) = Installation::tt_metal(t.path()).auto_dispatch();
        assert_eq!(dispatch, Dispatch::Tensix);
        let warning = warning.expect("a fallback warns");
        assert!(warning.contains(PATCH), "{warning}");
        assert!(warning.contains("11x10"), "{warning}");
        assert!(warning.contains("Running on a p150a"), "{warning}");
    }

    #[test]
    fn a_patched_tree_is_patched_and_auto_takes_eth() {
        let t = tree(Some(PATCHED_MAP), Some(PATCHED_DESCRIPTOR));
        assert_eq!(
            detect(t.path()),
            EthDispatch::Patched(Evidence {
                kernel_size: 40 * 1024,
                descriptor_patched: Some(true)
            })
        );
        assert_eq!(
            Installation::tt_metal(t.path()).auto_dispatch(),
            (Dispatch::Eth, None)
        );
    }

    #[test]
    fn half_a_patch_is_stock() {
        let budget_only = tree(Some(PATCHED_MAP), Some(STOCK_DESCRIPTOR));
        assert!(matches!(
            detect(budget_only.path()),
            EthDispatch::Stock(Evidence {
                kernel_size: 40960,
                descriptor_patched: Some(false)
            })
        ));
        let descriptor_only = tree(Some(STOCK_MAP), Some(PATCHED_DESCRIPTOR));
        assert!(matches!(
            detect(descriptor_only.path()),
            EthDispatch::Stock(Evidence {
                kernel_size: 24576,
                descriptor_patched: Some(true)
            })
        ));
    }

    #[test]
    fn missing_files_give_unknown_or_stock_with_the_reason() {
        let empty = tree(None, None);
        let EthDispatch::Unknown(why) = detect(empty.path()) else {
            panic!("no memory map is unknown");
        };
        assert!(
            why.contains(DEV_MEM_MAP) && why.contains(TT_METAL_HOME),
            "{why}"
        );
        // A patched budget cannot be confirmed without the descriptor loader.
        let headers_only = tree(Some(PATCHED_MAP), None);
        let EthDispatch::Unknown(why) = detect(headers_only.path()) else {
            panic!("a patched budget without the loader is unknown");
        };
        assert!(why.contains(CORE_DESCRIPTOR), "{why}");
        // A stock budget is conclusive on its own (e.g. the ttnn wheel's tree).
        let wheel = tree(Some(STOCK_MAP), None);
        let found = detect(wheel.path());
        assert_eq!(
            found,
            EthDispatch::Stock(Evidence {
                kernel_size: 24576,
                descriptor_patched: None
            })
        );
        assert!(
            found.to_string().contains("no descriptor loader"),
            "{found}"
        );
        let (dispatch, warning) = Installation::tt_metal(empty.path()).auto_dispatch();
        assert_eq!(dispatch, Dispatch::Tensix);
        assert!(warning.expect("warns").contains("unknown"));
    }

    #[test]
    fn garbage_gives_unknown_naming_the_macro() {
        for map in [
            "#define MEM_IERISC_KERNEL_SIZE (24 * \n",
            "#define MEM_IERISC_KERNEL_SIZE MEM_NOT_DEFINED\n",
            "#define MEM_IERISC_KERNEL_SIZE sizeof(uint32_t)\n",
            "\u{0}\u{1}garbage",
        ] {
            let t = tree(Some(map), Some(PATCHED_DESCRIPTOR));
            let EthDispatch::Unknown(why) = detect(t.path()) else {
                panic!("{map:?} is unknown");
            };
            assert!(why.contains(KERNEL_SIZE_MACRO), "{map:?}: {why}");
        }
        // Not UTF-8.
        let t = tree(Some(""), Some(PATCHED_DESCRIPTOR));
        std::fs::write(t.path().join(DEV_MEM_MAP), [0xff, 0xfe, 0x00]).expect("write");
        assert!(matches!(detect(t.path()), EthDispatch::Unknown(_)));
    }

    #[test]
    fn the_marker_in_a_comment_does_not_count() {
        let t = tree(Some(PATCHED_MAP), Some(STOCK_DESCRIPTOR));
        assert!(matches!(detect(t.path()), EthDispatch::Stock(_)));
    }

    #[test]
    fn the_emulator_stands_in_for_either() {
        let patched = Installation::emulator(false);
        assert_eq!(patched.auto_dispatch(), (Dispatch::Eth, None));
        assert_eq!(patched.version(), Ok("emulator".to_string()));
        assert!(!patched.emulates_stock());
        let stock = Installation::emulator(true);
        assert!(stock.emulates_stock());
        let (dispatch, warning) = stock.auto_dispatch();
        assert_eq!(dispatch, Dispatch::Tensix);
        assert!(warning.expect("warns").contains(EMULATOR_ENV));
    }
}
