//! The command line that starts a pane teammate (PROTOCOL.md 6): `cd <cwd> && env <VARS>
//! <binary> <flags>`, for real `claude` teammates and for `teamlead teammate`, with POSIX quoting.

use crate::protocol::PermissionMode;

/// Variables passed through to a teammate when set in the lead's environment.
pub const PASS_THROUGH_VARS: [&str; 24] = [
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "TEAMLEAD_HOME",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "TEAMLEAD_MODEL",
    "TEAMLEAD_PROVIDER",
    "TEAMLEAD_CONFIG",
    "XDG_CONFIG_HOME",
    // How long a teamlead teammate waits for a lead to come back (agent::process).
    "TEAMLEAD_LEAD_GRACE_MS",
];

/// Which program runs the teammate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TeammateProgram {
    /// A real Claude Code process: `$TEAMLEAD_CLAUDE_BIN`, else `claude` on PATH.
    Claude { binary: String },
    /// teamlead's own runtime: `<teamlead> teammate` with the same flags.
    Teamlead { binary: String, engine: String },
}

/// Everything needed to start one pane teammate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeammateLaunch {
    pub program: TeammateProgram,
    pub cwd: String,
    pub name: String,
    pub team: String,
    pub color: Option<String>,
    pub parent_session_id: Option<String>,
    pub plan_mode_required: bool,
    pub agent_type: Option<String>,
    pub model: Option<String>,
    /// The lead's current mode; mapped to the teammate's permission flag.
    pub lead_mode: PermissionMode,
    /// The session id a `claude` teammate is started with (`--session-id`): its transcript is
    /// `<config dir>/projects/<cwd>/<id>.jsonl`, where the lead reads its mode, model and usage.
    pub session_id: Option<String>,
    /// For a `claude` teammate: the `teamlead guard` that runs in front of it (stops it when
    /// its lead is gone for good; names it by process). `None` runs `claude` alone.
    pub guard: Option<GuardLaunch>,
}

/// `<teamlead> guard --home <home> --agent-id <name>@<team> --` in front of a `claude`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardLaunch {
    /// This teamlead executable.
    pub binary: String,
    /// The lead's home root.
    pub home: String,
}

/// Single-quotes `value` unless it matches `^[A-Za-z0-9_./:=@+,-]+$` (`'` becomes `'"'"'`).
pub fn shell_quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=@+,-".contains(&b));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', "'\"'\"'"))
    }
}

impl TeammateLaunch {
    /// The permission flag: the lead's mode (plan → default), except that a plan-required
    /// teammate always gets `--permission-mode plan` and never the bypass flag.
    pub fn permission_args(&self) -> Vec<String> {
        if self.plan_mode_required {
            return vec!["--permission-mode".into(), "plan".into()];
        }
        match self.lead_mode.for_teammate() {
            PermissionMode::BypassPermissions => vec!["--dangerously-skip-permissions".into()],
            mode => vec!["--permission-mode".into(), mode.as_str().into()],
        }
    }

    /// The program's arguments (without the binary).
    pub fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let TeammateProgram::Teamlead { .. } = &self.program {
            args.push("teammate".to_string());
        }
        args.extend([
            "--agent-id".to_string(),
            format!("{}@{}", self.name, self.team),
            "--agent-name".to_string(),
            self.name.clone(),
            "--team-name".to_string(),
            self.team.clone(),
        ]);
        if let Some(c) = &self.color {
            args.extend(["--agent-color".to_string(), c.clone()]);
        }
        if let Some(p) = &self.parent_session_id {
            args.extend(["--parent-session-id".to_string(), p.clone()]);
        }
        if self.plan_mode_required {
            args.push("--plan-mode-required".to_string());
        }
        if let Some(t) = &self.agent_type {
            args.extend(["--agent-type".to_string(), t.clone()]);
        }
        if let Some(m) = &self.model {
            args.extend(["--model".to_string(), m.clone()]);
        }
        args.extend(self.permission_args());
        if let (TeammateProgram::Claude { .. }, Some(id)) = (&self.program, &self.session_id) {
            args.extend(["--session-id".to_string(), id.clone()]);
        }
        if let TeammateProgram::Teamlead { engine, .. } = &self.program {
            args.extend(["--engine".to_string(), engine.clone()]);
        }
        args
    }

    /// The environment assignments, in order: the two agent-team switches for `claude` and
    /// the switch that gives it the task tools on every model (Claude Code 2.1.268 and later
    /// offer `TaskCreate/TaskGet/TaskList/TaskUpdate` to 5.x models only with
    /// `CLAUDE_CODE_ENABLE_TODO_TOOLS=1`; older clients ignore it), then every pass-through
    /// variable that `lookup` finds set.
    pub fn env(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        let mut vars = Vec::new();
        if let TeammateProgram::Claude { .. } = &self.program {
            vars.push(("CLAUDECODE".to_string(), "1".to_string()));
            vars.push((
                "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS".to_string(),
                "1".to_string(),
            ));
            vars.push(("CLAUDE_CODE_ENABLE_TODO_TOOLS".to_string(), "1".to_string()));
        }
        for key in PASS_THROUGH_VARS {
            if let Some(v) = lookup(key) {
                vars.push((key.to_string(), v));
            }
        }
        vars
    }

    /// The binary.
    pub fn binary(&self) -> &str {
        match &self.program {
            TeammateProgram::Claude { binary } | TeammateProgram::Teamlead { binary, .. } => binary,
        }
    }

    /// `cd <cwd> && env <VARS> <binary> <flags>`, every value quoted; a guarded `claude` is
    /// `cd <cwd> && env <VARS> <teamlead> guard --home <home> --agent-id <id> -- <binary> <flags>`.
    pub fn command_line(&self, lookup: &dyn Fn(&str) -> Option<String>) -> String {
        let mut parts = vec![
            "cd".to_string(),
            shell_quote(&self.cwd),
            "&&".to_string(),
            "env".to_string(),
        ];
        for (k, v) in self.env(lookup) {
            parts.push(format!("{k}={}", shell_quote(&v)));
        }
        if let (TeammateProgram::Claude { .. }, Some(guard)) = (&self.program, &self.guard) {
            parts.extend([
                shell_quote(&guard.binary),
                "guard".to_string(),
                "--home".to_string(),
                shell_quote(&guard.home),
                "--agent-id".to_string(),
                shell_quote(&format!("{}@{}", self.name, self.team)),
                "--".to_string(),
            ]);
        }
        parts.push(shell_quote(self.binary()));
        parts.extend(self.args().iter().map(|a| shell_quote(a)));
        parts.join(" ")
    }
}

