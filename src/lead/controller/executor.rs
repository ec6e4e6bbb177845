//! Choosing the session's one executor, once, from the backend choice: a pane executor
//! (tmux inside or a private server, iTerm2) when there is a pane backend, else in-process
//! tasks (with the llm engine when `--engine llm`).

use std::sync::Arc;

use tokio::sync::mpsc;

use super::LeadOptions;
use crate::agent::events::TeammateEvent;
use crate::agent::in_process::InProcessExecutor;
use crate::backend::executor::TeammateExecutor;
use crate::backend::pane_executor::PaneExecutor;
use crate::lead::bridge::LeaderBridge;
use crate::protocol::TeamFile;
use crate::store::Home;

/// The session's one executor: panes when the backend choice has a pane backend, else
/// in-process tasks.
pub(super) fn open_executor(
    opts: &LeadOptions,
    home: &Home,
    team: &str,
    file: &TeamFile,
    bridge: &LeaderBridge,
    teammate_tx: mpsc::UnboundedSender<TeammateEvent>,
) -> Arc<dyn TeammateExecutor> {
    let engine = if opts.teammate_llm.is_some() {
        "llm"
    } else {
        "shell"
    };
    if let Some(panes) = PaneExecutor::for_choice(
        &opts.backend_choice,
        home,
        team,
        &file.lead_session_id,
        opts.claude_by_default,
        engine,
        opts.teammate_binary.as_deref(),
    ) {
        return Arc::new(panes);
    }
    let mut executor = InProcessExecutor::new(home, team, bridge.asker(), teammate_tx);
    if let Some(llm) = opts.teammate_llm.clone() {
        executor = executor.with_engine(crate::agent::EngineKind::llm(llm));
    }
    Arc::new(executor)
}
