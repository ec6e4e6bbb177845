//! The handshake: each side's `hello` (protocol, version, capabilities, role, link, team, how
//! far it got) and the check that refuses a peer it cannot work with, saying why and what to
//! do.

use serde::{Deserialize, Serialize};

/// The link protocol this build speaks. A peer with another number is refused.
pub const PROTO: u32 = 1;

/// The capabilities this build has.
pub const CAPS: &[&str] = &[
    "inbox",
    "team",
    "tasks",
    "member",
    "transcript",
    "read",
    "start",
    "prices",
];

/// What the lead needs of a relay: the inboxes, the team file, the task list's mirror and
/// claims, the member fields back. A relay without one is refused (it would leave the host's
/// teammates without a task list, or their claims and activity unseen by the lead).
pub const LEAD_NEEDS: &[&str] = &["inbox", "team", "tasks", "member"];

/// Which end of the link a side is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The lead's host: owns the team file and the task list, makes the link id.
    Lead,
    /// A remote host: `teamlead relay --stdio`, started over ssh by the lead.
    Relay,
}

/// The `hello` frame's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub proto: u32,
    pub version: String,
    pub caps: Vec<String>,
    pub role: Role,
    /// The link id: a uuid the lead made for this team on this host, stable across reconnects.
    pub link: String,
    /// The team the link carries (the link's state lives in this team's directory).
    pub team: String,
    /// The highest `seq` this side has received and applied from the other (0: none).
    pub recv: u64,
    /// The highest `seq` of this side's own data the other has acknowledged (0: none; older
    /// peers leave it out). Data up to it has left this side's outbox for good, so a peer whose
    /// `recv` is lower lost its state, and continues from here instead of waiting for a gap
    /// to fill.
    #[serde(default)]
    pub acked: u64,
    #[serde(default)]
    pub host: String,
    #[serde(default)]
    pub os: String,
    #[serde(default)]
    pub arch: String,
}

/// What this side says of itself and needs of its peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub proto: u32,
    pub version: String,
    pub caps: Vec<String>,
    /// Capabilities the peer must have; a peer without one is refused.
    pub needs: Vec<String>,
    pub host: String,
    pub os: String,
    pub arch: String,
}

impl Identity {
    /// This build: [`PROTO`], `version`, [`CAPS`], needing `inbox` of the peer; the host's name,
    /// OS and architecture.
    pub fn this_build(version: &str) -> Identity {
        Identity {
            proto: PROTO,
            version: version.to_string(),
            caps: CAPS.iter().map(|c| c.to_string()).collect(),
            needs: vec!["inbox".to_string()],
            host: host_name(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
        }
    }

    /// This build as the lead's end of a link: needs [`LEAD_NEEDS`] of the relay.
    pub fn lead_build(version: &str) -> Identity {
        Identity {
            needs: LEAD_NEEDS.iter().map(|c| c.to_string()).collect(),
            ..Identity::this_build(version)
        }
    }

    /// The hello this side sends.
    pub fn hello(&self, role: Role, link: &str, team: &str, recv: u64, acked: u64) -> Hello {
        Hello {
            proto: self.proto,
            version: self.version.clone(),
            caps: self.caps.clone(),
            role,
            link: link.to_string(),
            team: team.to_string(),
            recv,
            acked,
            host: self.host.clone(),
            os: self.os.clone(),
            arch: self.arch.clone(),
        }
    }
}

/// Why a handshake is refused, and what a person does about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub why: String,
    pub fix: String,
}

/// The fix for a relay that does not match the lead: the same teamlead on both hosts.
fn install_fix(me: &Identity, peer: &Hello) -> String {
    let (lead_version, relay_host) = match peer.role {
        Role::Relay => (me.version.as_str(), peer.host.as_str()),
        Role::Lead => (peer.version.as_str(), me.host.as_str()),
    };
    let host = if relay_host.is_empty() {
        "HOST"
    } else {
        relay_host
    };
    format!(
        "install teamlead {lead_version} on {host}: `teamlead hosts install {host}` on the lead's \
         host copies it when both hosts have the same OS and architecture"
    )
}

/// Checks the peer's hello against this side: the other role, the same protocol, every
/// capability this side needs; for a relay answering a lead, nothing more (it takes the
/// lead's link and team). `expect` is the link and team this side expects (the lead's).
pub fn check(
    me: &Identity,
    my_role: Role,
    peer: &Hello,
    expect: Option<(&str, &str)>,
) -> Result<(), Refusal> {
    if peer.role == my_role {
        let who = match my_role {
            Role::Lead => "lead",
            Role::Relay => "relay",
        };
        return Err(Refusal {
            why: format!("both ends of the link are a {who}"),
            fix: "the lead starts `teamlead relay --stdio` on the remote host".to_string(),
        });
    }
    if peer.proto != me.proto {
        let (mine, theirs) = (me.proto, peer.proto);
        return Err(Refusal {
            why: format!(
                "teamlead {} on {} speaks link protocol {theirs}; teamlead {} here speaks {mine}",
                peer.version,
                if peer.host.is_empty() {
                    "the other host"
                } else {
                    &peer.host
                },
                me.version
            ),
            fix: install_fix(me, peer),
        });
    }
    let missing: Vec<&str> = me
        .needs
        .iter()
        .map(String::as_str)
        .filter(|need| !peer.caps.iter().any(|c| c == need))
        .collect();
    if !missing.is_empty() {
        return Err(Refusal {
            why: format!(
                "teamlead {} on {} lacks {}: {}",
                peer.version,
                if peer.host.is_empty() {
                    "the other host"
                } else {
                    &peer.host
                },
                if missing.len() == 1 {
                    "a capability this link needs"
                } else {
                    "capabilities this link needs"
                },
                missing.join(", ")
            ),
            fix: install_fix(me, peer),
        });
    }
    if let Some((link, team)) = expect
        && (peer.link != link || peer.team != team)
    {
        return Err(Refusal {
            why: format!(
                "the other side answered for link {} of team {}, not link {link} of team {team}",
                peer.link, peer.team
            ),
            fix: "reconnect; if it persists, the remote host runs another lead's relay".to_string(),
        });
    }
    Ok(())
}

/// This host's name (`/proc/sys/kernel/hostname`, `$HOSTNAME`), or empty.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}
