//! The real `teamlead` binary in a pseudo-terminal (portable-pty + vt100) for the PTY tests:
//! start it with `--home` in a temporary home, send bytes, read the parsed screen, wait for a
//! condition with a deadline; killed on drop if still running. The raw output is kept too.
//! Included by several test binaries, each using part of it.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

pub const DEADLINE: Duration = Duration::from_secs(30);

/// The binary in a PTY, its screen parsed by vt100; killed on drop if still running.
pub struct Session {
    pub child: Box<dyn Child + Send + Sync>,
    pub writer: Arc<Mutex<Box<dyn Write + Send>>>,
    pub screen: Arc<Mutex<vt100::Parser>>,
    /// Every byte the binary wrote, as written.
    pub raw: Arc<Mutex<Vec<u8>>>,
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
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = match wrapper.split_first() {
            Some((program, wrapper_args)) => {
                let mut cmd = CommandBuilder::new(program);
                cmd.args(wrapper_args);
                cmd.arg(env!("CARGO_BIN_EXE_teamlead"));
                cmd
            }
            None => CommandBuilder::new(env!("CARGO_BIN_EXE_teamlead")),
        };
        // The lead in this terminal's process (these tests are about it, not the server).
        cmd.env("TEAMLEAD_NO_SERVER", "1");
        if let Some(home) = home {
            cmd.arg("--home");
            cmd.arg(home);
        }
        for a in args {
            cmd.arg(a);
        }
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        for var in ["CLAUDE_CONFIG_DIR", "TEAMLEAD_HOME", "TMUX", "TMUX_PANE"] {
            cmd.env_remove(var);
        }
        // Never the user's config file: one that does not exist, unless the test names one.
        cmd.env("TEAMLEAD_CONFIG", cwd.join(".teamlead-test-config.toml"));
        for (key, value) in env {
            cmd.env(key, value);
        }
        for (key, value) in vars {
            cmd.env(key, value);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn teamlead");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(30, 100, 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (screen_in, answer, raw_in) = (screen.clone(), writer.clone(), raw.clone());
        std::thread::spawn(move || {
            // Keeps the master open for as long as the child may write.
            let _master = pair.master;
            let mut buf = [0u8; 4096];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let bytes = &buf[..n];
                        // Answer the primary device attributes query like a terminal would.
                        if bytes.windows(3).any(|w| w == b"\x1b[c")
                            && let Ok(mut w) = answer.lock()
                        {
                            let _ = w.write_all(b"\x1b[?1;2c");
                            let _ = w.flush();
                        }
                        if let Ok(mut all) = raw_in.lock() {
                            all.extend_from_slice(bytes);
                        }
                        if let Ok(mut parser) = screen_in.lock() {
                            parser.process(bytes);
                        }
                    }
                }
            }
        });
        Session {
            child,
            writer,
            screen,
            raw,
        }
    }

    pub fn send(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().expect("writer");
        w.write_all(bytes).expect("write to the pty");
        w.flush().expect("flush the pty");
    }

    pub fn contents(&self) -> String {
        self.screen.lock().expect("screen").screen().contents()
    }

    /// Waits until the screen satisfies `check`.
    pub fn wait_for(&self, what: &str, check: impl Fn(&vt100::Screen) -> bool) {
        let start = Instant::now();
        loop {
            if check(self.screen.lock().expect("screen").screen()) {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the process to exit; returns whether it succeeded.
    pub fn wait_exit(&mut self) -> bool {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.success();
            }
            assert!(
                start.elapsed() < DEADLINE,
                "teamlead did not exit; screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
