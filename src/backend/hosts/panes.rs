//! A remote teammate's pane (DESIGN.md "Hosts"): its session in the team's private tmux server
//! on its host (`tmux -L teamlead-<team>`, one session per teammate, named after it), reached
//! over the host's ssh master like every other host call. What the executor's seams need of
//! it: keys typed into it (`send-keys`: Esc, Shift+Tab), its last lines (`capture-pane`), the
//! turn of teamlead's own teammate there stopped (`SIGUSR1` to its process, found on the host
//! by the pane's process group, as `backend::turn_signal` finds a local one), and the jump
//! (`ssh -t` through teamlead's master into `tmux attach` of its session, with the way back in
//! tmux's status line, as for the lead's own private server).
//!
//! Every call has a deadline; a host whose link is down is said unreachable at once instead
//! of waiting for one; a call that fails is an error for the person, never a hang.

use std::time::Duration;

use super::Connection;
use super::remote::{RemoteTeammates, tmux_socket};
use crate::backend::launch::shell_quote;
use crate::backend::{BackendError, PaneKey};

/// How long typing a key or reading the pane may take.
const PANE_DEADLINE: Duration = Duration::from_secs(5);

/// How long finding and signalling the teammate's process may take.
const SIGNAL_DEADLINE: Duration = Duration::from_secs(10);

/// The keys that detach from the remote tmux session (its server runs with `-f /dev/null`:
/// tmux's own prefix).
pub const DETACH_KEYS: &str = "ctrl+b d";

/// One remote teammate's pane.
#[derive(Debug, Clone)]
pub struct RemotePane {
    /// The host's name in the config.
    pub host: String,
    pub connection: Connection,
    /// The team (its tmux server's socket name).
    pub team: String,
    /// The teammate (its session's name).
    pub name: String,
    /// Whether the host's link carried traffic when the pane was asked for.
    pub reachable: bool,
}

impl RemotePane {
    /// `tmux -L <team's socket> -f /dev/null ARGS`, quoted for the remote shell.
    fn tmux_line(&self, args: &[&str]) -> String {
        super::remote::team_tmux_line(&self.team, args)
    }

    /// The pane of the teammate's session (its only one).
    fn target(&self) -> String {
        format!("={}:", self.name)
    }

    fn unreachable(&self) -> String {
        format!(
            "{} is unreachable (its link is down): {} cannot be reached now",
            self.host, self.name
        )
    }

