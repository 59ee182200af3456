//! The freeze file: known-flaky test ids that cannot contribute a pass. Two forms, chosen by
//! file name: `*.toml` is the second article's lease file (`version`, `max_active_leases`,
//! `[[leases]]` with owner, reason and expiry), anything else the first article's plain list
//! of ids (`#` comments). Owns parsing and lease expiry; the rules judge.

use std::collections::HashMap;
use std::path::Path;

use jiff::civil::Date;
use serde::Deserialize;
use toml::Spanned;

use crate::error::{InputError, Location, line_column};
use crate::policy::ledger::toml_error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreezeFormat {
    List,
    Toml,
}

/// One frozen test id. In the plain-list form only `nodeid` and `line` are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub nodeid: String,
    pub owner: Option<String>,
    pub reason: Option<String>,
    pub expires: Option<Date>,
    /// 1-based line of the entry in the freeze file.
    pub line: u64,
}

impl Lease {
    /// Expired when the expiry date is before `today` (UTC): a lease is good through its
    /// `expires` day, as in the second article.
    pub fn is_expired(&self, today: Date) -> bool {
        self.expires.is_some_and(|d| d < today)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreezeFile {
    pub format: FreezeFormat,
    /// The budget the freeze file sets. The TOML form's omitted budget is 0 (fail closed, the
    /// second article); the plain list has none of its own (the first article), so only the
    /// ledger's `freeze.max_active_leases` can give it one.
    pub max_active_leases: Option<u32>,
    pub reject_if_expired: bool,
    pub reject_if_agent_adds_lease: bool,
    pub leases: Vec<Lease>,
}

impl FreezeFile {
    /// An empty freeze file (no freeze file exists and the policy allows that).
    pub fn empty() -> FreezeFile {
        FreezeFile {
            format: FreezeFormat::Toml,
            max_active_leases: None,
            reject_if_expired: true,
            reject_if_agent_adds_lease: true,
            leases: Vec::new(),
        }
    }

    /// Parses a freeze file; the form follows the file name (`*.toml` or a plain list).
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<FreezeFile, InputError> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let (l, c) = line_column(bytes, e.valid_up_to());
            InputError::new(path, "freeze file is not UTF-8").at(Location::LineColumn(l, c))
        })?;
        let is_toml = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("toml"));
        if is_toml {
            parse_toml(path, text)
        } else {
            parse_list(path, text)
        }
    }

    /// The budget in force: the stricter of the freeze file's and the ledger's. `None` where
    /// neither sets one: the first article's plain list, under a ledger without
    /// `freeze.max_active_leases`, has no lease budget (its frozen tests may fail or skip,
    /// however many there are). A `freeze.toml` always has one (omitted: 0).
    pub fn budget(&self, ledger_budget: Option<u32>) -> Option<u32> {
        match (self.max_active_leases, ledger_budget) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Leases split into (active, expired) against `today`. Expired leases are not frozen any
    /// more; whether they reject is `reject_if_expired`.
    pub fn classify(&self, today: Date) -> (Vec<&Lease>, Vec<&Lease>) {
        self.leases.iter().partition(|l| !l.is_expired(today))
    }
}

