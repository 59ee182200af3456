//! What the humans who own the gate wrote: the ledger, the freeze file, the fixture lockfile,
//! the allowed signers, and who counts as an agent. Parsing and validating these files, and
//! describing what a commit changed in them. Judges nothing.

pub mod agents;
pub mod bots;
pub mod caseless;
pub mod diff;
pub mod freeze;
pub mod harness;
pub mod ledger;
pub mod levels;
pub mod load;
pub mod lockfile;
pub mod signers;
