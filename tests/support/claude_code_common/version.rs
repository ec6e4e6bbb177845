//! The Claude Code versions under test, as `tests/interop/package.json` pins them (npm
//! aliases, installed by `.ci/run`): 2.1.45 runs as `node cli.js`, the newest release as its
//! native `bin/claude.exe`. A missing client fails the test unless
//! `TEAMLEAD_SKIP_CLAUDE_CODE=1` is set (for developers without the packages).

use std::path::{Path, PathBuf};

/// One client under test.
#[derive(Debug, Clone)]
pub struct Client {
    /// `2.1.45` or `latest` (the version it reports is in `version`).
    pub label: &'static str,
    /// The npm alias directory under `tests/interop/node_modules`.
    alias: &'static str,
    /// The entry point inside it.
    entry: &'static str,
    /// Run the entry with node (cli.js) rather than directly.
    node: bool,
}

/// The matrix: every client the suite runs against. Adding a version: add an alias to
/// `tests/interop/package.json`, run `npm install --prefix tests/interop`, add a line here and
/// a line to the `matrix!` of `tests/slow/claude_code.rs`.
pub const CLIENTS: [Client; 2] = [
    Client {
        label: "2.1.45",
        alias: "claude-code-2-1-45",
        entry: "cli.js",
        node: true,
    },
    Client {
        label: "latest",
        alias: "claude-code-latest",
        entry: "bin/claude.exe",
        node: false,
    },
];

impl Client {
    /// Is this client's package installed?
    pub fn installed(&self) -> bool {
        self.entry_path().exists()
    }

    fn entry_path(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/interop/node_modules")
            .join(self.alias)
            .join(self.entry)
    }

    /// The program teamlead should launch (`TEAMLEAD_CLAUDE_BIN`): the native binary, or a
    /// wrapper script in `dir` that runs `node cli.js "$@"`. With `TEAMLEAD_CC_KEEP` set, always
    /// a wrapper, which adds `--debug-file <dir>/claude-debug/<pid>.txt` (Claude Code writes
    /// no debug log without it).
    pub fn launcher(&self, dir: &Path) -> PathBuf {
        let entry = self.entry_path();
        let debug = std::env::var_os("TEAMLEAD_CC_KEEP").is_some();
        if !self.node && !debug {
            return entry;
        }
        let mut words = Vec::new();
        if self.node {
            words.push("node".to_string());
        }
        words.push(super::sh_quote(&entry.to_string_lossy()));
        let logs = super::sh_quote(&dir.join("claude-debug").to_string_lossy());
        let mut script = "#!/bin/sh\n".to_string();
        if debug {
            script.push_str(&format!("mkdir -p {logs}\n"));
            words.push(format!("--debug-file {logs}/\"$$\".txt"));
        }
        script.push_str(&format!("exec {} \"$@\"\n", words.join(" ")));
        let path = dir.join("claude");
        std::fs::write(&path, script).expect("write the claude wrapper");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("chmod the claude wrapper");
        path
    }
}

/// The client labelled `label`, or `None` when it is missing and the developer asked to skip
/// (`TEAMLEAD_SKIP_CLAUDE_CODE=1`); a missing client fails otherwise.
pub fn clients_or_skip(label: &str) -> Option<Client> {
    let client = CLIENTS
        .iter()
        .find(|c| c.label == label)
        .unwrap_or_else(|| panic!("no client {label} in the matrix"))
        .clone();
    if client.entry_path().exists() {
        return Some(client);
    }
    if std::env::var("TEAMLEAD_SKIP_CLAUDE_CODE").is_ok_and(|v| v == "1") {
        eprintln!(
            "skipping Claude Code {label}: {} is missing (TEAMLEAD_SKIP_CLAUDE_CODE=1)",
            client.entry_path().display()
        );
        return None;
    }
    panic!(
        "Claude Code {label} is not installed at {}: run `npm ci --prefix tests/interop` (or .ci/run); set TEAMLEAD_SKIP_CLAUDE_CODE=1 to skip",
        client.entry_path().display()
    );
}
