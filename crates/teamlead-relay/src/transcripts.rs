//! A remote `claude` teammate's transcript across a link (DESIGN.md "The relay"): Claude Code
//! writes it on the host it runs on, under that host's home (`projects/…/<session>.jsonl`), so
//! the relay reads it there with the lead's own [`TranscriptMeter`] (a little more each time)
//! and sends the facts (usage by model and cost, the model, the rate limit, frames the client
//! could not deliver, when its turns began) as a `transcript` body whenever they change; the
//! lead keeps the newest in `store::remote_facts` and reads them as it reads a local
//! teammate's transcript. A hosted member is a `claude` teammate when its entry in the host's
//! team file names its session ([`SESSION_KEY`], set by the lead when it starts it there).
//! Capability `transcript`: sent only to a lead that has it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use teamlead_protocol::pricing::PriceTable;
use teamlead_protocol::store::claude_transcript::{TranscriptFacts, TranscriptMeter};
use teamlead_protocol::store::{Home, Result, StoreError, remote_facts};

use crate::forward::{Stamp, full_look_due, stamp};
use crate::wire::Body;

/// The member field (in the team file) that names a `claude` teammate's session.
pub const SESSION_KEY: &str = "teamleadSession";

/// How often the transcripts are read (they are not in a watched directory).
pub const READ_EVERY: Duration = Duration::from_millis(250);

/// The relay's side: a meter per hosted `claude` teammate, and what was last sent of each.
#[derive(Debug, Default)]
pub struct TranscriptFeed {
    meters: HashMap<String, (String, TranscriptMeter)>,
    sent: HashMap<String, TranscriptFacts>,
    last: Option<Instant>,
    /// Each member's session as the team file last said (`teamleadSession`), read again only
    /// when the file changed or at a full look.
    sessions: Vec<(String, String)>,
    stamp: Option<Stamp>,
    last_full: Option<Instant>,
    /// The prices the meters use: the built-in table plus the lead's rows.
    prices: Arc<PriceTable>,
}

impl TranscriptFeed {
    /// The lead's prices: when they differ from the ones in use, every transcript is read
    /// again from its start with them, and its facts sent again.
    pub fn set_prices(&mut self, prices: PriceTable) {
        if *self.prices == prices {
            return;
        }
        self.prices = Arc::new(prices);
        self.meters.clear();
        self.sent.clear();
        self.last = None;
    }

    /// A new connection: every teammate's facts go again.
    pub fn reset(&mut self) {
        self.sent.clear();
        self.last = None;
        self.stamp = None;
    }

    /// `transcript` bodies for the hosted `claude` teammates whose transcripts say something
    /// new since they were last sent.
    pub fn scan(
        &mut self,
        home: &Home,
        team: &str,
        hosted: &[String],
        now: Instant,
    ) -> Result<Vec<Body>> {
        if self
            .last
            .is_some_and(|t| now.duration_since(t) < READ_EVERY)
        {
            return Ok(Vec::new());
        }
        self.last = Some(now);
        self.read_sessions(home, team, now)?;
        let mut bodies = Vec::new();
        for (name, session) in self.sessions.iter().filter(|(n, _)| hosted.contains(n)) {
            let (known, meter) = self.meters.entry(name.clone()).or_insert_with(|| {
                (
                    session.clone(),
                    TranscriptMeter::new(session, self.prices.clone()),
                )
            });
            if known != session {
                // Respawned with a new session: its transcript is another file.
                *known = session.clone();
                *meter = TranscriptMeter::new(session, self.prices.clone());
            }
            let Some(facts) = meter.read(home) else {
                continue;
            };
            if self.sent.get(name) == Some(&facts) {
                continue;
            }
            let body = Body::Transcript {
                team: team.to_string(),
                name: name.clone(),
                facts: serde_json::to_value(&facts)
                    .map_err(|e| StoreError::parse(home.root.join("projects"), e))?,
            };
            self.sent.insert(name.clone(), facts);
            bodies.push(body);
        }
        Ok(bodies)
    }

    /// The members' sessions from the host's team file, when it changed since the last read
    /// (or a full look is due); kept as they were when it cannot be read now.
    fn read_sessions(&mut self, home: &Home, team: &str, now: Instant) -> Result<()> {
        let path = home.config_path(team)?;
        let full = full_look_due(&mut self.last_full, now);
        let stamp = stamp(&path);
        if !full && stamp == self.stamp {
            return Ok(());
        }
        let Some(file) = crate::members::team_here(home, team) else {
            return Ok(());
        };
        self.stamp = stamp;
        self.sessions = file
            .members
            .iter()
            .filter_map(|m| {
                let session = m.extra.get(SESSION_KEY).and_then(Value::as_str)?;
                Some((m.name.clone(), session.to_string()))
            })
            .collect();
        Ok(())
    }
}

