//! A lead leaves nothing behind and trips over nothing left behind: an in-process teammate's
//! command dies with a SIGKILLed lead (the real binary in a PTY); `/quit` removes clean teammate
//! worktrees with their branches and keeps (and names) those holding uncommitted or unmerged
//! work; `/spawn --worktree` after leftovers reuses or replaces what holds no work and picks a
//! fresh name otherwise; `/spawn --agent claude` without `claude` is one error and makes nothing.
//! Real git in temporary directories, temporary homes, real processes found in /proc.

use crate::cleanup_common;
use crate::lead_common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use cleanup_common::{
    WAIT, branches, git, kill_marked, processes_with, repo_in, wait_until, worktree_dir, worktrees,
};
use lead_common::Session;
use teamlead::lead::contract::LeadEvent;
use teamlead::lead::{Lead, LeadOptions};
use teamlead::store::{self, Home};

/// A lead session (the library, in-process teammates) working in `repo`.
async fn lead_in(repo: &Path, team: &str) -> Session {
    let home_dir = tempfile::tempdir().expect("temp home");
    let home = Home::new(home_dir.path());
    let opts = LeadOptions::new(home.clone(), repo)
        .with_team(team)
        .with_quit_timeout(Duration::from_secs(2));
    let (handle, events) = Lead::start(opts).expect("lead starts");
    let mut s = Session {
        home_dir,
        cwd: tempfile::tempdir().expect("unused cwd"),
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

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quit_removes_a_clean_worktree_and_its_branch() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    let mut s = lead_in(&repo, "wt").await;
    s.submit("/spawn alpha --worktree \"work\"").await;
    s.wait_note("Spawned alpha").await;
    let wt = worktree_dir(dir.path(), "wt", "alpha");
    let note = s.wait_note("alpha works in its own worktree").await;
    assert!(note.contains("(branch teamlead/wt/alpha)"), "{note}");
    assert!(wt.join("README").exists());
    let team = store::read_team(&s.home, &s.team).unwrap();
    let member = team.member("alpha").unwrap();
    assert_eq!(member.cwd, wt.to_string_lossy());
    assert_eq!(
        member.worktree_path.as_deref(),
        Some(&*wt.to_string_lossy())
    );
    assert_eq!(branches(&repo), names(&["main", "teamlead/wt/alpha"]));
    // Ignored files are not work.
    std::fs::write(repo.join(".gitignore"), "target/\n").unwrap();
    git(&repo, &["add", ".gitignore"]);
    git(&repo, &["commit", "--quiet", "-m", "ignore target"]);

    s.quit().await;
    s.wait_note("Removed 1 teammate worktree(s)").await;
    assert!(!wt.exists(), "the worktree is removed");
    assert_eq!(branches(&repo), names(&["main"]));
    assert_eq!(worktrees(&repo).len(), 1);
    assert!(!dir.path().join("repo-worktrees").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quit_keeps_worktrees_holding_work_and_a_respawn_picks_a_fresh_name() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    let mut s = lead_in(&repo, "wt").await;
    s.submit("/spawn alpha --worktree \"work\"").await;
    s.wait_note("Spawned alpha").await;
    s.submit("/spawn beta --worktree \"work\"").await;
    s.wait_note("Spawned beta").await;
    let (alpha, beta) = (
        worktree_dir(dir.path(), "wt", "alpha"),
        worktree_dir(dir.path(), "wt", "beta"),
    );
    // alpha: one new file and one changed file; beta: a commit only its branch has.
    std::fs::write(alpha.join("new.txt"), "new\n").unwrap();
    std::fs::write(alpha.join("README"), "changed\n").unwrap();
    std::fs::write(beta.join("feature.txt"), "done\n").unwrap();
    git(&beta, &["add", "feature.txt"]);
    git(&beta, &["commit", "--quiet", "-m", "feature"]);
    let beta_commit = git(&beta, &["rev-parse", "HEAD"]);

    s.quit().await;
    let kept_alpha = s.wait_note("of @alpha").await;
    assert_eq!(
        kept_alpha,
        format!(
            "Kept worktree {} (branch teamlead/wt/alpha) of @alpha: 2 uncommitted files.",
            alpha.display()
        )
    );
    let kept_beta = s.wait_note("of @beta").await;
    assert_eq!(
        kept_beta,
        format!(
            "Kept worktree {} (branch teamlead/wt/beta) of @beta: 1 commit not merged.",
            beta.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(alpha.join("README")).unwrap(),
        "changed\n"
    );
    assert!(alpha.join("new.txt").exists());
    assert_eq!(git(&repo, &["rev-parse", "teamlead/wt/beta"]), beta_commit);

    // The next session: the same names get fresh worktrees, the leftovers stay as they are.
    let mut s = lead_in(&repo, "wt").await;
    s.submit("/spawn alpha --worktree \"again\"").await;
    s.wait_note("Spawned alpha").await;
    let note = s.wait_note("works in").await;
    let alpha2 = worktree_dir(dir.path(), "wt", "alpha-2");
    assert_eq!(
        note,
        format!(
            "Not touching the leftover worktree {} (branch teamlead/wt/alpha), which holds 2 uncommitted files: alpha works in {} (branch teamlead/wt/alpha-2) instead.",
            alpha.display(),
            alpha2.display()
        )
    );
    s.submit("/spawn beta --worktree \"again\"").await;
    s.wait_note("Spawned beta").await;
    let note = s.wait_note("beta works in").await;
    assert!(note.contains("which holds 1 commit not merged"), "{note}");
    assert!(
        note.contains("(branch teamlead/wt/beta-2) instead"),
        "{note}"
    );
    let team = store::read_team(&s.home, &s.team).unwrap();
    assert_eq!(team.member("alpha").unwrap().cwd, alpha2.to_string_lossy());

    s.quit().await;
    s.wait_note("Removed 2 teammate worktree(s)").await;
    assert!(!alpha2.exists());
    assert!(alpha.join("new.txt").exists(), "the leftover is untouched");
    assert_eq!(
        branches(&repo),
        names(&["main", "teamlead/wt/alpha", "teamlead/wt/beta"])
    );
    assert_eq!(git(&repo, &["rev-parse", "teamlead/wt/beta"]), beta_commit);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_reuses_or_replaces_leftovers_that_hold_no_work() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_in(dir.path());
    // What a crashed session (or an older teamlead) left: alpha's branch without its worktree,
    // beta's clean worktree, gamma's branch with a commit nobody else has.
    let beta = worktree_dir(dir.path(), "wt", "beta");
    git(&repo, &["branch", "teamlead/wt/alpha"]);
    git(
        &repo,
        &[
            "worktree",
            "add",
            "--quiet",
            "-b",
            "teamlead/wt/beta",
            &beta.to_string_lossy(),
        ],
    );
    git(&repo, &["checkout", "--quiet", "-b", "teamlead/wt/gamma"]);
    std::fs::write(repo.join("gamma.txt"), "g\n").unwrap();
    git(&repo, &["add", "gamma.txt"]);
    git(&repo, &["commit", "--quiet", "-m", "gamma"]);
    git(&repo, &["checkout", "--quiet", "main"]);
    // main moves on: reused and replaced worktrees start from it.
    std::fs::write(repo.join("later.txt"), "l\n").unwrap();
    git(&repo, &["add", "later.txt"]);
    git(&repo, &["commit", "--quiet", "-m", "later"]);
    let head = git(&repo, &["rev-parse", "HEAD"]);

    let mut s = lead_in(&repo, "wt").await;
    s.submit("/spawn alpha --worktree \"a\"").await;
    s.wait_note("Spawned alpha").await;
    let note = s.wait_note("alpha works in").await;
    assert!(
        note.contains("on the leftover branch, which had nothing unmerged"),
        "{note}"
    );
    let alpha = worktree_dir(dir.path(), "wt", "alpha");
    assert_eq!(git(&alpha, &["rev-parse", "HEAD"]), head);

    s.submit("/spawn beta --worktree \"b\"").await;
    s.wait_note("Spawned beta").await;
    let note = s.wait_note("beta works in").await;
    assert!(
        note.contains("the clean one a previous session left, brought up to date"),
        "{note}"
    );
    assert_eq!(git(&beta, &["rev-parse", "HEAD"]), head);
    assert!(beta.join("later.txt").exists());

    s.submit("/spawn gamma --worktree \"g\"").await;
    s.wait_note("Spawned gamma").await;
    let note = s.wait_note("gamma works in").await;
    assert!(
        note.starts_with(
            "Not touching the leftover branch teamlead/wt/gamma, which holds 1 commit not merged: gamma works in"
        ),
        "{note}"
    );

    s.quit().await;
    s.wait_note("Removed 3 teammate worktree(s)").await;
    assert_eq!(worktrees(&repo).len(), 1);
    assert_eq!(branches(&repo), names(&["main", "teamlead/wt/gamma"]));
}

/// Symbolic links to `programs` (found on this PATH) in `bin`: a PATH with nothing else.
fn path_with_only(bin: &Path, programs: &[&str]) -> String {
    for program in programs {
        let found: PathBuf = crate::programs::required(program);
        std::os::unix::fs::symlink(found, bin.join(program)).unwrap();
    }
    bin.to_string_lossy().into_owned()
}

/// Is the lead's private tmux server (`-L teamlead-<pid>`) running?
fn private_server_runs(lead_pid: u32) -> bool {
    std::process::Command::new("tmux")
        .args(["-L", &format!("teamlead-{lead_pid}"), "list-panes", "-a"])
        .env_remove("TMUX")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn members(home: &Path, team: &str) -> Vec<String> {
    let text = std::fs::read_to_string(home.join("teams").join(team).join("config.json"))
        .expect("config.json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn spawn_with_no_claude_is_one_error_and_makes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let path = path_with_only(bin.path(), &["tmux", "sh"]);
    let nothing = bin.path().join("no-such-dir").join("claude");
    let cases = [
        (
            vec![("PATH", path.clone())],
            "Cannot spawn x: claude not found on PATH; install Claude Code or set TEAMLEAD_CLAUDE_BIN".to_string(),
        ),
        (
            vec![
                ("PATH", path.clone()),
                ("TEAMLEAD_CLAUDE_BIN", nothing.to_string_lossy().into_owned()),
            ],
            format!(
                "Cannot spawn x: {} is not an executable file (it does not exist); fix TEAMLEAD_CLAUDE_BIN",
                nothing.display()
            ),
        ),
    ];
    for (i, (env, error)) in cases.into_iter().enumerate() {
        let team = format!("noclaude-{i}");
        let mut lead = crate::pty_harness::lead(work.path())
            .home(home.path())
            .args(["--team", &team, "--backend", "tmux"])
            .envs(env)
            .size(160, 40)
            .start();
        lead.submit("/spawn x --agent claude \"hello\"");
        lead.wait_screen("the error", |s| s.contains(&error));
        // One line, and nothing after it claims a spawn.
        lead.submit("/team");
        lead.wait_screen("the team listing", |s| s.contains("no teammates yet"));
        let screen = lead.screen();
        assert_eq!(screen.matches("Cannot spawn").count(), 1, "{screen}");
        assert!(!screen.contains("Spawned"), "{screen}");
        assert_eq!(members(home.path(), &team), names(&["team-lead"]));
        assert!(!private_server_runs(lead.pid), "no pane, no tmux server");
        lead.submit("/quit");
        assert!(lead.wait_exit(), "the lead quits cleanly");
        assert!(!private_server_runs(lead.pid));
    }
}

/// Kills every process carrying the marker when the test ends, however it ends.
struct KillMarked(String);

impl Drop for KillMarked {
    fn drop(&mut self) {
        kill_marked(&self.0);
    }
}

#[test]
fn sigkill_of_an_in_process_lead_kills_its_teammates_commands() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let digits = uuid::Uuid::new_v4().as_u128() % 1_000_000_000;
    let marker = format!(".{digits:09}");
    let _cleanup = KillMarked(marker.clone());
    let team = format!("sigkill-{digits:09}");
    let mut lead = crate::pty_harness::lead(work.path())
        .home(home.path())
        .args(["--team", &team, "--backend", "in-process"])
        .size(160, 40)
        .start();
    lead.submit("/spawn alpha --mode bypassPermissions \"run the tasks\"");
    lead.wait_screen("alpha spawned", |s| s.contains("Spawned alpha"));
    // A command with a grandchild in the background and one in the foreground.
    let command = format!("sleep 1000{marker} & sh -c 'sleep 1001{marker}'; wait");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_teamlead"))
        .arg("--home")
        .arg(home.path())
        .args([
            "task",
            "add",
            "--team",
            &team,
            "sleepers",
            "--command",
            &command,
        ])
        .env_remove("TEAMLEAD_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sleeping = |p: &[(u32, String)]| {
        p.iter().any(|(_, c)| c == &format!("sleep 1000{marker}"))
            && p.iter().any(|(_, c)| c == &format!("sleep 1001{marker}"))
    };
    wait_until(
        "both sleeps running",
        WAIT,
        || sleeping(&processes_with(&marker)),
        || format!("{:?}\n{}", processes_with(&marker), lead.screen()),
    );

    lead.sigkill();
    let took = wait_until(
        "no process of alpha's command",
        Duration::from_secs(3),
        || processes_with(&marker).is_empty(),
        || format!("still running: {:?}", processes_with(&marker)),
    );
    assert!(took < Duration::from_secs(3));
}

/// Git in the lead server's working directory: a repository with one commit.
fn repo_here(dir: &Path) {
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    git(dir, &["config", "user.name", "t"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    std::fs::write(dir.join("README"), "hello\n").expect("write README");
    git(dir, &["add", "README"]);
    git(dir, &["commit", "--quiet", "-m", "first"]);
}

/// The members of a lead server's team.
fn server_members(ws: &crate::server_common::Ws) -> Vec<String> {
    members(&ws.home(), &ws.team)
}

#[test]
fn a_lead_server_resumed_after_sigkill_retires_the_worktrees_of_teammates_gone_before() {
    use crate::server_common::{self, Ws};
    let ws = Ws::new("crashwt");
    let repo = ws.work();
    repo_here(&repo);
    let mut first = ws.serve(&[]);
    for name in ["tester", "keeper"] {
        let out = ws.ctl_ok(&[&format!("/spawn {name} --worktree \"stand by\"")]);
        assert!(out.contains(&format!("Spawned {name}")), "{out}");
    }
    // `<repo>-worktrees/<team>-<name>`, the repository being the server's `work` directory.
    let worktrees_dir = ws.root.path().join("work-worktrees");
    let (tester, keeper) = (
        worktrees_dir.join("crashwt-tester"),
        worktrees_dir.join("crashwt-keeper"),
    );
    assert!(tester.join("README").exists() && keeper.join("README").exists());
    // keeper leaves work behind; both leave the team before the crash.
    std::fs::write(keeper.join("notes.txt"), "half done\n").expect("write");
    for name in ["tester", "keeper"] {
        ws.ctl_ok(&[&format!("/shutdown {name}")]);
    }
    server_common::wait_until(
        "both teammates out of the team",
        || server_members(&ws) == names(&["team-lead"]),
        || format!("{:?}", server_members(&ws)),
    );

    // The server dies without a word, and a new one takes the team over.
    first.child.kill().expect("SIGKILL the lead server");
    let _ = first.child.wait();
    let mut second = ws.serve(&[]);
    server_common::wait_until(
        "the new server to answer",
        || ws.ctl(&["status"]).status.success(),
        || String::from_utf8_lossy(&ws.ctl(&["status"]).stderr).into_owned(),
    );
    let out = ws.ctl_ok(&["/quit"]);
    assert!(second.wait_exit().success());
    // The clean one goes with its branch; the one holding work stays, and the lead says so.
    assert!(
        !tester.exists(),
        "tester's clean worktree is removed\n{out}"
    );
    let left = branches(&repo);
    assert!(
        !left.contains(&"teamlead/crashwt/tester".to_string()),
        "{left:?}\n{out}"
    );
    assert!(keeper.join("notes.txt").exists());
    assert!(left.contains(&"teamlead/crashwt/keeper".to_string()));
    assert!(
        out.contains(&format!(
            "Kept worktree {} (branch teamlead/crashwt/keeper) of @keeper: 1 uncommitted file.",
            keeper.display()
        )),
        "{out}"
    );
    assert!(out.contains("Removed 1 teammate worktree(s)"), "{out}");
}
