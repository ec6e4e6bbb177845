//! The real `teamlead` binary in a pseudo-terminal for the PTY tests: started with `--home` in a
//! temporary home (or without, as a user types it), on the suite's one PTY harness
//! ([`crate::pty_harness::Terminal`], which it derefs to: send bytes, read the parsed screen,
//! the raw output); waits with a deadline; killed on drop if still running.

#![allow(dead_code)]

use std::path::Path;

use crate::pty_harness::{self, Terminal};

pub use crate::pty_harness::DEADLINE;

/// The binary in a 100×30 PTY.
pub struct Session(Terminal);

impl std::ops::Deref for Session {
    type Target = Terminal;
    fn deref(&self) -> &Terminal {
        &self.0
    }
}

impl std::ops::DerefMut for Session {
    fn deref_mut(&mut self) -> &mut Terminal {
        &mut self.0
    }
}

impl Session {
    pub fn start(home: &Path, cwd: &Path, args: &[&str]) -> Session {
        Session::start_env(home, cwd, args, &[])
    }

    pub fn start_env(home: &Path, cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Session {
        Session::start_in(Some(home), cwd, args, env, &[])
    }

    /// Starts the binary with `--home` when `home` is given (else without, as a user types
    /// it), `env` and `vars` added to its environment.
    pub fn start_in(
        home: Option<&Path>,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &Path)],
        vars: &[(&str, &str)],
    ) -> Session {
        Session::start_wrapped(&[], home, cwd, args, env, vars)
    }

    /// Like [`Session::start_in`], the binary run by `wrapper` (a program and its arguments,
    /// which end with exec'ing the binary given as their last argument, e.g. `unshare … sh -c
    /// 'mount … && exec "$0" "$@"'`); empty runs the binary itself.
    pub fn start_wrapped(
        wrapper: &[&str],
        home: Option<&Path>,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &Path)],
        vars: &[(&str, &str)],
    ) -> Session {
        let mut cmd = pty_harness::teamlead(home, cwd, args);
        if !wrapper.is_empty() {
            let argv = cmd.get_argv_mut();
            let mut wrapped: Vec<std::ffi::OsString> = wrapper.iter().map(Into::into).collect();
            wrapped.append(argv);
            *argv = wrapped;
        }
        // Never the user's config file: one that does not exist, unless the test names one.
        cmd.env("TEAMLEAD_CONFIG", cwd.join(".teamlead-test-config.toml"));
        for (key, value) in env {
            cmd.env(key, value);
        }
        for (key, value) in vars {
            cmd.env(key, value);
        }
        Session(Terminal::spawn(cmd, 100, 30))
    }

    /// Waits until the screen satisfies `check`.
    pub fn wait_for(&self, what: &str, check: impl Fn(&vt100::Screen) -> bool) {
        self.wait_screen_within(what, DEADLINE, check);
    }

    /// Waits for the process to exit; returns whether it succeeded.
    pub fn wait_exit(&mut self) -> bool {
        self.wait_exit_within(DEADLINE)
    }
}
