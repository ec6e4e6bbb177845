//! What each teammate of a team has used, read from files only (for `inspect`, which must work
//! with no lead running): a `claude` teammate's session transcript (its session id is in the
//! lead's session record; usage de-duplicated by message id, `store::claude_transcript`), and
//! for teamlead's own teammates the usage their last idle notification reported (in the lead's
//! delivery log, or still in its inbox).

use std::collections::HashMap;
use std::sync::Arc;

use crate::frames::{Frame, ReportedUsage};
use crate::pricing::{Ledger, PriceTable};
use crate::{InboxEntry, LEAD_NAME};

use super::Home;
use super::claude_transcript::TranscriptMeter;
use super::delivery::DeliveryTail;
use super::session_record::SessionRecord;

/// One teammate's usage and the model it ran (when known).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemberUsage {
    pub usage: ReportedUsage,
    /// The model its transcript names (claude teammates).
    pub model: Option<String>,
    /// Its usage by model, each message priced by `prices` (claude teammates; `None` for a
    /// teammate known by its reported totals only).
    pub ledger: Option<Ledger>,
    /// Until when (epoch milliseconds) its transcript says it is rate- or usage-limited.
    pub limited_until_ms: Option<u64>,
}

/// Usage per teammate name (teammates with nothing known are absent), whole transcripts read
/// and priced by `prices`.
pub fn team_usage(
    home: &Home,
    team: &str,
    prices: &Arc<PriceTable>,
) -> HashMap<String, MemberUsage> {
    let mut out: HashMap<String, MemberUsage> = HashMap::new();
    for entry in lead_entries(home, team) {
        if let Some(Frame::IdleNotification(idle)) = entry.parse_frame()
            && let Some(usage) = idle.usage
        {
            out.insert(
                entry.from.clone(),
                MemberUsage {
                    usage,
                    ..MemberUsage::default()
                },
            );
        }
    }
    if let Some(record) = SessionRecord::read(home, team) {
        for (name, teammate) in &record.teammates {
            let Some(session) = teammate.session_id.as_deref().filter(|_| teammate.claude) else {
                continue;
            };
            if let Some(facts) = TranscriptMeter::new(session, prices.clone()).read(home) {
                out.insert(
                    name.clone(),
                    MemberUsage {
                        usage: facts.usage,
                        model: facts.model,
                        ledger: Some(facts.ledger),
                        limited_until_ms: facts.limited_until_ms,
                    },
                );
            }
        }
    }
    out
}

/// Every entry the lead received, oldest first: what it delivered, then what is still unread.
fn lead_entries(home: &Home, team: &str) -> Vec<InboxEntry> {
    let mut entries = Vec::new();
    if let Ok(path) = home.delivery_log_path(team, LEAD_NAME) {
        let mut tail = DeliveryTail::from_start(&path);
        while let Ok(read) = tail.read_new() {
            if read.records.is_empty() {
                break;
            }
            entries.extend(read.records.into_iter().map(|d| d.entry));
        }
    }
    if let Ok(inbox) = super::inbox::read(home, team, LEAD_NAME) {
        entries.extend(inbox.entries);
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{IdleNotification, IdleReason};

    fn idle(from: &str, input: u64) -> InboxEntry {
        let idle = IdleNotification {
            from: from.into(),
            timestamp: crate::time::now_iso(),
            idle_reason: Some(IdleReason::Available),
            summary: None,
            completed_task_id: None,
            completed_status: None,
            failure_reason: None,
            result: None,
            usage: Some(ReportedUsage {
                input_tokens: input,
                output_tokens: 10,
                ..ReportedUsage::default()
            }),
            limit_until_ms: None,
        };
        InboxEntry::frame(from, &Frame::IdleNotification(idle))
    }

    #[test]
    fn the_last_report_of_each_teammate_counts_delivered_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        crate::store::create_team(&home, &crate::TeamFile::new("t", None, "/tmp")).unwrap();
        let mut log = super::super::delivery::DeliveryLog::open(
            &home.delivery_log_path("t", LEAD_NAME).unwrap(),
        )
        .unwrap();
        log.record(&[idle("alpha", 100), idle("alpha", 250)])
            .unwrap();
        crate::store::inbox::append(&home, "t", LEAD_NAME, &idle("beta", 40)).unwrap();
        let usage = team_usage(&home, "t", &Arc::new(PriceTable::built_in()));
        assert_eq!(usage["alpha"].usage.input_tokens, 250);
        assert_eq!(usage["beta"].usage.input_tokens, 40);
        assert_eq!(usage.len(), 2);
    }
}
