//! The real `teamlead` binary in a pseudo-terminal, as every PTY test starts and drives it:
//! [`PtyLead`] (the suite's [`Terminal`], which it derefs to, plus what a test does with a
//! lead: wait for the screen, wait for the exit; its keys are a [`Keyboard`]: composer lines
//! checked on the composer's row, approvals answered after their grace period) and
//! [`PtyLeadBuilder`], how it starts (home, working directory, arguments, environment,
//! terminal size, a wrapper program). `PtyLead::builder(program, cwd)…start()` waits for the lead's
//! screen; `…spawn()` waits for nothing.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{DEADLINE, Program, Terminal, teamlead};
use crate::keys::{Key, Keyboard};

/// What the lead's screen shows once it runs (the footer's mode hint).
pub const READY: &str = "shift+tab to cycle";

/// How a [`PtyLead`] starts. Defaults: no `--home`, no arguments, 100×30, the environment of
/// [`super::teamlead`].
pub struct PtyLeadBuilder {
    program: Program,
    cwd: PathBuf,
    home: Option<PathBuf>,
    args: Vec<OsString>,
    /// Set (`Some`) or removed (`None`), in order.
    env: Vec<(OsString, Option<OsString>)>,
    wrapper: Vec<OsString>,
    cols: u16,
    rows: u16,
}

impl PtyLeadBuilder {
    /// `--home HOME` before the arguments.
    pub fn home(mut self, home: impl AsRef<Path>) -> Self {
        self.home = Some(home.as_ref().to_path_buf());
        self
    }

    /// Adds command-line arguments (after `--home`).
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Sets one environment variable.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((
            key.as_ref().to_os_string(),
            Some(value.as_ref().to_os_string()),
        ));
        self
    }

    /// Sets every `(key, value)`.
    pub fn envs<K: AsRef<OsStr>, V: AsRef<OsStr>>(
        mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        for (key, value) in vars {
            self = self.env(key, value);
        }
        self
    }

    /// Removes environment variables from the lead's environment.
    pub fn env_remove<S: AsRef<OsStr>>(mut self, keys: impl IntoIterator<Item = S>) -> Self {
        for key in keys {
            self.env.push((key.as_ref().to_os_string(), None));
        }
        self
    }

    /// The lead's log directory (`TEAMLEAD_LOG_DIR`).
    pub fn logs(self, dir: impl AsRef<Path>) -> Self {
        self.env("TEAMLEAD_LOG_DIR", dir.as_ref())
    }

    /// Outside any multiplexer, even when the tests run inside one: no `ZELLIJ*` variables
    /// (`TMUX` and `TMUX_PANE` are never passed on).
    pub fn outside_multiplexers(self) -> Self {
        self.env_remove(["ZELLIJ", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID"])
    }

    /// The terminal's size.
    pub fn size(mut self, cols: u16, rows: u16) -> Self {
        self.cols = cols;
        self.rows = rows;
        self
    }

    /// Runs the binary through `wrapper` (a program and its arguments, which end with exec'ing
    /// the program given as their last argument, e.g. `unshare … sh -c 'mount … && exec "$0"
    /// "$@"'`).
    pub fn wrapper<S: AsRef<OsStr>>(mut self, wrapper: impl IntoIterator<Item = S>) -> Self {
        self.wrapper = wrapper
            .into_iter()
            .map(|a| a.as_ref().to_os_string())
            .collect();
        self
    }

    /// Starts the lead and waits until its screen shows [`READY`].
    pub fn start(self) -> PtyLead {
        let lead = self.spawn();
        lead.wait_screen("the lead's screen", |s| s.contains(READY));
        lead
    }

    /// Starts the lead without waiting for anything.
    pub fn spawn(self) -> PtyLead {
        let args: Vec<&OsStr> = self.args.iter().map(OsString::as_os_str).collect();
        // No home given and no HOME of the test's own: a fresh one, never the user's
        // `~/.claude`.
        let own_home = (self.home.is_none() && !self.env.iter().any(|(k, _)| k == "HOME"))
            .then(|| tempfile::tempdir().expect("a temporary home for the lead"));
        let home = self
            .home
            .clone()
            .or_else(|| own_home.as_ref().map(|d| d.path().to_path_buf()));
        let mut cmd = teamlead(&self.program, home.as_deref(), &self.cwd, &args);
        if !self.wrapper.is_empty() {
            let argv = cmd.get_argv_mut();
            let mut wrapped = self.wrapper.clone();
            wrapped.append(argv);
            *argv = wrapped;
        }
        for (key, value) in &self.env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            }
        }
        PtyLead {
            term: Terminal::spawn(cmd, self.cols, self.rows),
            _home: own_home,
        }
    }
}

/// The real binary in a PTY; killed on drop if still running.
pub struct PtyLead {
    term: Terminal,
    /// The temporary home made for it when the test gave none.
    _home: Option<tempfile::TempDir>,
}

impl std::ops::Deref for PtyLead {
    type Target = Terminal;
    fn deref(&self) -> &Terminal {
        &self.term
    }
}

impl std::ops::DerefMut for PtyLead {
    fn deref_mut(&mut self) -> &mut Terminal {
        &mut self.term
    }
}

impl PtyLead {
    /// How a lead (`program`) in `cwd` starts.
    pub fn builder(program: Program, cwd: impl AsRef<Path>) -> PtyLeadBuilder {
        PtyLeadBuilder {
            program,
            cwd: cwd.as_ref().to_path_buf(),
            home: None,
            args: Vec::new(),
            env: Vec::new(),
            wrapper: Vec::new(),
            cols: 100,
            rows: 30,
        }
    }

    /// The screen's text.
    pub fn screen(&self) -> String {
        self.contents()
    }

    /// Waits (up to [`DEADLINE`]) until the screen's text satisfies `check`; how long it took.
    pub fn wait_screen(&self, what: &str, check: impl Fn(&str) -> bool) -> Duration {
        self.wait_text_within(what, DEADLINE, check)
    }

    /// Waits (up to [`DEADLINE`]) until the screen (its cells: colours, cursor, modes)
    /// satisfies `check`; how long it took.
    pub fn wait_for(&self, what: &str, check: impl Fn(&vt100::Screen) -> bool) -> Duration {
        self.wait_screen_within(what, DEADLINE, check)
    }

    /// Types a one-line composer input, checked on the composer's row, and presses Enter
    /// ([`Keyboard::type_line`]).
    pub fn submit(&self, line: &str) {
        self.type_line(line);
    }

    /// Waits (up to [`DEADLINE`]) for the exit; whether the status was 0.
    pub fn wait_exit(&mut self) -> bool {
        self.wait_exit_within(DEADLINE)
    }
}

impl Keyboard for PtyLead {
    fn screen(&self) -> String {
        self.contents()
    }
    fn type_text(&self, text: &str) {
        self.send(text.as_bytes());
    }
    fn press(&self, key: Key) {
        self.send(&key.bytes());
    }
}