/// The lead's side: a hosted teammate's facts kept for the lead to read. A member that does not
/// run on that host (`hosted`), or facts that do not parse, are left out. Returns whether they
/// were kept.
pub fn apply_transcript(
    home: &Home,
    team: &str,
    hosted: &[String],
    name: &str,
    facts: Value,
) -> Result<bool> {
    if !hosted.iter().any(|h| h == name) {
        tracing::warn!("transcript facts of {name}, who does not run on that host: ignored");
        return Ok(false);
    }
    let Ok(facts) = serde_json::from_value::<TranscriptFacts>(facts) else {
        tracing::warn!("transcript facts of {name} that do not parse: ignored");
        return Ok(false);
    };
    remote_facts::write(home, team, name, &facts)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use teamlead_protocol::{Member, TeamFile};

    const SESSION: &str = "0c2f4a51-9d0e-4f5b-8a7c-3e1d2b6f9a80";

    fn host_with_claude_member(session: Option<&str>) -> (tempfile::TempDir, Home) {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        teamlead_protocol::store::create_team(&home, &TeamFile::new("crew", None, "/w")).unwrap();
        let mut mate = Member::new("mate", "crew", "/w");
        if let Some(session) = session {
            mate.extra
                .insert(SESSION_KEY.into(), Value::String(session.into()));
        }
        teamlead_protocol::store::add_member(&home, "crew", mate).unwrap();
        (tmp, home)
    }

    fn append(home: &Home, text: &str) {
        use std::io::Write;
        let dir = home.root.join("projects").join("-w");
        std::fs::create_dir_all(&dir).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(format!("{SESSION}.jsonl")))
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    const TURN: &str = r#"{"type":"user","timestamp":"2026-11-29T10:00:00.000Z","message":{"role":"user","content":"<teammate-message>go</teammate-message>"}}
{"type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":1200,"output_tokens":40}}}
"#;

    #[test]
    fn a_hosted_claude_teammates_transcript_goes_to_the_lead_when_it_changes() {
        let (_h, host) = host_with_claude_member(Some(SESSION));
        let hosted = vec!["mate".to_string()];
        let mut feed = TranscriptFeed::default();
        let t0 = Instant::now();
        assert!(
            feed.scan(&host, "crew", &hosted, t0).unwrap().is_empty(),
            "no transcript yet"
        );
        append(&host, TURN);
        // Not read again before READ_EVERY.
        assert!(feed.scan(&host, "crew", &hosted, t0).unwrap().is_empty());
        let t1 = t0 + READ_EVERY;
        let bodies = feed.scan(&host, "crew", &hosted, t1).unwrap();
        let [Body::Transcript { team, name, facts }] = &bodies[..] else {
            panic!("one transcript body: {bodies:?}");
        };
        assert_eq!((team.as_str(), name.as_str()), ("crew", "mate"));
        assert_eq!(facts["usage"]["outputTokens"], 40);
        // Nothing new: nothing sent; a new connection sends it again.
        assert!(
            feed.scan(&host, "crew", &hosted, t1 + READ_EVERY)
                .unwrap()
                .is_empty()
        );
        feed.reset();
        assert_eq!(
            feed.scan(&host, "crew", &hosted, t1 + READ_EVERY * 2)
                .unwrap()
                .len(),
            1
        );

        // The lead keeps it for the hosted member only, and reads it back as facts.
        let lead = tempfile::tempdir().unwrap();
        let lead = Home::new(lead.path());
        teamlead_protocol::store::create_team(&lead, &TeamFile::new("crew", None, "/w")).unwrap();
        assert!(!apply_transcript(&lead, "crew", &[], "mate", facts.clone()).unwrap());
        assert!(!apply_transcript(&lead, "crew", &hosted, "mate", Value::Bool(true)).unwrap());
        assert!(apply_transcript(&lead, "crew", &hosted, "mate", facts.clone()).unwrap());
        let kept = remote_facts::read(&lead, "crew", "mate").unwrap().unwrap();
        assert_eq!(kept.usage.output_tokens, 40);
        assert_eq!(kept.usage.input_tokens, 1200);
        assert_eq!(kept.model.as_deref(), Some("claude-sonnet-4-5"));
        assert!(kept.last_turn_ms.is_some());
    }

    #[test]
    fn a_member_without_a_session_is_not_read() {
        let (_h, host) = host_with_claude_member(None);
        append(&host, TURN);
        let mut feed = TranscriptFeed::default();
        let bodies = feed
            .scan(&host, "crew", &["mate".to_string()], Instant::now())
            .unwrap();
        assert!(bodies.is_empty());
    }
}
