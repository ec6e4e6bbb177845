//! Review and merge with the real binary: the teammate worktrees a `/quit` kept or removed
//! are listed on the terminal after the screen has closed (it is printed on the normal screen
//! once the alternate screen is gone), for a lead in the screen's own process and for a screen
//! on a lead server (the list reaches the screen before it exits); and `ctl TEAM review NAME
//! --json` and `ctl TEAM merges --json` give the review (files with counts, base, commits, the
//! branch's pull request from a stand-in `gh` on the server's `PATH`) and the merge queue as
//! structured data. And the offer to retire a merged worktree (issue 33, item 1): a command
//! typed right after `/merge bob --squash` (one that holds a `y`) retires nothing and stays
//! in the composer; the offer waits behind the banner, and answered on purpose it retires.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::cleanup_common::{git, repo_in};
use crate::server_common::{Server, Ws, wait_until};
use teamlead_test_support::keys::{Key, Keyboard, composer_rows};

/// A repository in `dir` (an existing directory) with one commit on `main`.
fn repo_at(dir: &Path) {
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    git(dir, &["config", "user.name", "t"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    std::fs::write(dir.join("README"), "hello\n").unwrap();
    git(dir, &["add", "README"]);
    git(dir, &["commit", "--quiet", "-m", "first"]);
}

/// The worktree `/spawn NAME --worktree` gives in team `team` of the repository `repo`.
fn worktree_of(repo: &Path, team: &str, name: &str) -> PathBuf {
    let repo_name = repo.file_name().unwrap().to_string_lossy().into_owned();
    repo.parent()
        .unwrap()
        .join(format!("{repo_name}-worktrees"))
        .join(format!("{team}-{name}"))
}

/// alpha: a commit and an uncommitted file; beta: nothing.
fn give_alpha_work(alpha: &Path) {
    std::fs::write(alpha.join("feature.txt"), "done\n").unwrap();
    git(alpha, &["add", "feature.txt"]);
    git(alpha, &["commit", "--quiet", "-m", "feature"]);
    std::fs::write(alpha.join("notes.md"), "todo\n").unwrap();
}

#[test]
fn the_quit_summary_stays_on_the_terminal_after_the_screen_closes() {
    let root = tempfile::tempdir().unwrap();
    let repo = repo_in(root.path());
    let home = root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut lead = crate::pty_harness::lead(&repo)
        .home(&home)
        .args(["--team", "rq", "--backend", "in-process"])
        .size(160, 40)
        .start();
    for name in ["alpha", "beta"] {
        lead.submit(&format!("/spawn {name} --worktree \"work\""));
        lead.wait_screen(&format!("{name} spawned"), |s| {
            s.contains(&format!("Spawned {name}"))
        });
    }
    let alpha = worktree_of(&repo, "rq", "alpha");
    give_alpha_work(&alpha);
    lead.submit("/quit");
    assert!(lead.wait_exit(), "the lead exits 0");
    // Everything it wrote, read.
    lead.wait_output_end(std::time::Duration::from_secs(10));
    let text = lead.contents();
    assert!(text.contains("Teammate worktrees of team `rq`:"), "{text}");
    assert!(
        text.contains(&format!(
            "  kept     @alpha  {}  branch teamlead/rq/alpha: 1 commit ahead of main, 1 uncommitted file",
            alpha.display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  removed  @beta   {}   branch teamlead/rq/beta: nothing uncommitted or unmerged",
            worktree_of(&repo, "rq", "beta").display()
        )),
        "{text}"
    );
    assert!(alpha.join("notes.md").exists(), "the work is kept");
}

#[test]
fn a_screen_on_a_lead_server_gets_the_quit_summary_before_it_exits() {
    let ws = Ws::new("rs");
    repo_at(&ws.work());
    let _server = ws.serve(&[]);
    let env = ws.env();
    let mut vars: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    vars.push(("TEAMLEAD_NO_SERVER", "false"));
    vars.push(("TEAMLEAD_NOTIFY", "off"));
    let mut screen = crate::pty_harness::lead(ws.work())
        .home(ws.home())
        .args(["--team", ws.team.as_str()])
        .envs(vars.iter().copied())
        .start();
    ws.ctl_ok(&["/spawn alpha --worktree \"work\""]);
    let alpha = worktree_of(&ws.work(), "rs", "alpha");
    give_alpha_work(&alpha);
    screen.submit("/quit");
    let success = screen.wait_exit();
    screen.wait_output_end(std::time::Duration::from_secs(10));
    assert!(
        success,
        "the screen exits 0 after /quit:\n{}",
        screen.contents()
    );
    // Everything it wrote, read.
    screen.wait_output_end(std::time::Duration::from_secs(10));
    let text = screen.contents();
    assert!(text.contains("Teammate worktrees of team `rs`:"), "{text}");
    assert!(text.contains("kept     @alpha"), "{text}");
    assert!(
        text.contains("1 commit ahead of main, 1 uncommitted file"),
        "{text}"
    );
    ws.reap();
}

/// A stand-in `gh` in `dir`: `pr view teamlead/rj/alpha` has an open pull request, any other
/// branch none.
fn fake_gh(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let gh = dir.join("gh");
    std::fs::write(
        &gh,
        "#!/bin/sh\n[ \"$1 $2\" = \"pr view\" ] || exit 2\ncase \"$3\" in\n  teamlead/rj/alpha) echo '{\"number\":7,\"state\":\"OPEN\",\"isDraft\":false,\"url\":\"https://github.com/o/r/pull/7\",\"title\":\"alpha\"}' ;;\n  *) echo 'no pull requests found' >&2; exit 1 ;;\nesac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn ctl_review_and_merges_as_json_with_the_branchs_pull_request() {
    let ws = Ws::new("rj");
    repo_at(&ws.work());
    git(
        &ws.work(),
        &["remote", "add", "origin", "https://github.com/o/r.git"],
    );
    let bin = ws.root.path().join("bin");
    fake_gh(&bin);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = ws.cmd(&["serve", "--team", "rj", "--backend", "in-process"]);
    cmd.env("PATH", path)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let _server = Server {
        child: cmd.spawn().expect("start teamlead serve"),
    };
    wait_until(
        "the server's socket",
        || !ws.sockets().is_empty(),
        String::new,
    );
    for name in ["alpha", "beta"] {
        ws.ctl_ok(&[&format!("/spawn {name} --worktree \"work\"")]);
    }
    let alpha = worktree_of(&ws.work(), "rj", "alpha");
    give_alpha_work(&alpha);
    std::fs::write(
        worktree_of(&ws.work(), "rj", "beta").join("README"),
        "beta\n",
    )
    .unwrap();

    let json: serde_json::Value =
        serde_json::from_str(&ws.ctl_ok(&["review", "alpha", "--json"])).unwrap();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["name"], "alpha");
    assert_eq!(json["place"], "worktree");
    assert_eq!(json["branch"], "teamlead/rj/alpha");
    assert_eq!(
        json["base"].as_str().unwrap(),
        &git(&ws.work(), &["rev-parse", "main"])[..7]
    );
    assert_eq!(
        json["files"],
        serde_json::json!([
            {"path": "feature.txt", "status": "A", "added": 1, "removed": 0, "binary": false},
            {"path": "notes.md", "status": "?", "added": 1, "removed": 0, "binary": false},
        ])
    );
    assert_eq!(json["commits"][0]["subject"], "feature");
    assert_eq!(json["uncommitted"], 1);
    assert_eq!(json["pr"]["number"], 7, "{json}");
    assert_eq!(json["pr"]["state"], "OPEN");
    // beta's branch has no pull request: none is shown.
    let beta: serde_json::Value =
        serde_json::from_str(&ws.ctl_ok(&["review", "beta", "--json"])).unwrap();
    assert_eq!(beta["pr"], serde_json::Value::Null, "{beta}");
    let text = ws.ctl_ok(&["review", "alpha"]);
    assert!(
        text.contains(
            "@alpha's branch teamlead/rj/alpha: PR #7 open https://github.com/o/r/pull/7"
        ),
        "{text}"
    );

    let queue: serde_json::Value = serde_json::from_str(&ws.ctl_ok(&["merges", "--json"])).unwrap();
    assert_eq!(queue["lead_branch"], "main", "{queue}");
    let branches = queue["branches"].as_array().unwrap();
    assert_eq!(branches.len(), 2, "{queue}");
    assert_eq!(
        (
            &branches[0]["name"],
            &branches[0]["ahead"],
            &branches[0]["behind"],
            &branches[0]["clean"],
            &branches[0]["uncommitted"],
        ),
        (
            &serde_json::json!("alpha"),
            &serde_json::json!(1),
            &serde_json::json!(0),
            &serde_json::json!(true),
            &serde_json::json!(1),
        )
    );
    assert_eq!(queue["pairs"], serde_json::json!([]));
    ws.reap();
}

#[test]
fn a_command_typed_after_a_merge_retires_nothing_and_the_offer_waits() {
    let root = tempfile::tempdir().unwrap();
    let repo = repo_in(root.path());
    let home = root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let lead = crate::pty_harness::lead(&repo)
        .home(&home)
        .args(["--team", "ry", "--backend", "in-process"])
        .size(120, 36)
        .start();
    lead.submit("/spawn bob --worktree \"work\"");
    lead.wait_screen("bob spawned", |s| s.contains("Spawned bob"));
    let bob = worktree_of(&repo, "ry", "bob");
    std::fs::write(bob.join("feature.txt"), "done\n").unwrap();
    git(&bob, &["add", "feature.txt"]);
    git(&bob, &["commit", "--quiet", "-m", "feature"]);

    lead.submit("/merge bob --squash");
    lead.wait_screen("the merge", |s| s.contains("Merged (squash-merge)"));
    // What the person types next, a moment after the merge (the report's command).
    let typed = "/merge carol --squash --dry-run";
    let started = std::time::Instant::now();
    lead.type_text(typed);
    lead.poll_screen("the command in the composer", |s| {
        composer_rows(s).is_some_and(|rows| rows.concat() == typed)
    });
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "typed within 2 s"
    );
    lead.wait_quiet();
    let screen = lead.screen();
    assert!(
        screen.contains("waiting: retire @bob's worktree? — ctrl+p to answer"),
        "{screen}"
    );
    assert!(!screen.contains("Removed the worktree"), "{screen}");
    assert!(bob.exists(), "bob's worktree is still there");
    lead.press(Key::Enter);
    lead.wait_screen("the dry run's answer", |s| s.contains("carol"));
    assert!(bob.exists(), "bob's worktree is still there");
    assert!(git(&repo, &["branch"]).contains("teamlead/ry/bob"));

    // On purpose: the box shows (typing stopped, or Ctrl+P), and `y` after its grace period
    // (the box has been on screen that long, so its grace has surely ended) retires.
    lead.press(Key::CtrlP);
    lead.wait_screen("the retire box", |s| s.contains("Retire its worktree"));
    let shown = std::time::Instant::now();
    lead.poll_screen("the box to have been seen for its grace period", |_| {
        shown.elapsed()
            > std::time::Duration::from_millis(teamlead::ui::modal::guard::GRACE_MS + 100)
    });
    lead.press(Key::Char('y'));
    lead.wait_screen("the worktree removed", |s| {
        s.contains("Removed the worktree")
    });
    assert!(!bob.exists(), "the worktree is removed");
}