fn parse_list(path: &Path, text: &str) -> Result<FreezeFile, InputError> {
    let mut leases = Vec::new();
    let mut seen: HashMap<String, u64> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let id = line.trim();
        if id.is_empty() || id.starts_with('#') {
            continue;
        }
        if let Some(first) = seen.insert(id.to_string(), line_no) {
            return Err(InputError::new(
                path,
                format!("test id {id:?} is listed twice (first on line {first})"),
            )
            .at(Location::Line(line_no))
            .with_hint("remove the duplicate line"));
        }
        leases.push(Lease {
            nodeid: id.to_string(),
            owner: None,
            reason: None,
            expires: None,
            line: line_no,
        });
    }
    Ok(FreezeFile {
        format: FreezeFormat::List,
        max_active_leases: None,
        reject_if_expired: true,
        reject_if_agent_adds_lease: true,
        leases,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFreeze {
    version: Option<Spanned<i64>>,
    max_active_leases: Option<Spanned<i64>>,
    reject_if_expired: Option<bool>,
    reject_if_agent_adds_lease: Option<bool>,
    #[serde(default)]
    leases: Vec<Spanned<RawLease>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLease {
    nodeid: Option<Spanned<String>>,
    reason: Option<Spanned<String>>,
    owner: Option<Spanned<String>>,
    expires: Option<Spanned<RawDate>>,
}

/// `expires` as the article writes it (a quoted ISO date) or as a bare TOML date.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawDate {
    Text(String),
    Toml(toml::value::Datetime),
}

fn parse_toml(path: &Path, text: &str) -> Result<FreezeFile, InputError> {
    let raw: RawFreeze = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
    let at = |span: std::ops::Range<usize>| {
        let (l, c) = line_column(text.as_bytes(), span.start);
        Location::LineColumn(l, c)
    };
    let invalid =
        |span: std::ops::Range<usize>, msg: String| InputError::new(path, msg).at(at(span));

    if let Some(v) = &raw.version
        && *v.get_ref() != 1
    {
        return Err(invalid(
            v.span(),
            format!(
                "unsupported freeze file version {}; this guard reads version 1",
                v.get_ref()
            ),
        ));
    }
    let max_active_leases = match &raw.max_active_leases {
        // Fail closed: an omitted budget is 0, as in the second article.
        None => 0,
        Some(v) => u32::try_from(*v.get_ref()).map_err(|_| {
            invalid(
                v.span(),
                format!("`max_active_leases` must be 0 or more, not {}", v.get_ref()),
            )
        })?,
    };

    let mut leases = Vec::new();
    let mut seen: HashMap<String, u64> = HashMap::new();
    for spanned in &raw.leases {
        let lease_span = spanned.span();
        let raw_lease = spanned.get_ref();
        let line = line_column(text.as_bytes(), lease_span.start).0;
        let required = |field: &Option<Spanned<String>>, key: &str| -> Result<String, InputError> {
            match field {
                Some(v) if !v.get_ref().trim().is_empty() => Ok(v.get_ref().trim().to_string()),
                Some(v) => Err(invalid(v.span(), format!("lease `{key}` is empty"))),
                None => Err(invalid(lease_span.clone(), format!("lease has no `{key}`"))
                    .with_hint(
                        "every lease needs nodeid, owner, reason and expires = \"YYYY-MM-DD\"",
                    )),
            }
        };
        let nodeid = required(&raw_lease.nodeid, "nodeid")?;
        let owner = required(&raw_lease.owner, "owner")?;
        let reason = required(&raw_lease.reason, "reason")?;
        let expires = match &raw_lease.expires {
            None => {
                return Err(
                    invalid(lease_span.clone(), "lease has no `expires`".to_string()).with_hint(
                        "every lease needs an ISO-8601 expiry date: expires = \"YYYY-MM-DD\"",
                    ),
                );
            }
            Some(v) => parse_date(v.get_ref()).map_err(|e| invalid(v.span(), e.to_string()))?,
        };
        if let Some(first) = seen.insert(nodeid.clone(), line) {
            return Err(invalid(
                lease_span.clone(),
                format!("{nodeid:?} has two leases (first on line {first})"),
            )
            .with_hint("keep one lease per test"));
        }
        leases.push(Lease {
            nodeid,
            owner: Some(owner),
            reason: Some(reason),
            expires: Some(expires),
            line,
        });
    }
    Ok(FreezeFile {
        format: FreezeFormat::Toml,
        max_active_leases: Some(max_active_leases),
        reject_if_expired: raw.reject_if_expired.unwrap_or(true),
        reject_if_agent_adds_lease: raw.reject_if_agent_adds_lease.unwrap_or(true),
        leases,
    })
}

/// Why a lease's `expires` is not a date.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ExpiryError {
    /// A TOML date-time or a date with an offset.
    #[error("`expires` = {0} must be a date without a time (YYYY-MM-DD)")]
    HasTime(toml::value::Datetime),
    #[error("`expires` = {0:?} is not an ISO-8601 date (YYYY-MM-DD)")]
    NotADate(String),
}

fn parse_date(raw: &RawDate) -> Result<Date, ExpiryError> {
    let text = match raw {
        RawDate::Text(s) => s.trim().to_string(),
        RawDate::Toml(dt) => {
            if dt.time.is_some() || dt.offset.is_some() {
                return Err(ExpiryError::HasTime(*dt));
            }
            dt.to_string()
        }
    };
    // jiff accepts only real calendar dates, so 2026-02-30 is refused here.
    let strict = text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-';
    match text.parse::<Date>() {
        Ok(date) if strict => Ok(date),
        _ => Err(ExpiryError::NotADate(text)),
    }
}

/// Today's date in UTC, from the machine's clock. Nothing a pusher sends changes it.
pub fn today_utc() -> Date {
    jiff::Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml(text: &str) -> Result<FreezeFile, InputError> {
        FreezeFile::parse(Path::new("qa/freeze.toml"), text.as_bytes())
    }

    const ARTICLE: &str = r#"# freeze.toml
version = 1
max_active_leases = 8
reject_if_expired = true
reject_if_agent_adds_lease = true

[[leases]]
nodeid = "tests/test_billing.py::test_invoice_total_currency_round"
reason = "intermittent tz boundary on CI runners"
owner = "platform-billing"
expires = "2026-09-26"

[[leases]]
nodeid = "tests/test_cache.py::test_stampede_window"
reason = "timing-dependent under load"
owner = "platform-cache"
expires = 2026-09-19
"#;

    #[test]
    fn second_article_freeze_toml_parses() {
        let f = toml(ARTICLE).unwrap();
        assert_eq!(f.format, FreezeFormat::Toml);
        assert_eq!(f.max_active_leases, Some(8));
        assert_eq!(f.leases.len(), 2);
        assert_eq!(
            f.leases[0].nodeid,
            "tests/test_billing.py::test_invoice_total_currency_round"
        );
        assert_eq!(f.leases[0].line, 7);
        assert_eq!(f.leases[1].expires, Some(jiff::civil::date(2026, 9, 19)));
    }

    #[test]
    fn expiry_is_inclusive_of_the_expiry_day() {
        let f = toml(ARTICLE).unwrap();
        let (active, expired) = f.classify(jiff::civil::date(2026, 9, 20));
        assert_eq!(active.len(), 1);
        assert_eq!(
            expired[0].nodeid,
            "tests/test_cache.py::test_stampede_window"
        );
        let (active, _) = f.classify(jiff::civil::date(2026, 9, 19));
        assert_eq!(active.len(), 2);
    }

    #[test]
    fn omitted_budget_is_zero() {
        let f = toml("version = 1\n").unwrap();
        assert_eq!(f.max_active_leases, Some(0));
        assert_eq!(f.budget(None), Some(0));
        assert_eq!(f.budget(Some(3)), Some(0));
    }

    #[test]
    fn first_article_plain_list_parses() {
        let text = "# qa/flake_freeze.txt\ntests.runtime.test_retry::test_backoff_under_load\n\n  tests.http.test_client::test_header_order_stable\n";
        let f = FreezeFile::parse(Path::new("qa/flake_freeze.txt"), text.as_bytes()).unwrap();
        assert_eq!(f.format, FreezeFormat::List);
        assert_eq!(f.leases.len(), 2);
        assert_eq!(
            f.leases[1].nodeid,
            "tests.http.test_client::test_header_order_stable"
        );
        assert_eq!(f.leases[1].line, 4);
        assert_eq!(
            f.budget(None),
            None,
            "a plain list without a ledger budget has none"
        );
        assert_eq!(f.budget(Some(1)), Some(1));
    }

    #[test]
    fn lease_without_owner_is_refused_with_line() {
        let err = toml("version = 1\n\n[[leases]]\nnodeid = \"a::b\"\nreason = \"r\"\nexpires = \"2026-01-01\"\n").unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("qa/freeze.toml:3:"), "{shown}");
        assert!(shown.contains("owner"), "{shown}");
    }

    #[test]
    fn bad_dates_are_refused() {
        for date in [
            "\"2026-02-30\"",
            "\"26-09-01\"",
            "\"2026/09/01\"",
            "\"next week\"",
            "2026-09-01T10:00:00Z",
            // What jiff also reads as a date, beside the one form the freeze file takes.
            "\"20260901\"",
            "\"+002026-09-01\"",
        ] {
            let text = format!(
                "[[leases]]\nnodeid = \"a\"\nowner = \"o\"\nreason = \"r\"\nexpires = {date}\n"
            );
            let err = toml(&text).unwrap_err();
            assert!(
                err.to_string().contains("qa/freeze.toml:5:"),
                "{date}: {err}"
            );
        }
    }

    #[test]
    fn duplicates_and_unknown_keys_are_refused() {
        let lease =
            "[[leases]]\nnodeid = \"a\"\nowner = \"o\"\nreason = \"r\"\nexpires = \"2026-01-01\"\n";
        assert!(
            toml(&format!("{lease}{lease}"))
                .unwrap_err()
                .to_string()
                .contains("two leases")
        );
        assert!(toml("max_leases = 3\n").is_err());
        assert!(toml("[[leases]]\nnodeid = \"a\"\nowner = \"o\"\nreason = \"r\"\nexpires = \"2026-01-01\"\nextend = true\n").is_err());
        let list = FreezeFile::parse(Path::new("f.txt"), b"a::b\na::b\n").unwrap_err();
        assert!(list.to_string().contains("f.txt:2"), "{list}");
    }

    #[test]
    fn non_utf8_is_refused() {
        let err = FreezeFile::parse(Path::new("f.txt"), b"ok\n\xff\n").unwrap_err();
        assert!(err.to_string().contains("f.txt:2:1"), "{err}");
    }

    #[test]
    fn bad_date_messages() {
        let message = |date: &str| {
            let text = format!(
                "[[leases]]\nnodeid = \"a\"\nowner = \"o\"\nreason = \"r\"\nexpires = {date}\n"
            );
            toml(&text).unwrap_err().message
        };
        assert_eq!(
            message("2026-09-01T10:00:00Z"),
            "`expires` = 2026-09-01T10:00:00Z must be a date without a time (YYYY-MM-DD)"
        );
        // A local date-time (no offset) and a time alone have a time all the same.
        assert_eq!(
            message("2026-09-01T10:00:00"),
            "`expires` = 2026-09-01T10:00:00 must be a date without a time (YYYY-MM-DD)"
        );
        assert_eq!(
            message("10:00:00"),
            "`expires` = 10:00:00 must be a date without a time (YYYY-MM-DD)"
        );
        assert_eq!(
            message("\" 2026-02-30\""),
            "`expires` = \"2026-02-30\" is not an ISO-8601 date (YYYY-MM-DD)"
        );
    }
}
