//! JPEG files decoded as Pillow decodes them, through libjpeg-turbo's TurboJPEG API.
//!
//! Pillow (the reference path: `Image.open(f).convert("RGB")`, channel 0) differs from a plain
//! TurboJPEG decode in three ways, each reproduced here:
//! * libjpeg *warnings* (corrupt entropy-coded data, junk bytes before a marker, a scan cut short
//!   by a marker) do not stop it: it keeps what libjpeg decoded. TurboJPEG reports a warning as a
//!   failure, so this module asks for the error code and accepts `TJERR_WARNING`. The `turbojpeg`
//!   crate does not expose that code, hence the few calls to its raw bindings below.
//! * A file whose data ends before libjpeg reaches the end-of-image marker is refused ("image
//!   file is truncated"), where TurboJPEG's memory source pads it with a fake EOI and only warns.
//!   [`reaches_end_of_image`] walks the markers as libjpeg does to tell the two apart.
//! * Four-component (CMYK and YCCK) files: libjpeg gives CMYK, Pillow reads it as inverted
//!   ("CMYK;I", Adobe's convention, for every four-component file) and converts with
//!   `cmyk2rgb`: `R = nk − nk·C/255` with `nk = 255 − K`, the product rounded as its `MULDIV255`.
//!
//! Same library, same defaults (accurate integer IDCT, fancy upsampling): the R planes are
//! bit-identical to Pillow's (tests/bad_input.rs checks this on fixtures Pillow decoded).
//!
//! YCbCr files (nearly every photo) are decoded to libjpeg-turbo's raw component planes and
//! only the plane asked for is upsampled and converted ([`crate::ycc`]): the same values as the
//! RGB decode, without converting and interleaving three channels the network does not use.

use std::ffi::{c_int, CStr};

use superpoint_graph::Tensor;
use turbojpeg::raw;

use crate::alloc::zeroed;
use crate::backend::cpu::Isa;
use crate::decode::{check_size, plane_from_interleaved, PlaneSpec};
use crate::error::{Error, Result};
use crate::ycc::{self, Planes, Sampling};

/// Progressive scans decoded at most: a file with more is a decompression bomb (every scan
/// revisits the whole image), refused with a message rather than decoded for minutes.
pub const MAX_SCANS: c_int = 1000;

/// What the frame header of a JPEG file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JpegHeader {
    pub width: usize,
    pub height: usize,
    /// Four components (CMYK or YCCK), decoded as CMYK.
    pub four_components: bool,
    /// Progressive: libjpeg holds every coefficient of the image while decoding.
    pub progressive: bool,
    /// YCbCr with a chroma subsampling [`crate::ycc`] upsamples: decoded as raw planes.
    pub ycc: Option<Sampling>,
}

impl JpegHeader {
    /// The bytes decoding allocates at its peak: the interleaved pixels, the output plane and,
    /// for a progressive file, libjpeg's whole-image coefficient buffers (2 bytes per sample).
    pub fn decode_bytes(&self) -> u64 {
        let pixels = (self.width * self.height) as u64;
        let components = if self.four_components { 4 } else { 3 };
        let coefficients = if self.progressive { 2 * components } else { 0 };
        pixels * (components + 1 + coefficients)
    }
}

/// A TurboJPEG decompressor handle, destroyed on drop.
struct Handle(raw::tjhandle);

impl Handle {
    fn new() -> Result<Self> {
        // SAFETY: tj3Init has no preconditions; a null result is handled.
        let handle = unsafe { raw::tj3Init(raw::TJINIT_TJINIT_DECOMPRESS as c_int) };
        if handle.is_null() {
            return Err(Error::Decode(
                "JPEG: cannot start libjpeg-turbo's decompressor".to_string(),
            ));
        }
        let handle = Handle(handle);
        handle.set(raw::TJPARAM_TJPARAM_SCANLIMIT, MAX_SCANS)?;
        Ok(handle)
    }

    fn get(&self, param: raw::TJPARAM) -> c_int {
        // SAFETY: the handle is live; tj3Get only reads it.
        unsafe { raw::tj3Get(self.0, param as c_int) }
    }

    fn set(&self, param: raw::TJPARAM, value: c_int) -> Result<()> {
        // SAFETY: the handle is live.
        let status = unsafe { raw::tj3Set(self.0, param as c_int, value) };
        self.check(status)
    }

