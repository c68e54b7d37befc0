//! Writing descriptors as a NumPy `.npy` file (N × dim, f32, C order).

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use anyhow::Context;
use npyz::WriterBuilder;

/// Writes `data` (rows × cols, row-major) to `path`.
pub fn write_f32(path: &Path, data: &[f32], rows: usize, cols: usize) -> anyhow::Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[rows as u64, cols as u64])
        .writer(BufWriter::new(file))
        .begin_nd()
        .with_context(|| format!("cannot write {}", path.display()))?;
    writer
        .extend(data.iter().copied())
        .and_then(|()| writer.finish())
        .with_context(|| format!("cannot write {}", path.display()))
}
