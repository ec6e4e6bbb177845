//! The search tools: Glob (file names matching a glob pattern) and Grep (lines matching a
//! regular expression), both walking a directory the way ripgrep does (`.gitignore` and hidden
//! files skipped, `.git` never entered), off the async workers, with bounded output. Both are
//! reads for the gate.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::files::resolve;
use super::{Permit, TurnState, parse, permit, spec};
use crate::agent::gate::ToolUse;
use crate::agent::llm::agent_loop::{Call, ToolOutput};
use crate::agent::llm::conversation::ToolSpec;
use crate::agent::runtime::teammate::Teammate;

const MAX_FILES: usize = 500;
const MAX_LINES: usize = 500;
/// Files larger than this are not searched.
const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;

pub fn specs() -> Vec<ToolSpec> {
    vec![
        spec(
            "Glob",
            "Finds files whose path matches a glob pattern (`**/*.rs`, `src/**/test_*.py`; `*` \
             also crosses directories). Skips what .gitignore ignores. Returns paths, sorted.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The glob pattern, relative to path"},
                    "path": {"type": "string", "description": "The directory to search (default: your working directory)"}
                },
                "required": ["pattern"]
            }),
        ),
        spec(
            "Grep",
            "Searches file contents with a regular expression (Rust regex syntax). Skips what \
             .gitignore ignores and binary files.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The regular expression"},
                    "path": {"type": "string", "description": "A file or directory to search (default: your working directory)"},
                    "glob": {"type": "string", "description": "Only files whose path matches this glob (`*.rs`)"},
                    "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"], "description": "files_with_matches (default): paths; content: matching lines with line numbers; count: matches per file"},
                    "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)"},
                    "head_limit": {"type": "integer", "description": "At most this many output lines"}
                },
                "required": ["pattern"]
            }),
        ),
    ]
}

#[derive(Debug, Deserialize)]
struct GlobInput {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

#[derive(Debug, Deserialize)]
struct GrepInput {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    output_mode: Option<String>,
    #[serde(default)]
    case_insensitive: bool,
    #[serde(default)]
    head_limit: Option<usize>,
}

fn matcher(pattern: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern.trim_start_matches("./"))
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("bad glob pattern `{pattern}`: {e}"))
}

/// The files under `root` (or `root` itself when it is a file), sorted.
fn walk(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files
}

/// How a path is shown: relative to the working directory when inside it.
fn shown(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The file names under `root` matching `pattern`.
pub(super) fn glob_files(root: &Path, cwd: &Path, pattern: &str) -> Result<String, String> {
    let m = matcher(pattern)?;
    let mut found = Vec::new();
    let mut more = 0usize;
    for file in walk(root) {
        let relative = file.strip_prefix(root).unwrap_or(&file);
        if m.is_match(relative) {
            if found.len() < MAX_FILES {
                found.push(shown(&file, cwd));
            } else {
                more += 1;
            }
        }
    }
    if found.is_empty() {
        return Ok(format!("No files match `{pattern}` in {}", root.display()));
    }
    let mut text = found.join("\n");
    if more > 0 {
        text.push_str(&format!("\n… and {more} more (narrow the pattern)"));
    }
    Ok(text)
}

/// What Grep prints.
fn grep_files(root: &Path, cwd: &Path, input: &GrepInput) -> Result<String, String> {
    let regex = regex::RegexBuilder::new(&input.pattern)
        .case_insensitive(input.case_insensitive)
        .build()
        .map_err(|e| format!("bad regular expression: {e}"))?;
    let filter = input.glob.as_deref().map(matcher).transpose()?;
    let mode = input.output_mode.as_deref().unwrap_or("files_with_matches");
    if !matches!(mode, "files_with_matches" | "content" | "count") {
        return Err(format!(
            "unknown output_mode `{mode}`: use files_with_matches, content or count"
        ));
    }
    let limit = input.head_limit.unwrap_or(MAX_LINES).clamp(1, MAX_LINES);
    let mut out: Vec<String> = Vec::new();
    let mut truncated = false;
    for file in walk(root) {
        if let Some(f) = &filter {
            let relative = file.strip_prefix(root).unwrap_or(&file);
            if !f.is_match(relative) && !file.file_name().is_some_and(|n| f.is_match(n)) {
                continue;
            }
        }
        // Never blocks on a FIFO or device in the workspace; skips what is too big.
        let Ok(Some(bytes)) =
            crate::store::safe_file::read_regular_following(&file, MAX_FILE_BYTES)
        else {
            continue;
        };
        if bytes[..bytes.len().min(8192)].contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let name = shown(&file, cwd);
        let mut count = 0usize;
        for (i, line) in text.lines().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            count += 1;
            if mode == "content" {
                if out.len() >= limit {
                    truncated = true;
                    break;
                }
                out.push(format!(
                    "{name}:{}:{}",
                    i + 1,
                    crate::protocol::inbox::clip(line, 500)
                ));
            } else if mode == "files_with_matches" {
                break;
            }
        }
        if count > 0 && mode != "content" {
            if out.len() >= limit {
                truncated = true;
                break;
            }
            out.push(match mode {
                "count" => format!("{name}:{count}"),
                _ => name,
            });
        }
        if truncated {
            break;
        }
    }
    if out.is_empty() {
        return Ok(format!("No matches for `{}`", input.pattern));
    }
    let mut text = out.join("\n");
    if truncated {
        text.push_str(&format!(
            "\n… (stopped at {limit} lines; narrow the search)"
        ));
    }
    Ok(text)
}