    /// Ok for success and for a warning (what Pillow accepts), the message for a failure.
    fn check(&self, status: c_int) -> Result<()> {
        // SAFETY: the handle is live; the error string is NUL-terminated and owned by it.
        let (code, message) = unsafe {
            (
                raw::tj3GetErrorCode(self.0),
                CStr::from_ptr(raw::tj3GetErrorStr(self.0))
                    .to_string_lossy()
                    .into_owned(),
            )
        };
        if status == 0 || code == raw::TJERR_TJERR_WARNING as c_int {
            return Ok(());
        }
        if message.contains("more than") && message.contains("scans") {
            return Err(Error::Decode(format!(
                "JPEG: the file has more than {MAX_SCANS} progressive scans; it is refused as a \
                 decompression bomb"
            )));
        }
        Err(Error::Decode(format!("JPEG: {message}")))
    }

    fn header(&self, bytes: &[u8]) -> Result<JpegHeader> {
        // SAFETY: the pointer and length describe `bytes`, which outlives the call.
        let status =
            unsafe { raw::tj3DecompressHeader(self.0, bytes.as_ptr(), bytes.len() as raw::size_t) };
        self.check(status)?;
        let (width, height) = (
            self.get(raw::TJPARAM_TJPARAM_JPEGWIDTH),
            self.get(raw::TJPARAM_TJPARAM_JPEGHEIGHT),
        );
        // libjpeg stops before any frame header when the data ends early (or holds only
        // tables): the size is then unset (-1).
        let (Ok(width), Ok(height)) = (usize::try_from(width), usize::try_from(height)) else {
            return Err(Error::Decode(
                "JPEG: the file ends before its frame header, so it has no image: it is \
                 truncated or not a JPEG file"
                    .to_string(),
            ));
        };
        let colorspace = self.get(raw::TJPARAM_TJPARAM_COLORSPACE);
        let four_components = colorspace == raw::TJCS_TJCS_CMYK as c_int
            || colorspace == raw::TJCS_TJCS_YCCK as c_int;
        let sampling = match self.get(raw::TJPARAM_TJPARAM_SUBSAMP) {
            s if s == raw::TJSAMP_TJSAMP_444 as c_int => Some(Sampling::H1V1),
            s if s == raw::TJSAMP_TJSAMP_422 as c_int => Some(Sampling::H2V1),
            s if s == raw::TJSAMP_TJSAMP_440 as c_int => Some(Sampling::H1V2),
            s if s == raw::TJSAMP_TJSAMP_420 as c_int => Some(Sampling::H2V2),
            _ => None,
        };
        Ok(JpegHeader {
            width,
            height,
            four_components,
            progressive: self.get(raw::TJPARAM_TJPARAM_PROGRESSIVE) == 1,
            ycc: sampling.filter(|_| colorspace == raw::TJCS_TJCS_YCbCr as c_int),
        })
    }

    /// Decodes the raw Y, Cb and Cr planes of a YCbCr file and returns the plane `spec` asks
    /// for; `None` when libjpeg-turbo's planes are not the ones [`crate::ycc`] converts (then
    /// the caller decodes to RGB).
    fn decompress_ycc(
        &self,
        bytes: &[u8],
        header: &JpegHeader,
        sampling: Sampling,
        spec: PlaneSpec,
        isa: Isa,
    ) -> Result<Option<Vec<u8>>> {
        let (w, h) = (header.width, header.height);
        let subsamp = self.get(raw::TJPARAM_TJPARAM_SUBSAMP);
        let size = |component: c_int| -> Option<(usize, usize)> {
            let (w, h) = (c_int::try_from(w).ok()?, c_int::try_from(h).ok()?);
            // SAFETY: plain arithmetic on the arguments; -1 for invalid ones.
            let (pw, ph) = unsafe {
                (
                    raw::tj3YUVPlaneWidth(component, w, subsamp),
                    raw::tj3YUVPlaneHeight(component, h, subsamp),
                )
            };
            Some((usize::try_from(pw).ok()?, usize::try_from(ph).ok()?))
        };
        let (Some((yw, yh)), Some((cw, ch))) = (size(0), size(1)) else {
            return Ok(None);
        };
        let what = format!("decoding the {w}x{h} JPEG");
        let mut y = zeroed(yw * yh, &what, "downscale the image")?;
        let mut cb = zeroed(cw * ch, &what, "downscale the image")?;
        let mut cr = zeroed(cw * ch, &what, "downscale the image")?;
        let mut pointers = [y.as_mut_ptr(), cb.as_mut_ptr(), cr.as_mut_ptr()];
        let mut strides = [yw, cw, cw].map(|s| s as c_int);
        // SAFETY: each plane holds `height` rows of `stride` bytes as tj3YUVPlaneWidth and
        // tj3YUVPlaneHeight give them for this header's size and subsampling, which is what
        // libjpeg-turbo writes.
        let status = unsafe {
            raw::tj3DecompressToYUVPlanes8(
                self.0,
                bytes.as_ptr(),
                bytes.len() as raw::size_t,
                pointers.as_mut_ptr(),
                strides.as_mut_ptr(),
            )
        };
        self.check(status)?;
        let planes = Planes {
            width: w,
            height: h,
            sampling,
            y: &y,
            y_stride: yw,
            cb: &cb,
            cr: &cr,
            chroma_stride: cw,
        };
        Ok(planes.supported().then(|| ycc::plane(&planes, spec, isa)))
    }

