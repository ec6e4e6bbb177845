//! Worktrees on a host, reviewed and merged at the lead: a test host (a network namespace with
//! its own sshd and login user) has a clone of the lead's repository at its `dir`; `/spawn
//! --host --worktree` makes the teammate's worktree and branch there (over the host's ssh
//! master) and the teammate commits in it; `/review` at the lead shows that commit (the branch
//! fetched over the same ssh into `refs/teamlead/hosts/…`, never a user's branch); `/merge`
//! lands it in the lead's repository; `/quit` removes the merged worktree on the host and
//! keeps one whose work was never merged. A host whose `dir` is no repository is one line and
//! nothing made; a host that is down is one line and nothing changed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::hosts_common::crew::*;
use crate::hosts_common::{HostSetup, TestHost, TestLead, skip_unless_root};
use teamlead_test_support::git::git;

/// Does `branch` exist in the repository at `dir`?
fn has_branch(dir: &Path, branch: &str) -> bool {
    !git(dir, &["branch", "--list", branch]).is_empty()
}

/// What the lead said to a refused `ctl` (its stdout; ctl's own stderr says it was refused);
/// it must have failed.
fn ctl_refused(lead: &TestLead, args: &[&str]) -> String {
    let out = ctl(lead, args);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !out.status.success(),
        "ctl {args:?} was not refused: {said}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the lead refused the command"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// The member names of the lead's team file.
fn members(lead: &TestLead) -> Vec<String> {
    let path = lead.home.home().join("teams/crew/config.json");
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).unwrap_or_default()).unwrap_or_default();
    config["members"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|m| m["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The lead's repository: one commit on `main`.
fn lead_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Lead"]);
    git(dir, &["config", "user.email", "lead@example.org"]);
    std::fs::write(dir.join("README"), "the project\n").unwrap();
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-qm", "start"]);
}

/// A clone of `origin` at `dir`, owned by the host's user, with a committer of its own.
fn host_clone(origin: &Path, dir: &Path, host: &TestHost) {
    git(
        Path::new("/"),
        &[
            "clone",
            "-q",
            &origin.display().to_string(),
            &dir.display().to_string(),
        ],
    );
    git(dir, &["config", "user.name", "Host"]);
    git(dir, &["config", "user.email", "host@example.org"]);
    chown_tree(dir, host.uid);
}

#[test]
fn a_remote_teammates_worktree_is_reviewed_and_merged_at_the_lead() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    host.give_teamlead();
    let work = tempfile::tempdir().unwrap();
    lead_repo(work.path());
    let remote_repo: PathBuf = host.home().join("repo");
    host_clone(work.path(), &remote_repo, &host);
    let not_repo = host.home().join("plain");
    std::fs::create_dir(&not_repo).unwrap();
    std::os::unix::fs::chown(&not_repo, Some(host.uid), None).unwrap();
    for (name, dir) in [("box", &remote_repo), ("bare", &not_repo)] {
        lead.cmd()
            .args(["hosts", "add", name, &host.destination(), "--dir"])
            .arg(dir)
            .assert()
            .success();
    }
    let mut serve = Serve::start(&lead, work.path(), None);

    // A host whose dir is no repository: one line, and nothing made there or here.
    let said = ctl_refused(
        &lead,
        &["/spawn stray --host bare --worktree --mode bypassPermissions \"hi\""],
    );
    assert!(
        said.contains("is not inside a git repository: --worktree needs one"),
        "{said}"
    );
    assert!(said.contains("on bare"), "names the host: {said}");
    assert_eq!(said.trim().lines().count(), 1, "one line: {said}");
    assert!(!members(&lead).contains(&"stray".to_string()));
    assert!(!host.home().join("plain-worktrees").exists());

    // The worktree is made on the host, and the teammate commits in it.
    let started = Instant::now();
    let out = ctl_ok(
        &lead,
        &[
            "/spawn worker --host box --worktree --mode bypassPermissions \"```sh\necho 'from the host' > remote.txt && git add remote.txt && git commit -qm 'remote work' && echo committed-$((1+1)) in $(pwd)\n```\"",
        ],
    );
    eprintln!("spawn with a worktree on the host: {:?}", started.elapsed());
    assert!(out.contains("Spawned worker"), "{out}");
    let remote_wt = host.home().join("repo-worktrees/crew-worker");
    wait_for(
        "the teammate's commit reported",
        Duration::from_secs(60),
        || told(&lead, "committed-2") >= 1,
        || format!("{:?}", members(&lead)),
    );
    assert_eq!(
        told(&lead, &format!("committed-2 in {}", remote_wt.display())),
        1,
        "it works in its worktree on the host"
    );
    assert!(has_branch(&remote_repo, "teamlead/crew/worker"));
    assert_eq!(
        git(&remote_wt, &["log", "-1", "--format=%s"]),
        "remote work"
    );
    // A second one, whose work is never merged.
    ctl_ok(
        &lead,
        &[
            "/spawn keeper --host box --worktree --mode bypassPermissions \"```sh\necho keep > keep.txt && git add keep.txt && git commit -qm 'kept work' && echo kept-$((2+2))\n```\"",
        ],
    );
    wait_for(
        "the second teammate's commit reported",
        Duration::from_secs(60),
        || told(&lead, "kept-4") >= 1,
        String::new,
    );

    // /review fetches its branch over ssh: its commit and file, at the lead.
    let started = Instant::now();
    let review: serde_json::Value =
        serde_json::from_str(&ctl_ok(&lead, &["review", "worker", "--json"])).unwrap();
    eprintln!(
        "review of the remote branch (fetch included): {:?}",
        started.elapsed()
    );
    assert_eq!(review["ok"], true, "{review}");
    assert_eq!(review["branch"], "teamlead/crew/worker", "{review}");
    assert_eq!(
        review["files"],
        serde_json::json!([
            {"path": "remote.txt", "status": "A", "added": 1, "removed": 0, "binary": false},
        ]),
        "{review}"
    );
    assert_eq!(review["commits"][0]["subject"], "remote work", "{review}");
    let lead_head = git(work.path(), &["rev-parse", "HEAD"]);
    assert_eq!(review["base"].as_str().unwrap(), &lead_head[..7]);
    assert_eq!(
        git(
            work.path(),
            &["for-each-ref", "--format=%(refname)", "refs/teamlead/"]
        ),
        "refs/teamlead/hosts/box/teamlead/crew/worker",
        "fetched into teamlead's own ref"
    );
    assert_eq!(
        git(work.path(), &["branch", "--format=%(refname:short)"]),
        "main",
        "no branch of the user's made or touched"
    );

    // The merge queue fetches both remote branches: each one commit ahead, clean.
    let queue: serde_json::Value =
        serde_json::from_str(&ctl_ok(&lead, &["merges", "--json"])).unwrap();
    let rows: Vec<(String, u64, bool)> = queue["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["branch"].as_str().unwrap_or("").to_string(),
                b["ahead"].as_u64().unwrap_or(0),
                b["clean"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("teamlead/crew/worker".to_string(), 1, true),
            ("teamlead/crew/keeper".to_string(), 1, true),
        ],
        "{queue}"
    );

    // A host that is down: one line, nothing changed.
    host.set_link(false);
    let said = ctl_refused(&lead, &["merge", "keeper", "--squash"]);
    assert!(said.contains("could not reach box to fetch"), "{said}");
    // The link's own note may come meanwhile; the refusal is one line.
    let refusal = said
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("Host box is unreachable"))
        .count();
    assert_eq!(refusal, 1, "one line: {said}");
    assert_eq!(git(work.path(), &["rev-parse", "HEAD"]), lead_head);
    host.set_link(true);

    // /merge lands it in the lead's repository.
    let said = ctl_ok(&lead, &["merge", "worker", "--squash"]);
    assert!(said.contains("teamlead/crew/worker"), "{said}");
    assert_ne!(git(work.path(), &["rev-parse", "HEAD"]), lead_head);
    assert_eq!(
        git(work.path(), &["show", "HEAD:remote.txt"]),
        "from the host"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("remote.txt")).unwrap(),
        "from the host\n"
    );
    assert_eq!(git(work.path(), &["status", "--porcelain"]), "");

    // /quit retires the worktrees on the host: the merged one goes, the other stays.
    ctl_ok(&lead, &["/quit"]);
    wait_for(
        "the lead server exits",
        Duration::from_secs(60),
        || serve.0.try_wait().ok().flatten().is_some(),
        String::new,
    );
    assert!(!remote_wt.exists(), "the merged worktree is gone");
    assert!(!has_branch(&remote_repo, "teamlead/crew/worker"));
    let kept = host.home().join("repo-worktrees/crew-keeper");
    assert!(kept.join("keep.txt").is_file(), "unmerged work is kept");
    assert!(has_branch(&remote_repo, "teamlead/crew/keeper"));
}
