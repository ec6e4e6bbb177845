//! The team file `config.json` (PROTOCOL.md 2): members, lead, modes. Unknown keys survive at
//! the top level and in members; entries that are not members are kept aside and written back.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{BackendKind, Color, PermissionMode};

/// One member of the team.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub agent_id: String,
    pub name: String,
    #[serde(default = "general_purpose")]
    pub agent_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_mode_required: Option<bool>,
    #[serde(default)]
    pub joined_at: u64,
    #[serde(default)]
    pub tmux_pane_id: String,
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub subscriptions: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
    /// Kept as text so a mode of a newer version survives; see [`Member::permission_mode`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree_path: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn general_purpose() -> String {
    "general-purpose".to_string()
}

impl Member {
    /// A new teammate entry.
    pub fn new(name: &str, team: &str, cwd: &str) -> Member {
        Member {
            agent_id: format!("{name}@{team}"),
            name: name.to_string(),
            agent_type: general_purpose(),
            model: None,
            prompt: None,
            color: None,
            plan_mode_required: None,
            joined_at: super::time::now_ms(),
            tmux_pane_id: String::new(),
            cwd: cwd.to_string(),
            subscriptions: Vec::new(),
            backend_type: None,
            is_active: None,
            mode: None,
            worktree_path: None,
            extra: Map::new(),
        }
    }

    /// Is this the lead's entry?
    pub fn is_lead(&self) -> bool {
        self.name == super::LEAD_NAME || self.agent_type == "team-lead"
    }

    /// The member's mode (`default` when absent or unknown).
    pub fn permission_mode(&self) -> PermissionMode {
        self.mode
            .as_deref()
            .and_then(|m| m.parse().ok())
            .unwrap_or_default()
    }

    /// The palette color, if the member has one.
    pub fn palette_color(&self) -> Option<Color> {
        self.color.as_deref().and_then(Color::parse)
    }

    /// Where it runs: `backendType` parsed, else what `tmuxPaneId` implies; `None` when
    /// neither says (a member of a newer version's backend, or one without a pane yet).
    pub fn backend_kind(&self) -> Option<BackendKind> {
        match self.backend_type.as_deref() {
            Some(text) => BackendKind::parse(text),
            None => BackendKind::from_pane_id(&self.tmux_pane_id),
        }
    }

    /// `isActive` absent means running.
    pub fn active(&self) -> bool {
        self.is_active != Some(false)
    }

    /// The host a teammate of teamlead's runs on, from teamlead's own member key
    /// [`HOST_KEY`]; `None`: the lead's host (every member of a team no teamlead made).
    pub fn host(&self) -> Option<&str> {
        self.extra.get(HOST_KEY).and_then(|v| v.as_str())
    }
}

/// teamlead's member key naming the host a teammate runs on (its id stays `name@team`).
pub const HOST_KEY: &str = "teamleadHost";

/// `teamAllowedPaths` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowedPath {
    pub path: String,
    pub tool_name: String,
}

impl AllowedPath {
    /// The session allow-rule content: absolute `/<path>/**` (double slash), relative `<path>/**`.
    pub fn rule_content(&self) -> String {
        if self.path.starts_with('/') {
            format!("/{}/**", self.path)
        } else {
            format!("{}/**", self.path)
        }
    }
}

/// The team file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TeamFile {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub created_at: u64,
    #[serde(default)]
    pub lead_agent_id: String,
    #[serde(default)]
    pub lead_session_id: String,
    #[serde(default, deserialize_with = "members_lenient")]
    pub members: Vec<Member>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_pane_ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_allowed_paths: Option<Vec<AllowedPath>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead_process: Option<Value>,
    /// Entries of `members` that are not members (no string `agentId`/`name`): not shown,
    /// reported, and written back unchanged.
    #[serde(skip)]
    pub invalid_members: Vec<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Members parse leniently: valid ones here, the rest recovered by [`TeamFile::parse`].
fn members_lenient<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Member>, D::Error> {
    let values = Vec::<Value>::deserialize(d)?;
    Ok(values
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect())
}

impl TeamFile {
    /// A new team with its lead as the only member.
    pub fn new(name: &str, description: Option<&str>, cwd: &str) -> TeamFile {
        let now = super::time::now_ms();
        let mut lead = Member::new(super::LEAD_NAME, name, cwd);
        lead.agent_type = "team-lead".to_string();
        lead.tmux_pane_id = "leader".to_string();
        lead.joined_at = now;
        TeamFile {
            name: name.to_string(),
            description: description.map(str::to_string),
            created_at: now,
            lead_agent_id: format!("{}@{name}", super::LEAD_NAME),
            lead_session_id: uuid::Uuid::new_v4().to_string(),
            members: vec![lead],
            hidden_pane_ids: None,
            team_allowed_paths: None,
            lead_process: None,
            invalid_members: Vec::new(),
            extra: Map::new(),
        }
    }

    /// Parses the file's text, keeping entries that are not members aside.
    pub fn parse(text: &str) -> serde_json::Result<TeamFile> {
        let value: Value = serde_json::from_str(text)?;
        let invalid: Vec<Value> = value
            .get("members")
            .and_then(Value::as_array)
            .map(|ms| {
                ms.iter()
                    .filter(|m| serde_json::from_value::<Member>((*m).clone()).is_err())
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let mut team: TeamFile = serde_json::from_value(value)?;
        team.invalid_members = invalid;
        Ok(team)
    }

    /// The file's text: 2-space pretty JSON, invalid member entries written back at the end.
    pub fn to_text(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Some(ms) = value.get_mut("members").and_then(Value::as_array_mut) {
            ms.extend(self.invalid_members.iter().cloned());
        }
        let mut text = super::json::to_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    }

    /// A member by name.
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }

    /// A member by name, mutable.
    pub fn member_mut(&mut self, name: &str) -> Option<&mut Member> {
        self.members.iter_mut().find(|m| m.name == name)
    }

    /// Every member but the lead.
    pub fn teammates(&self) -> impl Iterator<Item = &Member> {
        self.members.iter().filter(|m| !m.is_lead())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_members_and_unknown_keys_survive() {
        let text = r#"{"name":"t","createdAt":1,"leadAgentId":"team-lead@t","leadSessionId":"x","future":{"a":1},
          "members":[{"agentId":"team-lead@t","name":"team-lead","agentType":"team-lead","joinedAt":1,"tmuxPaneId":"","cwd":"/","subscriptions":[],"shiny":true},
                     {"name":"no-id"}]}"#;
        let team = TeamFile::parse(text).unwrap();
        assert_eq!(team.members.len(), 1);
        assert_eq!(team.invalid_members.len(), 1);
        let again = TeamFile::parse(&team.to_text()).unwrap();
        assert_eq!(again, team);
        assert!(team.to_text().contains("\"shiny\": true"));
        assert!(team.to_text().contains("\"future\""));
    }

    #[test]
    fn allowed_path_rules() {
        let abs = AllowedPath {
            path: "/srv/x".into(),
            tool_name: "Edit".into(),
        };
        assert_eq!(abs.rule_content(), "//srv/x/**");
        let rel = AllowedPath {
            path: "src".into(),
            tool_name: "Edit".into(),
        };
        assert_eq!(rel.rule_content(), "src/**");
    }
}
