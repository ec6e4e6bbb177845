//! What is on a host, found by one read-only shell script run through the connection: its
//! system (`uname -sm`), the teamlead there (`~/.local/bin/teamlead`, else the one on its
//! PATH) and its version, tmux, the teammates' directory, the `claude` there
//! (`[hosts.NAME] claude`, else `~/.local/bin/claude`, else the one on its PATH) and its
//! version. Nothing is written on the host.
//! Also: copying this very binary to `~/.local/bin/teamlead` there (`hosts install`).

use std::time::Duration;

use super::{Connection, HostError};
use crate::backend::launch::shell_quote;

/// Where `hosts install` puts teamlead on a host (relative to its HOME).
pub const INSTALL_PATH: &str = ".local/bin/teamlead";

/// A shell command line (for the remote user's shell, whatever it is) that runs the host's
/// teamlead with `args`: `~/.local/bin/teamlead` (where `hosts install` puts it; a
/// non-interactive ssh session rarely has it on PATH), else `teamlead` on PATH.
pub fn remote_teamlead(args: &[&str]) -> String {
    remote_teamlead_in(None, None, args)
}

/// A path on the host for its shell: quoted, a leading `~/` (or `~` alone) being its HOME.
pub fn remote_path(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => format!("\"$HOME\"/{}", shell_quote(rest)),
        None if path == "~" => "\"$HOME\"".to_string(),
        None => shell_quote(path),
    }
}

/// [`remote_teamlead`] with the host's teamlead home (`--home`) and in the directory `dir`
/// (each may start with `~/`, the host's HOME).
pub fn remote_teamlead_in(home: Option<&str>, dir: Option<&str>, args: &[&str]) -> String {
    remote_teamlead_env(home, dir, &[], args)
}

/// [`remote_teamlead_in`] with `env` set for it (`exec env K=V … teamlead …`).
pub fn remote_teamlead_env(
    home: Option<&str>,
    dir: Option<&str>,
    env: &[(String, String)],
    args: &[&str],
) -> String {
    let mut words: Vec<String> = Vec::new();
    if let Some(home) = home {
        words.push("--home".to_string());
        words.push(remote_path(home));
    }
    words.extend(args.iter().map(|a| shell_quote(a)));
    let cd = dir.map_or(String::new(), |d| format!("cd {} && ", remote_path(d)));
    let env: String = if env.is_empty() {
        String::new()
    } else {
        let vars: Vec<String> = env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .collect();
        format!("env {} ", vars.join(" "))
    };
    let script = format!(
        "{cd}t=\"$HOME/{INSTALL_PATH}\"; [ -x \"$t\" ] || t=teamlead; exec {env}\"$t\" {}",
        words.join(" ")
    );
    format!("sh -c {}", shell_quote(&script))
}

/// Where `claude` is looked for on a host when `[hosts.NAME] claude` is not set (relative to
/// its HOME; then its PATH).
pub const CLAUDE_PATH: &str = ".local/bin/claude";

/// A shell fragment that sets `c` to the host's `claude` (empty when there is none): the
/// configured one alone when `configured`, else `~/.local/bin/claude`, else `claude` on PATH.
pub fn claude_lookup(configured: Option<&str>) -> String {
    match configured {
        Some(path) => format!("c={}; [ -x \"$c\" ] || c=; ", remote_path(path)),
        None => format!(
            "c=\"$HOME/{CLAUDE_PATH}\"; [ -x \"$c\" ] || c=$(command -v claude 2>/dev/null); "
        ),
    }
}

/// What a host has.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Probe {
    /// `uname -sm`, as the host says it (`Linux x86_64`).
    pub system: String,
    /// The teamlead found there (`None`: none).
    pub teamlead: Option<String>,
    /// Its `--version` line (`teamlead 0.1.0`), empty when it did not run.
    pub version: Option<String>,
    /// `tmux -V` (`None`: no tmux on its PATH).
    pub tmux: Option<String>,
    /// The remote user's HOME.
    pub home: String,
    /// The host's `dir`, when set: does it exist there?
    pub dir_exists: Option<bool>,
    /// The `claude` found there (`None`: none).
    pub claude: Option<String>,
    /// Its `--version` line (`2.1.45 (Claude Code)`), `None` when it did not run.
    pub claude_version: Option<String>,
}

impl Probe {
    /// The version number alone (`0.1.0`).
    pub fn version_number(&self) -> Option<&str> {
        self.version
            .as_deref()
            .and_then(|v| v.split_whitespace().nth(1))
    }

    /// Does the host's system run this very binary (same OS and architecture)?
    pub fn same_platform(&self) -> bool {
        platform_of(&self.system) == Some((std::env::consts::OS, std::env::consts::ARCH))
    }
}

/// `uname -sm`'s words as Rust's OS and architecture names.
pub fn platform_of(system: &str) -> Option<(&'static str, &'static str)> {
    let mut words = system.split_whitespace();
    let os = match words.next()? {
        "Linux" => "linux",
        "Darwin" => "macos",
        "FreeBSD" => "freebsd",
        "OpenBSD" => "openbsd",
        "NetBSD" => "netbsd",
        _ => return None,
    };
    let arch = match words.next()? {
        "x86_64" | "amd64" => "x86_64",
        "aarch64" | "arm64" => "aarch64",
        "riscv64" => "riscv64",
        _ => return None,
    };
    Some((os, arch))
}

