//! The lead: spawning, tasks, permissions, review and merge, budgets, resume, faults and cleanup.

mod broken_team;
mod cleanup;
mod faults;
mod faults_locks;
mod faults_tmux;
mod foreign_team;
mod hostile;
mod inbox_recovery;
mod liveness;
mod model_pty;
mod panes_inside;
mod panes_outside;
mod resume;
mod review_pty;
