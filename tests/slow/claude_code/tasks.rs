//! A claude teammate works the shared task list on the client's default model (no `--model`:
//! 2.1.332 sends a 5.x model, which gets the task tools only with the variable teamlead sets):
//! `/task assign` reaches it, it claims the task (`TaskUpdate` in_progress), works, completes it
//! (`TaskUpdate` completed), the task blocked behind it is then available, assigned and done
//! too, and the lead shows every task done.

use crate::claude_code_common::{Act, Client, Rule, Scene};

fn update(id: &str, status: &str) -> Act {
    Act::Tool {
        name: "TaskUpdate".into(),
        input: serde_json::json!({"taskId": id, "status": status}),
    }
}

fn work(scene: &Scene, id: &str, file: &str) -> Vec<Act> {
    vec![
        update(id, "in_progress"),
        Act::Write {
            path: scene.work_file(file).to_string_lossy().into_owned(),
            content: format!("task {id}\n"),
        },
        update(id, "completed"),
        Act::Text(format!("task {id} done")),
    ]
}

/// The status of task `id` in the task list's file.
fn status(scene: &Scene, id: &str) -> String {
    task_state(scene, id).1
}

/// `owner` and `status` of task `id` in the task list's file.
pub(crate) fn task_state(scene: &Scene, id: &str) -> (String, String) {
    let path = scene
        .ws
        .home()
        .join("tasks")
        .join(&scene.ws.team)
        .join(format!("{id}.json"));
    let v: serde_json::Value = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    (
        v["owner"].as_str().unwrap_or("").to_string(),
        v["status"].as_str().unwrap_or("").to_string(),
    )
}

pub fn assigned_tasks_are_claimed_and_completed(client: &Client) {
    let scene = Scene::start(client, "cc-task", Vec::new(), &[]);
    let label = client.label;
    scene
        .model
        .add(Rule::seq("CC-TASK-ONE", work(&scene, "1", "one.txt")));
    scene
        .model
        .add(Rule::seq("CC-TASK-TWO", work(&scene, "2", "two.txt")));
    // Writes are the lead's to approve in default mode: the teammate works in acceptEdits.
    scene.spawn("builder", "--mode acceptEdits CC-IDLE wait for tasks");
    assert!(
        scene
            .model
            .requests()
            .iter()
            .any(|r| r.tool_names().iter().any(|t| t == "TaskUpdate")),
        "[{label}] the teammate's model was offered no TaskUpdate\n{}",
        scene.explain()
    );
    scene.submit("/task add CC-TASK-ONE build the thing");
    scene.wait_screen("task #1 added", |s| s.contains("#1"));
    scene.submit("/task add CC-TASK-TWO test the thing --blocked-by 1");
    scene.wait_screen("task #2 added", |s| s.contains("#2"));
    scene.submit("/task assign 1 builder");
    scene.wait("task #1 to be completed", || {
        status(&scene, "1") == "completed"
    });
    assert!(
        scene.work_file("one.txt").exists(),
        "[{label}] no work on #1"
    );
    scene.submit("/task assign 2 builder");
    scene.wait("task #2 to be completed", || {
        status(&scene, "2") == "completed"
    });
    assert!(
        scene.work_file("two.txt").exists(),
        "[{label}] no work on #2"
    );
    scene.wait_screen("the lead showing both tasks done", |s| s.contains("2/2"));
}

/// A task a claude teammate completes is said in the transcript at once, in the words an own
/// teammate uses (`task #1 "…" done.`), while the teammate is still in its turn (a command
/// that runs 8 s after the `TaskUpdate`), not only in the wave digest after its turn.
pub fn completion_said_at_once(client: &Client) {
    let scene = Scene::start(client, "cc-taskdone", Vec::new(), &[]);
    let label = client.label;
    // Bash runs unasked, so the turn goes on without the lead's answer.
    std::fs::write(
        scene.ws.home().join("settings.json"),
        r#"{"permissions":{"allow":["Bash"]}}"#,
    )
    .expect("write settings.json");
    scene.model.add(Rule::seq(
        "CC-TASK-LONG",
        vec![
            update("1", "in_progress"),
            update("1", "completed"),
            Act::Bash {
                command: "timeout 8 tail -f /dev/null; true".into(),
                description: "keep working".into(),
            },
            Act::Text("task 1 done".into()),
        ],
    ));
    scene.spawn("builder", "--mode acceptEdits CC-IDLE wait for tasks");
    scene.submit("/task add CC-TASK-LONG build the thing");
    scene.wait_screen("task #1 added", |s| s.contains("#1"));
    let idles = scene.idles("builder");
    scene.submit("/task assign 1 builder");
    scene.wait("task #1 to be completed", || {
        status(&scene, "1") == "completed"
    });
    let completed = std::time::Instant::now();
    scene.wait_screen("the completion said under builder's name", |s| {
        s.lines().any(|l| {
            l.contains("●builder") && l.contains("task #1 \"CC-TASK-LONG build the thing\" done.")
        })
    });
    let took = completed.elapsed();
    assert_eq!(
        scene.idles("builder"),
        idles,
        "[{label}] the completion was said only after builder's turn ended (after {} ms)\n{}",
        took.as_millis(),
        scene.explain()
    );
    crate::claude_code_common::timing(client, "task completion to its line", took);
}
