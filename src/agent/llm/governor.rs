//! One rate-limit governor per model service endpoint and key, for the whole team: when the
//! service answers 429 or 529 (or streams a rate-limit or overload error), every session using
//! that endpoint and key waits until the pause it asked for is over (`retry-after`, else the
//! retry policy's backoff), instead of each retrying on its own. Sessions in one process (the
//! lead model and in-process teammates) share the pause in memory, through a process-wide
//! registry keyed by a hash of the endpoint and the key; teammates in panes are processes of
//! their own and share it through the team's files (`store::rate_limit`,
//! `.teamlead/ratelimit-<id>.json`), read before each request. A pause read from a file that
//! lies further ahead than the longest `retry-after` honoured is not one of ours and is
//! ignored, so a stray file cannot stop the team.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::LlmConfig;
use super::error::LlmError;
use crate::protocol::time::now_ms;
use crate::store::Home;
use crate::store::rate_limit::{read_pause, write_pause};

/// Until when requests wait, shared by every governor of one endpoint and key in this process.
type Pause = Arc<Mutex<Option<Instant>>>;

/// The pauses of this process, by governor id.
static PAUSES: LazyLock<Mutex<HashMap<String, Pause>>> = LazyLock::new(Mutex::default);

/// The team's rate-limit pause for one endpoint and key. Cheap to clone; clones share it.
#[derive(Debug, Clone)]
pub struct RateGovernor {
    /// A hash of the endpoint and the key (never the key).
    id: String,
    pause: Pause,
    /// Where the team's processes share it (the home and the team).
    team: Option<(Home, String)>,
    /// The longest pause taken from a file.
    cap: Duration,
}

