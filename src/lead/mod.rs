//! The lead controller: team lifecycle, spawning, the inbox poller, the permission queue and the
//! in-memory leader permission bridge, plan approvals, shutdown and cleanup. It never renders: it
//! takes [`view::LeadCommand`]s and emits [`view::LeadEvent`]s.

pub mod view;
