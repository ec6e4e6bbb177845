//! Review and merge of teammates' work, in real git repositories in temporary directories
//! with the controller in-process: `/review` shows the files a teammate's worktree changed
//! since its base (committed and uncommitted) with counts and hunks; `/merges` names the pair
//! of branches that conflict before any merge; `/merge --squash --retire` of the clean one
//! leaves the lead's branch one commit ahead and the worktree gone; the conflicting one is
//! refused with its files named and nothing changed; a dirty lead checkout is refused.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::lead_common::Session;
use crate::ui_common::{key, rows, screen, state_with};
use crossterm::event::KeyCode;
use teamlead::lead::review::{FileDiff, LineKind, ReviewSummary};
use teamlead::lead::contract::{LeadCommand, LeadEvent};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::store::Home;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `<dir>/repo` on `main`: README and shared.txt (five lines).
fn repo_in(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "--quiet", "--initial-branch=main"]);
    git(&repo, &["config", "user.name", "t"]);
    git(&repo, &["config", "user.email", "t@example.com"]);
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    std::fs::write(repo.join("shared.txt"), "one\ntwo\nthree\nfour\nfive\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "--quiet", "-m", "first"]);
    repo
}

async fn lead_in(repo: &Path, team: &str) -> Session {
    let home_dir = tempfile::tempdir().unwrap();
    let home = Home::new(home_dir.path());
    let opts = LeadOptions::new(home.clone(), repo)
        .with_team(team)
        .with_quit_timeout(Duration::from_secs(2));
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

fn wt(dir: &Path, name: &str) -> PathBuf {
    dir.join("repo-worktrees").join(format!("rv-{name}"))
}

/// Two teammates whose branches conflict with each other (both change line 2 of shared.txt)
/// and each merge cleanly into main; alpha also adds a file and has uncommitted work.
async fn two_teammates(dir: &Path) -> (PathBuf, Session) {
    let repo = repo_in(dir);
    let mut s = lead_in(&repo, "rv").await;
    for name in ["alpha", "beta"] {
        s.submit(&format!("/spawn {name} --worktree \"work\""))
            .await;
        s.wait_note(&format!("Spawned {name}")).await;
    }
    let (a, b) = (wt(dir, "alpha"), wt(dir, "beta"));
    std::fs::write(a.join("shared.txt"), "one\ntwo alpha\nthree\nfour\nfive\n").unwrap();
    std::fs::create_dir_all(a.join("src")).unwrap();
    std::fs::write(
        a.join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    42\n}\n",
    )
    .unwrap();
    git(&a, &["add", "."]);
    git(&a, &["commit", "--quiet", "-m", "alpha: answer"]);
    std::fs::write(a.join("notes.md"), "todo\n").unwrap();
    std::fs::write(b.join("shared.txt"), "one\ntwo beta\nthree\nfour\nfive\n").unwrap();
    git(&b, &["commit", "--quiet", "-am", "beta: shared"]);
    (repo, s)
}

async fn review_of(s: &mut Session, name: &str) -> ReviewSummary {
    s.submit(&format!("/review {name}")).await;
    match s
        .wait_for(
            "a review",
            |e| matches!(e, LeadEvent::Review(r) if r.name == name),
        )
        .await
    {
        LeadEvent::Review(r) => r,
        _ => unreachable!(),
    }
}

