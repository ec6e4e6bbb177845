//! [`HostError`]: why a host could not be reached or used, read from what `ssh` said on
//! stderr (its messages are stable across OpenSSH releases) or from the deadline, each with
//! the one thing a person can do about it.

use std::time::Duration;

/// Why a call to a host failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// The host's key is not in known_hosts (BatchMode never asks).
    #[error(
        "host key unknown for {destination}: run `ssh {destination}` once yourself (or add its key with `ssh-keyscan`) and check the fingerprint"
    )]
    HostKeyUnknown { destination: String },
    /// The host's key differs from the one in known_hosts.
    #[error(
        "host key of {destination} has CHANGED since it was recorded: check with the host's owner, then fix known_hosts (`ssh-keygen -R`)"
    )]
    HostKeyChanged { destination: String },
    /// No key (or agent) the host accepts.
    #[error(
        "auth failed for {destination}: the host refused every key (check `ssh {destination}` works without a password, with your agent or IdentityFile)"
    )]
    AuthFailed { destination: String },
    /// The host's name does not resolve.
    #[error("host unreachable: {destination}: the name does not resolve ({detail})")]
    UnknownName { destination: String, detail: String },
    /// Nothing answered (refused, timed out, no route, connection closed).
    #[error("host unreachable: {destination}: {detail}")]
    Unreachable { destination: String, detail: String },
    /// The call outlasted its deadline (and was stopped).
    #[error("host unreachable: {destination}: no answer within {}s", .after.as_secs())]
    Deadline {
        destination: String,
        after: Duration,
    },
    /// A program the call needs is not on the host.
    #[error("`{program}` not found on {destination}")]
    NotFound {
        destination: String,
        program: String,
    },
    /// `ssh` itself could not be run here.
    #[error("cannot run ssh: {detail} (install OpenSSH's client)")]
    NoSsh { detail: String },
    /// Teamlead's own connection directory is unusable.
    #[error("the ssh control directory {path}: {detail}")]
    ControlDir { path: String, detail: String },
    /// Something else `ssh` reported (its own words).
    #[error("ssh to {destination} failed: {detail}")]
    Other { destination: String, detail: String },
}

impl HostError {
    /// The cause `ssh`'s stderr names for a failed connection to `destination`; `None` when
    /// it names none of them (the remote command's own failure).
    pub fn from_stderr(destination: &str, stderr: &str) -> Option<HostError> {
        let d = || destination.to_string();
        let line = |needle: &str| {
            stderr
                .lines()
                .find(|l| l.contains(needle))
                .map(|l| l.trim().to_string())
        };
        if stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED") {
            return Some(HostError::HostKeyChanged { destination: d() });
        }
        if stderr.contains("Host key verification failed")
            || stderr.contains("No ED25519 host key is known")
            || stderr.contains("host key is known for")
        {
            return Some(HostError::HostKeyUnknown { destination: d() });
        }
        if stderr.contains("Permission denied (") || stderr.contains("Too many authentication") {
            return Some(HostError::AuthFailed { destination: d() });
        }
        if let Some(l) = line("Could not resolve hostname") {
            return Some(HostError::UnknownName {
                destination: d(),
                detail: l,
            });
        }
        for needle in [
            "Connection refused",
            "Connection timed out",
            "Operation timed out",
            "No route to host",
            "Network is unreachable",
            "Connection reset",
            "Connection closed by",
            "Timeout, server",
            "Broken pipe",
            "kex_exchange_identification",
        ] {
            if let Some(l) = line(needle) {
                return Some(HostError::Unreachable {
                    destination: d(),
                    detail: short(&l),
                });
            }
        }
        None
    }

    /// True when the host could not be reached at all (as opposed to reached and refusing).
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            HostError::Unreachable { .. }
                | HostError::Deadline { .. }
                | HostError::UnknownName { .. }
        )
    }
}

/// `ssh: connect to host h port 22: Connection refused` → `connect to host h port 22:
/// Connection refused`.
fn short(line: &str) -> String {
    line.trim_start_matches("ssh: ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_messages_become_causes() {
        let cause = |s: &str| HostError::from_stderr("me@box", s);
        assert!(matches!(
            cause("Host key verification failed.\r\n"),
            Some(HostError::HostKeyUnknown { .. })
        ));
        assert!(matches!(
            cause("me@box: Permission denied (publickey).\n"),
            Some(HostError::AuthFailed { .. })
        ));
        assert!(matches!(
            cause("ssh: connect to host box port 22: Connection refused\n"),
            Some(HostError::Unreachable { .. })
        ));
        assert!(matches!(
            cause("ssh: Could not resolve hostname box: Name or service not known\n"),
            Some(HostError::UnknownName { .. })
        ));
        assert!(matches!(
            cause("@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n"),
            Some(HostError::HostKeyChanged { .. })
        ));
        assert_eq!(cause("sh: 1: tmux: not found\n"), None);
        let shown = cause("ssh: connect to host box port 22: Connection refused")
            .unwrap()
            .to_string();
        assert_eq!(
            shown,
            "host unreachable: me@box: connect to host box port 22: Connection refused"
        );
    }
}
