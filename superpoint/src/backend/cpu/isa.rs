//! The instruction set the CPU kernels run with, chosen at run time: AVX-512 where the CPU has
//! it, else AVX2 + FMA, else portable code. The build targets baseline x86-64, so one binary
//! runs everywhere and still uses the widest vectors the machine has.
//!
//! The environment variable [`ISA_ENV`] (`avx512`, `avx2` or `scalar`) forces a level at or
//! below the detected one, so that tests and benchmarks can run every path on one machine.

use std::fmt;

use thiserror::Error;

/// The environment variable that forces an instruction-set level.
pub const ISA_ENV: &str = "SUPERPOINT_CPU_ISA";

/// An instruction-set level of the CPU kernels, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Plain Rust without target features (the compiler may still use baseline SSE2).
    Scalar,
    /// AVX2 and FMA: eight f32 lanes, fused multiply-add.
    Avx2,
    /// AVX-512 (F, BW, DQ, VL: x86-64-v4): sixteen f32 lanes, masked loads and stores.
    Avx512,
}

/// A level that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IsaError {
    #[error("{ISA_ENV}={value:?} is not an instruction-set level: use avx512, avx2 or scalar (or unset it)")]
    Unknown { value: String },
    #[error(
        "{ISA_ENV}={level}, but this CPU does not support {level} (its best level is {detected}): \
         use {detected} or a lower level"
    )]
    Unsupported { level: Isa, detected: Isa },
}

impl Isa {
    /// Every level, lowest first.
    pub const ALL: [Isa; 3] = [Isa::Scalar, Isa::Avx2, Isa::Avx512];

    /// The level's name, as [`ISA_ENV`] takes it.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// The level named `name` (case-insensitive).
    pub fn parse(name: &str) -> Option<Isa> {
        Isa::ALL
            .into_iter()
            .find(|isa| isa.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Whether this CPU can run the level.
    pub fn supported(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                Isa::Avx2.supported()
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512vl")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 | Isa::Avx512 => false,
        }
    }

    /// The best level this CPU supports.
    pub fn detected() -> Isa {
        Isa::ALL
            .into_iter()
            .rev()
            .find(|isa| isa.supported())
            .unwrap_or(Isa::Scalar)
    }

    /// The level asked for by `value` (the content of [`ISA_ENV`], `None` when unset): the
    /// detected level when unset or empty, else the named level if this CPU supports it.
    pub fn select(value: Option<&str>) -> Result<Isa, IsaError> {
        let detected = Isa::detected();
        let Some(value) = value.filter(|v| !v.trim().is_empty()) else {
            return Ok(detected);
        };
        let level = Isa::parse(value).ok_or_else(|| IsaError::Unknown {
            value: value.to_string(),
        })?;
        if level.supported() {
            Ok(level)
        } else {
            Err(IsaError::Unsupported { level, detected })
        }
    }

    /// The level [`ISA_ENV`] asks for (the detected one when it is unset).
    pub fn from_env() -> Result<Isa, IsaError> {
        Isa::select(std::env::var(ISA_ENV).ok().as_deref())
    }

    /// The process's level: [`Isa::from_env`] when that is valid, else the detected level;
    /// read once.
    pub fn process() -> Isa {
        static LEVEL: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
        *LEVEL.get_or_init(|| Isa::from_env().unwrap_or_else(|_| Isa::detected()))
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for isa in Isa::ALL {
            assert_eq!(Isa::parse(isa.name()), Some(isa));
        }
        assert_eq!(Isa::parse(" AVX2 "), Some(Isa::Avx2));
        assert_eq!(Isa::parse("sse4"), None);
    }

    #[test]
    fn selection_follows_the_variable() {
        assert_eq!(Isa::select(None), Ok(Isa::detected()));
        assert_eq!(Isa::select(Some("")), Ok(Isa::detected()));
        assert_eq!(Isa::select(Some("scalar")), Ok(Isa::Scalar));
        assert!(matches!(
            Isa::select(Some("neon")),
            Err(IsaError::Unknown { .. })
        ));
        for isa in Isa::ALL {
            match Isa::select(Some(isa.name())) {
                Ok(level) => assert!(level == isa && isa <= Isa::detected()),
                Err(e) => assert_eq!(
                    e,
                    IsaError::Unsupported {
                        level: isa,
                        detected: Isa::detected()
                    }
                ),
            }
        }
    }
}
