//! Teammates on other hosts, as the controller sees them: each host's link reports its state
//! (`backend::hosts::link::HostState`, an event from the link's thread); while a host is down
//! its teammates are shown `unreachable` and are never judged by liveness (no task
//! unassigned, nothing cleaned or reaped), and they are shown as before when it returns.

use super::state::Controller;

impl Controller {
    /// A host's link went down or came back: its teammates are shown `unreachable` meanwhile
    /// (never dead or idle: no task is unassigned, nothing is cleaned or reaped), and normal
    /// again when it returns.
    pub fn on_host_state(&mut self, state: crate::backend::hosts::link::HostState) {
        let was_down = self.hosts_down.contains_key(&state.host);
        if state.up {
            self.hosts_down.remove(&state.host);
        } else {
            self.hosts_down
                .entry(state.host.clone())
                .or_insert(state.since_ms);
        }
        let down = self.hosts_down.get(&state.host).copied();
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
            tracking.unreachable = down.map(|since| (state.host.clone(), since));
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
