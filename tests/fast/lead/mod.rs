//! The lead: spawning, tasks, permissions, review and merge, budgets, resume, faults and cleanup.

mod budget;
mod model;
mod permissions;
mod quit;
mod retire;
pub(crate) mod review;
mod review_checkout;
mod review_merged;
mod review_queue;
mod review_shell;
mod spawn;
mod task_hold;
mod tasks;
mod team;
