//! Keys typed into a remote teammate's pane and its screen read back, over the host's ssh
//! master: `tmux send-keys` and `tmux capture-pane` on the team's private tmux server there.
//! The lead's mode drive ([`crate::lead::mode_drive`]) uses them as it uses a local pane's:
//! Claude Code's own mode key (Shift+Tab), pressed until its status line shows the mode asked
//! for (2.1.329 and later ignore `mode_set_request`, so this is how a remote `claude` is
//! tightened, and confirmed). Both block (ssh); the lead calls them off its loop.

use std::sync::Arc;
use std::time::Duration;

use super::remote::{RemoteTeammates, tmux_socket};
use crate::backend::executor::{KeyTyper, PaneReader};
use crate::backend::launch::shell_quote;
use crate::backend::{BackendError, PaneKey};

/// How long one key or one screen read may take over the master.
const KEY_DEADLINE: Duration = Duration::from_secs(5);

/// `tmux -L <team's socket> -f /dev/null ARGS` on `host` through its master: its stdout, or
/// why not.
fn tmux_out(remote: &RemoteTeammates, host: &str, args: &[&str]) -> Result<String, BackendError> {
    let connection = remote
        .connection(host)
        .map_err(|e| BackendError::Unavailable(e.to_string()))?;
    let mut line = vec![
        "tmux".to_string(),
        "-L".to_string(),
        shell_quote(&tmux_socket(&remote.team)),
        "-f".to_string(),
        "/dev/null".to_string(),
    ];
    line.extend(args.iter().map(|a| shell_quote(a)));
    let out = connection
        .call(&line.join(" "), None, KEY_DEADLINE)
        .map_err(|e| BackendError::Unavailable(format!("on {host}: {e}")))?;
    if out.status != Some(0) {
        return Err(BackendError::Unavailable(format!(
            "tmux on {host}: {}",
            out.stderr.lines().last().unwrap_or("failed")
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Types keys into `name`'s pane on its host (`None`: not a remote teammate).
pub fn key_typer(remote: &Arc<RemoteTeammates>, name: &str) -> Option<KeyTyper> {
    let host = remote.host_of(name)?;
    let (remote, target) = (remote.clone(), format!("={name}:"));
    Some(Arc::new(move |key: PaneKey| {
        let key = match key {
            PaneKey::BackTab => "BTab",
            PaneKey::Escape => "Escape",
        };
        tmux_out(&remote, &host, &["send-keys", "-t", &target, key]).map(|_| ())
    }))
}

/// Reads the last non-empty lines of `name`'s pane on its host (`None`: not a remote
/// teammate); a read that fails is no lines.
pub fn pane_reader(remote: &Arc<RemoteTeammates>, name: &str) -> Option<PaneReader> {
    let host = remote.host_of(name)?;
    let (remote, target) = (remote.clone(), format!("={name}:"));
    Some(Arc::new(move |lines: usize| {
        let Ok(text) = tmux_out(
            &remote,
            &host,
            &["capture-pane", "-p", "-J", "-t", &target, "-S", "-50"],
        ) else {
            return Vec::new();
        };
        let kept: Vec<String> = text
            .lines()
            .map(|l| l.trim_end().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        kept[kept.len().saturating_sub(lines)..].to_vec()
    }))
}
