//! Reading the state of teammates' panes from one `list-panes` call: running, dead with its
//! exit status or signal (from the zombie when tmux has not reaped the program yet), gone.

use super::TmuxBackend;
use crate::backend::PaneState;

impl TmuxBackend {
    /// One `list-panes -a`: see `PaneBackend::pane_states` of [`TmuxBackend`].
    pub(super) fn pane_states_once(&self, panes: &[String]) -> Vec<PaneState> {
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
