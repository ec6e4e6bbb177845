//! `teamlead clean` on a dead team whose teammates had worktrees: `--dry-run` lists each
//! worktree with what it holds (branch, commits ahead, uncommitted files) and whether it would
//! go (it holds nothing) or stay; the real run says which went and which stayed, and keeps the
//! one holding work as it was. Real git in a temporary directory, the real binary.

use std::path::Path;

use crate::cli_common::TestHome;
use crate::lead::review::{git, repo_in};

/// A dead teamlead team `dead` (its liveness file there, nobody holding it) whose teammates
/// alpha (a commit and an uncommitted file) and beta (nothing) have worktrees of `repo`.
fn dead_team_with_worktrees(t: &TestHome, dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let repo = repo_in(dir);
    let wt = |name: &str| add_worktree(&repo, dir, name);
    for name in ["alpha", "beta"] {
        wt(name);
    }
    let alpha = wt("alpha");
    std::fs::write(alpha.join("feature.txt"), "done\n").unwrap();
    git(&alpha, &["add", "feature.txt"]);
    git(&alpha, &["commit", "--quiet", "-m", "feature"]);
    std::fs::write(alpha.join("notes.md"), "todo\n").unwrap();

    t.write_team("dead", &["alpha", "beta"]);
    let config = t.home().join("teams/dead/config.json");
    let mut file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    for m in file["members"].as_array_mut().unwrap() {
        let name = m["name"].as_str().unwrap().to_string();
        if name != "team-lead" {
            let path = wt(&name).to_string_lossy().into_owned();
            m["cwd"] = path.clone().into();
            m["worktreePath"] = path.into();
        }
    }
    std::fs::write(&config, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    let lock = t.home().join("teams/dead/.teamlead/lead.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "999999").unwrap();
    (wt("alpha"), wt("beta"))
}

/// `dir/repo-worktrees/dead-<name>`, a worktree of `repo` on branch `teamlead/dead/<name>`
/// (made the first time).
fn add_worktree(repo: &Path, dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join("repo-worktrees").join(format!("dead-{name}"));
    if !path.exists() {
        git(
            repo,
            &[
                "worktree",
                "add",
                "--quiet",
                "-b",
                &format!("teamlead/dead/{name}"),
                &path.to_string_lossy(),
            ],
        );
    }
    path
}

fn stdout(t: &TestHome, args: &[&str]) -> String {
    let out = t.cmd().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn clean_lists_a_dead_teams_worktrees_with_what_they_hold() {
    let t = TestHome::empty();
    let dir = tempfile::tempdir().unwrap();
    let (alpha, beta) = dead_team_with_worktrees(&t, dir.path());

    let dry = stdout(&t, &["clean", "--dry-run"]);
    assert!(dry.contains("would remove: team dead"), "{dry}");
    assert!(
        dry.contains(&format!(
            "  would keep: worktree {} of @alpha, branch teamlead/dead/alpha: 1 commit ahead of main, 1 uncommitted file",
            alpha.display()
        )),
        "{dry}"
    );
    assert!(
        dry.contains(&format!(
            "  would remove: worktree {} of @beta, branch teamlead/dead/beta: nothing uncommitted or unmerged",
            beta.display()
        )),
        "{dry}"
    );
    assert!(alpha.exists() && beta.exists(), "a dry run changes nothing");

    let done = stdout(&t, &["clean"]);
    assert!(done.contains("removed: team dead"), "{done}");
    assert!(
        done.contains(&format!("  kept: worktree {} of @alpha", alpha.display())),
        "{done}"
    );
    assert!(
        done.contains(&format!("  removed: worktree {} of @beta", beta.display())),
        "{done}"
    );
    assert!(alpha.join("notes.md").exists(), "the work is kept");
    assert!(!beta.exists());
}

/// A worktree the session record lists for a teammate no longer in `config.json` (killed,
/// its member entry gone, its worktree kept) is listed and removed with the dead team too.
#[test]
fn clean_also_goes_by_the_session_records_worktrees() {
    let t = TestHome::empty();
    let dir = tempfile::tempdir().unwrap();
    dead_team_with_worktrees(&t, dir.path());
    let repo = dir.path().join("repo");
    let gamma = add_worktree(&repo, dir.path(), "gamma");
    let record = serde_json::json!({"worktrees": [{
        "name": "gamma",
        "path": gamma.to_string_lossy(),
        "branch": "teamlead/dead/gamma",
        "repo": repo.to_string_lossy(),
    }]});
    std::fs::write(
        t.home().join("teams/dead/.teamlead/session.json"),
        record.to_string(),
    )
    .unwrap();

    let dry = stdout(&t, &["clean", "--dry-run"]);
    assert!(
        dry.contains(&format!(
            "  would remove: worktree {} of @gamma, branch teamlead/dead/gamma: nothing uncommitted or unmerged",
            gamma.display()
        )),
        "{dry}"
    );
    let done = stdout(&t, &["clean"]);
    assert!(
        done.contains(&format!(
            "  removed: worktree {} of @gamma",
            gamma.display()
        )),
        "{done}"
    );
    assert!(!gamma.exists(), "gamma's worktree is gone");
}