async fn allowed(
    tm: &mut Teammate,
    tool: ToolUse,
    call: &Call,
    state: &TurnState,
    cancel: &CancellationToken,
) -> Result<(), ToolOutput> {
    match permit(tm, &tool, call, state, cancel).await {
        Permit::Go { .. } => Ok(()),
        Permit::Refused(out) => Err(out),
        Permit::Interrupted => Err(ToolOutput::interrupted()),
    }
}

async fn off_thread(f: impl FnOnce() -> Result<String, String> + Send + 'static) -> ToolOutput {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(text)) => ToolOutput::ok(text),
        Ok(Err(why)) => ToolOutput::error(why),
        Err(e) => ToolOutput::error(format!("the search did not finish: {e}")),
    }
}

pub(super) async fn glob(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: GlobInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    let cwd = tm.config.cwd.clone();
    let root = resolve(&cwd, input.path.as_deref().unwrap_or("."));
    let tool = ToolUse::Glob {
        pattern: input.pattern.clone(),
        path: root.clone(),
    };
    if let Err(out) = allowed(tm, tool, call, state, cancel).await {
        return out;
    }
    off_thread(move || glob_files(&root, &cwd, &input.pattern)).await
}

pub(super) async fn grep(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: GrepInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    let cwd = tm.config.cwd.clone();
    let root = resolve(&cwd, input.path.as_deref().unwrap_or("."));
    let tool = ToolUse::Grep {
        pattern: input.pattern.clone(),
        path: root.clone(),
    };
    if let Err(out) = allowed(tm, tool, call, state, cancel).await {
        return out;
    }
    off_thread(move || grep_files(&root, &cwd, &input)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("src/deep")).unwrap();
        std::fs::create_dir_all(p.join("target")).unwrap();
        std::fs::write(p.join("src/main.rs"), "fn main() {\n    run();\n}\n").unwrap();
        std::fs::write(
            p.join("src/deep/lib.rs"),
            "pub fn run() {}\n// TODO: more\n",
        )
        .unwrap();
        std::fs::write(p.join("README.md"), "run it\n").unwrap();
        std::fs::write(p.join("target/out.rs"), "fn run() {}\n").unwrap();
        std::fs::write(p.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(p.join("blob.bin"), b"run\0\x01").unwrap();
        dir
    }

    #[test]
    fn glob_respects_gitignore_and_crosses_directories() {
        let dir = tree();
        let p = dir.path();
        let found = glob_files(p, p, "*.rs").unwrap();
        assert_eq!(found, "src/deep/lib.rs\nsrc/main.rs");
        let found = glob_files(&p.join("src"), p, "deep/*.rs").unwrap();
        assert_eq!(found, "src/deep/lib.rs");
        assert!(glob_files(p, p, "*.py").unwrap().starts_with("No files"));
    }

    #[test]
    fn grep_modes() {
        let dir = tree();
        let p = dir.path();
        let input = |mode: &str, glob: Option<&str>| GrepInput {
            pattern: r"\brun\b".into(),
            path: None,
            glob: glob.map(str::to_string),
            output_mode: Some(mode.into()),
            case_insensitive: false,
            head_limit: None,
        };
        assert_eq!(
            grep_files(p, p, &input("files_with_matches", None)).unwrap(),
            "README.md\nsrc/deep/lib.rs\nsrc/main.rs"
        );
        assert_eq!(
            grep_files(p, p, &input("content", Some("*.rs"))).unwrap(),
            "src/deep/lib.rs:1:pub fn run() {}\nsrc/main.rs:2:    run();"
        );
        assert_eq!(
            grep_files(p, p, &input("count", Some("main.rs"))).unwrap(),
            "src/main.rs:1"
        );
        let mut bad = input("content", None);
        bad.pattern = "(".into();
        assert!(
            grep_files(p, p, &bad)
                .unwrap_err()
                .contains("regular expression")
        );
    }
}
