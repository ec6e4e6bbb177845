//! Permission requests of a `claude` teammate answered from the lead's queue: yes (the command
//! runs), no with feedback (the feedback reaches the model, the command does not run), and
//! answers carrying `permission_updates`: `setMode acceptEdits` (the next Write is not asked,
//! and config.json and the teams dialog show the teammate's new mode) and a rule (the same
//! command is not asked again).

use crate::claude_code_common::{Act, Client, PermissionAnswer, Rule, Scene};

fn bash(command: &str) -> Act {
    Act::Bash {
        command: command.into(),
        description: "conformance command".into(),
    }
}

fn write(scene: &Scene, name: &str, content: &str) -> Act {
    Act::Write {
        path: scene.work_file(name).to_string_lossy().into_owned(),
        content: content.into(),
    }
}

/// A command every mode but bypass asks for; its output is `CC-RULE-OUT`.
const RULE_COMMAND: &str = "node -e \"console.log('CC-RULE-' + 'OUT')\"";

/// How many tool results of the rule command reached the model.
fn rule_runs(scene: &Scene) -> usize {
    scene
        .model
        .requests()
        .iter()
        .filter(|r| !r.tools().is_empty() && r.last_user_text().contains("CC-RULE-OUT"))
        .count()
}

pub fn answers_from_the_queue(client: &Client) {
    let rules = vec![
        Rule::on("CC-BASH-YES", bash("touch bash_yes.txt")),
        Rule::on("CC-BASH-NO", bash("touch bash_no.txt")),
        Rule::on("CC-BASH-MODE", bash("touch bash_mode.txt")),
        Rule::on("CC-BASH-RULE-1", bash(RULE_COMMAND)),
        Rule::on("CC-BASH-RULE-2", bash(RULE_COMMAND)),
    ];
    let scene = Scene::start(client, "cc-perm", rules, &[]);
    let label = client.label;
    scene
        .model
        .add(Rule::on("CC-WRITE-A", write(&scene, "write_a.txt", "a\n")));
    scene.spawn("worker", "CC-IDLE wait for instructions");

    // Yes: the command runs.
    let before = scene.say("worker", "CC-BASH-YES");
    scene.answer(PermissionAnswer::Yes);
    scene.wait("bash_yes.txt to exist", || {
        scene.work_file("bash_yes.txt").exists()
    });
    scene.wait_turn_end("worker", before);

    // No, with feedback: it reaches the model, and the command does not run.
    let before = scene.say("worker", "CC-BASH-NO");
    scene.answer(PermissionAnswer::No(
        "CC-FEEDBACK-NOPE use the other way".into(),
    ));
    scene.wait("the feedback to reach the model", || {
        scene.model.saw("CC-FEEDBACK-NOPE use the other way")
    });
    scene.wait_turn_end("worker", before);
    assert!(
        !scene.work_file("bash_no.txt").exists(),
        "[{label}] a denied command ran"
    );

    // setMode acceptEdits (the second suggestion of a `touch`): the teammate switches, the
    // lead records it in config.json and shows it, and a Write is no longer asked.
    let before = scene.say("worker", "CC-BASH-MODE");
    scene.answer(PermissionAnswer::AlwaysOption("acceptEdits".into()));
    scene.wait("bash_mode.txt to exist", || {
        scene.work_file("bash_mode.txt").exists()
    });
    scene.wait_turn_end("worker", before);
    scene.wait("config.json to show worker in acceptEdits", || {
        scene.member("worker")["mode"] == "acceptEdits"
    });
    scene.wait_teams_dialog_mode("worker", "acceptEdits");
    let asked = scene.permission_requests("worker").len();
    let before = scene.say("worker", "CC-WRITE-A");
    scene.wait("write_a.txt to exist", || {
        scene.work_file("write_a.txt").exists()
    });
    scene.wait_turn_end("worker", before);
    assert_eq!(
        scene.permission_requests("worker").len(),
        asked,
        "[{label}] a Write in acceptEdits mode was asked\n{}",
        scene.explain()
    );

    // A rule (the first suggestion for a command): the same command is not asked again.
    let before = scene.say("worker", "CC-BASH-RULE-1");
    scene.answer(PermissionAnswer::Always);
    scene.wait("the command's output to reach the model", || {
        rule_runs(&scene) >= 1
    });
    scene.wait_turn_end("worker", before);
    let asked = scene.permission_requests("worker").len();
    let before = scene.say("worker", "CC-BASH-RULE-2");
    scene.wait("the second run's output to reach the model", || {
        rule_runs(&scene) >= 2
    });
    scene.wait_turn_end("worker", before);
    assert_eq!(
        scene.permission_requests("worker").len(),
        asked,
        "[{label}] a command allowed by a rule was asked again\n{}",
        scene.explain()
    );
}
