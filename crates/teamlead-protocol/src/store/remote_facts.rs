//! What a remote `claude` teammate's transcript says, as its host's relay last sent it: the
//! transcript lives on that host, so the relay reads it there (the same [`TranscriptMeter`]) and
//! the lead's end of the link keeps the facts here, under the team's `.teamlead/transcripts/`,
//! one file per teammate (`<name>.json`, written atomically, private). The lead reads them where
//! it would read a local teammate's transcript: usage, cost, budgets, the rate limit, frames
//! the client could not deliver, and when its turns began.
//!
//! [`TranscriptMeter`]: super::claude_transcript::TranscriptMeter

use std::path::PathBuf;

use super::atomic::write_atomic;
use super::claude_transcript::TranscriptFacts;
use super::error::{Result, StoreError};
use super::home::Home;
use super::safe_file::read_regular;
use crate::names::check_path_component;

/// The largest facts file read (the facts keep bounded lists).
const MAX_FACTS_BYTES: u64 = 4 * 1024 * 1024;

/// The directory of `team`'s kept facts.
pub fn dir(home: &Home, team: &str) -> Result<PathBuf> {
    Ok(home.teamlead_dir(team)?.join("transcripts"))
}

/// Where `name`'s facts of `team` are kept.
pub fn path(home: &Home, team: &str, name: &str) -> Result<PathBuf> {
    let file = format!("{}.json", check_path_component(name)?);
    Ok(dir(home, team)?.join(file))
}

/// Keeps `facts` as `name`'s, replacing what was there.
pub fn write(home: &Home, team: &str, name: &str, facts: &TranscriptFacts) -> Result<()> {
    let path = path(home, team, name)?;
    if let Some(dir) = path.parent() {
        home.ensure_dir(dir)?;
    }
    let bytes = serde_json::to_vec(facts).map_err(|e| StoreError::parse(&path, e))?;
    write_atomic(&path, &bytes)
}

/// `name`'s facts as last kept (`None`: none yet, or a file that does not parse).
pub fn read(home: &Home, team: &str, name: &str) -> Result<Option<TranscriptFacts>> {
    let path = path(home, team, name)?;
    Ok(read_regular(&path, MAX_FACTS_BYTES)?
        .and_then(|bytes| serde_json::from_slice::<TranscriptFacts>(&bytes).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_kept_are_read_back_and_a_bad_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        assert_eq!(read(&home, "crew", "mate").unwrap(), None);
        let mut facts = TranscriptFacts {
            model: Some("claude-sonnet-4-5".into()),
            last_turn_ms: Some(1_700_000_000_000),
            ..TranscriptFacts::default()
        };
        facts.usage.output_tokens = 42;
        write(&home, "crew", "mate", &facts).unwrap();
        assert_eq!(read(&home, "crew", "mate").unwrap(), Some(facts));
        assert!(write(&home, "crew", "../x", &TranscriptFacts::default()).is_err());
        std::fs::write(path(&home, "crew", "mate").unwrap(), b"{not json").unwrap();
        assert_eq!(read(&home, "crew", "mate").unwrap(), None);
    }
}
