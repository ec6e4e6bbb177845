//! One host's connection: the user's `ssh`, always in BatchMode, through one persistent
//! ControlMaster of teamlead's own (its socket in teamlead's runtime directory, named by a
//! short hash: socket paths are limited to about 104 bytes). Before each call the master is
//! checked (`ssh -O check`, under a deadline); a dead or wedged one is stopped if it is ours,
//! its socket removed, and a new one started (`ssh -N -f`, under a deadline). Every call has a
//! deadline. Host keys are always checked: an unknown key is an error, never accepted here.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::HostError;
use super::run::{Output, RunError, run};
use crate::config::HostConfig;

/// How long the steps of a call may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    /// `ssh -o ConnectTimeout`: a host that does not answer the TCP connection.
    pub connect: Duration,
    /// `ssh -O check` and `-O exit` on the local control socket.
    pub check: Duration,
    /// Starting a master: connecting, key exchange, authentication.
    pub start: Duration,
    /// A remote command (the caller may give a longer one for a long command).
    pub call: Duration,
}

impl Default for Deadlines {
    fn default() -> Deadlines {
        Deadlines {
            connect: Duration::from_secs(5),
            check: Duration::from_secs(3),
            start: Duration::from_secs(12),
            call: Duration::from_secs(15),
        }
    }
}

/// How long a master stays up after its last call (`ControlPersist`).
const PERSIST: &str = "10m";
/// `ServerAliveInterval` × `ServerAliveCountMax`: a master whose host went silent ends
/// within about 6 s.
const ALIVE_INTERVAL: &str = "2";
const ALIVE_COUNT: &str = "3";
/// The longest control path that fits a Unix socket address with the 17 bytes ssh appends
/// to it while binding.
const MAX_CONTROL_PATH: usize = 104 - 1 - 17;

/// Where connections live and how `ssh` is told about the user's set-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connector {
    /// The directory of the control sockets (private to the user).
    pub control_dir: PathBuf,
    /// `ssh -F`: a config file instead of `~/.ssh/config` (`$TEAMLEAD_SSH_CONFIG`).
    pub ssh_config: Option<PathBuf>,
    pub deadlines: Deadlines,
}

impl Connector {
    /// Sockets in `control_dir`; `ssh -F` from `$TEAMLEAD_SSH_CONFIG` when it is set.
    pub fn new(control_dir: PathBuf) -> Connector {
        Connector {
            control_dir,
            ssh_config: std::env::var_os("TEAMLEAD_SSH_CONFIG")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            deadlines: Deadlines::default(),
        }
    }

    /// The connection to `host`.
    pub fn connection(&self, host: &HostConfig) -> Connection {
        let mut hash = Sha256::new();
        for part in [
            host.destination.as_str(),
            &host.port.map(|p| p.to_string()).unwrap_or_default(),
            &host.options.join("\n"),
            &self
                .ssh_config
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ] {
            hash.update(part.as_bytes());
            hash.update([0]);
        }
        let digest = hash.finalize();
        let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        Connection {
            host: host.clone(),
            control: self.control_dir.join(name),
            ssh_config: self.ssh_config.clone(),
            deadlines: self.deadlines,
        }
    }
}

/// The way to one host.
#[derive(Debug, Clone)]
pub struct Connection {
    pub host: HostConfig,
    /// The master's control socket.
    pub control: PathBuf,
    ssh_config: Option<PathBuf>,
    pub deadlines: Deadlines,
}

impl Connection {
    fn destination(&self) -> String {
        self.host.destination.clone()
    }

    /// `ssh` with teamlead's options first (ssh takes the first value it sees for an
    /// option), then the host's; no destination yet.
    fn ssh(&self, master: &str) -> Command {
        let mut cmd = Command::new("ssh");
        if let Some(config) = &self.ssh_config {
            cmd.arg("-F").arg(config);
        }
        let connect = self.deadlines.connect.as_secs().max(1).to_string();
        for option in [
            "BatchMode=yes".to_string(),
            format!("ControlMaster={master}"),
            format!("ControlPath={}", self.control.display()),
            format!("ControlPersist={PERSIST}"),
            format!("ServerAliveInterval={ALIVE_INTERVAL}"),
            format!("ServerAliveCountMax={ALIVE_COUNT}"),
            format!("ConnectTimeout={connect}"),
        ] {
            cmd.arg("-o").arg(option);
        }
        if let Some(port) = self.host.port {
            cmd.arg("-p").arg(port.to_string());
        }
        for option in &self.host.options {
            cmd.arg("-o").arg(option);
        }
        cmd
    }

    fn control_dir_error(&self, detail: String) -> HostError {
        HostError::ControlDir {
            path: self
                .control
                .parent()
                .unwrap_or(Path::new(""))
                .display()
                .to_string(),
            detail,
        }
    }

