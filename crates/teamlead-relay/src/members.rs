//! Member fields across a link (DESIGN.md "The relay"): the lead owns the team file, but a
//! member that runs on a remote host owns the fields it writes there itself, `isActive` (busy
//! or idle) and `mode` ([`HOST_FIELDS`]). A relay reads them from its host's team file (polled,
//! as the inboxes are) and sends each change as a `member` body; the lead writes them into its
//! team file under the file's lock. A `team` body from the lead (its members, with its own
//! copy of those fields) never overwrites them on the host: no ping-pong between an older copy
//! and a newer one.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{Map, Value};
use teamlead_protocol::Member;
use teamlead_protocol::store::{Home, Result, StoreError, team as team_file};

use crate::forward::{Stamp, full_look_due, stamp};
use crate::wire::Body;

/// The fields of a member that its host owns (as the team file names them).
pub const HOST_FIELDS: &[&str] = &["isActive", "mode"];

/// The host-owned fields `member` has (absent ones left out).
pub fn host_fields(member: &Member) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(active) = member.is_active {
        out.insert("isActive".into(), Value::Bool(active));
    }
    if let Some(mode) = &member.mode {
        out.insert("mode".into(), Value::String(mode.clone()));
    }
    out
}

/// Sets the host-owned fields of `fields` on `member` (fields it does not name stay).
pub fn set_host_fields(member: &mut Member, fields: &Map<String, Value>) {
    if let Some(active) = fields.get("isActive").and_then(Value::as_bool) {
        member.is_active = Some(active);
    }
    if let Some(mode) = fields.get("mode").and_then(Value::as_str) {
        member.mode = Some(mode.to_string());
    }
}

/// The relay's side: what it last sent of each hosted member.
#[derive(Debug, Default)]
pub struct MemberFeed {
    sent: HashMap<String, Map<String, Value>>,
    stamp: Option<Stamp>,
    last_full: Option<Instant>,
}

impl MemberFeed {
    /// A new connection: every hosted member's fields go again.
    pub fn reset(&mut self) {
        self.sent.clear();
        self.stamp = None;
    }

    /// `member` bodies for the hosted members whose fields in this host's team file changed
    /// since they were last sent (the file is read when it changed, and every second).
    pub fn scan(
        &mut self,
        home: &Home,
        team: &str,
        hosted: &[String],
        now: Instant,
    ) -> Result<Vec<Body>> {
        let path = home.config_path(team)?;
        let full = full_look_due(&mut self.last_full, now);
        let stamp = stamp(&path);
        if !full && stamp == self.stamp {
            return Ok(Vec::new());
        }
        self.stamp = stamp;
        let Some(file) = team_here(home, team) else {
            return Ok(Vec::new());
        };
        let mut bodies = Vec::new();
        for member in file.members.iter().filter(|m| hosted.contains(&m.name)) {
            let fields = host_fields(member);
            if fields.is_empty() || self.sent.get(&member.name) == Some(&fields) {
                continue;
            }
            self.sent.insert(member.name.clone(), fields.clone());
            bodies.push(Body::Member {
                team: team.to_string(),
                name: member.name.clone(),
                fields,
            });
        }
        Ok(bodies)
    }
}

/// This host's team file of `team` (`None`: none yet, or not readable now, which is said once
/// per look; the next look reads it again).
pub(crate) fn team_here(home: &Home, team: &str) -> Option<teamlead_protocol::TeamFile> {
    match team_file::read_team(home, team) {
        Ok(file) => Some(file),
        Err(StoreError::NotFound { .. }) => None,
        Err(e) => {
            tracing::warn!("the team file of {team} here is not readable for now: {e}");
            None
        }
    }
}

/// The lead's side: a hosted member's fields into the lead's team file, under its lock. A
/// member that does not run on that host (`hosted`), or is no longer in the team, is left
/// alone. Returns whether the file changed.
pub fn apply_member(
    home: &Home,
    team: &str,
    hosted: &[String],
    name: &str,
    fields: &Map<String, Value>,
) -> Result<bool> {
    if !hosted.iter().any(|h| h == name) {
        tracing::warn!("member fields of {name}, who does not run on that host: ignored");
        return Ok(false);
    }
    let result = team_file::edit_team(home, team, |file| {
        let Some(member) = file.member_mut(name) else {
            return Ok(false);
        };
        let before = member.clone();
        set_host_fields(member, fields);
        Ok(*member != before)
    });
    match result {
        Err(StoreError::NotFound { .. }) => Ok(false),
        other => other,
    }
}

/// The relay's side of a `team` body: the hosted members keep the fields this host's team
/// file has for them (`existing`), the host owns those.
pub fn keep_host_fields(existing: &[Member], members: &mut [Member], hosted: &[String]) {
    for member in members.iter_mut().filter(|m| hosted.contains(&m.name)) {
        if let Some(here) = existing.iter().find(|e| e.name == member.name) {
            set_host_fields(member, &host_fields(here));
        }
    }
}
