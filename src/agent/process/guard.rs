//! `teamlead guard`: what a pane runs in front of a `claude` teammate, so that no Claude Code
//! teammate outlives its lead. Claude Code knows nothing of teamlead's liveness lock; the guard
//! does, the way a `teamlead teammate` does ([`super::lead_watch`]). It starts the program as
//! its child on the same terminal (same process group: keys typed in the pane reach the
//! program, which stays in the terminal's foreground group), ignores SIGINT, SIGQUIT and
//! SIGTSTP (Ctrl+C in the pane is the program's, not the guard's), passes SIGTERM and SIGHUP on,
//! waits for the program and exits with its status (a signal death raised again, so the pane
//! shows a crash as before). Meanwhile, every [`LEAD_CHECK_EVERY`], it watches the team: when
//! no lead has held the team's liveness lock for a whole grace period (`TEAMLEAD_LEAD_GRACE_MS`,
//! 30 s), the team's `config.json` is missing on two checks in a row, or the member was removed
//! from it for [`MEMBER_GONE_FOR`], it stops the program and everything below it (SIGTERM, then
//! SIGKILL after [`reap::TERM_WAIT`]) and exits 0. A lead that comes back within the grace
//! period (resume) finds it running. The guard is a child subreaper (Linux): what the program
//! leaves behind when it exits is adopted by the guard, found through `/proc`, and stopped too.
//! Its own command line, `teamlead guard --home <home> --agent-id <name>@<team> -- <program>
//! <args>`, is what identifies the teammate by process (`backend::reap`): Claude Code retitles
//! its pane, and node's `cli.js` client renames its process to `claude`, hiding its arguments.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{LEAD_CHECK_EVERY, lead_gone, lead_grace};
use crate::backend::reap;
use crate::store::{self, Home};

/// How long the member must be missing from `config.json` before the guard takes it as
/// removed (2.1.45 teammates rewrite the file unlocked and may drop a member for a moment;
/// the lead repairs it).
pub const MEMBER_GONE_FOR: Duration = Duration::from_secs(3);

/// Why the guard stopped its program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopWhy {
    LeadGone(Duration),
    TeamGone,
    MemberRemoved,
}

impl std::fmt::Display for StopWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopWhy::LeadGone(grace) => write!(
                f,
                "no team lead came back within {} s",
                grace.as_millis().div_ceil(1000)
            ),
            StopWhy::TeamGone => f.write_str("the team is gone (its files were removed)"),
            StopWhy::MemberRemoved => f.write_str("the teammate was removed from its team"),
        }
    }
}

/// What the guard watches, checked every [`LEAD_CHECK_EVERY`]; pure, so it is tested on its own.
#[derive(Debug)]
pub struct Watch {
    grace: Duration,
    gone_since: Option<Instant>,
    team_missing: u32,
    member_missing_since: Option<Instant>,
}

impl Watch {
    pub fn new(grace: Duration) -> Watch {
        Watch {
            grace,
            gone_since: None,
            team_missing: 0,
            member_missing_since: None,
        }
    }

    /// One check at `now`: (lead gone, team gone, member missing) → stop, or not yet.
    pub fn check(
        &mut self,
        now: Instant,
        lead_gone: bool,
        team_gone: bool,
        member_missing: bool,
    ) -> Option<StopWhy> {
        self.team_missing = if team_gone { self.team_missing + 1 } else { 0 };
        if self.team_missing >= 2 {
            return Some(StopWhy::TeamGone);
        }
        if !lead_gone {
            self.gone_since = None;
        } else if self.gone_since.is_none() {
            self.gone_since = Some(now);
        }
        if self
            .gone_since
            .is_some_and(|since| now.duration_since(since) >= self.grace)
        {
            return Some(StopWhy::LeadGone(self.grace));
        }
        if !member_missing || team_gone {
            self.member_missing_since = None;
        } else if self.member_missing_since.is_none() {
            self.member_missing_since = Some(now);
        }
        if self
            .member_missing_since
            .is_some_and(|since| now.duration_since(since) >= MEMBER_GONE_FOR)
        {
            return Some(StopWhy::MemberRemoved);
        }
        None
    }
}

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signalled(i32),
}

