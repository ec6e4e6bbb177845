//! A real `claude` teammate on another host (`/spawn NAME --host HOST --agent claude`): the
//! host's own Claude Code (`[hosts.NAME] claude`, else `~/.local/bin/claude`, else `claude` on
//! its PATH, found the way the probe finds it), started with the same flags and the same
//! agent-team switches as a local `claude` teammate (`TeammateLaunch`), in the host's `dir`,
//! with nothing of the lead's environment: it uses the host's own Claude Code login, unless
//! the host opts in to the lead's model endpoint (`forward-model = true`: its
//! `ANTHROPIC_BASE_URL` is the forwarded endpoint and its token a placeholder the lead
//! replaces with its own key, [`super::model_forward`]). A host `home` is its
//! `CLAUDE_CONFIG_DIR` (where the relay keeps the team). As a local one, it runs behind the
//! host's `teamlead guard`, which watches the lead's presence there (the lock the relay holds
//! while the link is up) and stops it when the lead has been gone for the hosts' grace.

use std::time::Duration;

use super::Connection;
use super::probe::{INSTALL_PATH, claude_lookup, remote_path};
use crate::backend::executor::SpawnRequest;
use crate::backend::launch::{TeammateLaunch, TeammateProgram, shell_quote};
use crate::config::HostConfig;

/// How long finding `claude` on a host may take.
const FIND_DEADLINE: Duration = Duration::from_secs(15);

/// The token a forwarded `claude` sends: not a key (the lead drops it and adds its own), but
/// Claude Code wants a credential before it sends anything.
pub const FORWARDED_TOKEN: &str = "teamlead-forwarded-model-endpoint";

/// The host's `claude` (its path there), or one line that says what to do.
pub fn find_claude(connection: &Connection) -> Result<String, String> {
    let host = &connection.host;
    let script = format!(
        "{}[ -n \"$c\" ] && printf 'claude %s\\n' \"$c\"; echo end",
        claude_lookup(host.claude.as_deref())
    );
    let out = connection
        .call(
            &format!("sh -c {}", shell_quote(&script)),
            None,
            FIND_DEADLINE,
        )
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.lines().any(|l| l == "end") {
        return Err(format!(
            "the shell on {} did not answer: {}",
            host.name,
            out.stderr.lines().last().unwrap_or("no message")
        ));
    }
    let found = text
        .lines()
        .find_map(|l| l.strip_prefix("claude "))
        .map(str::to_string);
    found.ok_or_else(|| match &host.claude {
        Some(path) => format!(
            "{path} (`claude` of [hosts.{}]) is not an executable file on {}: fix it there or in the config file",
            host.name, host.name
        ),
        None => format!(
            "no Claude Code on {}: install it there (`~/.local/bin/claude` or on its PATH) or set `claude` of [hosts.{}]",
            host.name, host.name
        ),
    })
}

