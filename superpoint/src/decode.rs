//! Input → the network's 8-bit input plane (DESIGN §2, step 1).
//!
//! JPEG goes through libjpeg-turbo (built from source by `turbojpeg-sys`, the same library and
//! default settings — accurate integer IDCT, fancy upsampling — as Pillow's decoder, so planes
//! are bit-identical to the reference). Every other format goes through the `image` crate.
//! Image dimensions are checked from the header before any pixel buffer is allocated.

use std::io::Cursor;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};
use superpoint_graph::{Channel, Tensor};

use crate::error::{Error, Result};
use crate::input::Input;

/// The largest accepted image side, in pixels.
pub const MAX_SIDE: u64 = 16384;
/// The largest accepted image area, in pixels (100 megapixels).
pub const MAX_PIXELS: u64 = 100_000_000;
/// The smallest accepted image side: one 8×8 cell of the network.
pub const MIN_SIDE: u64 = 8;

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
        Input::Path(path) => {
            let bytes = std::fs::read(path.as_ref()).map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })?;
            plane_from_bytes(&bytes, spec)
        }
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
    if bytes.is_empty() {
        return Err(Error::EmptyImage);
    }
    let format = image::guess_format(bytes).map_err(|_| {
        Error::UnsupportedFormat("the data is not a recognised image file".to_string())
    })?;
    match format {
        ImageFormat::Jpeg => plane_from_jpeg(bytes, spec),
        ImageFormat::Png
        | ImageFormat::Bmp
        | ImageFormat::Gif
        | ImageFormat::Tiff
        | ImageFormat::WebP
        | ImageFormat::Pnm => {
            let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
            let mut limits = Limits::default();
            limits.max_image_width = Some(MAX_SIDE as u32);
            limits.max_image_height = Some(MAX_SIDE as u32);
            limits.max_alloc = Some(MAX_PIXELS * 8);
            reader.limits(limits);
            let decoder = reader.into_decoder().map_err(decode_error)?;
            let (w, h) = decoder.dimensions();
            check_size(w as u64, h as u64)?;
            let image = DynamicImage::from_decoder(decoder).map_err(decode_error)?;
            Ok(plane_from_image(&image, spec))
        }
        other => Err(Error::UnsupportedFormat(format!("{other:?}"))),
    }
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

fn plane_from_jpeg(bytes: &[u8], spec: PlaneSpec) -> Result<Tensor<u8>> {
    let jpeg_error = |e: turbojpeg::Error| Error::Decode(format!("JPEG: {e}"));
    let mut decompressor = turbojpeg::Decompressor::new().map_err(jpeg_error)?;
    let header = decompressor.read_header(bytes).map_err(jpeg_error)?;
    check_size(header.width as u64, header.height as u64)?;
    let (width, height) = (header.width, header.height);
    let mut rgb = vec![0u8; width * height * 3];
    let image = turbojpeg::Image {
        pixels: rgb.as_mut_slice(),
        width,
        pitch: width * 3,
        height,
        format: turbojpeg::PixelFormat::RGB,
    };
    decompressor.decompress(bytes, image).map_err(jpeg_error)?;
    Ok(plane_from_interleaved(&rgb, 3, width, height, spec))
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
fn plane_from_interleaved(
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
