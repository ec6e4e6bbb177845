//! What a host keeps for a lead that runs on another machine, as `teamlead clean` there sees
//! it (DESIGN.md "Hosts"): the team's copy (an ordinary team directory), the lead's presence
//! that its relay keeps while the link is up (`teamlead_relay::presence`: the team's liveness
//! lock, and `lead-presence.json` with the time the lead was last there), and the team's
//! private tmux server (`tmux -L teamlead-<team>`, the teammates' sessions).
//!
//! The lead's process is not visible from here, so a free lock alone does not prove it gone:
//! its link may be down for a while (a partition, a restart). Such a team is left alone until
//! the lead has been away for longer than the grace period its teammates wait
//! (`TEAMLEAD_LEAD_GRACE_MS` here, else 30 s, as `agent::process::lead_grace`); then it is
//! a dead lead's team, removed with its private tmux server.

use std::time::Duration;

use crate::backend::terminals::tmux::TmuxServer;
use crate::protocol::time::now_ms;
use crate::store::Home;

/// The grace period of the teammates on this host, when their lead says none.
const DEFAULT_GRACE: Duration = Duration::from_secs(30);

/// How long a host's teammates wait for a lead that is gone: `TEAMLEAD_LEAD_GRACE_MS`, else
/// 30 s (the teammates' own rule, `agent::process::lead_grace`).
pub fn grace() -> Duration {
    std::env::var("TEAMLEAD_LEAD_GRACE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_GRACE)
}

/// How long ago a relay last stood for `team`'s lead on this host (`None`: the team is not
/// the copy of a lead on another host).
pub fn lead_away(home: &Home, team: &str) -> Option<Duration> {
    let record = teamlead_relay::presence::last_seen(home, team)?;
    Some(Duration::from_millis(
        now_ms().saturating_sub(record.seen_ms),
    ))
}

/// Why `team`, whose lead the probe found gone from this host, is left alone after all: its
/// lead is on another host and was linked less than the grace period ago.
pub fn keep_reason(home: &Home, team: &str) -> Option<String> {
    let away = lead_away(home, team)?;
    let grace = grace();
    (away < grace).then(|| {
        format!(
            "its lead runs on another host; its link was last up {} s ago and it may come back within the grace of {} s",
            away.as_secs(),
            grace.as_secs()
        )
    })
}

/// Ends the private tmux server of `team`, when the team is a copy for a lead on another
/// host (its teammates' sessions, and whatever else was left in it).
pub fn end_team_server(home: &Home, team: &str) {
    if lead_away(home, team).is_none() {
        return;
    }
    let server = TmuxServer {
        socket: Some(super::remote::tmux_socket(team)),
    };
    if server.is_running() {
        let _ = server.kill_server();
    }
}