    /// Decodes into `pixels`, `header.width * channels` bytes a row.
    fn decompress(&self, bytes: &[u8], header: &JpegHeader, pixels: &mut [u8]) -> Result<()> {
        let (format, channels) = if header.four_components {
            (raw::TJPF_TJPF_CMYK, 4)
        } else {
            (raw::TJPF_TJPF_RGB, 3)
        };
        let pitch = c_int::try_from(header.width * channels)
            .map_err(|_| Error::Decode("JPEG: the image is too wide".to_string()))?;
        if pixels.len() != header.width * header.height * channels {
            return Err(Error::Decode(
                "JPEG: the pixel buffer does not match the header's size".to_string(),
            ));
        }
        // SAFETY: `pixels` holds `height` rows of `pitch` bytes (checked above) in the pixel
        // format named, and the header was read from the same `bytes`.
        let status = unsafe {
            raw::tj3Decompress8(
                self.0,
                bytes.as_ptr(),
                bytes.len() as raw::size_t,
                pixels.as_mut_ptr(),
                pitch,
                format,
            )
        };
        self.check(status)
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle came from tj3Init and is destroyed once.
        unsafe { raw::tj3Destroy(self.0) }
    }
}

/// The frame header of a JPEG file (warnings tolerated, as Pillow does).
pub fn read_header(bytes: &[u8]) -> Result<JpegHeader> {
    Handle::new()?.header(bytes)
}

/// The input plane of a JPEG file, bit-identical to Pillow's decode (module doc).
pub fn decode_plane(bytes: &[u8], spec: PlaneSpec) -> Result<Tensor<u8>> {
    let handle = Handle::new()?;
    let header = handle.header(bytes)?;
    check_size(header.width as u64, header.height as u64)?;
    if !reaches_end_of_image(bytes) {
        return Err(Error::Decode(
            "JPEG: the file is truncated: its data ends before the end-of-image marker \
             (Pillow refuses it too)"
                .to_string(),
        ));
    }
    if let Some(sampling) = header.ycc {
        if let Some(data) = handle.decompress_ycc(bytes, &header, sampling, spec, Isa::process())? {
            return Ok(Tensor {
                channels: 1,
                height: header.height,
                width: header.width,
                data,
            });
        }
    }
    decode_interleaved(&handle, bytes, &header, spec)
}

/// The input plane through libjpeg-turbo's RGB (or CMYK) decode of the whole image.
fn decode_interleaved(
    handle: &Handle,
    bytes: &[u8],
    header: &JpegHeader,
    spec: PlaneSpec,
) -> Result<Tensor<u8>> {
    let (width, height) = (header.width, header.height);
    let channels = if header.four_components { 4 } else { 3 };
    let mut pixels = zeroed(
        width * height * channels,
        &format!("decoding the {width}x{height} JPEG"),
        "downscale the image",
    )?;
    handle.decompress(bytes, header, &mut pixels)?;
    if header.four_components {
        cmyk_to_rgbx(&mut pixels);
    }
    Ok(plane_from_interleaved(
        &pixels, channels, width, height, spec,
    ))
}

/// Pillow's "CMYK;I" unpacking then `cmyk2rgb`, in place: each 4-byte CMYK pixel as libjpeg
/// gives it becomes R, G, B and 255.
fn cmyk_to_rgbx(pixels: &mut [u8]) {
    for p in pixels.chunks_exact_mut(4) {
        // Inverted storage: the ink amounts are 255 − the stored values, so nk = 255 − K is
        // the stored K itself.
        let nk = u32::from(p[3]);
        for v in &mut p[..3] {
            let ink = 255 - u32::from(*v);
            *v = (nk - muldiv255(ink, nk)) as u8;
        }
        p[3] = 255;
    }
}

/// Pillow's `MULDIV255`: a·b/255 rounded, in integers.
fn muldiv255(a: u32, b: u32) -> u32 {
    let t = a * b + 128;
    ((t >> 8) + t) >> 8
}

