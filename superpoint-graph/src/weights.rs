//! Convolution parameters as the evaluators consume them, keyed by the name a `Conv2d` node
//! refers to. Loading them from files is the library's job; this is only the in-memory form.

use std::collections::BTreeMap;

/// One convolution's parameters: `weight` is `[out, in, k, k]` row-major, `bias` is `[out]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvWeights {
    pub out_channels: usize,
    pub in_channels: usize,
    pub kernel: usize,
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
}

impl ConvWeights {
    /// The weight shape `[out, in, k, k]`.
    pub fn shape(&self) -> [usize; 4] {
        [
            self.out_channels,
            self.in_channels,
            self.kernel,
            self.kernel,
        ]
    }

    /// The weight for output `o`, input `i`, kernel tap (`ky`, `kx`).
    #[inline]
    pub fn at(&self, o: usize, i: usize, ky: usize, kx: usize) -> f32 {
        self.weight[((o * self.in_channels + i) * self.kernel + ky) * self.kernel + kx]
    }
}

/// All convolution parameters of a network, by weight-entry name.
pub type WeightSet = BTreeMap<String, ConvWeights>;
