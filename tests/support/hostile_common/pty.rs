//! The lead session in a pseudo-terminal for the hostile suite, on the suite's PTY harness
//! ([`crate::pty_harness::Terminal`], which it derefs to): the raw bytes it wrote are kept and
//! every window title it set is recorded, so a test can prove that no escape sequence from a
//! file reached the terminal. Killed on drop.

use std::path::Path;
use std::time::Duration;

use crate::pty_harness::{self, Terminal};

pub struct Lead(Terminal);

impl std::ops::Deref for Lead {
    type Target = Terminal;
    fn deref(&self) -> &Terminal {
        &self.0
    }
}

impl std::ops::DerefMut for Lead {
    fn deref_mut(&mut self) -> &mut Terminal {
        &mut self.0
    }
}

impl Lead {
    /// `teamlead --home H <args>` in a 30×100 PTY, logs in `logs`, cwd `cwd`.
    pub fn start(home: &Path, logs: &Path, cwd: &Path, args: &[&str]) -> Lead {
        let mut cmd = pty_harness::teamlead(Some(home), cwd, args);
        cmd.env("TEAMLEAD_LOG_DIR", logs);
        Lead(Terminal::spawn(cmd, 100, 30))
    }

    /// Types `bytes` (a lead that has gone is not an error here: the test looks at why).
    pub fn send(&mut self, bytes: &[u8]) {
        self.0.send_lossy(bytes);
    }

    /// Polls until `check(screen text)` holds or the process exits or the deadline passes.
    pub fn wait_for(&mut self, limit: Duration, check: impl Fn(&str) -> bool) -> bool {
        self.0.poll_text(limit, check)
    }

    pub fn exited(&mut self) -> bool {
        self.0.exit_status().is_some()
    }

    /// Waits for the exit; `None` at the deadline.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<bool> {
        self.0.exit_within(limit)
    }
}
