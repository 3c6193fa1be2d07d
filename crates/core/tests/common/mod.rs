//! Helpers shared by the core integration tests (`mod common;` in each).

/// A `.npy` file (format `version` 1 or 2) with `header` padded as numpy pads it to a
/// multiple of 64 bytes, then `data`.
pub fn npy(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
    let mut h = header.to_string();
    let pre = if version == 1 { 10 } else { 12 };
    while (pre + h.len() + 1) & 63 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

/// Little-endian `f8` bytes of `v`.
pub fn f8(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
