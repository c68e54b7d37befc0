//! The descriptors of a response as NumPy's `.npz`: a zip archive (stored, uncompressed, as
//! `np.savez` writes it) holding `descriptors.npy`, an (N, dim) little-endian float16 array.
//! `np.load(io.BytesIO(data))["descriptors"]` reads it back.

use std::io::{Cursor, Write};

use half::f16;
use zip::result::ZipError;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// The array's name inside the archive (the key `np.load` gives it).
pub const KEY: &str = "descriptors";

/// An `.npz` archive with one (`rows.len() / dim`, `dim`) float16 array named [`KEY`]; values
/// are rounded from f32 to the nearest f16 (ties to even).
pub fn descriptors_npz(rows: &[f32], dim: usize) -> Result<Vec<u8>, ZipError> {
    let n = rows.len().checked_div(dim).unwrap_or(0);
    let npy = npy_f16(rows, [n, dim]);
    let mut zip = ZipWriter::new(Cursor::new(Vec::with_capacity(npy.len() + 256)));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    zip.start_file(format!("{KEY}.npy"), options)?;
    zip.write_all(&npy)?;
    Ok(zip.finish()?.into_inner())
}

/// A version 1.0 `.npy` file of a C-order float16 array; the header is padded so that the data
/// starts at a multiple of 64 bytes, as NumPy writes it.
fn npy_f16(values: &[f32], shape: [usize; 2]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '<f2', 'fortran_order': False, 'shape': ({}, {}), }}",
        shape[0], shape[1]
    );
    // magic (6) + version (2) + header length (2) + dict + padding + '\n'
    let unpadded = 10 + dict.len() + 1;
    let header_len = dict.len() + 1 + (64 - unpadded % 64) % 64;
    let mut out = Vec::with_capacity(10 + header_len + values.len() * 2);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    // The dict of a 2-D shape is far below 64 KiB, the v1.0 header's limit.
    out.extend_from_slice(&(header_len as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(10 + header_len - 1, b' ');
    out.push(b'\n');
    for &v in values {
        out.extend_from_slice(&f16::from_f32(v).to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_aligned_and_data_is_f16() {
        let npy = npy_f16(&[1.0, -0.5, 0.1], [1, 3]);
        let header_len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&npy[10..10 + header_len]).unwrap();
        assert!(header.starts_with("{'descr': '<f2', 'fortran_order': False, 'shape': (1, 3), }"));
        assert!(header.ends_with('\n'));
        let data: Vec<f32> = npy[10 + header_len..]
            .chunks_exact(2)
            .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect();
        assert_eq!(data, vec![1.0, -0.5, f16::from_f32(0.1).to_f32()]);
    }

    #[test]
    fn empty_descriptors_give_a_zero_row_array() {
        let npz = descriptors_npz(&[], 256).unwrap();
        let mut archive = zip::ZipArchive::new(Cursor::new(npz)).unwrap();
        let file = archive.by_name("descriptors.npy").unwrap();
        assert_eq!(file.compression(), CompressionMethod::Stored);
    }
}
