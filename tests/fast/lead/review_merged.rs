//! A branch whose changes are already in the lead's branch counts as merged: after a squash
//! (by `/merge` or by hand), a second `/merge` says there is nothing left to merge (never a
//! raw git failure) and `--retire` removes the worktree and its branch, as the advice printed
//! after the first merge says.

use std::path::Path;

use crate::lead::review::{git, lead_in, repo_in};

async fn alpha_with_two_commits(dir: &Path) -> (std::path::PathBuf, crate::lead_common::Session) {
    let repo = repo_in(dir);
    let mut s = lead_in(&repo, "sq").await;
    s.submit("/spawn alpha --worktree \"work\"").await;
    s.wait_note("Spawned alpha").await;
    let a = dir.join("repo-worktrees").join("sq-alpha");
    std::fs::write(a.join("shared.txt"), "one\ntwo alpha\nthree\nfour\nfive\n").unwrap();
    git(&a, &["commit", "--quiet", "-am", "alpha: shared"]);
    std::fs::write(a.join("new.txt"), "new\n").unwrap();
    git(&a, &["add", "."]);
    git(&a, &["commit", "--quiet", "-m", "alpha: new"]);
    s.submit("/kill alpha").await;
    s.wait_note("alpha was killed").await;
    (repo, s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_squashed_branch_has_nothing_left_to_merge_and_retires_as_advised() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, mut s) = alpha_with_two_commits(dir.path()).await;
    let a = dir.path().join("repo-worktrees").join("sq-alpha");

    s.submit("/merge alpha --squash").await;
    let merged = s.wait_note("Merged (squash-merge)").await;
    assert!(
        merged.contains("/merge alpha --squash --retire"),
        "{merged}"
    );
    let after = git(&repo, &["rev-parse", "main"]);

    // Again, in every style: nothing left to merge, nothing changed, no raw git failure.
    for how in ["--squash", "--merge", "--rebase"] {
        s.submit(&format!("/merge alpha {how}")).await;
        let again = s.wait_note("Nothing left to merge").await;
        assert!(again.contains("already in main"), "{again}");
        assert!(!again.contains("failed"), "{again}");
        s.seen.clear();
        assert_eq!(git(&repo, &["rev-parse", "main"]), after, "{how}");
    }
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");

    // The advice works: the worktree and its branch go.
    s.submit("/merge alpha --squash --retire").await;
    let retired = s.wait_note("Nothing left to merge").await;
    assert!(retired.contains("Removed its worktree"), "{retired}");
    assert!(!a.exists(), "the worktree is removed");
    assert!(!git(&repo, &["branch"]).contains("teamlead/sq/alpha"));
    assert_eq!(git(&repo, &["rev-parse", "main"]), after);
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_squashed_by_hand_counts_as_merged_for_merge_and_retire() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, mut s) = alpha_with_two_commits(dir.path()).await;
    let a = dir.path().join("repo-worktrees").join("sq-alpha");
    // Squashed outside teamlead (as after a restart, or by a person).
    git(
        &repo,
        &["merge", "--squash", "--quiet", "teamlead/sq/alpha"],
    );
    git(&repo, &["commit", "--quiet", "-m", "squash by hand"]);
    let after = git(&repo, &["rev-parse", "main"]);

    s.submit("/merge alpha --squash --dry-run").await;
    let dry = s.wait_note("Nothing left to merge").await;
    assert!(dry.contains("2 commit(s)"), "{dry}");
    s.seen.clear();

    // The screen's retire (the Confirm box's answer) accepts it too.
    s.send(teamlead::lead::contract::LeadCommand::RetireWorktree {
        name: "alpha".into(),
    })
    .await;
    s.wait_note("Removed the worktree").await;
    assert!(!a.exists(), "the worktree is removed");
    assert!(!git(&repo, &["branch"]).contains("teamlead/sq/alpha"));
    assert_eq!(git(&repo, &["rev-parse", "main"]), after);
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_git_refuses_says_what_happened_not_gits_words() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, mut s) = alpha_with_two_commits(dir.path()).await;
    // A hook that refuses every commit is skipped (--no-verify); a refused ref update is not:
    // main's ref is locked by someone else.
    std::fs::write(repo.join(".git/refs/heads/main.lock"), "").unwrap();
    s.submit("/merge alpha --squash").await;
    let failed = s.wait_note("Could not squash-merge alpha").await;
    assert!(!failed.contains("git commit"), "{failed}");
    assert!(!failed.ends_with(": ."), "{failed}");
    assert!(failed.contains("Nothing was changed"), "{failed}");
    std::fs::remove_file(repo.join(".git/refs/heads/main.lock")).unwrap();
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    s.quit().await;
}
