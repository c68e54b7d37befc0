//! The overlay picture: the keypoints drawn on the original image.

use image::{Rgb, RgbImage};

/// Draws each keypoint as a filled dot (green, with a dark rim) on `image`; the dot grows with
/// the image so it stays visible on large photos.
pub fn draw(image: &mut RgbImage, keypoints: &[[f32; 2]]) {
    let radius = (image.width().min(image.height()) as f32 / 250.0).clamp(2.0, 8.0);
    for &[x, y] in keypoints {
        dot(image, x, y, radius + 1.0, Rgb([0, 0, 0]));
        dot(image, x, y, radius, Rgb([0, 255, 0]));
    }
}

fn dot(image: &mut RgbImage, cx: f32, cy: f32, radius: f32, color: Rgb<u8>) {
    let (w, h) = (image.width() as i64, image.height() as i64);
    let r = radius.ceil() as i64;
    let (x0, y0) = (cx.round() as i64, cy.round() as i64);
    for y in (y0 - r).max(0)..=(y0 + r).min(h - 1) {
        for x in (x0 - r).max(0)..=(x0 + r).min(w - 1) {
            let (dx, dy) = (x as f32 - cx, y as f32 - cy);
            if dx * dx + dy * dy <= radius * radius {
                image.put_pixel(x as u32, y as u32, color);
            }
        }
    }
}