/// The command line (for the host's shell) that runs `claude` at `binary` as `request`'s
/// teammate of `team` behind the host's `teamlead guard`; `model_url`: the forwarded model
/// endpoint, when the host opted in; `grace_ms`: how long the guard waits for a lead whose
/// link is gone (`TEAMLEAD_LEAD_GRACE_MS` there, as the host's own teammates get it).
pub fn command_line(
    host: &HostConfig,
    binary: &str,
    team: &str,
    request: &SpawnRequest,
    cwd: &str,
    model_url: Option<&str>,
    grace_ms: u128,
) -> String {
    let launch = TeammateLaunch {
        program: TeammateProgram::Claude {
            binary: binary.to_string(),
        },
        cwd: String::new(),
        name: request.name.clone(),
        team: team.to_string(),
        color: request.color.clone(),
        parent_session_id: None,
        plan_mode_required: request.plan_mode_required,
        agent_type: Some(request.agent_type.clone()),
        model: request.model.clone(),
        lead_mode: request.mode,
        session_id: request.session_id.clone(),
        guard: None,
    };
    // The agent-team switches only: nothing of the lead's environment goes to another host.
    let mut words: Vec<String> = launch
        .env(&|_| None)
        .into_iter()
        .map(|(k, v)| format!("{k}={}", shell_quote(&v)))
        .collect();
    if let Some(home) = &host.home {
        words.push(format!("CLAUDE_CONFIG_DIR={}", remote_path(home)));
    }
    if let Some(url) = model_url {
        words.push(format!("ANTHROPIC_BASE_URL={}", shell_quote(url)));
        words.push(format!("ANTHROPIC_AUTH_TOKEN={FORWARDED_TOKEN}"));
    }
    words.push(format!("TEAMLEAD_LEAD_GRACE_MS={grace_ms}"));
    // The guard finds the team where the relay keeps it: the same home (`CLAUDE_CONFIG_DIR`
    // above, else the host's `~/.claude`).
    words.extend([
        "\"$t\"".to_string(),
        "guard".to_string(),
        "--agent-id".to_string(),
        shell_quote(&format!("{}@{team}", request.name)),
        "--".to_string(),
    ]);
    words.push(remote_path(binary));
    words.extend(launch.args().iter().map(|a| shell_quote(a)));
    let cd = format!("cd {} && ", remote_path(cwd));
    // Without `-u`, a key of the host's own environment would go along with the forward.
    let unset = if model_url.is_some() {
        "-u ANTHROPIC_API_KEY "
    } else {
        ""
    };
    let script = format!(
        "{cd}t=\"$HOME/{INSTALL_PATH}\"; [ -x \"$t\" ] || t=teamlead; exec env {unset}{}",
        words.join(" ")
    );
    format!("sh -c {}", shell_quote(&script))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::PermissionMode;

    fn host(forward: bool) -> HostConfig {
        HostConfig {
            name: "box".into(),
            destination: "me@box".into(),
            port: None,
            options: vec![],
            dir: Some("~/src app".into()),
            home: None,
            claude: None,
            forward_model: forward,
        }
    }

    #[test]
    fn a_remote_claude_gets_the_local_flags_and_switches_and_nothing_of_the_leads_environment() {
        let request = SpawnRequest {
            mode: PermissionMode::AcceptEdits,
            session_id: Some("0c2f4a51-9d0e-4f5b-8a7c-3e1d2b6f9a80".into()),
            claude: true,
            ..SpawnRequest::new("builder", "/nowhere")
        };
        let line = command_line(
            &host(false),
            "/opt/c/claude",
            "crew",
            &request,
            "~/src app",
            None,
            300_000,
        );
        assert_eq!(
            line,
            "sh -c 'cd \"$HOME\"/'\"'\"'src app'\"'\"' && t=\"$HOME/.local/bin/teamlead\"; \
             [ -x \"$t\" ] || t=teamlead; exec env CLAUDECODE=1 \
             CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 CLAUDE_CODE_ENABLE_TODO_TOOLS=1 \
             TEAMLEAD_LEAD_GRACE_MS=300000 \"$t\" guard --agent-id builder@crew -- /opt/c/claude \
             --agent-id builder@crew --agent-name builder --team-name crew --agent-type \
             general-purpose --permission-mode acceptEdits --session-id \
             0c2f4a51-9d0e-4f5b-8a7c-3e1d2b6f9a80'"
        );
        let forwarded = command_line(
            &host(true),
            "/opt/c/claude",
            "crew",
            &request,
            "~/src app",
            Some("http://127.0.0.1:4100/abc"),
            15_000,
        );
        assert!(
            forwarded.contains(
                "exec env -u ANTHROPIC_API_KEY CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 \
                 CLAUDE_CODE_ENABLE_TODO_TOOLS=1 ANTHROPIC_BASE_URL=http://127.0.0.1:4100/abc \
                 ANTHROPIC_AUTH_TOKEN=teamlead-forwarded-model-endpoint \
                 TEAMLEAD_LEAD_GRACE_MS=15000 \"$t\" guard --agent-id builder@crew -- /opt/c/claude"
            ),
            "{forwarded}"
        );
    }
}