/// Writes one line to the pane (never fails: the terminal may be gone).
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "teamlead guard: {text}");
}

/// Runs `program` guarded (see the module header) and returns how the guard must end: the
/// program's status, or `Exited(0)` when the guard stopped it.
pub fn run(home: &Home, agent_id: &str, program: &[String]) -> Ended {
    let Some((name, team)) = agent_id.rsplit_once('@') else {
        say(&format!("--agent-id must be NAME@TEAM, not `{agent_id}`"));
        return Ended::Exited(2);
    };
    let Some((binary, args)) = program.split_first() else {
        say("no program to run (teamlead guard … -- PROGRAM ARGS…)");
        return Ended::Exited(2);
    };
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) only sets a flag of this process.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
    }
    // Handlers (not SIG_IGN, which a child would inherit): the program gets the defaults back
    // when it is executed.
    let ignored = Arc::new(AtomicBool::new(false));
    for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTSTP] {
        let _ = signal_hook::flag::register(sig, ignored.clone());
    }
    let term = Arc::new(AtomicBool::new(false));
    let hup = Arc::new(AtomicBool::new(false));
    let _ = signal_hook::flag::register(libc::SIGTERM, term.clone());
    let _ = signal_hook::flag::register(libc::SIGHUP, hup.clone());
    let wake = UnixStream::pair().ok().and_then(|(rx, tx)| {
        rx.set_nonblocking(true).ok()?;
        for sig in [libc::SIGCHLD, libc::SIGTERM, libc::SIGHUP] {
            signal_hook::low_level::pipe::register(sig, tx.try_clone().ok()?).ok()?;
        }
        Some(rx)
    });

    let child = match std::process::Command::new(binary).args(args).spawn() {
        Ok(child) => child,
        Err(e) => {
            say(&format!("{binary}: {e}"));
            return Ended::Exited(match e.kind() {
                std::io::ErrorKind::NotFound => 127,
                _ => 126,
            });
        }
    };
    let pid = child.id() as libc::pid_t;
    // The child is waited for with waitpid below (orphans adopted by this subreaper are
    // reaped by the same loop), never through `Child`.
    drop(child);

    let grace = lead_grace();
    let mut watch = Watch::new(grace);
    let mut next_check = Instant::now() + LEAD_CHECK_EVERY;
    let mut forwarded_at: Option<Instant> = None;
    let mut ended: Option<Ended> = None;
    let reap_all = |ended: &mut Option<Ended>| {
        loop {
            let mut status = 0;
            // SAFETY: waitpid with WNOHANG and a valid pointer to an int.
            let got = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if got <= 0 {
                break;
            }
            if got == pid {
                *ended = Some(if libc::WIFSIGNALED(status) {
                    Ended::Signalled(libc::WTERMSIG(status))
                } else {
                    Ended::Exited(libc::WEXITSTATUS(status))
                });
            }
        }
    };
    let me = std::process::id();
    loop {
        reap_all(&mut ended);
        if let Some(ended) = ended {
            // What the program left behind (adopted by this subreaper) goes with it.
            reap::stop_descendants(me, reap::TERM_WAIT, &mut || {
                reap_all(&mut None);
            });
            return ended;
        }
        for (flag, sig) in [(&term, libc::SIGTERM), (&hup, libc::SIGHUP)] {
            if flag.swap(false, Ordering::SeqCst) {
                // SAFETY: kill(2) of our own child with a valid signal.
                unsafe {
                    libc::kill(pid, sig);
                }
                forwarded_at.get_or_insert_with(Instant::now);
            }
        }
        if forwarded_at.is_some_and(|at| at.elapsed() >= reap::TERM_WAIT) {
            reap::stop_descendants(me, reap::TERM_WAIT, &mut || reap_all(&mut ended));
            forwarded_at = None;
            continue;
        }
        let now = Instant::now();
        if now >= next_check {
            next_check = now + LEAD_CHECK_EVERY;
            let team_gone = store::team::team_gone(home, team);
            let member_missing = store::read_team(home, team)
                .map(|file| file.member(name).is_none())
                .unwrap_or(false);
            if let Some(why) = watch.check(now, lead_gone(home, team), team_gone, member_missing) {
                tracing::info!("guard of {agent_id}: {why}: stopping {binary}");
                reap::stop_descendants(me, reap::TERM_WAIT, &mut || reap_all(&mut ended));
                say(&format!("{why}: stopped {name}"));
                close_own_tmux_pane();
                return Ended::Exited(0);
            }
        }
        let timeout = next_check
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(500));
        wait_for(wake.as_ref(), timeout);
    }
}

