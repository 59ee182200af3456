//! File writes that never leave a half-written file behind.
//! (Stub; the implementation lands from the `fixtures` branch.)

use std::path::Path;

pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}
