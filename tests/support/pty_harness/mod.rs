//! The test binaries' side of `teamlead_test_support::pty`: which program its leads run (this
//! package's `teamlead`, known here only) and the config file they are given.

pub use teamlead_test_support::pty::*;

use std::path::Path;

/// This package's `teamlead` binary with `tests/no-config.toml` (a file that does not exist:
/// the defaults, never the user's config).
pub fn program() -> Program {
    Program {
        bin: env!("CARGO_BIN_EXE_teamlead").into(),
        config: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml").into(),
    }
}

/// How a lead in `cwd` starts (`PtyLead::builder` with [`program`]).
pub fn lead(cwd: impl AsRef<Path>) -> PtyLeadBuilder {
    PtyLead::builder(program(), cwd)
}