    /// Runs `line` on the host under `deadline`: its standard output, or why not.
    fn run(&self, line: &str, deadline: Duration) -> Result<String, BackendError> {
        if !self.reachable {
            return Err(BackendError::Unavailable(self.unreachable()));
        }
        let out = self
            .connection
            .call(line, None, deadline)
            .map_err(|e| BackendError::Unavailable(format!("on {}: {e}", self.host)))?;
        if out.status != Some(0) {
            let said = out.stderr.lines().last().unwrap_or("failed").to_string();
            return Err(BackendError::Unavailable(format!(
                "on {}: {said}",
                self.host
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Types `key` into the pane, as the person would.
    pub fn send_key(&self, key: PaneKey) -> Result<(), BackendError> {
        let name = match key {
            PaneKey::BackTab => "BTab",
            PaneKey::Escape => "Escape",
        };
        let line = self.tmux_line(&["send-keys", "-t", &self.target(), name]);
        self.run(&line, PANE_DEADLINE).map(|_| ())
    }

    /// The last `lines` non-empty lines the pane shows (empty when it cannot be read).
    pub fn tail(&self, lines: usize) -> Vec<String> {
        let line = self.tmux_line(&["capture-pane", "-p", "-J", "-t", &self.target()]);
        match self.run(&line, PANE_DEADLINE) {
            Ok(text) => last_lines(&text, lines),
            Err(e) => {
                tracing::debug!("reading {}'s pane: {e}", self.name);
                Vec::new()
            }
        }
    }

    /// Stops the current turn of teamlead's own teammate in the pane: `SIGUSR1` to the
    /// `teamlead` processes of the pane's process group that catch it (a task's commands run
    /// in groups of their own and are never told); how many were told.
    pub fn stop_turn(&self) -> Result<usize, BackendError> {
        let pid = self.tmux_line(&["display-message", "-p", "-t", &self.target(), "#{pane_pid}"]);
        let script = format!(
            "p=$({pid}) || exit 3; [ -n \"$p\" ] || exit 3; n=0; \
             for d in /proc/[0-9]*; do \
             s=$(sed 's/.*) //' \"$d/stat\" 2>/dev/null) || continue; set -- $s; \
             [ \"$3\" = \"$p\" ] || continue; \
             [ \"$(sed -n 's/^Name:[[:space:]]*//p' \"$d/status\" 2>/dev/null)\" = teamlead ] || continue; \
             m=$(sed -n 's/^SigCgt:[[:space:]]*//p' \"$d/status\" 2>/dev/null); \
             [ -n \"$m\" ] && [ $((0x$m & {mask})) -ne 0 ] || continue; \
             kill -USR1 \"${{d#/proc/}}\" 2>/dev/null && n=$((n+1)); \
             done; echo \"$n\"",
            mask = 1u64 << (libc::SIGUSR1 - 1),
        );
        let out = self.run(&format!("sh -c {}", shell_quote(&script)), SIGNAL_DEADLINE)?;
        out.trim().parse().map_err(|_| {
            BackendError::Unavailable(format!(
                "on {}: an answer that is no count: {out:?}",
                self.host
            ))
        })
    }

    /// What jumping to the pane runs: `ssh -t` through teamlead's master into `tmux attach`
    /// of the teammate's session there, with the way back in tmux's status line; argv and the
    /// same for a person. Blocking: the master is checked (and replaced) first.
    pub fn attach(&self) -> Result<(Vec<String>, String), String> {
        if !self.reachable {
            return Err(self.unreachable());
        }
        let status = format!("#[reverse] {DETACH_KEYS}: back to the lead #[default]");
        let remote = format!(
            "{} \\; set-option status-right {}",
            self.tmux_line(&["attach", "-t", &format!("={}", self.name)]),
            shell_quote(&status)
        );
        let command = self
            .connection
            .command(&remote)
            .map_err(|e| format!("on {}: {e}", self.host))?;
        let mut argv = vec![command.get_program().to_string_lossy().into_owned()];
        // A terminal on the host for tmux: `-t` before the destination.
        argv.push("-t".to_string());
        argv.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
        let hint = format!(
            "ssh -t {} tmux -L {} attach -t ={}",
            self.connection.host.destination,
            tmux_socket(&self.team),
            self.name
        );
        Ok((argv, hint))
    }
}

impl RemoteTeammates {
    /// The pane of `name`, when it is a remote teammate of this session on a configured host.
    pub fn pane(&self, name: &str) -> Option<RemotePane> {
        let host = self.host_of(name)?;
        let connection = self.connection(&host).ok()?;
        Some(RemotePane {
            reachable: self.host_up(&host),
            host,
            connection,
            team: self.team.clone(),
            name: name.to_string(),
        })
    }
}

/// The last `n` non-empty lines of `text`.
fn last_lines(text: &str, n: usize) -> Vec<String> {
    let lines: Vec<String> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::hosts::Connector;
    use crate::config::HostConfig;

    fn pane(reachable: bool) -> RemotePane {
        let host = HostConfig {
            name: "box".to_string(),
            destination: "dev@build-box".to_string(),
            ..Default::default()
        };
        RemotePane {
            host: "box".to_string(),
            connection: Connector::new("/nonexistent-dir/ssh".into()).connection(&host),
            team: "crew".to_string(),
            name: "worker".to_string(),
            reachable,
        }
    }

    #[test]
    fn the_last_lines_leave_out_blank_ones() {
        let text = "one\n\n two  \nthree\n\n\n";
        assert_eq!(last_lines(text, 2), vec![" two", "three"]);
        assert_eq!(last_lines(text, 10), vec!["one", " two", "three"]);
        assert!(last_lines("", 3).is_empty());
    }

    #[test]
    fn an_unreachable_host_is_said_at_once() {
        let p = pane(false);
        let started = std::time::Instant::now();
        let e = p.send_key(PaneKey::Escape).unwrap_err().to_string();
        assert!(e.contains("box is unreachable"), "{e}");
        assert!(p.tail(5).is_empty());
        assert!(
            p.stop_turn()
                .unwrap_err()
                .to_string()
                .contains("unreachable")
        );
        assert!(p.attach().unwrap_err().contains("unreachable"));
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn the_tmux_line_names_the_team_server_and_the_session() {
        let p = pane(true);
        let line = p.tmux_line(&["send-keys", "-t", &p.target(), "Escape"]);
        assert_eq!(
            line,
            "tmux -L teamlead-crew -f /dev/null send-keys -t =worker: Escape"
        );
    }
}
