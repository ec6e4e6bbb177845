//! Re-binding the remote teammates a previous lead of the team left (DESIGN.md "Hosts"): a
//! restarted lead server (or one resumed after SIGKILL) knows its remote members by their
//! `teamleadHost` key in the team file. Each is counted as this session's again and its host's
//! link restarted with it in the route, then the host's tmux is asked whether its session
//! still runs: tmux's own "no such session" (or no server at all) says it is gone, and only
//! that; a host that does not answer keeps it, shown `unreachable` by its link, never dead.
//! `/respawn NAME` of a gone one starts it again on its host (the member keeps its host).

use super::remote::RemoteTeammates;
use crate::backend::executor::{Adopted, ExecutorError};

impl RemoteTeammates {
    /// Binds `name`, which the previous lead ran on `host` (pane `pane_id`), to this session.
    /// An error only when the host says it is gone (it is then forgotten here).
    pub fn adopt(&self, name: &str, host: &str, pane_id: &str) -> Result<Adopted, ExecutorError> {
        // A host no longer in the config cannot be reached at all: said, not guessed.
        self.connection(host)?;
        self.register(name, host);
        self.update_route(host)?;
        let adopted = Adopted {
            name: name.to_string(),
            pane_id: pane_id.to_string(),
        };
        match self.tmux(host, &["has-session", "-t", &format!("={name}")]) {
            Ok(Some(0)) => Ok(adopted),
            Ok(Some(1)) => {
                self.forget(name);
                Err(ExecutorError::Failed(format!(
                    "its session on {host} is gone"
                )))
            }
            Ok(status) => {
                tracing::info!("adopting {name}: tmux on {host} said {status:?}; kept");
                Ok(adopted)
            }
            Err(e) => {
                // Out of reach is not gone: its link shows it unreachable until it returns,
                // and liveness asks again then.
                tracing::info!("adopting {name}: {e}; kept as unreachable");
                Ok(adopted)
            }
        }
    }
}
