//! Retiring a merged worktree (the screen's offer, `LeadCommand::RetireWorktree`) never takes
//! a teammate away for a worktree that stays (issue 33, item 1): with uncommitted work in it,
//! the worktree is kept, the teammate keeps running and stays in the team, and the note says
//! so; once nothing keeps it, the teammate is stopped, the worktree and branch go, and only
//! then does the teammate leave the team. The line printed after the merge says what really
//! happens to the worktree.

use std::path::Path;

use crate::lead::review::{git, lead_in, repo_in};
use crate::lead_common::Session;
use teamlead::lead::contract::{LeadCommand, TeammateStatus, TeammateView};

/// Whether `name` is a member of the session's team file.
fn in_team_file(s: &Session, name: &str) -> bool {
    let text = std::fs::read_to_string(s.team_dir().join("config.json")).unwrap_or_default();
    let config: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    config["members"]
        .as_array()
        .is_some_and(|ms| ms.iter().any(|m| m["name"] == name))
}

fn runs(m: &TeammateView) -> bool {
    !matches!(
        m.status,
        TeammateStatus::Stopped { .. } | TeammateStatus::Gone
    )
}

fn worktree(dir: &Path, name: &str) -> std::path::PathBuf {
    dir.join("repo-worktrees").join(format!("rt-{name}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retiring_keeps_the_teammate_when_its_worktree_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    let mut s = lead_in(&repo, "rt").await;
    s.submit("/spawn alice --worktree \"work\"").await;
    s.wait_note("Spawned alice").await;
    s.wait_team("alice running", |t| {
        t.iter().any(|m| m.name == "alice" && runs(m))
    })
    .await;
    let a = worktree(dir.path(), "alice");
    std::fs::write(a.join("feature.txt"), "done\n").unwrap();
    git(&a, &["add", "."]);
    git(&a, &["commit", "--quiet", "-m", "alice: feature"]);

    s.submit("/merge alice --squash").await;
    let merged = s.wait_note("Merged (squash-merge)").await;
    assert!(
        merged.contains(
            "alice still runs in its worktree, which stays for now: /quit removes it if nothing changes there."
        ),
        "{merged}"
    );
    assert!(!merged.contains("after it stops"), "{merged}");

    // Uncommitted work in it: kept, and alice with it.
    std::fs::write(a.join("notes.md"), "todo\n").unwrap();
    s.send(LeadCommand::RetireWorktree {
        name: "alice".into(),
    })
    .await;
    let kept = s.wait_note("Kept the worktree").await;
    assert!(
        kept.contains("it holds 1 uncommitted file(s). @alice keeps running; nothing was stopped."),
        "{kept}"
    );
    assert!(a.join("notes.md").exists(), "the work is kept");
    assert!(in_team_file(&s, "alice"), "alice stays in the team");
    let team = s
        .wait_team("the team", |t| t.iter().any(|m| m.name == "alice"))
        .await;
    let alice = team.iter().find(|m| m.name == "alice").unwrap();
    assert!(runs(alice), "alice still runs: {:?}", alice.status);

    // Nothing keeps it any more: alice is stopped, the worktree and branch go, then alice.
    std::fs::remove_file(a.join("notes.md")).unwrap();
    s.send(LeadCommand::RetireWorktree {
        name: "alice".into(),
    })
    .await;
    s.wait_note("Removed the worktree").await;
    s.wait_note("was stopped to retire its worktree").await;
    assert!(!a.exists(), "the worktree is removed");
    assert!(!git(&repo, &["branch"]).contains("teamlead/rt/alice"));
    crate::lead_common::eventually("alice out of the team file", || !in_team_file(&s, "alice"))
        .await;
    s.quit().await;
}
