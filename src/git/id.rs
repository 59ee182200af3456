//! guard's object id, the one every layer above `git/` names commits, trees and blobs by:
//! SHA-1 (20 bytes) and SHA-256 (32 bytes) ids alike. libgit2's `Oid` stays inside `git/`;
//! the conversions below are its only crossing, at the functions the other layers call.

use std::fmt;

/// An object id, shown as its full lowercase hex (40 digits for SHA-1, 64 for SHA-256).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(gix_hash::ObjectId);

/// Bytes that are no object id: neither 20 (SHA-1) nor 32 (SHA-256) of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} bytes are no object id (SHA-1 ids have 20, SHA-256 ids 32)")]
pub struct NotAnId(pub usize);

impl ObjectId {
    /// The id whose raw bytes are `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<ObjectId, NotAnId> {
        if let Ok(sha1) = <[u8; 20]>::try_from(bytes) {
            Ok(ObjectId(sha1.into()))
        } else if let Ok(sha256) = <[u8; 32]>::try_from(bytes) {
            Ok(ObjectId(sha256.into()))
        } else {
            Err(NotAnId(bytes.len()))
        }
    }

    /// The id's raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, as libgit2's `Oid` formats: width and precision apply to the hex.
        let mut buf = [0u8; 64];
        let hex = self.0.hex_to_buf(&mut buf);
        f.pad(hex)
    }
}

// As libgit2's `Oid`: the hex alone, so that messages and test output read as before.
impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// libgit2's id as guard's. Never fails: libgit2's ids are 20 or 32 bytes.
pub(in crate::git) fn from_git2(id: git2::Oid) -> Result<ObjectId, NotAnId> {
    ObjectId::from_bytes(id.as_bytes())
}

/// guard's id as libgit2's (built with SHA-256 support, so it holds both lengths).
pub(in crate::git) fn to_git2(id: ObjectId) -> Result<git2::Oid, git2::Error> {
    git2::Oid::from_bytes(id.as_bytes())
}

impl From<NotAnId> for git2::Error {
    fn from(e: NotAnId) -> git2::Error {
        git2::Error::from_str(&e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_as_libgit2_prints_them_and_convert_both_ways() {
        let git2_id = git2::Oid::from_str("0123456789abcdef0123456789abcdef01234567").unwrap();
        let id = from_git2(git2_id).unwrap();
        assert_eq!(id.to_string(), git2_id.to_string());
        assert_eq!(format!("{id:?}"), format!("{git2_id:?}"));
        assert_eq!(format!("{id:.7}"), format!("{git2_id:.7}"));
        assert_eq!(format!("{id:>42}"), format!("{git2_id:>42}"));
        assert_eq!(to_git2(id).unwrap(), git2_id);
        let other = git2::Oid::from_str("1123456789abcdef0123456789abcdef01234567").unwrap();
        assert_eq!(id.cmp(&from_git2(other).unwrap()), git2_id.cmp(&other));
    }

    #[test]
    fn sha256_ids_are_held_and_printed_whole() {
        let id = ObjectId::from_bytes(&[0xab; 32]).unwrap();
        assert_eq!(id.to_string(), "ab".repeat(32));
        assert_eq!(id.as_bytes(), [0xab; 32]);
        // libgit2 holds it as a SHA-256 id, and gives the same bytes back.
        let git2_id = to_git2(id).unwrap();
        assert_eq!(git2_id.object_format(), git2::ObjectFormat::Sha256);
        assert_eq!(from_git2(git2_id).unwrap(), id);
        assert_eq!(git2_id.to_string(), "ab".repeat(32));
        assert_eq!(ObjectId::from_bytes(&[1; 21]), Err(NotAnId(21)));
    }
}
