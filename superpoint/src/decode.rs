//! Input → the network's 8-bit input plane (DESIGN §2, step 1).
//!
//! JPEG goes through libjpeg-turbo as Pillow decodes it ([`crate::jpeg`]: the same library and
//! default settings, CMYK/YCCK files and files with warning-level corruption handled as Pillow
//! handles them, so planes are bit-identical to the reference). Every other format goes through
//! the `image` crate. Image dimensions are checked from the header before any pixel buffer is
//! allocated, and [`probe`] tells from the header how much memory decoding will take. Files
//! read from a path must be regular files of at most [`MAX_FILE_BYTES`].

use std::io::{Cursor, Read};
use std::path::Path;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};
use superpoint_graph::{Channel, Tensor};

use crate::alloc::check_available;
use crate::error::{Error, Result};
use crate::input::Input;
use crate::jpeg;

/// The largest accepted image side, in pixels.
pub const MAX_SIDE: u64 = 16384;
/// The largest accepted image area, in pixels (100 megapixels).
pub const MAX_PIXELS: u64 = 100_000_000;
/// The smallest accepted image side: one 8×8 cell of the network.
pub const MIN_SIDE: u64 = 8;
/// The largest image file read from a path, in bytes: the server's default body limit, 32 MiB.
pub const MAX_FILE_BYTES: u64 = 32 << 20;

/// Which plane of a colour image becomes the network input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlaneSpec {
    pub channel: Channel,
    /// The pixels are in BGR order (R is channel 2), e.g. arrays from OpenCV.
    pub bgr: bool,
}

/// Decodes `input` and returns its input plane (original size).
pub fn decode_plane(input: &Input<'_>, spec: PlaneSpec) -> Result<Tensor<u8>> {
    match input {
        Input::Path(path) => plane_from_bytes(&read_image_file(path)?, spec),
        Input::Bytes(bytes) => plane_from_bytes(bytes, spec),
        Input::Image(image) => {
            check_size(image.width() as u64, image.height() as u64)?;
            Ok(plane_from_image(image, spec))
        }
        Input::Plane {
            data,
            width,
            height,
        } => {
            check_size(*width as u64, *height as u64)?;
            let expected = width * height;
            if data.len() != expected {
                return Err(Error::PlaneLength {
                    len: data.len(),
                    width: *width,
                    height: *height,
                    expected,
                });
            }
            Ok(Tensor {
                channels: 1,
                height: *height,
                width: *width,
                data: data.to_vec(),
            })
        }
    }
}

/// The bytes of an image file: a regular file (not a directory, device, FIFO or socket, which
/// could block or never end) of at most [`MAX_FILE_BYTES`].
pub fn read_image_file(path: &Path) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let kind = std::fs::metadata(path).map_err(io)?.file_type();
    if !kind.is_file() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
            kind: file_kind(&kind),
        });
    }
    let too_large = |len| Error::FileTooLarge {
        path: path.to_path_buf(),
        len,
        limit: MAX_FILE_BYTES,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len > MAX_FILE_BYTES {
        return Err(too_large(len));
    }
    // The file may grow after the check: read one byte past the limit at most.
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// What an image file's header says, read without decoding the pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub width: u64,
    pub height: u64,
    /// An upper bound of the bytes decoding the file to its input plane allocates at once,
    /// the plane included.
    pub decode_bytes: u64,
}

/// Reads the header of an encoded image: its size and what decoding it will allocate. Errors
/// are those decoding would give (empty data, an unsupported format, an unreadable header).
pub fn probe(bytes: &[u8]) -> Result<Probe> {
    match image_format(bytes)? {
        ImageFormat::Jpeg => {
            let header = jpeg::read_header(bytes)?;
            Ok(Probe {
                width: header.width as u64,
                height: header.height as u64,
                decode_bytes: header.decode_bytes(),
            })
        }
        format => {
            let decoder = limited_decoder(bytes, format)?;
            let (width, height) = decoder.dimensions();
            let pixels = u64::from(width) * u64::from(height);
            // The decoded image, a conversion to RGB when it is not 8-bit, and the plane.
            Ok(Probe {
                width: width.into(),
                height: height.into(),
                decode_bytes: decoder.total_bytes() + 4 * pixels,
            })
        }
    }
}