/// A teammate stopped because its lead is gone for good has nobody to close its pane: inside
/// tmux the guard closes it itself (`$TMUX_PANE`, on the server `$TMUX` names). Relying on the
/// exit status is not enough: tmux can see the pane's terminal close before it reaps the
/// program, and then keeps the pane under `remain-on-exit failed` as if it had failed.
fn close_own_tmux_pane() {
    let (Some(socket), Some(pane)) = (std::env::var_os("TMUX"), std::env::var_os("TMUX_PANE"))
    else {
        return;
    };
    let Some(socket) = socket
        .to_str()
        .and_then(|t| t.split(',').next())
        .map(str::to_string)
    else {
        return;
    };
    let _ = std::process::Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .arg("kill-pane")
        .arg("-t")
        .arg(pane)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// Sleeps until a signal arrives on `wake` or `timeout` passes.
fn wait_for(wake: Option<&UnixStream>, timeout: Duration) {
    let Some(mut rx) = wake else {
        std::thread::sleep(timeout.min(Duration::from_millis(100)));
        return;
    };
    let mut fds = libc::pollfd {
        fd: rx.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().clamp(1, 1000) as libc::c_int;
    // SAFETY: one valid pollfd, for the duration of the call.
    unsafe {
        libc::poll(&mut fds, 1, ms);
    }
    let mut buf = [0u8; 64];
    while matches!(rx.read(&mut buf), Ok(n) if n > 0) {}
}

/// Ends this process the way the program ended: its exit status, or its signal raised again
/// (128 + the signal when that signal does not end a process).
pub fn exit_like(ended: Ended) -> ! {
    match ended {
        Ended::Exited(code) => std::process::exit(code),
        Ended::Signalled(sig) => {
            // SAFETY: resetting a signal to its default action and raising it on ourselves.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            std::process::exit(128 + sig)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACE: Duration = Duration::from_secs(30);

    #[test]
    fn a_lead_gone_for_the_grace_period_stops_and_a_lead_back_resets_it() {
        let t0 = Instant::now();
        let mut w = Watch::new(GRACE);
        assert_eq!(w.check(t0, true, false, false), None);
        assert_eq!(
            w.check(t0 + GRACE - Duration::from_millis(1), true, false, false),
            None
        );
        assert_eq!(w.check(t0 + GRACE, false, false, false), None, "back");
        assert_eq!(
            w.check(t0 + GRACE * 2 - Duration::from_secs(1), true, false, false),
            None
        );
        assert_eq!(
            w.check(t0 + GRACE * 3, true, false, false),
            Some(StopWhy::LeadGone(GRACE))
        );
    }

    #[test]
    fn a_team_missing_twice_in_a_row_stops_at_once() {
        let t0 = Instant::now();
        let mut w = Watch::new(GRACE);
        assert_eq!(w.check(t0, false, true, false), None);
        assert_eq!(w.check(t0, false, false, false), None);
        assert_eq!(w.check(t0, false, true, true), None);
        assert_eq!(w.check(t0, false, true, true), Some(StopWhy::TeamGone));
    }

    #[test]
    fn a_member_missing_for_a_while_stops_a_moment_does_not() {
        let t0 = Instant::now();
        let mut w = Watch::new(GRACE);
        assert_eq!(w.check(t0, false, false, true), None);
        assert_eq!(
            w.check(t0 + Duration::from_secs(1), false, false, false),
            None
        );
        assert_eq!(
            w.check(t0 + Duration::from_secs(2), false, false, true),
            None
        );
        assert_eq!(
            w.check(
                t0 + Duration::from_secs(2) + MEMBER_GONE_FOR,
                false,
                false,
                true
            ),
            Some(StopWhy::MemberRemoved)
        );
    }
}
