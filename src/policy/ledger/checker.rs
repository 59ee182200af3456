//! `Checker`, which notes each problem of a ledger at its line and column and goes on, and
//! `toml_error`; apart so that the entry point and every table's reader share them.

use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeValue, ValueDeserializer};

use super::model::Policy;
use crate::error::{InputError, InputErrors, Location, line_column};
use crate::workspace::{check_relative, normalize_rel};

/// The validation of one ledger: the steps below (one per table) note each problem where it
/// stands and go on. A value found wrong is replaced by a fallback so its step can finish;
/// a policy with any problem noted is never returned.
pub(crate) struct Checker<'a> {
    pub(crate) path: &'a Path,
    pub(crate) text: &'a str,
    pub(crate) problems: Vec<InputError>,
}

impl<'a> Checker<'a> {
    /// An error at `span` of the ledger text.
    pub(crate) fn error(&self, span: Range<usize>, message: String) -> InputError {
        let (l, c) = line_column(self.text.as_bytes(), span.start);
        InputError::new(self.path, message).at(Location::LineColumn(l, c))
    }

    pub(crate) fn note(&mut self, error: InputError) {
        self.problems.push(error);
    }

    /// Notes a problem at `span`.
    pub(crate) fn invalid(&mut self, span: Range<usize>, message: String) {
        let error = self.error(span, message);
        self.note(error);
    }

    /// The value of `result`, or `fallback` once its error is noted.
    pub(crate) fn or<T>(&mut self, result: Result<T, InputError>, fallback: T) -> T {
        result.unwrap_or_else(|e| {
            self.note(e);
            fallback
        })
    }

    /// A top-level value of the ledger read as `T`; `None` once its TOML error is noted.
    pub(crate) fn table<T: Deserialize<'a>>(&mut self, value: Spanned<DeValue<'a>>) -> Option<T> {
        match T::deserialize(ValueDeserializer::from(value)) {
            Ok(table) => Some(table),
            Err(e) => {
                self.note(toml_error(self.path, self.text, &e));
                None
            }
        }
    }

    /// A repository path as git writes tree paths: `a/./b` and `a//b` are written `a/b`;
    /// what cannot be (a backslash, the root itself) is refused where it stands.
    pub(crate) fn rel(&self, value: &Spanned<String>, key: &str) -> Result<String, InputError> {
        let refuse = |why: String| {
            self.error(
                value.span(),
                format!("`{key}` = {:?}: {why}", value.get_ref()),
            )
        };
        check_relative(value.get_ref()).map_err(|e| refuse(e.to_string()))?;
        if value.get_ref().contains('\\') {
            return Err(refuse(
                "write paths with `/`; a backslash is part of a file name in git".into(),
            ));
        }
        let normal = normalize_rel(value.get_ref());
        if normal.is_empty() {
            return Err(refuse(
                "names the repository root; name a file or directory inside it".into(),
            ));
        }
        Ok(normal)
    }

    /// An optional path: `None` when absent, or wrong (noted).
    pub(crate) fn rel_opt(&mut self, value: &Option<Spanned<String>>, key: &str) -> Option<String> {
        let checked = self.rel(value.as_ref()?, key);
        self.or(checked.map(Some), None)
    }

    /// A list of paths, `default` when absent; each wrong entry is noted and left out.
    pub(crate) fn rel_list(
        &mut self,
        values: &Option<Vec<Spanned<String>>>,
        key: &str,
        default: &[&str],
    ) -> Vec<String> {
        match values {
            None => default.iter().map(|s| normalize_rel(s)).collect(),
            Some(values) => values
                .iter()
                .filter_map(|v| {
                    let checked = self.rel(v, key);
                    self.or(checked.map(Some), None)
                })
                .collect(),
        }
    }

    /// `policy` when nothing was noted; else every problem, in file order.
    pub(crate) fn finish(self, policy: Policy) -> Result<Policy, InputErrors> {
        let mut problems = self.problems;
        // Where two are at one place, the order the steps found them in.
        problems.sort_by_key(|e| match e.location {
            Some(Location::LineColumn(l, c)) => (l, c),
            Some(Location::Line(l)) => (l, 0),
            Some(Location::Byte(_)) | None => (u64::MAX, 0),
        });
        match InputErrors::from_vec(problems) {
            None => Ok(policy),
            Some(errors) => Err(errors),
        }
    }
}

/// A TOML parse error as `path:line:col: message`.
pub fn toml_error(path: &Path, text: &str, err: &toml::de::Error) -> InputError {
    let mut e = InputError::new(path, err.message().trim().to_string());
    if let Some(span) = err.span() {
        let (l, c) = line_column(text.as_bytes(), span.start);
        e = e.at(Location::LineColumn(l, c));
    }
    e
}
