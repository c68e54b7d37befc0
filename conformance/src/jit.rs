//! The compile environment of tt-metal's JIT for a Blackhole kernel, rebuilt for a host compiler:
//! the firmware wrapper each processor compiles the kernel inside, the defines the JIT generates and
//! the include directories it passes, rooted at the unpacked wheel.
//!
//! `-m32` makes the host's pointers and `long` 32-bit as on the baby RISC-V cores (the firmware
//! headers cast pointers to `uint32_t`). Defines whose values depend on the opened device
//! (bank counts, the PCIe core, the dispatch mailbox) get Blackhole p150a values; a syntax check
//! only needs them to be constants.

use std::path::{Path, PathBuf};

/// A RISC-V core of a Tensix tile, each compiling its own copy of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Processor {
    Brisc,
    Ncrisc,
    TriscUnpack,
    TriscMath,
    TriscPack,
}

impl Processor {
    /// The processors a data-movement kernel may be placed on.
    pub const DATA_MOVEMENT: [Processor; 2] = [Processor::Brisc, Processor::Ncrisc];
    /// The three TRISCs, each compiling the compute kernel once.
    pub const COMPUTE: [Processor; 3] = [
        Processor::TriscUnpack,
        Processor::TriscMath,
        Processor::TriscPack,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Processor::Brisc => "BRISC",
            Processor::Ncrisc => "NCRISC",
            Processor::TriscUnpack => "TRISC0 (unpack)",
            Processor::TriscMath => "TRISC1 (math)",
            Processor::TriscPack => "TRISC2 (pack)",
        }
    }

    /// The firmware source that includes the kernel, under `tt_metal/hw/firmware/src/tt-1xx`.
    fn wrapper(self) -> &'static str {
        match self {
            Processor::Brisc => "brisck.cc",
            Processor::Ncrisc => "ncrisck.cc",
            _ => "trisck.cc",
        }
    }

    /// The defines the JIT adds for this processor.
    fn defines(self) -> &'static [&'static str] {
        match self {
            Processor::Brisc => &["COMPILE_FOR_BRISC", "PROCESSOR_INDEX=0"],
            Processor::Ncrisc => &["COMPILE_FOR_NCRISC", "PROCESSOR_INDEX=1"],
            Processor::TriscUnpack => &[
                "COMPILE_FOR_TRISC=0",
                "PROCESSOR_INDEX=2",
                "UCK_CHLKC_UNPACK",
                "TRISC_UNPACK",
                "NAMESPACE=chlkc_unpack",
            ],
            Processor::TriscMath => &[
                "COMPILE_FOR_TRISC=1",
                "PROCESSOR_INDEX=3",
                "UCK_CHLKC_MATH",
                "TRISC_MATH",
                "NAMESPACE=chlkc_math",
            ],
            Processor::TriscPack => &[
                "COMPILE_FOR_TRISC=2",
                "PROCESSOR_INDEX=4",
                "UCK_CHLKC_PACK",
                "TRISC_PACK",
                "NAMESPACE=chlkc_pack",
            ],
        }
    }
}

/// Defines every Blackhole kernel build gets.
const COMMON_DEFINES: &[&str] = &[
    "TENSIX_FIRMWARE",
    "ARCH_BLACKHOLE",
    "KERNEL_BUILD",
    "PROGRAMMABLE_CORE_TYPE=0",
    "NOC_MODE=0",
    "NUM_DRAM_BANKS=8",
    "LOG_BASE_2_OF_NUM_DRAM_BANKS=3",
    "NUM_L1_BANKS=120",
    "LOG_BASE_2_OF_NUM_L1_BANKS=7",
    "PCIE_NOC_X=11",
    "PCIE_NOC_Y=0",
    "DISPATCH_MESSAGE_ADDR=0",
];

/// Include directories below the tt-metal root, in the JIT's order.
const INCLUDE_DIRS: &[&str] = &[
    "",
    "tt_metal",
    "tt_metal/hw/inc",
    "tt_metal/hostdevcommon/api",
    "tt_metal/api",
    "tt_metal/hw/inc/internal/tt-1xx",
    "tt_metal/hw/inc/internal/tt-1xx/blackhole",
    "tt_metal/hw/inc/internal/tt-1xx/blackhole/noc",
    "tt_metal/hw/ckernels/blackhole/metal/common",
    "tt_metal/hw/ckernels/blackhole/metal/llk_io",
    "tt_metal/hw/ckernels/blackhole/metal/llk_api",
    "tt_metal/hw/ckernels/blackhole/metal/llk_api/llk_sfpu",
    "tt_metal/tt-llk/tt_llk_blackhole/common/inc",
    "tt_metal/tt-llk/tt_llk_blackhole/common/inc/sfpu",
    "tt_metal/tt-llk/tt_llk_blackhole/llk_lib",
    "tt_metal/tt-llk/common",
];

/// One build of one kernel source for one processor.
pub struct Build<'a> {
    pub processor: Processor,
    pub kernel: &'a Path,
    pub compile_args: &'a [u32],
    pub noc: u32,
}

/// The JIT environment rooted at an unpacked tt-metal tree.
pub struct Jit {
    root: PathBuf,
    harness: PathBuf,
}

impl Jit {
    pub fn new(root: PathBuf, harness: PathBuf) -> Self {
        Jit { root, harness }
    }

    /// The firmware wrapper the build compiles (it includes the kernel through the harness).
    pub fn wrapper(&self, processor: Processor) -> PathBuf {
        self.root
            .join("tt_metal/hw/firmware/src/tt-1xx")
            .join(processor.wrapper())
    }

    /// Compiler arguments (without the source file) for a build.
    pub fn args(&self, build: &Build) -> Vec<String> {
        let mut args = vec!["-std=c++17".to_string(), "-m32".to_string()];
        let compile_args: Vec<String> = build.compile_args.iter().map(u32::to_string).collect();
        let mut defines: Vec<String> = COMMON_DEFINES.iter().map(|d| d.to_string()).collect();
        defines.extend(build.processor.defines().iter().map(|d| d.to_string()));
        defines.push(format!("NOC_INDEX={}", build.noc));
        defines.push(format!(
            "KERNEL_COMPILE_TIME_ARGS={}",
            compile_args.join(",")
        ));
        defines.push(format!("TTR_CONF_KERNEL=\"{}\"", build.kernel.display()));
        args.extend(defines.into_iter().map(|d| format!("-D{d}")));
        args.push(format!("-I{}", self.harness.display()));
        args.extend(
            INCLUDE_DIRS
                .iter()
                .map(|dir| format!("-I{}", self.root.join(dir).display())),
        );
        args
    }
}
