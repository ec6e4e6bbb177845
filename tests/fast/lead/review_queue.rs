//! The merge queue blames only real pairs: two branches conflict with each other only in a
//! file both changed themselves. A branch started after the lead's branch changed a file
//! carries that change; its conflict with an older branch that changed the same lines is the
//! older branch's conflict with the lead's branch, not a pair.

use crate::lead::review::{git, lead_in, repo_in};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairs_are_only_files_both_branches_changed() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    let mut s = lead_in(&repo, "mq").await;
    let wt = |n: &str| dir.path().join("repo-worktrees").join(format!("mq-{n}"));
    for name in ["bob", "carol"] {
        s.submit(&format!("/spawn {name} --worktree \"work\""))
            .await;
        s.wait_note(&format!("Spawned {name}")).await;
    }
    // bob and carol change line 2 each their way: a real pair.
    std::fs::write(
        wt("bob").join("shared.txt"),
        "one\ntwo bob\nthree\nfour\nfive\n",
    )
    .unwrap();
    git(&wt("bob"), &["commit", "--quiet", "-am", "bob"]);
    std::fs::write(
        wt("carol").join("shared.txt"),
        "one\ntwo carol\nthree\nfour\nfive\n",
    )
    .unwrap();
    git(&wt("carol"), &["commit", "--quiet", "-am", "carol"]);
    // main changes line 2 too; erin starts after that and never touches shared.txt.
    std::fs::write(
        repo.join("shared.txt"),
        "one\ntwo main\nthree\nfour\nfive\n",
    )
    .unwrap();
    git(&repo, &["commit", "--quiet", "-am", "main"]);
    s.submit("/spawn erin --worktree \"work\"").await;
    s.wait_note("Spawned erin").await;
    std::fs::write(wt("erin").join("erin.txt"), "erin\n").unwrap();
    git(&wt("erin"), &["add", "."]);
    git(&wt("erin"), &["commit", "--quiet", "-m", "erin"]);

    s.submit("/merges").await;
    let queue = s.wait_note("Merge queue").await;
    assert!(
        queue.contains("@carol teamlead/mq/carol: 1 ahead, 1 behind, conflicts in shared.txt"),
        "{queue}"
    );
    assert!(
        queue.contains("@erin teamlead/mq/erin: 1 ahead, 0 behind, clean"),
        "{queue}"
    );
    assert!(
        queue.contains("@bob and @carol conflict in shared.txt"),
        "{queue}"
    );
    assert!(
        !queue.contains("@erin and") && !queue.contains("and @erin"),
        "{queue}"
    );

    // A squashed branch shows as merged, not as commits still ahead.
    s.submit("/merge erin --squash").await;
    s.wait_note("Merged (squash-merge)").await;
    s.seen.clear();
    s.submit("/merges").await;
    let queue = s.wait_note("Merge queue").await;
    assert!(
        queue.contains("@erin teamlead/mq/erin: 1 ahead, 1 behind, already merged"),
        "{queue}"
    );
    s.quit().await;
}