async fn diff_of(s: &mut Session, name: &str, path: &str) -> FileDiff {
    s.send(LeadCommand::ReviewFile {
        name: name.to_string(),
        path: path.to_string(),
    })
    .await;
    match s
        .wait_for(
            "a file diff",
            |e| matches!(e, LeadEvent::ReviewFile { diff, .. } if diff.path == path),
        )
        .await
    {
        LeadEvent::ReviewFile { diff, .. } => diff,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_shows_committed_and_uncommitted_files_with_hunks() {
    let dir = tempfile::tempdir().unwrap();
    let (_repo, mut s) = two_teammates(dir.path()).await;
    let r = review_of(&mut s, "alpha").await;
    let files: Vec<(String, char, usize, usize)> = r
        .files
        .iter()
        .map(|f| (f.path.clone(), f.status, f.added, f.removed))
        .collect();
    assert_eq!(
        files,
        vec![
            ("notes.md".to_string(), '?', 1, 0),
            ("shared.txt".to_string(), 'M', 1, 1),
            ("src/lib.rs".to_string(), 'A', 3, 0),
        ]
    );
    assert_eq!(r.branch, "teamlead/rv/alpha");
    assert_eq!(r.commits.len(), 1);
    assert_eq!(r.commits[0].subject, "alpha: answer");
    assert_eq!(r.uncommitted, 1);
    let note = s.wait_note("Review of @alpha").await;
    assert!(note.contains("M shared.txt +1 -1"), "{note}");

    let d = diff_of(&mut s, "alpha", "shared.txt").await;
    assert_eq!(d.hunks.len(), 1);
    let changed: Vec<(LineKind, &str)> = d.hunks[0]
        .lines
        .iter()
        .filter(|l| l.kind != LineKind::Context)
        .map(|l| (l.kind, l.text.as_str()))
        .collect();
    assert_eq!(
        changed,
        vec![(LineKind::Removed, "two"), (LineKind::Added, "two alpha")]
    );
    let added = d.hunks[0]
        .lines
        .iter()
        .find(|l| l.kind == LineKind::Added)
        .unwrap();
    let (a, b) = added.emph[0];
    assert_eq!(&added.text[a..b], " alpha");
    let untracked = diff_of(&mut s, "alpha", "notes.md").await;
    assert_eq!(untracked.hunks[0].lines[0].text, "todo");

    // The screen: the review dialog at two widths (commit ids fixed for the snapshot).
    let mut shown = r.clone();
    shown.base = "1a2b3c4".to_string();
    shown.commits[0].id = "5d6e7f8".to_string();
    let mut state = state_with(vec![LeadEvent::Review(shown)]);
    assert!(
        state.take_commands().contains(&LeadCommand::ReviewFile {
            name: "alpha".into(),
            path: "notes.md".into()
        }),
        "opening a review asks for its first file"
    );
    state.apply(LeadEvent::ReviewFile {
        name: "alpha".into(),
        diff: d.clone(),
    });
    // Tab selects shared.txt (second file): its diff is already here.
    crate::ui_common::press(&mut state, &[key(KeyCode::Tab)]);
    for width in [80u16, 40] {
        let term = screen(&mut state, width, 24);
        let text = rows(&term).join("\n");
        assert!(text.contains("two alpha"), "{text}");
        insta::assert_snapshot!(format!("review_{width}"), text);
    }
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_names_the_conflicting_pair_and_merge_squashes_the_clean_one() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, mut s) = two_teammates(dir.path()).await;
    let main_before = git(&repo, &["rev-parse", "main"]);

    s.submit("/merges").await;
    let queue = s.wait_note("Merge queue").await;
    assert!(
        queue.contains("@alpha teamlead/rv/alpha: 1 ahead, 0 behind, clean"),
        "{queue}"
    );
    assert!(
        queue.contains("@beta teamlead/rv/beta: 1 ahead, 0 behind, clean"),
        "{queue}"
    );
    assert!(
        queue.contains("@alpha and @beta conflict in shared.txt"),
        "{queue}"
    );

    // A dry run changes nothing.
    s.submit("/merge alpha --squash --dry-run").await;
    let dry = s.wait_note("Would squash-merge").await;
    assert!(dry.contains("applies cleanly"), "{dry}");
    assert!(dry.contains("1 uncommitted file(s)"), "{dry}");
    assert_eq!(git(&repo, &["rev-parse", "main"]), main_before);

    // A dirty lead checkout is refused.
    std::fs::write(repo.join("README"), "changed\n").unwrap();
    s.submit("/merge alpha --squash").await;
    let dirty = s.wait_note("uncommitted changes (README)").await;
    assert!(dirty.contains("Nothing was changed"), "{dirty}");
    git(&repo, &["checkout", "--", "README"]);
    assert_eq!(git(&repo, &["rev-parse", "main"]), main_before);

    // alpha commits the rest and stops; its branch goes in as one commit, its worktree goes.
    let a = wt(dir.path(), "alpha");
    git(&a, &["add", "."]);
    git(&a, &["commit", "--quiet", "-m", "alpha: notes"]);
    s.submit("/kill alpha").await;
    s.submit("/merge alpha --squash --retire").await;
    let merged = s.wait_note("Merged (squash-merge)").await;
    assert!(merged.contains("2 commit(s) of alpha"), "{merged}");
    assert!(merged.contains("Removed its worktree"), "{merged}");
    assert_eq!(
        git(
            &repo,
            &["rev-list", "--count", &format!("{main_before}..main")]
        ),
        "1"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("shared.txt")).unwrap(),
        "one\ntwo alpha\nthree\nfour\nfive\n"
    );
    assert!(repo.join("src/lib.rs").exists() && repo.join("notes.md").exists());
    assert!(!a.exists(), "the worktree is removed");
    assert!(!git(&repo, &["branch"]).contains("teamlead/rv/alpha"));

    // beta now conflicts with main: refused, named, nothing changed.
    let main_after = git(&repo, &["rev-parse", "main"]);
    s.submit("/merge beta --merge").await;
    let refused = s.wait_note("Not merging beta").await;
    assert!(
        refused.contains("conflicts with main in shared.txt. Nothing was changed."),
        "{refused}"
    );
    assert_eq!(git(&repo, &["rev-parse", "main"]), main_after);
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    s.quit().await;
}

#[test]
fn r_on_a_teammate_with_a_worktree_opens_its_review() {
    use teamlead::lead::contract::{TeammateStatus, ViewTarget};
    use teamlead::ui::modal::Modal;
    use teamlead::ui::modal::teams::TeamsDialog;
    let mut alpha = crate::ui_common::teammate("alpha", "blue", TeammateStatus::Working, "tmux");
    alpha.worktree = Some("/tmp/repo-worktrees/t-alpha".to_string());
    let beta = crate::ui_common::teammate("beta", "green", TeammateStatus::Working, "tmux");
    let mut state = state_with(vec![LeadEvent::Team(vec![alpha, beta])]);
    state.modals.push(Modal::Teams(TeamsDialog::new()));
    let sent = crate::ui_common::press(&mut state, &[crate::ui_common::ch('r')]);
    assert_eq!(
        sent,
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/review alpha".to_string()
        }]
    );
    // beta works in the lead's checkout: `r` does nothing there.
    let sent =
        crate::ui_common::press(&mut state, &[key(KeyCode::Down), crate::ui_common::ch('r')]);
    assert!(sent.is_empty(), "{sent:?}");
}
