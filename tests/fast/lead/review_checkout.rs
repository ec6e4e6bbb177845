//! The review of a teammate without a worktree of its own: it works in the lead's checkout,
//! where git cannot tell its changes from anyone else's, so its review lists the files its
//! tool calls wrote (a teamlead `llm` teammate against the scripted model here; a `claude`
//! teammate in the conformance suite, `claude_code::review`), each with its change against the
//! lead's `HEAD`. A file the lead changed itself is not listed.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::lead::review::{diff_of, repo_in, review_of};
use crate::lead_common::{Session, eventually};
use crate::llm_common::{Reply, ScriptServer, anthropic};
use teamlead::agent::llm::{ApiKey, LlmConfig, Provider};
use teamlead::lead::contract::LeadEvent;
use teamlead::lead::review::{LineKind, WorkPlace};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::store::Home;

async fn lead_with_llm(repo: &Path, server: &ScriptServer) -> Session {
    let home_dir = tempfile::tempdir().unwrap();
    let home = Home::new(home_dir.path());
    let mut opts = LeadOptions::new(home.clone(), repo)
        .with_team("co")
        .with_quit_timeout(Duration::from_secs(2));
    let mut config = LlmConfig::new(Provider::Anthropic, &server.base_url(), "sonnet")
        .with_model("sonnet")
        .with_api_key(ApiKey::new("sk-test-review-0123456789"));
    config.retry.max_attempts = 1;
    opts.teammate_llm = Some(config);
    let (handle, events) = Lead::start(opts).expect("lead starts");
    let mut s = Session {
        home_dir,
        cwd: tempfile::tempdir().unwrap(),
        home,
        team: handle.team.clone(),
        handle,
        events,
        seen: Vec::new(),
    };
    s.wait_for("Started", |e| matches!(e, LeadEvent::Started { .. }))
        .await;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_without_a_worktree_lists_the_files_its_tool_calls_wrote() {
    let server = ScriptServer::start(vec![
        Reply::Sse(anthropic::message(
            Some("Writing them."),
            &[
                (
                    "toolu_1",
                    "Write",
                    json!({"file_path": "src/new.rs", "content": "pub fn f() {}\n"}),
                ),
                (
                    "toolu_2",
                    "Edit",
                    json!({"file_path": "README", "old_string": "hello", "new_string": "hello world"}),
                ),
            ],
        )),
        Reply::Sse(anthropic::text("Done.")),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    let mut s = lead_with_llm(&repo, &server).await;
    // The lead's own change: not the teammate's.
    std::fs::write(repo.join("shared.txt"), "changed by the lead\n").unwrap();
    s.submit("/spawn writer --mode acceptEdits \"write the files\"")
        .await;
    s.wait_note("Spawned writer").await;
    let (new, readme) = (repo.join("src/new.rs"), repo.join("README"));
    eventually("the teammate's writes", move || {
        new.exists() && std::fs::read_to_string(&readme).unwrap_or_default() == "hello world\n"
    })
    .await;

    let r = review_of(&mut s, "writer").await;
    assert_eq!(r.place, WorkPlace::Checkout);
    let files: Vec<(String, char, usize, usize)> = r
        .files
        .iter()
        .map(|f| (f.path.clone(), f.status, f.added, f.removed))
        .collect();
    assert_eq!(
        files,
        vec![
            ("src/new.rs".to_string(), '?', 1, 0),
            ("README".to_string(), 'M', 1, 1),
        ]
    );
    assert!(r.commits.is_empty());
    let note = s.wait_note("Review of @writer").await;
    assert!(
        note.contains("no worktree: the files its tool calls wrote in the lead's checkout"),
        "{note}"
    );
    let d = diff_of(&mut s, "writer", "README").await;
    let changed: Vec<(LineKind, &str)> = d.hunks[0]
        .lines
        .iter()
        .filter(|l| l.kind != LineKind::Context)
        .map(|l| (l.kind, l.text.as_str()))
        .collect();
    assert_eq!(
        changed,
        vec![
            (LineKind::Removed, "hello"),
            (LineKind::Added, "hello world")
        ]
    );

    // Committed since: still listed, as showing no change now.
    crate::lead::review::git(&repo, &["add", "README"]);
    crate::lead::review::git(&repo, &["commit", "--quiet", "-m", "readme"]);
    let r = review_of(&mut s, "writer").await;
    let readme = r.files.iter().find(|f| f.path == "README").unwrap();
    assert_eq!(readme.status, '=');
    s.quit().await;
}

/// A shell teammate without a worktree: its commands may write any file and nothing records
/// which, so its review says so plainly and shows every uncommitted change in the lead's
/// checkout (it was always empty: "No file written by its tool calls yet.").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_teammate_without_a_worktree_shows_the_checkouts_changes_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    let mut s = crate::lead::review::lead_in(&repo, "shco").await;
    s.submit("/spawn sh \"wait\"").await;
    s.wait_note("Spawned sh").await;
    // What its command wrote (`echo made > made.txt`, and an append to README).
    std::fs::write(repo.join("made.txt"), "made\n").unwrap();
    std::fs::write(repo.join("README"), "hello\nmore\n").unwrap();
    let r = review_of(&mut s, "sh").await;
    assert_eq!(r.place, WorkPlace::Shared);
    let files: Vec<(String, char)> = r.files.iter().map(|f| (f.path.clone(), f.status)).collect();
    assert_eq!(
        files,
        vec![("README".to_string(), 'M'), ("made.txt".to_string(), '?')]
    );
    let note = s.wait_note("Review of @sh").await;
    assert!(note.contains("cannot be known"), "{note}");
    assert!(
        note.contains("Every uncommitted change in the lead's checkout"),
        "{note}"
    );
    let d = diff_of(&mut s, "sh", "made.txt").await;
    assert_eq!(d.hunks[0].lines[0].text, "made");
    s.quit().await;
}