/// Checks an image size against the accepted range.
pub fn check_size(width: u64, height: u64) -> Result<()> {
    let fail = |why| Err(Error::ImageSize { width, height, why });
    if width == 0 || height == 0 {
        return fail("the image has no pixels");
    }
    if width < MIN_SIDE || height < MIN_SIDE {
        return fail("both sides must be at least 8 pixels (one network cell)");
    }
    if width > MAX_SIDE || height > MAX_SIDE || width * height > MAX_PIXELS {
        return fail(
            "too large: at most 16384 pixels a side and 100 megapixels; downscale it first",
        );
    }
    Ok(())
}

fn plane_from_bytes(bytes: &[u8], spec: PlaneSpec) -> Result<Tensor<u8>> {
    match image_format(bytes)? {
        ImageFormat::Jpeg => jpeg::decode_plane(bytes, spec),
        format => {
            let decoder = limited_decoder(bytes, format)?;
            let (w, h) = decoder.dimensions();
            check_size(w as u64, h as u64)?;
            check_available(
                decoder.total_bytes(),
                &format!("decoding the {w}x{h} image"),
                "downscale the image",
            )?;
            let image = DynamicImage::from_decoder(decoder).map_err(decode_error)?;
            Ok(plane_from_image(&image, spec))
        }
    }
}

/// The format of an encoded image, if it is one the detector accepts.
fn image_format(bytes: &[u8]) -> Result<ImageFormat> {
    if bytes.is_empty() {
        return Err(Error::EmptyImage);
    }
    let format = image::guess_format(bytes).map_err(|_| {
        Error::UnsupportedFormat("the data is not a recognised image file".to_string())
    })?;
    match format {
        ImageFormat::Jpeg
        | ImageFormat::Png
        | ImageFormat::Bmp
        | ImageFormat::Gif
        | ImageFormat::Tiff
        | ImageFormat::WebP
        | ImageFormat::Pnm => Ok(format),
        other => Err(Error::UnsupportedFormat(format!("{other:?}"))),
    }
}

/// An `image` crate decoder for a non-JPEG file, its header read, with the size limits set.
fn limited_decoder(bytes: &[u8], format: ImageFormat) -> Result<impl ImageDecoder + '_> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE as u32);
    limits.max_image_height = Some(MAX_SIDE as u32);
    limits.max_alloc = Some(MAX_PIXELS * 8);
    reader.limits(limits);
    reader.into_decoder().map_err(decode_error)
}

fn decode_error(e: image::ImageError) -> Error {
    match e {
        image::ImageError::Unsupported(u) => Error::UnsupportedFormat(u.to_string()),
        image::ImageError::Limits(l) => Error::Decode(format!(
            "{l}: at most 16384 pixels a side and 100 megapixels"
        )),
        other => Error::Decode(other.to_string()),
    }
}

/// The input plane of a decoded image.
pub fn plane_from_image(image: &DynamicImage, spec: PlaneSpec) -> Tensor<u8> {
    let (width, height) = (image.width() as usize, image.height() as usize);
    match image {
        DynamicImage::ImageLuma8(gray) => Tensor {
            channels: 1,
            height,
            width,
            data: gray.as_raw().clone(),
        },
        DynamicImage::ImageRgb8(rgb) => {
            plane_from_interleaved(rgb.as_raw(), 3, width, height, spec)
        }
        DynamicImage::ImageRgba8(rgba) => {
            plane_from_interleaved(rgba.as_raw(), 4, width, height, spec)
        }
        other => plane_from_interleaved(other.to_rgb8().as_raw(), 3, width, height, spec),
    }
}

/// Picks the plane from interleaved pixels with `stride` bytes each (RGB or RGBA, or BGR(A)).
pub(crate) fn plane_from_interleaved(
    pixels: &[u8],
    stride: usize,
    width: usize,
    height: usize,
    spec: PlaneSpec,
) -> Tensor<u8> {
    let (r, b) = if spec.bgr { (2, 0) } else { (0, 2) };
    let data = match spec.channel {
        Channel::Red => pixels.chunks_exact(stride).map(|p| p[r]).collect(),
        Channel::Luma => pixels
            .chunks_exact(stride)
            .map(|p| luma(p[r], p[1], p[b]))
            .collect(),
    };
    Tensor {
        channels: 1,
        height,
        width,
        data,
    }
}

/// Pillow's `convert("L")`: ITU-R 601-2 luma in 16-bit fixed point, rounded.
pub fn luma(r: u8, g: u8, b: u8) -> u8 {
    ((19595 * r as u32 + 38470 * g as u32 + 7471 * b as u32 + 32768) >> 16) as u8
}
