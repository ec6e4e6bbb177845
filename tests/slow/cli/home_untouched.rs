//! Read-only commands and a lead's start run no terminal CLI that teamlead's own records do
//! not call for: with a fresh `HOME`, a `zellij` on `PATH` (a stand-in that records its call
//! and writes `$HOME/.cache/zellij` as the real one does) and a Zellij socket directory (a
//! person who uses Zellij), `teamlead clean --dry-run`, `teamlead inspect` and a lead started
//! and quit in a pseudo-terminal leave `HOME` byte for byte as it was, and never run
//! `zellij`.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Every path below `root` with its type, size, mode, mtime and content.
fn listing(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let content = if m.is_file() {
            format!("{:?}", std::fs::read(&path).unwrap_or_default())
        } else {
            String::new()
        };
        out.push(format!(
            "{rel} {:o} {} {}.{} {content}",
            m.mode(),
            m.size(),
            m.mtime(),
            m.mtime_nsec()
        ));
        if m.is_dir() {
            walk(root, &path, out);
        }
    }
}

/// The sandbox: a fresh HOME, a teamlead home and logs outside it, a stand-in `zellij`.
struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let root = tempfile::tempdir().unwrap();
        for d in [
            "HOME",
            "teamlead-home",
            "logs",
            "bin",
            "zellij-sockets",
            "cwd",
        ] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        let zellij = root.path().join("bin/zellij");
        std::fs::write(
            &zellij,
            format!(
                "#!/bin/sh\necho \"$*\" >> '{}'\nmkdir -p \"$HOME/.cache/zellij\"\necho called > \"$HOME/.cache/zellij/zellij-log\"\nexit 0\n",
                root.path().join("zellij-calls").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&zellij, std::fs::Permissions::from_mode(0o755)).unwrap();
        Sandbox { root }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.path().join(p)
    }

    fn path_var(&self) -> String {
        format!(
            "{}:{}",
            self.path("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    fn calls(&self) -> String {
        std::fs::read_to_string(self.path("zellij-calls")).unwrap_or_default()
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home").arg(self.path("teamlead-home")).args(args);
        for var in [
            "CLAUDE_CONFIG_DIR",
            "TEAMLEAD_HOME",
            "TMUX",
            "TMUX_PANE",
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "XDG_CACHE_HOME",
            "XDG_DATA_HOME",
            "ZELLIJ",
            "ZELLIJ_SESSION_NAME",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("HOME", self.path("HOME"))
            .env("PATH", self.path_var())
            .env("ZELLIJ_SOCKET_DIR", self.path("zellij-sockets"))
            .env("TEAMLEAD_LOG_DIR", self.path("logs"))
            .env(
                "TEAMLEAD_CONFIG",
                concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml"),
            )
            .current_dir(self.path("cwd"));
        cmd
    }
}

#[test]
fn read_only_commands_leave_home_as_it_was_and_run_no_zellij() {
    let sb = Sandbox::new();
    let before = listing(&sb.path("HOME"));
    for args in [
        &["clean", "--dry-run"][..],
        &["clean", "--orphans", "--dry-run"],
        &["inspect"],
    ] {
        let out = sb.cmd(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(sb.calls(), "", "zellij was run");
    assert_eq!(before, listing(&sb.path("HOME")), "HOME changed");
}

#[test]
fn a_lead_start_leaves_home_as_it_was_and_runs_no_zellij() {
    let sb = Sandbox::new();
    let before = listing(&sb.path("HOME"));
    let mut lead = crate::pty_harness::lead(sb.path("cwd"))
        .home(sb.path("teamlead-home"))
        .args(["--team", "quiet", "--backend", "in-process"])
        .env_remove([
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "XDG_CACHE_HOME",
            "XDG_DATA_HOME",
        ])
        .outside_multiplexers()
        .env("HOME", sb.path("HOME"))
        .env("PATH", sb.path_var())
        .env("ZELLIJ_SOCKET_DIR", sb.path("zellij-sockets"))
        .logs(sb.path("logs"))
        .spawn();
    assert!(
        lead.poll_text(Duration::from_secs(20), |s| s
            .contains("shift+tab to cycle")),
        "the lead did not start: {}",
        lead.contents()
    );
    // The orphan search at start runs before the controller takes its first command, so
    // it is done once `/quit` is handled.
    lead.send(b"/quit\r");
    assert!(
        lead.exit_within(Duration::from_secs(20)).is_some(),
        "the lead did not quit: {}",
        lead.contents()
    );
    assert_eq!(sb.calls(), "", "zellij was run");
    assert_eq!(before, listing(&sb.path("HOME")), "HOME changed");
}
