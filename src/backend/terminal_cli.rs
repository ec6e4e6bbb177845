//! Running a terminal's own command-line tool for the pane backends that drive one (`zellij
//! action`, `kitty @`, `wezterm cli`): one call with optional standard input, its stdout on
//! success and one typed error otherwise; and the placeholder a new pane runs until the
//! teammate's command line is typed into it (these terminals cannot respawn a pane's program).

use std::io::Write;
use std::process::{Command, Stdio};

use super::BackendError;

/// What a new pane runs until [`command_input`] is sent to it: it reads one line with echo off
/// and runs it with `sh -c` in its place, so the pane closes (or shows its exit) with the
/// teammate.
pub const PLACEHOLDER: [&str; 3] = [
    "sh",
    "-c",
    "stty -echo 2>/dev/null; IFS= read -r line; stty echo 2>/dev/null; exec sh -c \"$line\"",
];

/// The text typed into a placeholder pane to start `command`.
pub fn command_input(command: &str) -> String {
    format!("{command}\n")
}

/// Runs `program args…` (with `input` on its standard input) and returns its stdout.
pub fn run(program: &str, args: &[&str], input: Option<&str>) -> Result<String, BackendError> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| BackendError::Spawn {
        program: program.to_string(),
        detail: e.to_string(),
    })?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| BackendError::Spawn {
        program: program.to_string(),
        detail: e.to_string(),
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).to_string())
    } else {
        Err(BackendError::Command {
            command: format!("{program} {}", args.join(" ")),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}
