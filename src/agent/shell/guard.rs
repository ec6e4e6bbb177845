//! The process group of one command, and the watchdog that kills it when the process that
//! started it dies, however it dies (SIGKILL included).
//!
//! Before a command starts, a watchdog is started: `sh -c 'read …; kill -s KILL 0'` as the
//! leader of a new process group, its stdin the read end of a pipe whose only write end this
//! process keeps (`O_CLOEXEC`). The command then joins the watchdog's group. When this process
//! exits for any reason the kernel closes the write end, the watchdog's `read` sees end of file,
//! and `kill 0` kills the whole group: the command, everything it started that stayed in its
//! group, and the watchdog itself. Normally the group is killed from here instead (the command
//! ended or was interrupted), watchdog included, before the watchdog is reaped, so the group id
//! cannot have been reused by then.
//!
//! Why not `PR_SET_PDEATHSIG`: it fires when the *thread* that forked the child exits (tokio's
//! blocking threads end after 10 s idle, and `block_in_place` hands a worker's role to another
//! thread), it only signals the direct child, and it is not inherited by the command's own
//! children; a `sleep` started by `sh -c` would survive. There is no race at start: a command
//! being forked holds a copy of the write end until its `exec`, which happens after it joined
//! the group, so the watchdog cannot see end of file before the command is in its group.

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;

use tokio::process::{Child, Command};

/// The watchdog's script: wait for end of file on stdin, then kill the own process group.
/// Hang-ups and interrupts aimed at the terminal's groups must not stop it early.
const WATCHDOG: &str = "trap '' HUP INT QUIT TERM PIPE; read -r _ignored; kill -s KILL 0";

/// The watchdog's `$0`, visible in `ps`.
pub const WATCHDOG_NAME: &str = "teamlead-command-watchdog";

/// A process group with its watchdog. Dropping it kills the group.
#[derive(Debug)]
pub struct GroupGuard {
    group: i32,
    watchdog: Option<Child>,
    /// The write end of the watchdog's pipe: closed when this process dies.
    _alive: Option<OwnedFd>,
}

impl GroupGuard {
    /// Starts the watchdog of a new group. Commands join it with
    /// [`Command::process_group`]`(guard.group())`.
    pub fn start() -> std::io::Result<GroupGuard> {
        let (read, write) = pipe_cloexec()?;
        let watchdog = Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .arg(WATCHDOG_NAME)
            .stdin(Stdio::from(read))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(false)
            .spawn()?;
        let group = watchdog
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .filter(|p| *p > 0)
            .ok_or_else(|| std::io::Error::other("the watchdog has no pid"))?;
        Ok(GroupGuard {
            group,
            watchdog: Some(watchdog),
            _alive: Some(write),
        })
    }

    /// The process group id (the watchdog's pid).
    pub fn group(&self) -> i32 {
        self.group
    }

    /// SIGKILL to the whole group (the watchdog too); idempotent.
    pub fn kill(&self) {
        // SAFETY: killpg only sends a signal. The group cannot belong to anyone else: its
        // leader (the watchdog) is our child and is reaped only after this, in `finish`.
        unsafe {
            libc::killpg(self.group, libc::SIGKILL);
        }
    }

    /// Kills the group and reaps the watchdog.
    pub async fn finish(mut self) {
        self.kill();
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.wait().await;
        }
    }
}

impl Drop for GroupGuard {
    /// A command abandoned mid-run (its task was dropped) takes its group with it; tokio reaps
    /// the watchdog in the background.
    fn drop(&mut self) {
        if self.watchdog.is_some() {
            self.kill();
        }
    }
}

/// A pipe whose both ends are closed on exec.
fn pipe_cloexec() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds` on success.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// The state letter and process group of a process, from `/proc/<pid>/stat`.
    fn stat(pid: &str) -> Option<(char, i32)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
        let state = rest.next()?.chars().next()?;
        let pgrp = rest.nth(1)?.parse().ok()?;
        Some((state, pgrp))
    }

    /// Processes of `group` still running (zombies waiting for a reaper do not count).
    fn live_members(group: i32) -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| stat(e.file_name().to_str()?))
            .filter(|(state, pgrp)| *pgrp == group && *state != 'Z')
            .count()
    }

    async fn group_gone_within(group: i32, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if live_members(group) == 0 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    #[tokio::test]
    async fn closing_the_pipe_kills_the_group() {
        let guard = GroupGuard::start().unwrap();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("sleep 300 & sleep 301")
            .process_group(guard.group())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while live_members(guard.group()) < 3 {
            assert!(Instant::now() < deadline, "watchdog, sh and two sleeps");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // What the kernel does when this process dies: the write end closes.
        let mut guard = guard;
        let group = guard.group();
        drop(guard._alive.take());
        let status = child.wait().await.unwrap();
        assert!(status.code().is_none(), "killed by a signal");
        let mut watchdog = guard.watchdog.take().unwrap();
        let _ = watchdog.wait().await;
        assert!(
            group_gone_within(group, Duration::from_secs(3)).await,
            "the background sleep died with the group"
        );
    }

    #[tokio::test]
    async fn finish_kills_the_group_and_reaps_the_watchdog() {
        let guard = GroupGuard::start().unwrap();
        let group = guard.group();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("sleep 300 & exit 0")
            .process_group(group)
            .spawn()
            .unwrap();
        assert_eq!(child.wait().await.unwrap().code(), Some(0));
        assert_eq!(
            live_members(group),
            2,
            "the watchdog and the background sleep"
        );
        guard.finish().await;
        assert!(group_gone_within(group, Duration::from_secs(3)).await);
    }
}