/// The probe: `key value` lines, read-only.
fn script(dir: Option<&str>, claude: Option<&str>) -> String {
    let mut s = format!(
        "printf 'system %s\\n' \"$(uname -sm)\"; printf 'home %s\\n' \"$HOME\"; \
         t=\"$HOME/{INSTALL_PATH}\"; [ -x \"$t\" ] || t=$(command -v teamlead 2>/dev/null); \
         if [ -n \"$t\" ]; then printf 'teamlead %s\\n' \"$t\"; \
         printf 'version %s\\n' \"$(\"$t\" --version 2>/dev/null | head -n 1)\"; fi; \
         if command -v tmux >/dev/null 2>&1; then printf 'tmux %s\\n' \"$(tmux -V 2>/dev/null)\"; fi; "
    );
    s.push_str(&claude_lookup(claude));
    s.push_str(
        "if [ -n \"$c\" ]; then printf 'claude %s\\n' \"$c\"; \
         printf 'claude-version %s\\n' \"$(\"$c\" --version 2>/dev/null | head -n 1)\"; fi; ",
    );
    if let Some(dir) = dir {
        // A leading `~/` means the remote HOME.
        let path = match dir.strip_prefix("~/") {
            Some(rest) => format!("\"$HOME\"/{}", shell_quote(rest)),
            None => shell_quote(dir),
        };
        s.push_str(&format!(
            "if [ -d {path} ]; then echo 'dir yes'; else echo 'dir no'; fi; "
        ));
    }
    s.push_str("echo end");
    s
}

/// Runs the probe on the host.
pub fn probe(connection: &Connection) -> Result<Probe, HostError> {
    let script = script(
        connection.host.dir.as_deref(),
        connection.host.claude.as_deref(),
    );
    let remote = format!("sh -c {}", shell_quote(&script));
    let out = connection.call(&remote, None, connection.deadlines.call)?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.lines().any(|l| l == "end") {
        return Err(HostError::Other {
            destination: connection.host.destination.clone(),
            detail: format!(
                "the host's shell did not run the probe: {}",
                out.stderr.lines().last().unwrap_or("no message")
            ),
        });
    }
    let mut probe = Probe::default();
    for line in text.lines() {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let value = value.trim().to_string();
        match key {
            "system" => probe.system = value,
            "home" => probe.home = value,
            "teamlead" => probe.teamlead = Some(value),
            "version" => probe.version = Some(value).filter(|v| !v.is_empty()),
            "tmux" => probe.tmux = Some(value),
            "dir" => probe.dir_exists = Some(value == "yes"),
            "claude" => probe.claude = Some(value),
            "claude-version" => probe.claude_version = Some(value).filter(|v| !v.is_empty()),
            _ => {}
        }
    }
    Ok(probe)
}

/// Copies the file `binary` to `~/.local/bin/teamlead` on the host (written beside it, then
/// renamed: a teamlead running there keeps its old file), and returns what `--version` says
/// there.
pub fn install(connection: &Connection, binary: &std::path::Path) -> Result<String, HostError> {
    let file = std::fs::File::open(binary).map_err(|e| HostError::Other {
        destination: connection.host.destination.clone(),
        detail: format!("cannot read {}: {e}", binary.display()),
    })?;
    let script = format!(
        "set -e; d=\"$HOME/{dir}\"; mkdir -p \"$d\"; tmp=\"$d/.teamlead.$$\"; \
         trap 'rm -f \"$tmp\"' EXIT; cat > \"$tmp\"; chmod 755 \"$tmp\"; \
         mv -f \"$tmp\" \"$HOME/{INSTALL_PATH}\"; trap - EXIT; \"$HOME/{INSTALL_PATH}\" --version",
        dir = INSTALL_PATH.trim_end_matches("/teamlead"),
    );
    let remote = format!("sh -c {}", shell_quote(&script));
    // A large binary over a slow link: a minute plus the usual deadline.
    let deadline = connection.deadlines.call + Duration::from_secs(60);
    let out = connection.call(&remote, Some(file), deadline)?;
    if out.status != Some(0) {
        return Err(HostError::Other {
            destination: connection.host.destination.clone(),
            detail: format!(
                "copying teamlead failed: {}",
                out.stderr.lines().last().unwrap_or("no message")
            ),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systems_map_to_rust_names() {
        assert_eq!(platform_of("Linux x86_64"), Some(("linux", "x86_64")));
        assert_eq!(platform_of("Darwin arm64"), Some(("macos", "aarch64")));
        assert_eq!(platform_of("SunOS sparc"), None);
    }

    #[test]
    fn home_and_dir_starting_with_a_tilde_are_the_hosts_home() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let bin = home.path().join(".local/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(home.path().join("my src")).unwrap();
        let fake = bin.join("teamlead");
        std::fs::write(&fake, "#!/bin/sh\npwd\nprintf '%s\\n' \"$@\"\n").unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let line = remote_teamlead_in(Some("~/.team home"), Some("~/my src"), &["teammate", "a b"]);
        // What the remote user's shell does with the line.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&line)
            .env("HOME", home.path())
            .output()
            .unwrap();
        let root = home.path().display().to_string();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{root}/my src\n--home\n{root}/.team home\nteammate\na b\n")
        );
    }

    #[test]
    fn the_remote_teamlead_is_one_quoted_command() {
        assert_eq!(
            remote_teamlead(&["relay", "--stdio"]),
            "sh -c 't=\"$HOME/.local/bin/teamlead\"; [ -x \"$t\" ] || t=teamlead; exec \"$t\" relay --stdio'"
        );
    }
}
