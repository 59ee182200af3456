//! Exit codes, part of the command-line contract.

/// The gate holds (decision MERGE), or a command that decides nothing succeeded.
pub const MERGE: i32 = 0;
/// The gate rejects (decision REJECT: any finding, even beside input that could not be
/// judged), or a check such as `lock --check` found drift.
pub const REJECT: i32 = 1;
/// Nothing rejects and the input could not be judged (no decision): bad arguments,
/// unreadable or malformed ledger or artifact.
pub const CANNOT_JUDGE: i32 = 2;
