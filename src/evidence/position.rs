//! Positions in artifact files: byte offsets found while streaming a file, turned into line
//! and column only when a message needs them, by reading the file again up to the offsets (so
//! the happy path stays one pass and a 200 MB report is never held in memory).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::error::Location;

/// The line and column (1-based, in bytes like `crate::error::line_column`) of each offset,
/// reading `path` in blocks so that a 200 MB report is not loaded whole. Falls back to byte
/// offsets if the file cannot be read again.
pub fn locate(path: &Path, offsets: &[u64]) -> Vec<Location> {
    let fallback = || offsets.iter().map(|&o| Location::Byte(o)).collect();
    let Ok(mut file) = File::open(path) else {
        return fallback();
    };
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_by_key(|&i| offsets[i]);
    let mut found = vec![None; offsets.len()];
    let mut next = 0;
    let mut lines = Lines {
        line: 1,
        line_start: 0,
    };
    let mut pos = 0u64;
    let mut block = vec![0u8; 64 * 1024];
    while next < order.len() {
        let n = match file.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return fallback(),
        };
        let mut done = 0;
        while next < order.len() && offsets[order[next]] < pos + n as u64 {
            let offset = offsets[order[next]];
            let upto = (offset - pos) as usize;
            lines.advance(&block[done..upto], pos + done as u64);
            done = upto;
            found[order[next]] = Some(lines.at(offset));
            next += 1;
        }
        lines.advance(&block[done..n], pos + done as u64);
        pos += n as u64;
    }
    // Offsets at or past the end of the file point just after its last byte.
    found
        .into_iter()
        .zip(offsets)
        .map(|(loc, &offset)| loc.unwrap_or_else(|| lines.at(offset.min(pos))))
        .collect()
}

/// The line count so far while reading a file front to back.
struct Lines {
    line: u64,
    /// Offset of the first byte of the current line.
    line_start: u64,
}

impl Lines {
    /// Counts the newlines in `bytes`, which sit at file offset `base`.
    fn advance(&mut self, bytes: &[u8], base: u64) {
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                self.line += 1;
                self.line_start = base + i as u64 + 1;
            }
        }
    }

    fn at(&self, offset: u64) -> Location {
        Location::LineColumn(self.line, offset - self.line_start + 1)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::error::line_column;

    #[test]
    fn locate_agrees_with_line_column_across_blocks() {
        let mut text = Vec::new();
        for i in 0..20_000 {
            text.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&text).unwrap();
        file.flush().unwrap();
        let offsets = [
            150_000u64,
            0,
            65_535,
            65_536,
            65_537,
            text.len() as u64,
            text.len() as u64 + 10,
        ];
        let found = locate(file.path(), &offsets);
        for (offset, location) in offsets.iter().zip(found) {
            let (line, column) = line_column(&text, *offset as usize);
            assert_eq!(location, Location::LineColumn(line, column), "{offset}");
        }
    }
}
