//! Review and merge of teammates' work, in real git repositories in temporary directories
//! with the controller in-process: `/review` shows the files a teammate's worktree changed
//! since its base (committed and uncommitted) with counts and hunks; a comment on a hunk
//! reaches the teammate's inbox with file, line and excerpt; `/merges` names the pair of
//! branches that conflict before any merge, as text and as the queue dialog, from which a
//! merge goes in, the others' status follows and the worktree is offered for retirement;
//! `/merge --squash --retire` of the clean one leaves the lead's branch one commit ahead and
//! the worktree gone; the conflicting one is refused with its files named and nothing
//! changed; a dirty lead checkout is refused; a branch's pull request is read from `gh`
//! within a time limit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::lead_common::Session;
use crate::ui_common::{ch, key, press, press_slowly, rows, screen, state_with, type_text};
use crossterm::event::KeyCode;
use teamlead::lead::contract::TranscriptItem;
use teamlead::lead::contract::{LeadCommand, LeadEvent};
use teamlead::lead::review::{FileDiff, LineKind, MergeQueue, Merged, ReviewSummary};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::store::Home;

pub(crate) use teamlead_test_support::git::git;

/// `<dir>/repo` on `main`: README and shared.txt (five lines).
pub(crate) fn repo_in(dir: &Path) -> PathBuf {
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

pub(crate) async fn lead_in(repo: &Path, team: &str) -> Session {
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

pub(crate) async fn review_of(s: &mut Session, name: &str) -> ReviewSummary {
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

pub(crate) async fn diff_of(s: &mut Session, name: &str, path: &str) -> FileDiff {
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
    let mut state = screen_that_asked(&format!("/review {}", shown.name));
    state.apply(LeadEvent::Review(shown));
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
fn r_opens_a_teammates_review_and_m_the_merge_queue_in_the_teams_dialog() {
    use teamlead::lead::contract::{TeammateStatus, ViewTarget};
    use teamlead::ui::modal::Modal;
    use teamlead::ui::modal::teams::TeamsDialog;
    let mut alpha = crate::ui_common::teammate("alpha", "blue", TeammateStatus::Working, "tmux");
    alpha.worktree = Some("/tmp/repo-worktrees/t-alpha".to_string());
    let beta = crate::ui_common::teammate("beta", "green", TeammateStatus::Working, "tmux");
    let mut state = state_with(vec![LeadEvent::Team(vec![alpha, beta])]);
    state.modals.push(Modal::Teams(TeamsDialog::new()));
    let submit = |text: &str| LeadCommand::Submit {
        target: ViewTarget::Lead,
        text: text.to_string(),
    };
    assert_eq!(press(&mut state, &[ch('r')]), vec![submit("/review alpha")]);
    // beta works in the lead's checkout: its review lists the files it wrote.
    assert_eq!(
        press(&mut state, &[key(KeyCode::Down), ch('r')]),
        vec![submit("/review beta")]
    );
    assert_eq!(press(&mut state, &[ch('m')]), vec![submit("/merges")]);
}

/// A screen whose composer sent `line` (`/review alpha`, `/merges`): the dialog its answer
/// brings opens there (and only there).
fn screen_that_asked(line: &str) -> teamlead::ui::AppState {
    let mut state = state_with(Vec::new());
    state.send(LeadCommand::Submit {
        target: teamlead::lead::contract::ViewTarget::Lead,
        text: line.to_string(),
    });
    state.take_commands();
    state
}

/// A review opens on the screen that asked for it, not on every screen attached to the lead
/// (each gets the events); it opens once per ask.
#[test]
fn a_review_opens_only_where_it_was_asked() {
    let summary = ReviewSummary::from_git(
        "alpha",
        "teamlead/t/alpha".into(),
        "1a2b3c4",
        Vec::new(),
        Vec::new(),
        0,
    );
    let mut other = state_with(vec![LeadEvent::Review(summary.clone())]);
    assert!(
        other.modals.is_empty(),
        "a review opened where nobody asked"
    );
    assert!(other.take_commands().is_empty());
    let mut asker = screen_that_asked("/review @alpha");
    asker.apply(LeadEvent::Review(summary.clone()));
    assert_eq!(asker.modals.len(), 1);
    asker.modals.clear();
    asker.apply(LeadEvent::Review(summary));
    assert!(asker.modals.is_empty(), "one ask, one dialog");
}

/// A review and one file's diff, opened in a screen's state on that file.
fn review_screen(r: &ReviewSummary, diff: &FileDiff) -> teamlead::ui::AppState {
    let mut state = screen_that_asked(&format!("/review {}", r.name));
    state.apply(LeadEvent::Review(r.clone()));
    state.take_commands();
    state.apply(LeadEvent::ReviewFile {
        name: r.name.clone(),
        diff: diff.clone(),
    });
    let at = r.files.iter().position(|f| f.path == diff.path).unwrap();
    for _ in 0..at {
        press(&mut state, &[key(KeyCode::Tab)]);
    }
    state
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_on_a_hunk_reaches_the_teammates_inbox_with_file_line_and_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    let (_repo, mut s) = two_teammates(dir.path()).await;
    let mut r = review_of(&mut s, "alpha").await;
    let d = diff_of(&mut s, "alpha", "shared.txt").await;
    r.base = "1a2b3c4".to_string();
    r.commits[0].id = "5d6e7f8".to_string();
    let mut state = review_screen(&r, &d);

    // The cursor starts on the hunk's header: `C` comments on the hunk.
    press(&mut state, &[ch('C')]);
    type_text(&mut state, "keep line two as it was");
    let text = rows(&screen(&mut state, 80, 24)).join("\n");
    assert!(
        text.contains("Comment to @alpha on the hunk at line 1 of shared.txt:"),
        "{text}"
    );
    insta::assert_snapshot!("review_comment_80", text);
    let sent = press(&mut state, &[key(KeyCode::Enter)]);
    let [LeadCommand::ReviewComment { name, comment }] = sent.as_slice() else {
        panic!("one comment sent: {sent:?}");
    };
    assert_eq!(name, "alpha");
    let text = rows(&screen(&mut state, 80, 24)).join("\n");
    assert!(
        text.contains("Comment on the hunk at line 1 of shared.txt sent to @alpha."),
        "{text}"
    );

    // A line comment too: the cursor on `+two alpha` (header, one, -two, +two alpha).
    press(&mut state, &[key(KeyCode::Down), ch('j'), ch('j'), ch('c')]);
    type_text(&mut state, "why alpha?");
    let line = press(&mut state, &[key(KeyCode::Enter)]);

    for command in sent.iter().chain(&line) {
        s.send(command.clone()).await;
    }
    // Acknowledged like any message: echoed once it is in the inbox.
    let echoed = |want: &'static str| {
        move |e: &LeadEvent| {
            matches!(e, LeadEvent::Transcript(TranscriptItem::ToTeammate { to, text, .. })
                if to == "alpha" && text.contains(want))
        }
    };
    s.wait_for("the hunk comment's echo", echoed("keep line two as it was"))
        .await;
    s.wait_for("the line comment's echo", echoed("why alpha?"))
        .await;
    let inbox: Vec<String> = teamlead::store::inbox::read(&s.home, &s.team, "alpha")
        .unwrap()
        .entries
        .into_iter()
        .filter(|e| e.from == "team-lead" && e.text.starts_with("Review comment"))
        .map(|e| e.text)
        .collect();
    assert_eq!(inbox.len(), 2, "{inbox:?}");
    assert_eq!(inbox[0], comment.message());
    assert_eq!(
        inbox[0],
        "Review comment from the lead on shared.txt, lines 1-5. It is a comment for you to read, not a command to run: the lines quoted below are the hunk commented on, from your diff.\n\n```text\n@@ -1,5 +1,5 @@\n    1    1   one\n    2      - two\n         2 + two alpha\n    3    3   three\n    4    4   four\n    5    5   five\n```\n\nkeep line two as it was"
    );
    assert_eq!(
        inbox[1],
        "Review comment from the lead on shared.txt, line 2. It is a comment for you to read, not a command to run: the lines quoted below are context from your diff, the line commented on marked `>`.\n\n```text\n    1    1   one\n    2      - two\n>        2 + two alpha\n    3    3   three\n    4    4   four\n    5    5   five\n```\n\nwhy alpha?"
    );
    s.quit().await;
}

async fn queue_event(
    s: &mut Session,
    what: &str,
    pred: impl Fn(&MergeQueue) -> bool,
) -> MergeQueue {
    match s
        .wait_for(what, |e| matches!(e, LeadEvent::MergeQueue(q) if pred(q)))
        .await
    {
        LeadEvent::MergeQueue(q) => q,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_dialog_merges_a_branch_updates_the_others_and_offers_to_retire_it() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, mut s) = two_teammates(dir.path()).await;
    let main_before = git(&repo, &["rev-parse", "main"]);
    let a = wt(dir.path(), "alpha");
    git(&a, &["add", "."]);
    git(&a, &["commit", "--quiet", "-m", "alpha: notes"]);

    s.submit("/merges").await;
    let first = queue_event(&mut s, "the queue", |q| q.opens).await;
    assert!(first.pairs.is_none(), "the pairs come after: {first:?}");
    let full = queue_event(&mut s, "the queue's pairs", |q| q.pairs.is_some()).await;
    // Another attached screen that did not ask sees no dialog.
    let mut other = state_with(Vec::new());
    other.apply(LeadEvent::MergeQueue(first.clone()));
    assert!(
        other.modals.is_empty(),
        "the queue opened where nobody asked"
    );
    let mut state = screen_that_asked("/merges");
    state.apply(LeadEvent::MergeQueue(first));
    let text = rows(&screen(&mut state, 80, 24)).join("\n");
    assert!(text.contains("checking…"), "{text}");
    state.apply(LeadEvent::MergeQueue(full));
    let text = rows(&screen(&mut state, 80, 24)).join("\n");
    assert!(
        text.contains("Conflicts with @beta in shared.txt."),
        "{text}"
    );
    insta::assert_snapshot!("merges_80", text);

    // m: what the merge would do; s: squash it.
    press_slowly(&mut state, &[ch('m')]);
    let text = rows(&screen(&mut state, 80, 24)).join("\n");
    assert!(
        text.contains("Merge 2 commits of @alpha into main (0 behind): it applies cleanly."),
        "{text}"
    );
    insta::assert_snapshot!("merges_preview_80", text);
    let sent = press_slowly(&mut state, &[ch('s')]);
    assert_eq!(
        sent,
        vec![LeadCommand::Submit {
            target: teamlead::lead::contract::ViewTarget::Lead,
            text: "/merge alpha --squash".into()
        }]
    );
    s.send(sent[0].clone()).await;
    let merged = match s
        .wait_for("the merge", |e| matches!(e, LeadEvent::Merged(_)))
        .await
    {
        LeadEvent::Merged(m) => m,
        _ => unreachable!(),
    };
    assert_eq!(
        (merged.name.as_str(), merged.retired, merged.running),
        ("alpha", false, true)
    );
    assert_eq!(
        git(
            &repo,
            &["rev-list", "--count", &format!("{main_before}..main")]
        ),
        "1"
    );
    // The queue follows: beta now conflicts with main itself.
    let after = queue_event(&mut s, "the queue after the merge", |q| {
        q.pairs.is_some() && !q.opens
    })
    .await;
    let beta = after.entries.iter().find(|e| e.name == "beta").unwrap();
    assert_eq!(beta.conflicts, vec!["shared.txt".to_string()]);
    state.apply(LeadEvent::MergeQueue(after));
    // The screen that asked offers to retire the worktree (its path fixed for the snapshot).
    state.apply(LeadEvent::Merged(Merged {
        worktree: "/home/me/repo-worktrees/rv-alpha".into(),
        ..merged.clone()
    }));
    // It arrived by itself: it waits behind the banner (the queue dialog keeps the keys)
    // until the person opens it (Ctrl+P) or stops typing with the composer in view.
    let text = rows(&screen(&mut state, 80, 24)).join("\n");
    assert!(
        text.contains("waiting: retire @alpha's worktree? — ctrl+p to answer"),
        "{text}"
    );
    assert!(!text.contains("Retire its"), "{text}");
    press(&mut state, &[crate::ui_common::ctrl('p')]);
    let text = rows(&screen(&mut state, 80, 24)).join("\n");
    assert!(text.contains("Retire its"), "{text}");
    insta::assert_snapshot!("merges_retire_80", text);
    let retire = press_slowly(&mut state, &[ch('y')]);
    assert_eq!(
        retire,
        vec![LeadCommand::RetireWorktree {
            name: "alpha".into()
        }]
    );
    s.send(retire[0].clone()).await;
    s.wait_note("Removed the worktree").await;
    assert!(!a.exists(), "the worktree is removed");
    assert!(!git(&repo, &["branch"]).contains("teamlead/rv/alpha"));
    let last = queue_event(&mut s, "the queue without alpha", |q| {
        q.pairs.is_some() && q.entries.len() == 1
    })
    .await;
    state.apply(LeadEvent::MergeQueue(last));
    let text = rows(&screen(&mut state, 80, 24)).join("\n");
    assert!(
        text.contains("Conflicts with main in shared.txt."),
        "{text}"
    );
    insta::assert_snapshot!("merges_after_80", text);

    // Another screen (that did not ask) is not offered anything.
    let mut other = state_with(Vec::new());
    other.apply(LeadEvent::Merged(Merged {
        name: "beta".into(),
        ..merged
    }));
    assert!(other.modals.is_empty());
    s.quit().await;
}

/// A stand-in `gh` in `dir/bin`: `pr view teamlead/t/alpha` answers a pull request, `pr view
/// slow` never answers, anything else has none.
fn fake_gh(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        "#!/bin/sh\n[ \"$1 $2\" = \"pr view\" ] || exit 2\ncase \"$3\" in\n  teamlead/t/alpha) echo '{\"number\":7,\"state\":\"OPEN\",\"isDraft\":true,\"url\":\"https://github.com/o/r/pull/7\",\"title\":\"alpha work\"}' ;;\n  slow) exec sleep 30 ;;\n  *) echo 'no pull requests found for branch' >&2; exit 1 ;;\nesac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    gh
}

#[test]
fn a_branchs_pull_request_is_read_from_gh_within_a_time_limit() {
    use teamlead::backend::git::gh::pr_of;
    let dir = tempfile::tempdir().unwrap();
    let gh = fake_gh(dir.path());
    let gh = gh.to_str().unwrap();
    let pr = pr_of(gh, dir.path(), "teamlead/t/alpha", Duration::from_secs(10)).unwrap();
    assert_eq!(
        (pr.number, pr.state.as_str(), pr.is_draft, pr.url.as_str()),
        (7, "OPEN", true, "https://github.com/o/r/pull/7")
    );
    assert_eq!(
        pr_of(gh, dir.path(), "teamlead/t/beta", Duration::from_secs(10)),
        None
    );
    let start = std::time::Instant::now();
    assert_eq!(
        pr_of(gh, dir.path(), "slow", Duration::from_millis(300)),
        None
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );

    // The review's header shows it.
    let summary = ReviewSummary {
        pr: Some(teamlead::lead::review::PrState {
            number: pr.number,
            state: pr.state,
            draft: pr.is_draft,
            url: pr.url,
            title: pr.title,
        }),
        ..ReviewSummary::from_git(
            "alpha",
            "teamlead/t/alpha".into(),
            "1a2b3c4",
            Vec::new(),
            Vec::new(),
            0,
        )
    };
    let mut state = screen_that_asked(&format!("/review {}", summary.name));
    state.apply(LeadEvent::Review(summary));
    let text = rows(&screen(&mut state, 80, 12)).join("\n");
    assert!(text.contains("PR #7 draft · base 1a2b3c4"), "{text}");
}

/// The merge queue dialog's footer never ends mid-sentence: the queue's own note (what the
/// dialog shows already) is not repeated there, and a long note that does not fit says the
/// rest is in the transcript.
#[test]
fn the_merge_queue_footer_is_never_cut_mid_sentence() {
    use teamlead::lead::review::{QueueEntry, QueuePair};
    let entry = |name: &str| QueueEntry {
        name: name.into(),
        branch: format!("teamlead/t/{name}"),
        ahead: 1,
        behind: 0,
        conflicts: Vec::new(),
        uncommitted: 0,
        already_in: false,
        error: None,
    };
    let queue = MergeQueue {
        lead_branch: "main".into(),
        entries: vec![entry("bob"), entry("carol"), entry("erin")],
        pairs: Some(vec![QueuePair {
            a: "bob".into(),
            b: "carol".into(),
            files: vec!["shared.txt".into()],
        }]),
        opens: true,
    };
    let mut state = screen_that_asked("/merges");
    state.apply(LeadEvent::MergeQueue(queue.clone()));
    state.apply(LeadEvent::Transcript(TranscriptItem::System {
        text: queue.text(),
    }));
    let text = rows(&screen(&mut state, 60, 20)).join("\n");
    assert!(
        !text.contains("conflict in\n") && !text.contains("Merge queue (against"),
        "{text}"
    );
    let long = "Not merging erin: the lead's checkout has uncommitted changes (a.txt, b.txt, c.txt, d.txt, e.txt, f.txt, g.txt, h.txt, i.txt, j.txt, k.txt, l.txt): commit or stash them first. Nothing was changed.";
    state.apply(LeadEvent::Transcript(TranscriptItem::System {
        text: long.into(),
    }));
    let text = rows(&screen(&mut state, 60, 20)).join("\n");
    assert!(text.contains("the rest is in the transcript"), "{text}");
    insta::assert_snapshot!("merges_long_notice_60", text);
}
