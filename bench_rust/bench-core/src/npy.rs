//! Minimal `.npy` (format version 1.0) writer for float32 arrays in C order, and the header
//! parser the tests use to check it.

use std::io::Write;
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";

fn shape_tuple(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The complete file: magic, version 1.0, header (padded with spaces so that the data starts
/// at a multiple of 64 bytes, ending in `\n`), then little-endian f32 values.
pub fn npy_f32_bytes(shape: &[usize], data: &[f32]) -> Vec<u8> {
    let count: usize = shape.iter().product();
    assert_eq!(
        count,
        data.len(),
        "npy: shape does not match the data length"
    );
    let dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}",
        shape_tuple(shape)
    );
    // 6 magic + 2 version + 2 header length, then dict + padding + '\n'.
    let unpadded = 10 + dict.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    let header_len = dict.len() + pad + 1;
    assert!(
        header_len <= u16::MAX as usize,
        "npy: header too long for format 1.0"
    );
    let mut out = Vec::with_capacity(10 + header_len + 4 * data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header_len as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend(std::iter::repeat_n(b' ', pad));
    out.push(b'\n');
    for v in data {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

pub fn write_npy_f32(path: &Path, shape: &[usize], data: &[f32]) -> std::io::Result<()> {
    let bytes = npy_f32_bytes(shape, data);
    let mut f = std::fs::File::create(path)?;
    f.write_all(&bytes)?;
    f.flush()
}

/// What a `.npy` v1.0 header says.
#[derive(Debug, PartialEq, Eq)]
pub struct NpyHeader {
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<usize>,
    /// Byte offset of the first value.
    pub data_offset: usize,
}

/// Parses a v1.0 header (enough of the Python-literal dict for what this writer produces).
pub fn parse_npy_header(bytes: &[u8]) -> Result<NpyHeader, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not an .npy file".into());
    }
    if bytes[6] != 1 || bytes[7] != 0 {
        return Err(format!("version {}.{}, expected 1.0", bytes[6], bytes[7]));
    }
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let end = 10 + hlen;
    let header = std::str::from_utf8(bytes.get(10..end).ok_or("truncated header")?)
        .map_err(|e| e.to_string())?;
    if !header.ends_with('\n') {
        return Err("header does not end in a newline".into());
    }
    let field = |key: &str| -> Result<&str, String> {
        let k = format!("'{key}': ");
        let at = header.find(&k).ok_or(format!("no '{key}' in header"))? + k.len();
        Ok(&header[at..])
    };
    let descr = field("descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.split_once('\''))
        .ok_or("bad descr")?
        .0
        .to_string();
    let fo = field("fortran_order")?;
    let fortran_order = if fo.starts_with("True") {
        true
    } else if fo.starts_with("False") {
        false
    } else {
        return Err("bad fortran_order".into());
    };
    let sh = field("shape")?;
    let sh = sh
        .strip_prefix('(')
        .and_then(|s| s.split_once(')'))
        .ok_or("bad shape")?
        .0;
    let shape = sh
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NpyHeader {
        descr,
        fortran_order,
        shape,
        data_offset: end,
    })
}