/// The `claude` binary: `$TEAMLEAD_CLAUDE_BIN`, else `claude` (found on PATH by the shell).
pub fn claude_binary(lookup: &dyn Fn(&str) -> Option<String>) -> String {
    lookup("TEAMLEAD_CLAUDE_BIN")
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "claude".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(mode: PermissionMode, plan: bool) -> TeammateLaunch {
        TeammateLaunch {
            program: TeammateProgram::Claude {
                binary: "/opt/claude code/bin/claude".into(),
            },
            cwd: "/home/user/my repo".into(),
            name: "builder".into(),
            team: "my-team".into(),
            color: Some("blue".into()),
            parent_session_id: Some("e23b487b-a9a6-4a80-973e-e7b065a092d3".into()),
            plan_mode_required: plan,
            agent_type: Some("general-purpose".into()),
            model: Some("claude-opus-4-6".into()),
            lead_mode: mode,
            session_id: Some("0c2f4a51-9d0e-4f5b-8a7c-3e1d2b6f9a80".into()),
            guard: None,
        }
    }

    #[test]
    fn a_guarded_claude_runs_behind_teamlead_guard() {
        let mut l = launch(PermissionMode::Default, false);
        l.guard = Some(GuardLaunch {
            binary: "/usr/bin/teamlead".into(),
            home: "/tmp/h x".into(),
        });
        let line = l.command_line(&|_| None);
        assert!(
            line.contains(
                "CLAUDE_CODE_ENABLE_TODO_TOOLS=1 /usr/bin/teamlead guard --home '/tmp/h x' \
                 --agent-id builder@my-team -- '/opt/claude code/bin/claude' --agent-id builder@my-team"
            ),
            "{line}"
        );
        // teamlead's own teammates watch their lead themselves: no guard.
        l.program = TeammateProgram::Teamlead {
            binary: "/usr/bin/teamlead".into(),
            engine: "shell".into(),
        };
        assert!(!l.command_line(&|_| None).contains(" guard "));
    }

    #[test]
    fn claude_command_line_matches_protocol() {
        let env = |k: &str| match k {
            "ANTHROPIC_API_KEY" => Some("sk-ant-x'y".to_string()),
            "ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:8080".to_string()),
            "PATH" => Some("/usr/bin".to_string()),
            _ => None,
        };
        assert_eq!(
            launch(PermissionMode::AcceptEdits, false).command_line(&env),
            "cd '/home/user/my repo' && env CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 \
             CLAUDE_CODE_ENABLE_TODO_TOOLS=1 ANTHROPIC_BASE_URL=http://127.0.0.1:8080 ANTHROPIC_API_KEY='sk-ant-x'\"'\"'y' \
             '/opt/claude code/bin/claude' --agent-id builder@my-team --agent-name builder \
             --team-name my-team --agent-color blue --parent-session-id \
             e23b487b-a9a6-4a80-973e-e7b065a092d3 --agent-type general-purpose \
             --model claude-opus-4-6 --permission-mode acceptEdits \
             --session-id 0c2f4a51-9d0e-4f5b-8a7c-3e1d2b6f9a80"
        );
    }

    #[test]
    fn permission_flag_rules() {
        let none = |_: &str| None;
        let bypass = launch(PermissionMode::BypassPermissions, false).command_line(&none);
        assert!(bypass.contains("--dangerously-skip-permissions --session-id"));
        let plan_lead = launch(PermissionMode::Plan, false).command_line(&none);
        assert!(plan_lead.contains("--permission-mode default --session-id"));
        let required = launch(PermissionMode::BypassPermissions, true).command_line(&none);
        assert!(required.contains("--plan-mode-required --agent-type general-purpose --model claude-opus-4-6 --permission-mode plan --session-id"));
        assert!(!required.contains("dangerously"));
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("a-b_c.d/e:f=g@h+i,j"), "a-b_c.d/e:f=g@h+i,j");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), "'it'\"'\"'s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn teamlead_teammate_uses_same_flags() {
        let mut l = launch(PermissionMode::Default, false);
        l.program = TeammateProgram::Teamlead {
            binary: "/usr/bin/teamlead".into(),
            engine: "shell".into(),
        };
        let line = l.command_line(&|k| (k == "TEAMLEAD_HOME").then(|| "/tmp/h".to_string()));
        assert_eq!(
            line,
            "cd '/home/user/my repo' && env TEAMLEAD_HOME=/tmp/h /usr/bin/teamlead teammate \
             --agent-id builder@my-team --agent-name builder --team-name my-team --agent-color blue \
             --parent-session-id e23b487b-a9a6-4a80-973e-e7b065a092d3 --agent-type general-purpose \
             --model claude-opus-4-6 --permission-mode default --engine shell"
        );
    }
}
