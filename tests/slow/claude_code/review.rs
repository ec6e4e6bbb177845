//! A claude teammate without a worktree of its own works in the lead's checkout: its review
//! (`/review NAME`) lists the files its Write and Edit calls wrote, read from its session
//! transcript (a file the lead changed is not among them), each with its change against the
//! lead's `HEAD`.

use crate::claude_code_common::{Act, Client, Rule, Scene};
use crate::cleanup_common::git;

pub fn files_written_without_a_worktree(client: &Client) {
    let scene = Scene::start(client, "cc-review", Vec::new(), &[]);
    let label = client.label;
    let work = scene.ws.work();
    git(work, &["init", "--quiet", "--initial-branch=main"]);
    git(work, &["config", "user.name", "t"]);
    git(work, &["config", "user.email", "t@example.com"]);
    std::fs::write(scene.work_file("README"), "hello\n").unwrap();
    std::fs::write(scene.work_file("LEAD.md"), "the lead's\n").unwrap();
    git(work, &["add", "README", "LEAD.md"]);
    git(work, &["commit", "--quiet", "-m", "first"]);
    let file = |name: &str| scene.work_file(name).to_string_lossy().into_owned();
    scene.model.add(Rule::seq(
        "CC-REVIEW-WRITE",
        vec![
            Act::Write {
                path: file("made.txt"),
                content: "made by claude\n".into(),
            },
            Act::Read {
                path: file("README"),
            },
            Act::Edit {
                path: file("README"),
                old: "hello".into(),
                new: "hello claude".into(),
            },
            Act::Text("written".into()),
        ],
    ));
    // The lead's own change: not the teammate's.
    std::fs::write(scene.work_file("LEAD.md"), "changed by the lead\n").unwrap();
    scene.spawn("writer", "--mode acceptEdits CC-REVIEW-WRITE write them");
    assert_eq!(
        std::fs::read_to_string(scene.work_file("README")).unwrap_or_default(),
        "hello claude\n",
        "[{label}] the edit\n{}",
        scene.explain()
    );
    assert!(scene.work_file("made.txt").exists(), "[{label}] the write");
    scene.submit("/review writer");
    let shown = scene.wait_screen("writer's review with the files it wrote", |s| {
        s.contains("Review @writer") && s.contains("made.txt") && s.contains("M README")
    });
    let screen = scene.screen();
    assert!(
        screen.contains("in the lead's checkout"),
        "[{label}] {shown:?}\n{screen}"
    );
    assert!(!screen.contains("LEAD.md"), "[{label}] {screen}");
}
