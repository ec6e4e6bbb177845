//! Teammates on other hosts, as the controller sees them: each host's link reports its state
//! (`backend::hosts::link::HostState`, an event from the link's thread); while a host is down
//! its teammates are shown `unreachable` and are never judged by liveness (no task
//! unassigned, nothing cleaned or reaped), and they are shown as before when it returns.

use std::collections::HashMap;

use super::state::Controller;

/// The hosts whose link is down, and since when (epoch ms): their teammates are shown
/// `unreachable`.
#[derive(Debug, Default)]
pub struct HostsDown(HashMap<String, u64>);

impl HostsDown {
    /// Since when `host`'s link is down (`None`: it is up).
    pub fn since(&self, host: &str) -> Option<u64> {
        self.0.get(host).copied()
    }

    /// `host`'s link is `up`, or down since `since_ms` (the first report of a spell stands):
    /// since when it is down now.
    pub fn set(&mut self, host: &str, up: bool, since_ms: u64) -> Option<u64> {
        if up {
            self.0.remove(host);
        } else {
            self.0.entry(host.to_string()).or_insert(since_ms);
        }
        self.since(host)
    }
}

impl Controller {
    /// A host's link went down or came back: its teammates are shown `unreachable` meanwhile
    /// (never dead or idle: no task is unassigned, nothing is cleaned or reaped), and normal
    /// again when it returns.
    pub fn on_host_state(&mut self, state: crate::backend::hosts::link::HostState) {
        let was_down = self.hosts_down.since(&state.host).is_some();
        let down = self.hosts_down.set(&state.host, state.up, state.since_ms);
        let names: Vec<String> = self
            .cache
            .file()
            .members
            .iter()
            .filter(|m| crate::backend::hosts::remote::member_host(m) == Some(state.host.as_str()))
            .map(|m| m.name.clone())
            .collect();
        for name in &names {
            let tracking = self.roster.entry(name);
            tracking.set_unreachable(down.map(|since| (state.host.clone(), since)));
        }
        match (was_down, state.up) {
            (false, false) => self.note(format!(
                "Host {} is unreachable ({}): its teammates are kept and wait for the link.",
                state.host, state.why
            )),
            (true, true) => self.note(format!("Host {} is back.", state.host)),
            _ => {}
        }
    }
}
