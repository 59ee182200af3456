//! The in-memory object stores of the differential targets (`commit_header`, `range_walk`,
//! `raw_tree`): a bare repository of one object format whose writes go to a mempack backend,
//! made afresh every so many inputs (a mempack only grows). Included with `#[path]`: it is
//! not a target of its own.

use git2::{ObjectFormat, Repository, RepositoryInitOptions};

pub struct Store {
    _dir: tempfile::TempDir,
    repo: Repository,
    written: usize,
    per_store: usize,
}

impl Store {
    /// A store of `format`, made afresh after `per_store` inputs.
    pub fn new(format: ObjectFormat, per_store: usize) -> Store {
        let dir = tempfile::tempdir().unwrap();
        let mut options = RepositoryInitOptions::new();
        options.bare(true).object_format(format);
        let repo = Repository::init_opts(dir.path(), &options).unwrap();
        assert_eq!(repo.object_format(), format);
        // The highest priority: every write goes to memory, none to the temporary directory.
        repo.odb().unwrap().add_new_mempack_backend(1000).unwrap();
        Store {
            _dir: dir,
            repo,
            written: 0,
            per_store,
        }
    }

    /// The repository for one more input, made afresh once this store has taken its share.
    pub fn next(&mut self) -> &Repository {
        if self.written >= self.per_store {
            *self = Store::new(self.repo.object_format(), self.per_store);
        }
        self.written += 1;
        &self.repo
    }
}

/// A SHA-1 store and a SHA-256 one, in that order.
pub fn both(per_store: usize) -> [Store; 2] {
    [
        Store::new(ObjectFormat::Sha1, per_store),
        Store::new(ObjectFormat::Sha256, per_store),
    ]
}