    /// The master's pid file (written when a check finds it running).
    fn pid_file(&self) -> PathBuf {
        self.control.with_extension("pid")
    }

    /// `ssh -O check`: is a master answering on the socket? Records its pid. A loaded
    /// machine can take longer than the check's deadline to answer while the master carries
    /// every session of the host (the relay's link among them), and burying a live master
    /// cuts every session riding it (a forward asked a moment later then finds no socket).
    /// So a master that did not answer in time but whose recorded process still runs (not
    /// stopped, not a zombie) is asked once more with twice the deadline before it counts as
    /// gone.
    pub fn master_alive(&self) -> bool {
        if !self.control.exists() {
            return false;
        }
        match self.check_within(self.deadlines.check) {
            Err(RunError::Deadline) if self.recorded_master_runs() => {
                tracing::warn!(
                    "the ssh master of {} did not answer its check within {:?} but runs: asking again",
                    self.destination(),
                    self.deadlines.check
                );
                matches!(self.check_within(self.deadlines.check * 2), Ok(true))
            }
            answered => matches!(answered, Ok(true)),
        }
    }

    /// One `ssh -O check` within `deadline`: whether it answered (its pid recorded).
    fn check_within(&self, deadline: Duration) -> Result<bool, RunError> {
        let mut cmd = self.ssh("no");
        cmd.arg("-O").arg("check").arg(self.destination());
        let out = run(cmd, None, deadline)?;
        if out.status != Some(0) {
            return Ok(false);
        }
        if let Some(pid) = out
            .stderr
            .split("pid=")
            .nth(1)
            .and_then(|s| s.split(')').next())
        {
            let _ = std::fs::write(self.pid_file(), pid.trim());
        }
        Ok(true)
    }

