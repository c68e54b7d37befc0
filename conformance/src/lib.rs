//! Conformance of the emulator's stand-in kernel API and of every emitted kernel with tt-metal's
//! real device-side headers, as shipped in the ttnn 0.78.0 wheel (the release nearest the pinned
//! tt-metal `8b98410e730`).
//!
//! Two checks, each a test of this crate:
//! * [`api`]: every function, type, field, enum value, variable and macro the stand-in headers
//!   (`tt-runtime/include/tt_emu_api`) offer to kernels exists in the real headers with the same
//!   name, template parameters, parameter types and defaults, and return type. Both sides are
//!   read with libclang ([`decls`]).
//! * [`kernels`]: every checked-in kernel under `kernel-gen/artifacts` passes `g++ -fsyntax-only`
//!   inside the real firmware wrapper of each processor it may run on, with the JIT's Blackhole
//!   defines ([`jit`]) and the small harness in `conformance/harness`.
//!
//! The real headers are fetched once by `scripts/conformance-headers.sh` ([`paths`]).

pub mod api;
pub mod decls;
pub mod error;
pub mod jit;
pub mod kernels;
pub mod paths;

pub use error::Error;