/// 16 hex digits of SHA-256 over the endpoint and the credentials.
fn governor_id(config: &LlmConfig) -> String {
    let mut hash = Sha256::new();
    hash.update(config.endpoint().as_bytes());
    for key in [&config.api_key, &config.auth_token] {
        hash.update([0u8]);
        if let Some(key) = key {
            hash.update(key.expose().as_bytes());
        }
    }
    hash.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl RateGovernor {
    /// The governor of `config`'s endpoint and key in this process.
    pub fn for_config(config: &LlmConfig) -> RateGovernor {
        let id = governor_id(config);
        let pause = match PAUSES.lock() {
            Ok(mut all) => all.entry(id.clone()).or_default().clone(),
            // A panic while the map was held: this governor works alone.
            Err(_) => Pause::default(),
        };
        RateGovernor {
            id,
            pause,
            team: None,
            cap: config.retry.max_retry_after,
        }
    }

    /// A governor shared with nobody (tests of the retry loop).
    pub fn private() -> RateGovernor {
        RateGovernor {
            id: "private".to_string(),
            pause: Pause::default(),
            team: None,
            cap: Duration::ZERO,
        }
    }

    /// Also shares the pause with the other processes of `team`, through its files.
    pub fn share_through(&mut self, home: &Home, team: &str) {
        self.team = Some((home.clone(), team.to_string()));
    }

    /// Its id (a hash of the endpoint and the key).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The service asked to wait `wait`: every session of this endpoint and key waits at least
    /// until then (a later pause already known stays).
    pub fn hold(&self, wait: Duration) {
        let until = Instant::now() + wait;
        if let Ok(mut pause) = self.pause.lock() {
            *pause = Some(pause.map_or(until, |known| known.max(until)));
        }
        if let Some((home, team)) = &self.team {
            let now = now_ms();
            let until_ms = now.saturating_add(wait.as_millis() as u64);
            let latest_ms = now.saturating_add(self.cap.as_millis() as u64);
            if let Err(e) = write_pause(home, team, &self.id, until_ms, latest_ms) {
                tracing::warn!("cannot share the rate-limit pause with the team: {e}");
            }
        }
    }

    /// How long until requests may go again; zero when they may now.
    pub fn remaining(&self) -> Duration {
        let now = Instant::now();
        let here = self
            .pause
            .lock()
            .ok()
            .and_then(|p| *p)
            .map_or(Duration::ZERO, |until| until.saturating_duration_since(now));
        let shared = self
            .team
            .as_ref()
            .and_then(|(home, team)| read_pause(home, team, &self.id))
            .map(|until_ms| Duration::from_millis(until_ms.saturating_sub(now_ms())))
            .filter(|wait| *wait <= self.cap)
            .unwrap_or(Duration::ZERO);
        here.max(shared)
    }

    /// Waits until requests may go (a pause made longer meanwhile is waited too); the turn's
    /// token ends the wait at once.
    pub async fn wait(&self, cancel: &CancellationToken) -> Result<(), LlmError> {
        loop {
            let remaining = self.remaining();
            if remaining.is_zero() {
                return Ok(());
            }
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                _ = tokio::time::sleep(remaining) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::llm::{ApiKey, Provider};

    fn config(url: &str, key: &str) -> LlmConfig {
        LlmConfig::new(Provider::Anthropic, url, "m").with_api_key(ApiKey::new(key))
    }

    #[test]
    fn one_pause_per_endpoint_and_key_and_the_id_hides_the_key() {
        let a = config("http://127.0.0.1:1/governor-test", "sk-key-one");
        let same = RateGovernor::for_config(&a);
        let also = RateGovernor::for_config(&a);
        let other_key =
            RateGovernor::for_config(&config("http://127.0.0.1:1/governor-test", "sk-key-two"));
        let other_url =
            RateGovernor::for_config(&config("http://127.0.0.1:2/governor-test", "sk-key-one"));
        assert_eq!(same.id().len(), 16);
        assert!(!same.id().contains("key"));
        assert_ne!(same.id(), other_key.id());
        assert_ne!(same.id(), other_url.id());
        same.hold(Duration::from_secs(30));
        assert!(also.remaining() > Duration::from_secs(29));
        assert_eq!(other_key.remaining(), Duration::ZERO);
        assert_eq!(other_url.remaining(), Duration::ZERO);
        // A shorter pause does not cut a longer one.
        also.hold(Duration::from_secs(1));
        assert!(same.remaining() > Duration::from_secs(29));
    }

    #[test]
    fn processes_share_it_through_the_team_files_and_a_far_pause_is_ignored() {
        let dir = tempfile::tempdir().expect("temp");
        let home = Home::new(dir.path());
        home.ensure_dir(&home.team_dir("t").expect("dir"))
            .expect("team dir");
        let c = config("http://127.0.0.1:3/governor-files", "sk-file-key");
        // Two processes: governors that share no memory, only the files.
        let mut first = RateGovernor::for_config(&c);
        first.pause = Pause::default();
        first.share_through(&home, "t");
        let mut second = RateGovernor::for_config(&c);
        second.pause = Pause::default();
        assert_eq!(second.remaining(), Duration::ZERO);
        second.share_through(&home, "t");
        first.hold(Duration::from_secs(5));
        let left = second.remaining();
        assert!(
            left > Duration::from_secs(4) && left <= Duration::from_secs(5),
            "{left:?}"
        );
        // Not ours: further ahead than any retry-after honoured.
        let far = now_ms() + 3_600_000;
        write_pause(&home, "t", second.id(), far, far).expect("written");
        let mut third = RateGovernor::for_config(&c);
        third.pause = Pause::default();
        third.share_through(&home, "t");
        assert_eq!(third.remaining(), Duration::ZERO);
        let file = std::fs::read_to_string(
            home.teamlead_dir("t")
                .expect("dir")
                .join(format!("ratelimit-{}.json", second.id())),
        )
        .expect("file");
        assert!(!file.contains("sk-file-key"), "{file}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_ends_when_the_pause_does_or_at_once_when_cancelled() {
        let governor = RateGovernor::private();
        let started = Instant::now();
        governor
            .wait(&CancellationToken::new())
            .await
            .expect("free");
        assert_eq!(started.elapsed(), Duration::ZERO);
        governor.hold(Duration::from_secs(2));
        governor
            .wait(&CancellationToken::new())
            .await
            .expect("waited");
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        governor.hold(Duration::from_secs(10));
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert_eq!(governor.wait(&cancel).await, Err(LlmError::Cancelled));
    }
}
