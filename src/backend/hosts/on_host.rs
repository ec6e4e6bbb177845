//! What a host keeps for a lead that runs on another machine, as `teamlead clean` there sees
//! it (DESIGN.md "Hosts"): the team's copy (an ordinary team directory), the lead's presence
//! that its relay keeps while the link is up (`teamlead_relay::presence`: the team's liveness
//! lock, and `lead-presence.json` with the time the lead was last there), and the team's
//! private tmux server (`tmux -L teamlead-<team>`, the teammates' sessions).
//!
//! The lead's process is not visible from here, so a free lock alone does not prove it gone:
//! its link may be down for a while (a partition, a restart). Such a team is left alone until
//! the lead has been away for longer than the grace period its teammates wait
//! (`TEAMLEAD_LEAD_GRACE_MS` here, else [`HOST_GRACE`], the value the lead gives the teammates
//! it starts on a host when it has none of its own); then it is a dead lead's team, removed
//! with its private tmux server.

use std::time::Duration;

use crate::backend::terminals::tmux::TmuxServer;
use crate::protocol::time::now_ms;
use crate::store::Home;

/// How long the teammates on a host wait for a lead whose link is gone, when nobody set a
/// grace: longer than a local teammate's 30 s, since from a host a link that drops (a
/// partition, a laptop asleep for a minute) looks like a dead lead, and a 60 s partition must
/// leave them running. Still bounded: a lead that is really gone is reaped after it.
pub const HOST_GRACE: Duration = Duration::from_secs(300);

/// The grace for teammates on a host from a value of `TEAMLEAD_LEAD_GRACE_MS` (milliseconds;
/// `None` or not a number: [`HOST_GRACE`]).
pub fn host_grace_of(value: Option<&str>) -> Duration {
    value
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(HOST_GRACE)
}

/// How long a host's teammates wait for a lead that is gone: `TEAMLEAD_LEAD_GRACE_MS` (the
/// value a lead passes to the teammates it starts there), else [`HOST_GRACE`].
pub fn grace() -> Duration {
    host_grace_of(std::env::var("TEAMLEAD_LEAD_GRACE_MS").ok().as_deref())
}

/// How long `team`'s teammates on this host wait for its lead: the grace its relay recorded
/// (the lead's, as it gave it to them), else [`grace`].
pub fn lead_grace(home: &Home, team: &str) -> Duration {
    teamlead_relay::presence::last_seen(home, team)
        .and_then(|r| r.grace_ms)
        .map(Duration::from_millis)
        .unwrap_or_else(grace)
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
    let grace = lead_grace(home, team);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_waits_five_minutes_unless_a_grace_was_set() {
        assert_eq!(host_grace_of(None), Duration::from_secs(300));
        assert_eq!(host_grace_of(Some("soon")), Duration::from_secs(300));
        assert_eq!(host_grace_of(Some(" 15000 ")), Duration::from_secs(15));
    }

    fn record(home: &Home, away: Duration, grace_ms: Option<u64>) {
        let record = teamlead_relay::presence::Record {
            relay_pid: 1,
            seen_ms: now_ms() - away.as_millis() as u64,
            grace_ms,
        };
        let path = teamlead_relay::presence::record_path(home, "crew").unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_vec(&record).unwrap()).unwrap();
    }

    #[test]
    fn clean_on_a_host_waits_the_grace_the_lead_gave_its_teammates_there() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        // The lead gave its teammates 20 s: gone for 30 s, its team is a dead lead's.
        record(&home, Duration::from_secs(30), Some(20_000));
        assert_eq!(lead_grace(&home, "crew"), Duration::from_secs(20));
        assert_eq!(keep_reason(&home, "crew"), None);
        // Within it, the team is kept, and the reason says the lead's grace.
        record(&home, Duration::from_secs(10), Some(20_000));
        let why = keep_reason(&home, "crew").expect("kept");
        assert!(why.contains("grace of 20 s"), "{why}");
        // An older relay that recorded none: the host's own rule (5 minutes).
        record(&home, Duration::from_secs(30), None);
        assert!(keep_reason(&home, "crew").is_some());
    }
}
