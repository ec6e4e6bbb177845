//! The file tools: Read (numbered lines, a window by `offset`/`limit`), Write (creates parent
//! directories) and Edit (exact string replacement, unique unless `replace_all`). Relative
//! paths are taken from the teammate's working directory; the gate decides first (reads inside
//! the working directories pass, edits follow the mode).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Permit, TurnState, parse, permit, spec};
use crate::agent::gate::ToolUse;
use crate::agent::gate::rules::normalize;
use crate::agent::llm::agent_loop::{Call, ToolOutput};
use crate::agent::llm::conversation::ToolSpec;
use crate::agent::runtime::teammate::Teammate;

const DEFAULT_LINES: usize = 2000;
const LINE_CHARS: usize = 2000;

pub fn specs() -> Vec<ToolSpec> {
    vec![
        spec(
            "Read",
            "Reads a text file and returns its lines numbered from 1 (`cat -n` style). Reads \
             at most 2000 lines; use offset and limit for longer files.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The file, absolute or relative to your working directory"},
                    "offset": {"type": "integer", "description": "The first line to read (1-based)"},
                    "limit": {"type": "integer", "description": "How many lines to read"}
                },
                "required": ["file_path"]
            }),
        ),
        spec(
            "Write",
            "Creates a file or replaces its whole content (parent directories are created). \
             Prefer Edit to change part of an existing file.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The file, absolute or relative to your working directory"},
                    "content": {"type": "string", "description": "The complete new content"}
                },
                "required": ["file_path", "content"]
            }),
        ),
        spec(
            "Edit",
            "Replaces exact text in a file. old_string must appear exactly once (include \
             enough surrounding lines to make it unique) unless replace_all is true.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The file, absolute or relative to your working directory"},
                    "old_string": {"type": "string", "description": "The exact text to replace"},
                    "new_string": {"type": "string", "description": "The text to put instead"},
                    "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)"}
                },
                "required": ["file_path", "old_string", "new_string"]
            }),
        ),
    ]
}

/// `path` from the working directory, without `.` and `..`.
pub(super) fn resolve(cwd: &Path, path: &str) -> PathBuf {
    normalize(&cwd.join(path))
}

