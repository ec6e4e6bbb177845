//! The teammate runtime: its loop (wait for inbox or tasks, run a turn, idle notification,
//! shutdown handshake), its permission gate (modes, rules, asking the lead), and its engines
//! (`shell`: runs task commands, no model).

pub mod asker;
