//! What a caller can pass to `detect`: a file path, encoded bytes, a decoded `image` buffer, or
//! a raw 8-bit plane. Borrowed or owned (`Input<'static>` can travel to decoding threads).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use image::DynamicImage;

/// One image to detect keypoints in.
#[derive(Debug, Clone)]
pub enum Input<'a> {
    /// An encoded image file (JPEG, PNG, …).
    Path(Cow<'a, Path>),
    /// The bytes of an encoded image file.
    Bytes(Cow<'a, [u8]>),
    /// A decoded image; its channel order is RGB unless the options say BGR.
    Image(Cow<'a, DynamicImage>),
    /// A single 8-bit plane, row-major, `width`×`height` bytes: used as the network's input
    /// plane directly (no channel selection).
    Plane {
        data: Cow<'a, [u8]>,
        width: usize,
        height: usize,
    },
}

impl<'a> Input<'a> {
    /// A raw 8-bit plane of `width`×`height` bytes.
    pub fn plane(data: impl Into<Cow<'a, [u8]>>, width: usize, height: usize) -> Self {
        Input::Plane {
            data: data.into(),
            width,
            height,
        }
    }

    /// A short description for messages and outputs (the path, or the kind of input).
    pub fn label(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Bytes(b) => format!("<{} bytes>", b.len()),
            Input::Image(i) => format!("<image {}x{}>", i.width(), i.height()),
            Input::Plane { width, height, .. } => format!("<plane {width}x{height}>"),
        }
    }

    /// An owned copy that does not borrow from the caller.
    pub fn into_owned(self) -> Input<'static> {
        match self {
            Input::Path(p) => Input::Path(Cow::Owned(p.into_owned())),
            Input::Bytes(b) => Input::Bytes(Cow::Owned(b.into_owned())),
            Input::Image(i) => Input::Image(Cow::Owned(i.into_owned())),
            Input::Plane {
                data,
                width,
                height,
            } => Input::Plane {
                data: Cow::Owned(data.into_owned()),
                width,
                height,
            },
        }
    }
}

impl<'a> From<&'a Path> for Input<'a> {
    fn from(p: &'a Path) -> Self {
        Input::Path(Cow::Borrowed(p))
    }
}

impl<'a> From<&'a PathBuf> for Input<'a> {
    fn from(p: &'a PathBuf) -> Self {
        Input::Path(Cow::Borrowed(p.as_path()))
    }
}

impl From<PathBuf> for Input<'static> {
    fn from(p: PathBuf) -> Self {
        Input::Path(Cow::Owned(p))
    }
}

impl<'a> From<&'a str> for Input<'a> {
    fn from(p: &'a str) -> Self {
        Input::Path(Cow::Borrowed(Path::new(p)))
    }
}

impl<'a> From<&'a [u8]> for Input<'a> {
    fn from(b: &'a [u8]) -> Self {
        Input::Bytes(Cow::Borrowed(b))
    }
}

impl From<Vec<u8>> for Input<'static> {
    fn from(b: Vec<u8>) -> Self {
        Input::Bytes(Cow::Owned(b))
    }
}

impl<'a> From<&'a DynamicImage> for Input<'a> {
    fn from(i: &'a DynamicImage) -> Self {
        Input::Image(Cow::Borrowed(i))
    }
}

impl From<DynamicImage> for Input<'static> {
    fn from(i: DynamicImage) -> Self {
        Input::Image(Cow::Owned(i))
    }
}
