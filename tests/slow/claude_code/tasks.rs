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
    let path = scene
        .ws
        .home()
        .join("tasks")
        .join(&scene.ws.team)
        .join(format!("{id}.json"));
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["status"].as_str().map(str::to_string))
        .unwrap_or_default()
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
