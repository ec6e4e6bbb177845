//! The slow test binary: everything that needs a pseudo-terminal, a private tmux server, a
//! real Zellij, kitty or Claude Code, or a lead server (the lead in a terminal, pane teammates,
//! faults under load, the conformance suite). One binary so the suite links once; each former
//! file is a module. Run: `cargo test --test slow` (or `cargo test --test slow claude_code`).

// Shared helpers, each compiled once.
mod claude_code_common;
mod cleanup_common;
mod cli_common;
mod foreign_common;
mod hostile_common;
mod kitty_common;
mod lead_common;
mod llm_common;
mod model_server;
mod monitor_common;
mod panes_common;
mod pty_harness;
mod server_common;
mod tmux_common;
mod ui_common;
mod zellij_common;

// One module per former test binary.
mod broken_team;
mod claude_code;
mod cli_monitor;
mod foreign_team;
mod home_untouched;
mod hostile;
mod hostile_lead;
mod kitty_backend;
mod kitty_lead;
mod lead_cleanup;
mod lead_faults;
mod lead_faults_locks;
mod lead_faults_tmux;
mod lead_inbox_recovery;
mod lead_liveness;
mod lead_model_pty;
mod lead_panes_inside;
mod lead_panes_outside;
mod lead_resume;
mod review_pty;
mod server_attach;
mod server_headless;
mod server_notify;
mod teammate_pane;
mod tmux_backend;
mod ui_approvals_pty;
mod ui_colors_pty;
mod ui_pty;
mod wezterm_backend;
mod zellij_backend;
mod zellij_inside;
mod zellij_lead;
