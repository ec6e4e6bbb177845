//! The team's rate-limit pauses, `teams/<team>/.teamlead/ratelimit-<id>.json`: until when the
//! model service asked everyone using one endpoint and key to wait (`<id>` is a hash of the
//! two, never the key). teamlead-only; teammate processes of the team read it before each
//! request and write it when they are told to wait, so they back off together. Written
//! atomically (keeping the later of the file's time and the new one), read through the safe
//! reader; a file that cannot be read counts as no pause.

use serde::{Deserialize, Serialize};

use super::error::Result;
use super::home::Home;
use crate::names::check_path_component;
use crate::time::iso_from_ms;

/// The largest file read.
const MAX_BYTES: u64 = 4096;

/// One pause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RateLimitPause {
    /// Epoch milliseconds until which no request is sent.
    pub until_ms: u64,
    /// The same time as an ISO string, for people reading the file.
    #[serde(default)]
    pub until: String,
}

fn path(home: &Home, team: &str, id: &str) -> Result<std::path::PathBuf> {
    let id = check_path_component(id)?;
    Ok(home
        .teamlead_dir(team)?
        .join(format!("ratelimit-{id}.json")))
}

/// Until when (epoch milliseconds) the pause `id` of `team` lasts; `None` when there is none
/// (or it cannot be read).
pub fn read_pause(home: &Home, team: &str, id: &str) -> Option<u64> {
    let path = path(home, team, id).ok()?;
    let bytes = super::safe_file::read_regular(&path, MAX_BYTES).ok()??;
    serde_json::from_slice::<RateLimitPause>(&bytes)
        .ok()
        .map(|p| p.until_ms)
}

/// Records that the pause `id` of `team` lasts until `until_ms`, or later when the file
/// already says later but no later than `latest_ms` (a time further ahead is not a pause
/// anyone was asked for, and is replaced). Nothing is written for a team whose directory is
/// gone.
pub fn write_pause(home: &Home, team: &str, id: &str, until_ms: u64, latest_ms: u64) -> Result<()> {
    let team_dir = home.team_dir(team)?;
    if !std::fs::symlink_metadata(&team_dir).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    let until_ms = match read_pause(home, team, id) {
        Some(known) if known > until_ms && known <= latest_ms => known,
        _ => until_ms,
    };
    let pause = RateLimitPause {
        until_ms,
        until: iso_from_ms(until_ms),
    };
    home.write_file(&path(home, team, id)?, &super::atomic::pretty_bytes(&pause))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_later_pause_is_kept_and_a_missing_team_gets_none() {
        let dir = tempfile::tempdir().expect("temp");
        let home = Home::new(dir.path());
        assert_eq!(read_pause(&home, "t", "abc"), None);
        write_pause(&home, "t", "abc", 5_000, 10_000).expect("no team: nothing to do");
        assert!(!home.team_dir("t").expect("dir").exists());

        home.ensure_dir(&home.team_dir("t").expect("dir"))
            .expect("team dir");
        write_pause(&home, "t", "abc", 5_000, 10_000).expect("written");
        write_pause(&home, "t", "abc", 3_000, 10_000).expect("written");
        assert_eq!(read_pause(&home, "t", "abc"), Some(5_000));
        write_pause(&home, "t", "abc", 9_000, 10_000).expect("written");
        assert_eq!(read_pause(&home, "t", "abc"), Some(9_000));
        // A time further ahead than any pause asked for is replaced.
        write_pause(&home, "t", "abc", 1_000, 2_000).expect("written");
        assert_eq!(read_pause(&home, "t", "abc"), Some(1_000));
        assert!(write_pause(&home, "t", "../x", 1, 2).is_err());
        let text = std::fs::read_to_string(
            home.teamlead_dir("t")
                .expect("dir")
                .join("ratelimit-abc.json"),
        )
        .expect("file");
        assert!(text.contains("\"untilMs\": 1000"), "{text}");
    }
}
