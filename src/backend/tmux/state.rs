//! What the lead asks tmux about its teammates' panes besides making them: the state of each
//! pane in one `list-panes` call (running, dead with its exit status or signal, gone), the last
//! lines a pane shows (`capture-pane`), its title, counting a previous session's pane as this
//! session's, and taking over a previous session's private server.

use super::{TmuxBackend, TmuxServer};
use crate::backend::{BackendError, PaneState};

impl TmuxBackend {
    /// The state of each of `panes`, from one `list-panes -a`. When tmux does not answer, the
    /// panes are gone if the server is (a private server that died), else unknown (running).
    /// tmux marks a pane dead when its pty closes and learns the exit status when it reaps the
    /// program, a moment later: a dead pane without a status is asked about again (up to 3 times
    /// over ~150 ms; this runs on the blocking pool), and a program tmux has not reaped yet is
    /// read from its zombie ([`zombie_status`]).
    pub fn pane_states(&self, panes: &[String]) -> Vec<PaneState> {
        let unsettled = |states: &[PaneState]| {
            states.iter().any(|s| {
                matches!(
                    s,
                    PaneState::Dead {
                        status: None,
                        signal: None
                    }
                )
            })
        };
        let mut states = self.pane_states_once(panes);
        for _ in 0..3 {
            if !unsettled(&states) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            states = self.pane_states_once(panes);
        }
        states
    }

    fn pane_states_once(&self, panes: &[String]) -> Vec<PaneState> {
        let format = "#{pane_id} #{pane_dead} #{pane_dead_status} #{pane_dead_signal} #{pane_pid}";
        let listing = match self.server.run(&["list-panes", "-a", "-F", format]) {
            Ok(listing) => listing,
            Err(_) => {
                let state = if self.server.is_running() {
                    PaneState::Running
                } else {
                    PaneState::Gone
                };
                return vec![state; panes.len()];
            }
        };
        panes
            .iter()
            .map(|pane| {
                listing
                    .lines()
                    .find_map(|line| parse_state(line, pane))
                    .unwrap_or(PaneState::Gone)
            })
            .collect()
    }

    /// The last `lines` non-empty lines of the pane's screen and history.
    pub fn tail(&self, pane: &str, lines: usize) -> Vec<String> {
        let Ok(text) = self
            .server
            .run(&["capture-pane", "-p", "-J", "-t", pane, "-S", "-50"])
        else {
            return Vec::new();
        };
        let kept: Vec<String> = text
            .lines()
            .map(|l| l.trim_end().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        kept[kept.len().saturating_sub(lines)..].to_vec()
    }

    /// The teammate's name the pane was styled with ([`super::NAME_OPTION`]), else the pane's
    /// title (which the program in it may change: Claude Code does).
    pub fn title(&self, pane: &str) -> Option<String> {
        let format = format!(
            "#{{?{opt},#{{{opt}}},#{{pane_title}}}}",
            opt = super::NAME_OPTION
        );
        self.server
            .run(&["display-message", "-p", "-t", pane, &format])
            .ok()
    }

    /// The pid of the pane's program (`#{pane_pid}`), while the pane exists.
    pub fn pane_pid(&self, pane: &str) -> Option<u32> {
        let listing = self
            .server
            .run(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"])
            .ok()?;
        listing.lines().find_map(|l| {
            let (id, pid) = l.split_once(' ')?;
            (id == pane).then(|| pid.trim().parse().ok()).flatten()
        })
    }

    /// Counts a pane a previous lead created as one of this session's.
    pub fn adopt_pane(&self, pane: &str) {
        let mut panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        if !panes.iter().any(|p| p == pane) {
            panes.push(pane.to_string());
        }
    }

    /// Takes over the private server `record` (the socket name of the previous lead of the
    /// team): its socket file is renamed to this session's, so the panes, the attach hint and
    /// the clean-up at quit are this session's from now on. False when there is nothing to
    /// take over (inside the user's tmux, the same socket, or no server answers there).
    pub fn take_over(&self, record: &str) -> Result<bool, BackendError> {
        let Some(ours) = self.server.socket.clone() else {
            return Ok(false);
        };
        if record == ours || !record.starts_with("teamlead-") || record.contains('/') {
            return Ok(false);
        }
        let old = TmuxServer {
            socket: Some(record.to_string()),
        };
        let (Some(from), Some(to)) = (old.socket_path(), self.server.socket_path()) else {
            return Ok(false);
        };
        if !from.exists() || !old.is_running() {
            return Ok(false);
        }
        if self.server.is_running() {
            return Err(BackendError::Unavailable(format!(
                "cannot take over tmux -L {record}: this session's server -L {ours} already runs"
            )));
        }
        std::fs::rename(&from, &to).map_err(|e| BackendError::Command {
            command: format!("rename {} to {}", from.display(), to.display()),
            detail: e.to_string(),
        })?;
        Ok(self.server.is_running())
    }
}

/// The state of `pane` if `line` (`<id> <dead> <status> <signal> <pid>`) is about it.
fn parse_state(line: &str, pane: &str) -> Option<PaneState> {
    let mut fields = line.split(' ');
    if fields.next()? != pane {
        return None;
    }
    let dead = fields.next() == Some("1");
    if !dead {
        return Some(PaneState::Running);
    }
    let number = |f: Option<&str>| f.and_then(|v| v.trim().parse::<i32>().ok());
    let status = number(fields.next());
    let signal = number(fields.next());
    if status.is_none() && signal.is_none() {
        // tmux saw the pty close but has not reaped the program (seen with tmux 3.3a: it may
        // miss the SIGCHLD until another child exits). The zombie still holds its status.
        let pid = number(fields.next());
        if let Some((status, signal)) = pid.and_then(zombie_status) {
            return Some(PaneState::Dead { status, signal });
        }
    }
    Some(PaneState::Dead { status, signal })
}

/// The exit status (or signal) a zombie process left, from `/proc/<pid>/stat` (field 52,
/// `exit_code`, in `waitpid` form); `None` when the process is not a zombie or cannot be read.
fn zombie_status(pid: i32) -> Option<(Option<i32>, Option<i32>)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (the state).
    if fields.first() != Some(&"Z") {
        return None;
    }
    let code: i32 = fields.get(52 - 3)?.parse().ok()?;
    Some(wait_status(code))
}

/// A `waitpid` status as (exit status, signal).
fn wait_status(code: i32) -> (Option<i32>, Option<i32>) {
    if code & 0x7f == 0 {
        (Some((code >> 8) & 0xff), None)
    } else {
        (None, Some(code & 0x7f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_list_panes_lines() {
        assert_eq!(parse_state("%3 0  ", "%3"), Some(PaneState::Running));
        assert_eq!(
            parse_state("%3 1 127 ", "%3"),
            Some(PaneState::Dead {
                status: Some(127),
                signal: None
            })
        );
        assert_eq!(
            parse_state("%4 1  9", "%4"),
            Some(PaneState::Dead {
                status: None,
                signal: Some(9)
            })
        );
        assert_eq!(parse_state("%30 0  ", "%3"), None);
        assert_eq!(wait_status(127 << 8), (Some(127), None));
        assert_eq!(wait_status(9), (None, Some(9)));
    }
}