#[derive(Debug, Deserialize)]
struct ReadInput {
    file_path: String,
    #[serde(default)]
    offset: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

#[derive(Debug, Deserialize)]
struct WriteInput {
    file_path: String,
    content: String,
}

#[derive(Debug, Deserialize)]
struct EditInput {
    file_path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

/// The permission for a file tool; the updated input when the lead edited it.
async fn allowed(
    tm: &mut Teammate,
    tool: ToolUse,
    call: &Call,
    state: &TurnState,
    cancel: &CancellationToken,
) -> Result<Option<serde_json::Value>, ToolOutput> {
    match permit(tm, &tool, call, state, cancel).await {
        Permit::Go { updated_input } => Ok(updated_input.filter(|v| v.is_object())),
        Permit::Refused(out) => Err(out),
        Permit::Interrupted => Err(ToolOutput::interrupted()),
    }
}

/// Numbered lines `offset..offset+limit` of `text`.
pub(super) fn numbered(text: &str, offset: usize, limit: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = offset.max(1);
    if start > lines.len() {
        return format!(
            "(the file has {} line(s); nothing from line {start})",
            lines.len()
        );
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate().skip(start - 1).take(limit) {
        let line = if line.chars().count() > LINE_CHARS {
            let cut: String = line.chars().take(LINE_CHARS).collect();
            format!("{cut}… [line cut]")
        } else {
            line.to_string()
        };
        out.push_str(&format!("{:>6}\t{line}\n", i + 1));
    }
    let end = (start - 1 + limit).min(lines.len());
    if end < lines.len() {
        out.push_str(&format!(
            "… ({} more line(s); read on with offset {})\n",
            lines.len() - end,
            end + 1
        ));
    }
    out
}

pub(super) async fn read(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: ReadInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    let path = resolve(&tm.config.cwd, &input.file_path);
    if let Err(out) = allowed(
        tm,
        ToolUse::Read { path: path.clone() },
        call,
        state,
        cancel,
    )
    .await
    {
        return out;
    }
    match tokio::fs::metadata(&path).await {
        Ok(m) if m.is_dir() => {
            return ToolOutput::error(format!(
                "{} is a directory: use Glob or Bash `ls` to list it",
                path.display()
            ));
        }
        Ok(_) => {}
        Err(e) => return ToolOutput::error(format!("Cannot read {}: {e}", path.display())),
    }
    let bytes = match read_workspace_file(&path).await {
        Ok(b) => b,
        Err(why) => return ToolOutput::error(why),
    };
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return ToolOutput::error(format!("{} is a binary file", path.display()));
    }
    let text = String::from_utf8_lossy(&bytes);
    if text.is_empty() {
        return ToolOutput::ok(format!("({} is empty)", path.display()));
    }
    ToolOutput::ok(numbered(
        &text,
        input.offset.unwrap_or(1),
        input.limit.unwrap_or(DEFAULT_LINES).max(1),
    ))
}

pub(super) async fn write(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: WriteInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    let path = resolve(&tm.config.cwd, &input.file_path);
    let updated = match allowed(
        tm,
        ToolUse::Write { path: path.clone() },
        call,
        state,
        cancel,
    )
    .await
    {
        Ok(u) => u,
        Err(out) => return out,
    };
    let content = updated
        .as_ref()
        .and_then(|v| v.get("content"))
        .and_then(|c| c.as_str())
        .map(str::to_string)
        .unwrap_or(input.content);
    let existed = tokio::fs::metadata(&path).await.is_ok();
    if let Some(parent) = path.parent()
        && let Err(e) = tokio::fs::create_dir_all(parent).await
    {
        return ToolOutput::error(format!("Cannot create {}: {e}", parent.display()));
    }
    match tokio::fs::write(&path, content.as_bytes()).await {
        Ok(()) => ToolOutput::ok(format!(
            "{} {} ({} bytes)",
            if existed { "Replaced" } else { "Created" },
            path.display(),
            content.len()
        )),
        Err(e) => ToolOutput::error(format!("Cannot write {}: {e}", path.display())),
    }
}

/// `text` with `old` replaced by `new`: once (it must be unique) or everywhere.
pub(super) fn replace(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
) -> Result<(String, usize), String> {
    if old.is_empty() {
        return Err("old_string is empty: use Write to create a file".to_string());
    }
    if old == new {
        return Err("old_string and new_string are the same: nothing to change".to_string());
    }
    let count = text.matches(old).count();
    match (count, all) {
        (0, _) => Err(
            "old_string was not found in the file (it must match exactly, including whitespace)"
                .to_string(),
        ),
        (1, _) | (_, true) => Ok((text.replace(old, new), count)),
        (n, false) => Err(format!(
            "old_string appears {n} times: include more surrounding text to make it unique, or set replace_all"
        )),
    }
}

pub(super) async fn edit(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: EditInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    let path = resolve(&tm.config.cwd, &input.file_path);
    let updated = match allowed(
        tm,
        ToolUse::Edit { path: path.clone() },
        call,
        state,
        cancel,
    )
    .await
    {
        Ok(u) => u,
        Err(out) => return out,
    };
    let field = |k: &str, default: &str| {
        updated
            .as_ref()
            .and_then(|v| v.get(k))
            .and_then(|c| c.as_str())
            .unwrap_or(default)
            .to_string()
    };
    let (old, new) = (
        field("old_string", &input.old_string),
        field("new_string", &input.new_string),
    );
    let text = match read_workspace_file(&path).await.and_then(|b| {
        String::from_utf8(b).map_err(|_| format!("{} is not UTF-8 text", path.display()))
    }) {
        Ok(t) => t,
        Err(why) => return ToolOutput::error(why),
    };
    let (changed, count) = match replace(&text, &old, &new, input.replace_all) {
        Ok(r) => r,
        Err(why) => return ToolOutput::error(format!("{}: {why}", path.display())),
    };
    match tokio::fs::write(&path, changed.as_bytes()).await {
        Ok(()) => ToolOutput::ok(format!(
            "Edited {}: replaced {count} occurrence(s)",
            path.display()
        )),
        Err(e) => ToolOutput::error(format!("Cannot write {}: {e}", path.display())),
    }
}

/// The most a Read or Edit takes of one file.
pub const MAX_TOOL_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Reads a file of the workspace for a tool: follows a symbolic link (workspaces have them),
/// but never blocks on a FIFO or device and never reads more than [`MAX_TOOL_FILE_BYTES`]; off
/// the async runtime's threads.
pub async fn read_workspace_file(path: &Path) -> Result<Vec<u8>, String> {
    let owned = path.to_path_buf();
    let read = tokio::task::spawn_blocking(move || {
        crate::store::safe_file::read_regular_following(&owned, MAX_TOOL_FILE_BYTES)
    })
    .await;
    match read {
        Ok(Ok(Some(bytes))) => Ok(bytes),
        Ok(Ok(None)) => Err(format!("Cannot read {}: no such file", path.display())),
        Ok(Err(e)) => Err(format!("Cannot read {e}")),
        Err(e) => Err(format!("Cannot read {}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_windows() {
        let text = "a\nb\nc\n";
        assert_eq!(numbered(text, 1, 10), "     1\ta\n     2\tb\n     3\tc\n");
        assert_eq!(
            numbered(text, 2, 1),
            "     2\tb\n… (1 more line(s); read on with offset 3)\n"
        );
        assert!(numbered(text, 9, 1).contains("3 line(s)"));
    }

    #[test]
    fn replace_must_be_unique_unless_all() {
        assert_eq!(replace("x y x", "y", "z", false).unwrap().0, "x z x");
        assert!(
            replace("x y x", "x", "z", false)
                .unwrap_err()
                .contains("2 times")
        );
        assert_eq!(
            replace("x y x", "x", "z", true).unwrap(),
            ("z y z".into(), 2)
        );
        assert!(replace("x", "q", "z", false).is_err());
        assert!(replace("x", "x", "x", false).is_err());
    }
}
