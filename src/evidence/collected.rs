//! Lists of collected test ids: `pytest --collect-only -q`, `cargo nextest list`,
//! `cargo test -- --list`, or one id per line.

use std::path::Path;

use crate::error::InputError;

/// Reads the collected test ids at `path`, in file order, without duplicates.
pub fn read_collected(path: &Path) -> Result<Vec<String>, InputError> {
    Err(InputError::new(
        path,
        "collected-id reading is not implemented yet",
    ))
}
