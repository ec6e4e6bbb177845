//! One bounded question to tmux: what runs in pane `%N` of the user's server (the server of
//! `$TMUX` when set, else the default one)? The `tmux` client is killed by the terminal runner
//! if it has not answered within a second, so a hung server can never hang `inspect` or
//! `clean`.

use std::time::Duration;

/// How long tmux may take to answer.
pub const TMUX_DEADLINE: Duration = Duration::from_millis(1000);

/// What tmux says about a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaneState {
    /// The pane exists.
    Open {
        pid: u32,
        /// The program's exit left the pane open (`remain-on-exit`).
        dead: bool,
        command: String,
        path: String,
    },
    /// The server answered: no such pane.
    Missing,
    /// No answer (no tmux, no server, a timeout): nothing can be concluded.
    NoAnswer(String),
}

/// Is `pane` a tmux pane id (`%N`)?
pub fn is_tmux_pane_id(pane: &str) -> bool {
    pane.len() > 1 && pane.starts_with('%') && pane[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Asks the user's tmux server about `pane` (which must be a `%N` id).
pub fn pane_state(pane: &str) -> PaneState {
    if !is_tmux_pane_id(pane) {
        return PaneState::NoAnswer(format!("`{pane}` is not a tmux pane id"));
    }
    if !crate::backend::terminals::tmux::TmuxServer::user_server_may_run() {
        return PaneState::NoAnswer("no tmux server is running (no socket)".to_string());
    }
    // Listing every pane tells "no such pane" apart from "no server".
    let format =
        "#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{pane_current_command}\t#{pane_current_path}";
    let out = match run_bounded(&["list-panes", "-a", "-F", format], TMUX_DEADLINE) {
        Ok(out) => out,
        Err(why) => return PaneState::NoAnswer(why),
    };
    for line in out.lines() {
        let fields: Vec<&str> = line.splitn(5, '\t').collect();
        if fields.first() == Some(&pane) && fields.len() == 5 {
            return PaneState::Open {
                pid: fields[1].parse().unwrap_or(0),
                dead: fields[2] == "1",
                command: fields[3].to_string(),
                path: fields[4].to_string(),
            };
        }
    }
    PaneState::Missing
}

/// Runs `tmux <args>` through the terminal runner, killed after `deadline`. Its stdout, or why
/// there is none.
fn run_bounded(args: &[&str], deadline: Duration) -> Result<String, String> {
    use crate::backend::BackendError;
    crate::backend::terminals::cli::run_within("tmux", args, None, deadline).map_err(|e| match e {
        BackendError::Spawn { detail, .. } => format!("tmux cannot be run: {detail}"),
        BackendError::NoAnswer { limit, .. } => {
            format!("tmux did not answer within {} ms", limit.as_millis())
        }
        BackendError::Command { detail, .. } | BackendError::Unavailable(detail) => {
            format!("no tmux server answered ({detail})")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pane_ids() {
        assert!(is_tmux_pane_id("%0"));
        assert!(is_tmux_pane_id("%12"));
        assert!(!is_tmux_pane_id("leader"));
        assert!(!is_tmux_pane_id(""));
        assert!(!is_tmux_pane_id("%"));
        assert!(!is_tmux_pane_id("%1;x"));
        assert!(matches!(pane_state("leader"), PaneState::NoAnswer(_)));
    }
}
