//! Read marks across a link (DESIGN.md "The relay"): an entry the lead sent to a member that
//! runs on another host is read there (the teammate sets `read: true` in its inbox on its
//! host, or takes it), never in the lead's copy, so the lead's receipts would stop at
//! *delivered*. A relay sends the relay ids of the hosted members' entries that are read on
//! its host as a `read` body; the lead's end marks the same entries read in its copy (each
//! found by its relay id, the one the lead's end gave it from its key), where the lead's
//! ledger reads them as for a local teammate. Capability `read`: sent only to a lead that has
//! it.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use teamlead_protocol::store::{Home, Result, inbox};

use crate::forward::{InboxLook, entry_key, relay_id};
use crate::wire::Body;

/// The relay's side: which read entries of each hosted member's inbox were sent, and which
/// entries from the lead were seen unread (one that is gone later was taken: read).
#[derive(Debug, Default)]
pub struct ReadFeed {
    sent: HashMap<String, HashSet<String>>,
    unread: HashMap<String, HashSet<String>>,
    look: InboxLook,
}

impl ReadFeed {
    /// `read` bodies for the hosted members' entries from the lead that became read since they
    /// were last looked at (an inbox is read when its file changed, and every second).
    pub fn scan(
        &mut self,
        home: &Home,
        team: &str,
        hosted: &[String],
        now: Instant,
    ) -> Result<Vec<Body>> {
        let mut bodies = Vec::new();
        for (member, entries) in
            self.look
                .changed(home, team, hosted, now, "read marks not sent")?
        {
            let sent = self.sent.entry(member.clone()).or_default();
            let unread = self.unread.entry(member.clone()).or_default();
            let present: HashSet<&str> = entries
                .iter()
                .filter_map(|e| e.relay_id.as_deref())
                .collect();
            // Taken (a runtime that removes what it reads) counts as read.
            let mut ids: Vec<String> = unread
                .iter()
                .filter(|id| !present.contains(id.as_str()))
                .cloned()
                .collect();
            unread.clear();
            for e in &entries {
                let Some(id) = &e.relay_id else { continue };
                if e.is_unread() {
                    unread.insert(id.clone());
                } else if !sent.contains(id) {
                    ids.push(id.clone());
                }
            }
            ids.retain(|id| !sent.contains(id));
            if ids.is_empty() {
                continue;
            }
            sent.extend(ids.iter().cloned());
            bodies.push(Body::Read {
                team: team.to_string(),
                name: member.clone(),
                ids,
            });
        }
        Ok(bodies)
    }
}

/// The lead's side: the entries of `name`'s inbox (the lead's copy) whose relay ids are in
/// `ids` are marked read. A member that does not run on that host is left alone. Returns how
/// many were marked now.
pub fn apply_read(
    home: &Home,
    team: &str,
    hosted: &[String],
    name: &str,
    ids: &[String],
) -> Result<usize> {
    if !hosted.iter().any(|h| h == name) {
        tracing::warn!("read marks of {name}, who does not run on that host: ignored");
        return Ok(0);
    }
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let marked = inbox::mark_read_where(home, team, name, |e| {
        let id = e
            .relay_id
            .clone()
            .unwrap_or_else(|| relay_id(team, &entry_key(name, e)));
        wanted.contains(id.as_str())
    });
    match marked {
        Err(teamlead_protocol::store::StoreError::NotFound { .. }) => Ok(0),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forward::FULL_SCAN_EVERY;
    use teamlead_protocol::{InboxEntry, Member, TeamFile};

    fn home_with(member: &str) -> (tempfile::TempDir, Home) {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        teamlead_protocol::store::create_team(&home, &TeamFile::new("crew", None, "/w")).unwrap();
        teamlead_protocol::store::add_member(&home, "crew", Member::new(member, "crew", "/w"))
            .unwrap();
        (tmp, home)
    }

    #[test]
    fn an_entry_read_on_the_host_is_read_in_the_leads_copy() {
        // The lead's copy of mate's inbox, and the host's, where the entry carries its relay id.
        let (_l, lead) = home_with("mate");
        let (_h, host) = home_with("mate");
        let hosted = vec!["mate".to_string()];
        let sent = InboxEntry::new("team-lead", "do the thing");
        let other = InboxEntry::new("team-lead", "and later this");
        inbox::append_many(&lead, "crew", "mate", &[sent.clone(), other.clone()]).unwrap();
        let id = relay_id("crew", &entry_key("mate", &sent));
        let mut there = sent.clone();
        there.relay_id = Some(id.clone());
        let mut later = other.clone();
        later.relay_id = Some(relay_id("crew", &entry_key("mate", &other)));
        inbox::append_many(&host, "crew", "mate", &[there.clone(), later]).unwrap();

        let mut feed = ReadFeed::default();
        let t0 = Instant::now();
        assert!(
            feed.scan(&host, "crew", &hosted, t0).unwrap().is_empty(),
            "nothing read"
        );
        inbox::mark_read(&host, "crew", "mate", &[there.dedup_key()]).unwrap();
        let bodies = feed.scan(&host, "crew", &hosted, t0).unwrap();
        let [Body::Read { name, ids, .. }] = &bodies[..] else {
            panic!("one read body: {bodies:?}");
        };
        assert_eq!((name.as_str(), ids.clone()), ("mate", vec![id.clone()]));
        // Sent once.
        let later_scan = t0 + FULL_SCAN_EVERY;
        assert!(
            feed.scan(&host, "crew", &hosted, later_scan)
                .unwrap()
                .is_empty()
        );

        // The lead marks that entry, and only it, and only for a member of that host.
        assert_eq!(apply_read(&lead, "crew", &[], "mate", ids).unwrap(), 0);
        assert_eq!(apply_read(&lead, "crew", &hosted, "mate", ids).unwrap(), 1);
        assert_eq!(
            apply_read(&lead, "crew", &hosted, "mate", ids).unwrap(),
            0,
            "once"
        );
        let copy = inbox::read(&lead, "crew", "mate").unwrap().entries;
        let unread: Vec<&str> = copy
            .iter()
            .filter(|e| e.is_unread())
            .map(|e| e.text.as_str())
            .collect();
        assert_eq!(unread, ["and later this"]);

        // The other one is taken on the host (removed, as a runtime that removes what it reads
        // does): read as well.
        inbox::replace(&host, "crew", "mate", &[there]).unwrap();
        let bodies = feed
            .scan(&host, "crew", &hosted, later_scan + FULL_SCAN_EVERY)
            .unwrap();
        let [Body::Read { ids, .. }] = &bodies[..] else {
            panic!("one read body: {bodies:?}");
        };
        assert_eq!(apply_read(&lead, "crew", &hosted, "mate", ids).unwrap(), 1);
        assert!(
            inbox::read(&lead, "crew", "mate")
                .unwrap()
                .entries
                .iter()
                .all(|e| !e.is_unread())
        );
    }
}
