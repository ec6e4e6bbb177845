//! Push to a phone: when a permission request has waited longer than a set time
//! (`[push] after`, default 30 s) and no screen is attached, the lead server tells a service
//! the user names in the config (`[push] url`: an ntfy-style topic URL; the token, if any,
//! from the environment variable `[push] token-env` names, never from the file) with one HTTP
//! POST per request: the teammate and what it asks in one line as the body, a title, and a link
//! to the web view (`[push] web-url`, the address the phone reaches it at) as the click action.
//! The page still needs its session to answer. The POST runs in a task of its own with a
//! deadline; a failure is logged and never retried in a loop.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use crate::lead::contract::PendingPermission;
use crate::protocol::display::visible_line;
use crate::protocol::inbox::clip;

/// Where and when to push (from the config file's `[push]` table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushOptions {
    /// The topic URL the POST goes to.
    pub url: String,
    /// A bearer token (read from the environment when the server starts).
    pub token: Option<String>,
    /// How long a request waits before it is pushed.
    pub after: Duration,
    /// The web view as the phone reaches it (the click action), if set.
    pub web_url: Option<String>,
}

/// Which requests wait since when, and which were pushed.
#[derive(Debug, Default)]
pub struct Pusher {
    waiting: HashMap<u64, (tokio::time::Instant, PendingPermission)>,
    pushed: HashSet<u64>,
}

impl Pusher {
    /// The queue as it is now: new requests start waiting, answered ones are forgotten.
    pub fn on_queue(&mut self, queue: &[PendingPermission], now: tokio::time::Instant) {
        self.waiting
            .retain(|key, _| queue.iter().any(|p| p.key == *key));
        self.pushed
            .retain(|key| queue.iter().any(|p| p.key == *key));
        for p in queue {
            self.waiting
                .entry(p.key)
                .or_insert_with(|| (now, p.clone()));
        }
    }

    /// When the next request comes due (none pushed yet), after `after`.
    pub fn next_due(&self, after: Duration) -> Option<tokio::time::Instant> {
        self.waiting
            .iter()
            .filter(|(key, _)| !self.pushed.contains(key))
            .map(|(_, (since, _))| *since + after)
            .min()
    }

    /// The requests due at `now` that were not pushed yet (each returned once). With a screen
    /// attached nothing is due: the person sees the dialog there.
    pub fn due(
        &mut self,
        now: tokio::time::Instant,
        after: Duration,
        screen_attached: bool,
    ) -> Vec<PendingPermission> {
        if screen_attached {
            return Vec::new();
        }
        let mut due: Vec<PendingPermission> = self
            .waiting
            .iter()
            .filter(|(key, (since, _))| !self.pushed.contains(key) && *since + after <= now)
            .map(|(_, (_, p))| p.clone())
            .collect();
        due.sort_by_key(|p| p.key);
        self.pushed.extend(due.iter().map(|p| p.key));
        due
    }
}

/// What a push says: a title and one line (control characters shown as text, never sent
/// raw to a phone).
pub fn message(team: &str, p: &PendingPermission) -> (String, String) {
    let what = match p.input.get("command").and_then(|c| c.as_str()) {
        Some(command) => format!("{}: {}", p.tool_name, command),
        None if !p.description.is_empty() => format!("{}: {}", p.tool_name, p.description),
        None => p.tool_name.clone(),
    };
    let body = format!(
        "@{} asks to run {} (request #{})",
        visible_line(&p.worker),
        clip(&visible_line(&what.replace('\n', " ⏎ ")), 300),
        p.key
    );
    (format!("teamlead · {}", visible_line(team)), body)
}

/// Sends one push (in a task of its own; at most 10 s).
pub fn send(options: &PushOptions, team: &str, p: &PendingPermission) {
    crate::agent::llm::client::install_crypto_provider();
    let (title, body) = message(team, p);
    let options = options.clone();
    tokio::spawn(async move {
        let client = match reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .user_agent(concat!("teamlead/", env!("CARGO_PKG_VERSION")))
            .build()
        {
            Ok(c) => c,
            Err(e) => return tracing::warn!("push: no HTTP client: {e}"),
        };
        let mut request = client
            .post(&options.url)
            .header("Title", title)
            .header("Tags", "teamlead")
            .body(body);
        if let Some(token) = &options.token {
            request = request.bearer_auth(token);
        }
        if let Some(web) = &options.web_url {
            request = request
                .header("Click", web.clone())
                .header("Actions", format!("view, Open the team, {web}"));
        }
        match request.send().await {
            Ok(r) if r.status().is_success() => tracing::info!("push: sent ({})", r.status()),
            Ok(r) => tracing::warn!("push: {} answered {}", options.url, r.status()),
            Err(e) => tracing::warn!("push: {}: {e}", options.url),
        }
    });
}