/// Whether libjpeg, reading `bytes`, reaches an end-of-image marker before the data ends: it
/// skips marker segments by their length, scans entropy-coded data for the next marker (0xFF
/// not followed by a stuffed 0x00, a restart marker or fill), and skips junk between markers.
pub fn reaches_end_of_image(bytes: &[u8]) -> bool {
    let mut pos = 2;
    while pos + 1 < bytes.len() {
        if bytes[pos] != 0xFF {
            pos += 1;
            continue;
        }
        match bytes[pos + 1] {
            0xD9 => return true,
            0x00 | 0xFF | 0xD0..=0xD7 | 0x01 => pos += 1,
            _ => {
                let Some(length) = bytes.get(pos + 2..pos + 4) else {
                    return false;
                };
                pos += 2 + usize::from(u16::from_be_bytes([length[0], length[1]]));
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use superpoint_graph::Channel;
    use turbojpeg::{Compressor, Image, PixelFormat, Subsamp};

    use super::*;

    /// YCbCr files of every subsampling, odd sizes (partial MCUs, odd chroma widths and
    /// heights) and a progressive one: the plane from the raw planes equals the plane of
    /// libjpeg-turbo's own RGB decode, bit for bit, for every channel choice.
    #[test]
    fn raw_plane_path_equals_the_rgb_decode() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for (w, h) in [(64, 48), (37, 23), (8, 8), (101, 9), (9, 67)] {
            // Smooth colour gradients with noise: chroma varies, the clamps are reached.
            let pixels: Vec<u8> = (0..w * h * 3)
                .map(|i| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let (p, c) = (i / 3, i % 3);
                    let smooth = (p % w) * 255 / w + (p / w) * 128 / h + c * 60;
                    (smooth as u64 + (state >> 60)) as u8
                })
                .collect();
            let image = Image {
                pixels: &pixels[..],
                width: w,
                pitch: 3 * w,
                height: h,
                format: PixelFormat::RGB,
            };
            for (subsamp, progressive) in [
                (Subsamp::None, false),
                (Subsamp::Sub2x1, false),
                (Subsamp::Sub2x2, false),
                (Subsamp::Sub2x2, true),
                (Subsamp::Sub1x2, false),
                (Subsamp::Sub4x1, false),
            ] {
                let mut compressor = Compressor::new().expect("compressor");
                compressor.set_quality(90).expect("quality");
                compressor.set_subsamp(subsamp).expect("subsampling");
                compressor
                    .set_progressive(progressive)
                    .expect("progressive");
                let jpeg = compressor.compress_to_vec(image).expect("compress");
                let handle = Handle::new().expect("handle");
                let header = handle.header(&jpeg).expect("header");
                assert_eq!(
                    header.ycc.is_some(),
                    subsamp != Subsamp::Sub4x1,
                    "{subsamp:?}"
                );
                for channel in [Channel::Red, Channel::Luma] {
                    for bgr in [false, true] {
                        let spec = PlaneSpec { channel, bgr };
                        let fast = decode_plane(&jpeg, spec).expect("decode");
                        let rgb =
                            decode_interleaved(&handle, &jpeg, &header, spec).expect("rgb decode");
                        let case = format!(
                            "{w}x{h} {subsamp:?} progressive {progressive} {channel:?} bgr {bgr}"
                        );
                        assert_eq!(fast, rgb, "{case}");
                        // The raw path at every instruction-set level this CPU has.
                        for isa in Isa::ALL.into_iter().filter(|i| i.supported()) {
                            if let Some(sampling) = header.ycc {
                                let raw =
                                    handle.decompress_ycc(&jpeg, &header, sampling, spec, isa);
                                let raw = raw.expect("raw decode").expect("raw path taken");
                                assert_eq!(raw, rgb.data, "{case} at {isa}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn muldiv255_rounds_like_pillow() {
        // Hand-computed: 255·255/255 = 255; 128·255/255 = 128; 1·1/255 rounds to 0;
        // 128·128/255 = 64.25 → 64; 200·100/255 = 78.43 → 78.
        for (a, b, want) in [(255, 255, 255), (128, 255, 128), (1, 1, 0), (128, 128, 64)] {
            assert_eq!(muldiv255(a, b), want, "{a}·{b}");
        }
        assert_eq!(muldiv255(200, 100), 78);
    }

    #[test]
    fn end_of_image_is_found_past_segments_and_entropy_data() {
        // SOI, an APP1 segment whose payload holds FF D9 (skipped by length), SOS, entropy data
        // with a stuffed FF 00 and a restart marker, then EOI.
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x06, 0xFF, 0xD9, 0x00, 0x00];
        jpeg.extend([
            0xFF, 0xDA, 0x00, 0x02, 0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD3, 0x56,
        ]);
        assert!(!reaches_end_of_image(&jpeg));
        jpeg.extend([0xFF, 0xD9]);
        assert!(reaches_end_of_image(&jpeg));
        // A segment whose length runs past the data ends it.
        assert!(!reaches_end_of_image(&[0xFF, 0xD8, 0xFF, 0xE0, 0x40]));
    }
}
