//! The store layer: the home layout, name checks on every path, mkdir lock directories
//! compatible with Claude Code (proper-lockfile), atomic writes and torn-read retry, inbox
//! append/drain, team file edits, the task list (ids, claim, availability), the lead liveness
//! lock, and the quarantine of bad input. It knows nothing of processes or the UI.

mod append_batch;
pub mod atomic;
pub mod audit;
#[cfg(test)]
mod batch_writes;
pub mod claude_limit;
pub mod claude_transcript;
pub mod claude_undelivered;
pub mod delivery;
pub mod error;
pub mod home;
pub mod inbox;
mod inbox_memo;
pub mod json_check;
pub mod kept_texts;
pub mod leftovers;
pub mod liveness;
pub mod lock;
pub mod quarantine;
pub mod rate_limit;
pub mod remote_facts;
pub mod safe_file;
pub mod scan;
pub mod session_record;
pub mod tasks;
pub mod team;
mod team_batch;
pub mod team_guard;
pub mod team_usage;
pub mod written_files;

pub use delivery::DeliveryLog;
pub use error::{Result, StoreError};
pub use home::Home;
pub use inbox::{Appended, Drained, InboxRead, Taken};
pub use liveness::{LeadLiveness, is_lead_alive};
pub use lock::{DEFAULT_LOCK_TIMEOUT, LockGuard};
pub use quarantine::{Problem, quarantine_bytes};
pub use session_record::{SessionRecord, TeammateRecord};
pub use tasks::{ClaimError, TaskList, TaskListing};
pub use team::{
    add_member, create_team, delete_team, delete_team_with, edit_team, mark_active_before_turn,
    read_team, remove_member, set_active, set_modes, set_pane,
};

/// Locks `mutex`, taking over a lock whose holder panicked: the store's in-process
/// bookkeeping (lock queues, batches) stays usable after a panic in one thread.
pub(crate) fn unpoisoned<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