    /// Whether the pid recorded for the master is an `ssh` naming this control socket.
    fn recorded_master_is_ours(&self) -> bool {
        self.recorded_master_pid().is_some_and(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(&self.control.display().to_string())
        })
    }

    /// Whether the recorded master is ours and can still answer: running or sleeping, not
    /// stopped (`T`, `t`) or a zombie (`Z`).
    fn recorded_master_runs(&self) -> bool {
        let state = self.recorded_master_pid().and_then(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) S …`: the state follows the last `)`.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next())
        });
        self.recorded_master_is_ours() && state.is_some_and(|s| !matches!(s, 'T' | 't' | 'Z' | 'X'))
    }

    fn recorded_master_pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.pid_file())
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
            .filter(|p| *p > 1)
    }

    /// Stops a master that does not answer, when the pid recorded for it is still an `ssh`
    /// naming this control socket, and removes its socket.
    fn bury_master(&self) {
        if let Some(pid) = self.recorded_master_pid()
            && self.recorded_master_is_ours()
        {
            // SAFETY: a plain signal to a process id read just above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = std::fs::remove_file(self.pid_file());
        let _ = std::fs::remove_file(&self.control);
    }

    /// A master answering on the socket: the live one, or a new one in place of a dead one.
    pub fn ensure_master(&self) -> Result<(), HostError> {
        if self.control.as_os_str().len() > MAX_CONTROL_PATH {
            return Err(self.control_dir_error(format!(
                "too long for a socket ({} bytes, at most {MAX_CONTROL_PATH}): set TEAMLEAD_RUNTIME_DIR to a shorter directory",
                self.control.as_os_str().len()
            )));
        }
        let _lock = self.lock()?;
        if self.master_alive() {
            return Ok(());
        }
        self.bury_master();
        self.start_master()
    }

    /// `ssh -N -f`: connects, authenticates, then leaves a master in the background. Its
    /// stderr goes to a file beside the socket (a pipe would be held open by the master).
    fn start_master(&self) -> Result<(), HostError> {
        let log = self.control.with_extension("log");
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&log)
            .map_err(|e| self.control_dir_error(e.to_string()))?;
        let mut cmd = self.ssh("auto");
        cmd.arg("-N").arg("-f").arg(self.destination());
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(file);
        let started = cmd.spawn().map_err(|e| HostError::NoSsh {
            detail: e.to_string(),
        });
        let mut child = started?;
        let end = Instant::now() + self.deadlines.start;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(10)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        if status.is_some_and(|s| s.success()) && self.master_alive() {
            return Ok(());
        }
        self.bury_master();
        if let Some(cause) = HostError::from_stderr(&self.destination(), &said) {
            return Err(cause);
        }
        match status {
            None => Err(HostError::Deadline {
                destination: self.destination(),
                after: self.deadlines.start,
            }),
            Some(_) => Err(HostError::Other {
                destination: self.destination(),
                detail: last_line(&said),
            }),
        }
    }

    /// Holds `<socket>.lock` (flock): one process starts a host's master at a time.
    fn lock(&self) -> Result<std::fs::File, HostError> {
        use std::os::fd::AsRawFd;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(self.control.with_extension("lock"))
            .map_err(|e| self.control_dir_error(e.to_string()))?;
        let end = Instant::now() + self.deadlines.start + self.deadlines.check;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(file);
            }
            if Instant::now() >= end {
                return Err(HostError::Deadline {
                    destination: self.destination(),
                    after: self.deadlines.start,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `ssh … -- REMOTE` through a live master, for a caller that runs it itself (a long-lived
    /// process on the host, its stdin and stdout the link): the master is checked or replaced
    /// first, under its deadlines. The caller owns the process and its deadline.
    pub fn command(&self, remote: &str) -> Result<Command, HostError> {
        self.ensure_master()?;
        let mut cmd = self.ssh("no");
        cmd.arg(self.destination()).arg("--").arg(remote);
        Ok(cmd)
    }

    /// Runs `remote` (a command line for the remote user's shell) through the master, with
    /// `stdin` and `deadline`. A failure of ssh itself is a [`HostError`]; the command's own
    /// exit status is the caller's.
    pub fn call(
        &self,
        remote: &str,
        stdin: Option<std::fs::File>,
        deadline: Duration,
    ) -> Result<Output, HostError> {
        let cmd = self.command(remote)?;
        match run(cmd, stdin, deadline) {
            Ok(out) if out.status == Some(255) => {
                if let Some(cause) = HostError::from_stderr(&self.destination(), &out.stderr) {
                    return Err(cause);
                }
                Err(HostError::Other {
                    destination: self.destination(),
                    detail: last_line(&out.stderr),
                })
            }
            Ok(out) => Ok(out),
            Err(RunError::Spawn(e)) => Err(HostError::NoSsh {
                detail: e.to_string(),
            }),
            Err(RunError::Deadline) => {
                // A master that let a call hang is not trusted with the next one.
                if !self.master_alive() {
                    self.bury_master();
                }
                Err(HostError::Deadline {
                    destination: self.destination(),
                    after: deadline,
                })
            }
        }
    }

    /// The `ssh` command line (program first) that rides this host's master without
    /// starting one (`ControlMaster=no`), with teamlead's options and the host's; no
    /// destination. For a program that runs ssh itself (git's `GIT_SSH_COMMAND`).
    pub fn ssh_words(&self) -> Vec<String> {
        let cmd = self.ssh("no");
        std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|w| w.to_string_lossy().into_owned())
            .collect()
    }

    /// `ssh -O forward -R SPEC` on the live master (checked or replaced first): a remote
    /// forward that lives as long as the master. With a remote port of 0, ssh prints the port
    /// the host gave on its standard output.
    pub fn control_forward(&self, spec: &str) -> Result<Output, HostError> {
        let mut out = self.forward_once(spec)?;
        // The master went between its check and the forward (a socket gone, a refused
        // connection to it): started again, and asked once more.
        if out.status != Some(0) && out.stderr.contains("Control socket connect") {
            tracing::warn!(
                "the model forward to {} found no master ({}): asking again",
                self.destination(),
                last_line(&out.stderr)
            );
            out = self.forward_once(spec)?;
        }
        Ok(out)
    }

    /// [`Connection::control_forward`]'s one try: the master checked (or replaced) and the
    /// forward asked under the master's lock, so no other check buries it in between.
    fn forward_once(&self, spec: &str) -> Result<Output, HostError> {
        let _lock = self.lock()?;
        if !self.master_alive() {
            self.bury_master();
            self.start_master()?;
        }
        let mut cmd = self.ssh("no");
        cmd.arg("-O")
            .arg("forward")
            .arg("-R")
            .arg(spec)
            .arg(self.destination());
        run(cmd, None, self.deadlines.check).map_err(|e| match e {
            RunError::Spawn(e) => HostError::NoSsh {
                detail: e.to_string(),
            },
            RunError::Deadline => HostError::Deadline {
                destination: self.destination(),
                after: self.deadlines.check,
            },
        })
    }

    /// Ends the master (`ssh -O exit`), if one runs.
    pub fn close(&self) {
        if self.control.exists() {
            let mut cmd = self.ssh("no");
            cmd.arg("-O").arg("exit").arg(self.destination());
            let _ = run(cmd, None, self.deadlines.check);
        }
        self.bury_master();
        let _ = std::fs::remove_file(self.control.with_extension("log"));
    }
}

/// The last non-empty line of ssh's stderr, or a word when it said nothing.
fn last_line(stderr: &str) -> String {
    stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string()
}
