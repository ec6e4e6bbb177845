//! Choosing the session's one executor, once, from the backend choice: a pane executor
//! (tmux inside or a private server, iTerm2) when there is a pane backend, else in-process
//! tasks (with the llm engine when `--engine llm`); with hosts in the config, behind a
//! [`HostsExecutor`] that runs `/spawn --host` teammates on them.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::LeadOptions;
use crate::agent::events::TeammateEvent;
use crate::agent::in_process::InProcessExecutor;
use crate::backend::executor::TeammateExecutor;
use crate::backend::hosts::Connector;
use crate::backend::hosts::executor::HostsExecutor;
use crate::backend::hosts::link::{HostState, StateSink};
use crate::backend::hosts::remote::RemoteTeammates;
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
    hosts_tx: mpsc::UnboundedSender<HostState>,
) -> Arc<dyn TeammateExecutor> {
    let local = open_local(opts, home, team, file, bridge, teammate_tx);
    let Some(ssh_dir) = opts.ssh_dir.clone().filter(|_| !opts.hosts.is_empty()) else {
        return local;
    };
    let engine = if opts.teammate_llm.is_some() {
        "llm"
    } else {
        "shell"
    };
    let sink: StateSink = Arc::new(move |state| {
        let _ = hosts_tx.send(state);
    });
    let remote = RemoteTeammates::new(
        home.clone(),
        team,
        file.created_at,
        env!("CARGO_PKG_VERSION"),
        engine,
        Connector::new(ssh_dir),
        opts.hosts.clone(),
        sink,
    )
    .with_llm(opts.teammate_llm.as_ref().map(forwarded_model))
    .with_prices(&opts.prices);
    Arc::new(HostsExecutor {
        local,
        remote: Arc::new(remote),
    })
}

/// The session's own executor (panes or in-process).
fn open_local(
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

/// What teammates of teamlead's own `llm` engine on a host are told of the lead's model, and
/// where their forwarded requests go with the lead's credential (`backend::hosts::model_forward`).
fn forwarded_model(
    config: &crate::agent::llm::LlmConfig,
) -> crate::backend::hosts::model_forward::ForwardedModel {
    use crate::agent::llm::Provider;
    use crate::backend::hosts::model_forward::{ForwardedModel, ModelTarget};
    let mut auth = Vec::new();
    match config.provider {
        Provider::Anthropic => {
            if let Some(key) = &config.api_key {
                auth.push(("x-api-key".to_string(), key.expose().to_string()));
            }
            if let Some(token) = &config.auth_token {
                auth.push((
                    "authorization".to_string(),
                    format!("Bearer {}", token.expose()),
                ));
            }
        }
        Provider::OpenAi => {
            if let Some(key) = &config.api_key {
                auth.push((
                    "authorization".to_string(),
                    format!("Bearer {}", key.expose()),
                ));
            }
        }
    }
    ForwardedModel {
        provider: config.provider.as_str().to_string(),
        base_url_var: match config.provider {
            Provider::Anthropic => "ANTHROPIC_BASE_URL",
            Provider::OpenAi => "OPENAI_BASE_URL",
        },
        model: config.model.clone(),
        target: ModelTarget {
            base_url: config.base_url.trim_end_matches('/').to_string(),
            auth,
        },
    }
}
