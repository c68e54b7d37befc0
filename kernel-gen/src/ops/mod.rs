//! Per-op planning and kernel-IR lowering of the ops beyond convolution and max-pool: each
//! module plans one op family (its cores, CBs and parameters) and builds its reader / compute /
//! writer calls, against the layouts of [`crate::layout::DeviceTensor`].

pub mod sample;
