//! Inbox entries across the link: which local inboxes go to the other side, picking up their
//! new entries once (each keyed by inbox and de-duplication key, the key persisted in the link's
//! `forwarded.jsonl` when the entry enters the outbox), and applying an entry that arrives
//! (append unless an entry of that inbox already carries its relay id).

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use teamlead_protocol::store::{Home, Result, inbox};
use teamlead_protocol::{InboxEntry, LEAD_NAME};

use crate::hello::Role;
use crate::link_dir::LinkDir;
use crate::wire::Body;

/// How often every outgoing inbox is read even when its file looks unchanged (a file's times
/// are coarse, and a rename may reuse an inode).
pub const FULL_SCAN_EVERY: Duration = Duration::from_secs(1);

/// What tells a changed file at a glance: its inode, size and modification time.
pub type Stamp = (u64, u64, i64, i64);

/// `path`'s [`Stamp`] (`None`: no such file).
pub fn stamp(path: &std::path::Path) -> Option<Stamp> {
    std::fs::symlink_metadata(path)
        .map(|m| (m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
        .ok()
}

/// Whether a full look is due (the last one, kept in `last`, was [`FULL_SCAN_EVERY`] ago or
/// never); when it is, `last` becomes `now`.
pub fn full_look_due(last: &mut Option<Instant>, now: Instant) -> bool {
    let due = last.is_none_or(|t| now.duration_since(t) >= FULL_SCAN_EVERY);
    if due {
        *last = Some(now);
    }
    due
}

/// The inboxes of `team` whose entries go to the other side. The lead forwards the inboxes of
/// the members that run on the peer's host (`hosted`); a relay forwards every inbox of the
/// team except those of its own members (the lead's route), and only the lead's inbox before
/// the lead has said which members it runs.
pub fn outgoing(
    home: &Home,
    team: &str,
    role: Role,
    hosted: Option<&[String]>,
) -> Result<Vec<String>> {
    match role {
        Role::Lead => Ok(hosted.map(<[String]>::to_vec).unwrap_or_default()),
        Role::Relay => {
            let Some(hosted) = hosted else {
                return Ok(vec![LEAD_NAME.to_string()]);
            };
            let mut names = inbox_names(home, team)?;
            names.retain(|n| !hosted.contains(n));
            Ok(names)
        }
    }
}

/// The members with an inbox file in `team`.
fn inbox_names(home: &Home, team: &str) -> Result<Vec<String>> {
    let dir = home.inboxes_dir(team)?;
    let Some(entries) = home.read_dir(&dir)? else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Some(member) = name.strip_suffix(".json") else {
            continue;
        };
        if entry.file_type().map(|t| t.is_file()).unwrap_or(false)
            && teamlead_protocol::names::check_path_component(member).is_ok()
        {
            names.push(member.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// The body that carries `entry` of `member`'s inbox (whose key is `key`) to the peer, with
/// its relay id: the one it carries already (forwarded on from another host), or the one made
/// from its key.
pub fn entry_body(team: &str, member: &str, entry: InboxEntry, key: &str) -> Body {
    let id = entry
        .relay_id
        .clone()
        .unwrap_or_else(|| relay_id(team, key));
    Body::InboxEntry {
        team: team.to_string(),
        to: member.to_string(),
        entry: Box::new(entry),
        id,
    }
}

/// The key of an entry of `member`'s inbox: the inbox and the entry's de-duplication key.
pub fn entry_key(member: &str, entry: &InboxEntry) -> String {
    format!("{member}/{}", entry.dedup_key())
}

/// The relay id of a local entry: a uuid (version 8) made from the team and the entry's key, so
/// the same entry gets the same id however often it is picked up (a side that lost its
/// `forwarded.jsonl` forwards it again, and the receiver still finds it by its id).
pub fn relay_id(team: &str, key: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in ["teamlead-relay", team, key] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    let digest = h.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// Which of some inboxes changed since they were last read (by their [`Stamp`]), every one of
/// them each [`FULL_SCAN_EVERY`]: what the forward's pick-up and the read marks look at.
#[derive(Debug, Default)]
pub struct InboxLook {
    seen: HashMap<String, Stamp>,
    last_full: Option<Instant>,
}

impl InboxLook {
    /// The inboxes of `members` of `team` to read now, each read in full; one that cannot be
    /// read is left for the next look (`what`: what is held back, for the log).
    pub fn changed(
        &mut self,
        home: &Home,
        team: &str,
        members: &[String],
        now: Instant,
        what: &str,
    ) -> Result<Vec<(String, Vec<InboxEntry>)>> {
        let full = full_look_due(&mut self.last_full, now);
        let mut out = Vec::new();
        for member in members {
            let stamp = stamp(&home.inbox_path(team, member)?).unwrap_or_default();
            if !full && self.seen.get(member) == Some(&stamp) {
                continue;
            }
            match inbox::read(home, team, member) {
                Ok(read) => {
                    self.seen.insert(member.clone(), stamp);
                    out.push((member.clone(), read.entries));
                }
                // One inbox that cannot be read (a person's hand edit, a full disk) holds back
                // its own entries, not the link: it is read again at the next look.
                Err(e) => tracing::warn!("{member}'s inbox of {team}: {what} for now: {e}"),
            }
        }
        Ok(out)
    }
}

/// Notices which outgoing inboxes changed since they were last read.
#[derive(Debug, Default)]
pub struct Scanner {
    look: InboxLook,
}

impl Scanner {
    /// The entries of the outgoing inboxes not yet forwarded: unread, not in `dir`'s
    /// forwarded keys, not received over this very link (`received`: relay ids it applied).
    /// Each comes as the body to send and its key. The relay id is the one the entry already
    /// carries (forwarded by another link before), else [`relay_id`].
    pub fn pick_up(
        &mut self,
        home: &Home,
        team: &str,
        members: &[String],
        dir: &LinkDir,
        received: &HashSet<String>,
        now: Instant,
    ) -> Result<Vec<(Body, String)>> {
        let mut found = Vec::new();
        let mut found_keys: HashSet<String> = HashSet::new();
        for (member, entries) in self
            .look
            .changed(home, team, members, now, "not forwarded")?
        {
            for entry in entries {
                if !entry.is_unread() {
                    continue;
                }
                let key = entry_key(&member, &entry);
                if dir.was_forwarded(&key)
                    || entry
                        .relay_id
                        .as_ref()
                        .is_some_and(|id| received.contains(id))
                    || !found_keys.insert(key.clone())
                {
                    continue;
                }
                found.push((entry_body(team, &member, entry, &key), key));
            }
        }
        Ok(found)
    }
}

/// The inbox entries of one batch of lines, applied together before `recv` is persisted.
#[derive(Debug, Default)]
pub struct Batch {
    /// Per inbox (team, member), in the order the inboxes first came: each entry and its
    /// relay id, in arrival order.
    groups: Vec<Group>,
}

/// One inbox's entries in a [`Batch`]: team, member, each entry with its relay id.
type Group = (String, String, Vec<(InboxEntry, String)>);

impl Batch {
    /// Adds an entry for `to`'s inbox of `team`.
    pub fn push(&mut self, team: String, to: String, entry: InboxEntry, id: String) {
        match self
            .groups
            .iter_mut()
            .find(|(t, m, _)| *t == team && *m == to)
        {
            Some((_, _, list)) => list.push((entry, id)),
            None => self.groups.push((team, to, vec![(entry, id)])),
        }
    }

    /// Appends every entry, one locked swap per inbox ([`apply`]); returns (team, member,
    /// relay id) of each, appended now or found there from before.
    pub fn apply(self, home: &Home) -> Result<Vec<(String, String, String)>> {
        let mut done = Vec::new();
        for (team, to, entries) in self.groups {
            apply(home, &team, &to, &entries)?;
            done.extend(
                entries
                    .into_iter()
                    .map(|(_, id)| (team.clone(), to.clone(), id)),
            );
        }
        Ok(done)
    }
}

/// Appends forwarded entries to `to`'s inbox of `team`, each with its relay id, in one locked
/// swap, leaving out those an entry there already carries the id of (applied before a crash).
/// Returns how many it appended.
pub fn apply(home: &Home, team: &str, to: &str, entries: &[(InboxEntry, String)]) -> Result<usize> {
    let entries: Vec<InboxEntry> = entries
        .iter()
        .map(|(entry, id)| {
            let mut entry = entry.clone();
            entry.relay_id = Some(id.clone());
            entry
        })
        .collect();
    inbox::append_new(home, team, to, &entries)
}

/// Creates `team` on this host with the lead's agent id and `members`, or replaces the lead's
/// agent id and members of the team file there, under its lock (the lead owns the team file;
/// unknown keys of the file stay). The members that run on this host (`hosted`) keep the fields
/// they own here ([`crate::members::HOST_FIELDS`]): the lead's copy of those is older.
pub fn apply_team(
    home: &Home,
    team: &str,
    lead_agent_id: &str,
    members: Vec<teamlead_protocol::Member>,
    hosted: &[String],
) -> Result<()> {
    use teamlead_protocol::store::{StoreError, team as team_file};
    let result = team_file::edit_team(home, team, |file| {
        let mut members = members.clone();
        crate::members::keep_host_fields(&file.members, &mut members, hosted);
        file.lead_agent_id = lead_agent_id.to_string();
        file.members = members;
        Ok(())
    });
    match result {
        Err(StoreError::NotFound { .. }) => {
            let file = teamlead_protocol::TeamFile {
                lead_agent_id: lead_agent_id.to_string(),
                members,
                ..teamlead_protocol::TeamFile::new(team, None, "")
            };
            team_file::create_team(home, &file)
        }
        other => other,
    }
}
