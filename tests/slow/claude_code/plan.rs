//! Plan mode: a `--plan` teammate's ExitPlanMode becomes the lead's plan dialog; a rejection's
//! feedback reaches the model; an approval into `default` leaves the next Write asking, one
//! into `bypassPermissions` lets everything run unasked; config.json follows the mode.

use crate::claude_code_common::{Act, Client, PermissionAnswer, Rule, Scene, keys};

/// What the model gets when the lead approves a plan: newer clients render the verdict as
/// "[Plan Approved] …", 2.1.45 passes the lead's JSON frame on.
const APPROVED: &[&str] = &["[Plan Approved]", "\"approved\":true"];

fn plan(text: &str) -> Act {
    Act::ExitPlanMode {
        plan: format!("# Plan\n\n{text}: write the file and report.\n"),
    }
}

pub fn plan_approvals(client: &Client) {
    let rules = vec![
        Rule::on("CC-PLAN-A", plan("CC-PLAN-TEXT-A")),
        Rule::on("CC-PLAN-B", plan("CC-PLAN-TEXT-B")),
        Rule::on("CC-PLAN-C", plan("CC-PLAN-TEXT-C")),
        Rule::on(
            "CC-TOUCH-BYPASS",
            Act::Bash {
                command: "touch bypass.txt".into(),
                description: "conformance command".into(),
            },
        ),
    ];
    let scene = Scene::start(client, "cc-plan", rules, &[]);
    let label = client.label;
    for (needle, file) in [
        ("CC-WRITE-P", "planned.txt"),
        ("CC-WRITE-Q", "bypass_w.txt"),
    ] {
        scene.model.add(Rule::on(
            needle,
            Act::Write {
                path: scene.work_file(file).to_string_lossy().into_owned(),
                content: "x\n".into(),
            },
        ));
    }

    // Reject with feedback, then approve into default: the next Write asks. Each verdict
    // starts a turn of its own (the model gets the verdict, see APPROVED), and
    // the next message goes only after that turn has ended: a message that reaches 2.1.330 in
    // the same inbox poll as the verdict while its turn is ending can be queued "for later
    // delivery" after the session went idle, and is then never delivered (docs/PROTOCOL.md §3).
    scene.spawn("planner", "--plan CC-PLAN-A make a plan");
    assert_eq!(scene.member("planner")["mode"], "plan", "[{label}]");
    keys::reject_plan(&scene, "CC-PLAN-TEXT-A", "CC-PLAN-FEEDBACK do it smaller");
    scene.wait_turn_on("planner", &["CC-PLAN-FEEDBACK do it smaller"], 0);
    let before = scene.say("planner", "CC-PLAN-B");
    let approvals = scene.model.turns_on(APPROVED);
    keys::approve_plan(&scene, "CC-PLAN-TEXT-B", "default");
    scene.wait_turn_end("planner", before);
    scene.wait_turn_on("planner", APPROVED, approvals);
    scene.wait("config.json to show planner in default", || {
        scene.member("planner")["mode"] == "default"
    });
    let before = scene.say("planner", "CC-WRITE-P");
    scene.answer(PermissionAnswer::Yes);
    scene.wait("planned.txt to exist", || {
        scene.work_file("planned.txt").exists()
    });
    scene.wait_turn_end("planner", before);

    // Approve into bypassPermissions: nothing asks.
    scene.spawn("bold", "--plan CC-PLAN-C make a plan");
    let approvals = scene.model.turns_on(APPROVED);
    keys::approve_plan(&scene, "CC-PLAN-TEXT-C", "bypassPermissions");
    scene.wait_turn_on("bold", APPROVED, approvals);
    scene.wait("config.json to show bold in bypassPermissions", || {
        scene.member("bold")["mode"] == "bypassPermissions"
    });
    let asked = scene.permission_requests("bold").len();
    let before = scene.say("bold", "CC-WRITE-Q");
    scene.wait("bypass_w.txt to exist", || {
        scene.work_file("bypass_w.txt").exists()
    });
    scene.wait_turn_end("bold", before);
    let before = scene.say("bold", "CC-TOUCH-BYPASS");
    scene.wait("bypass.txt to exist", || {
        scene.work_file("bypass.txt").exists()
    });
    scene.wait_turn_end("bold", before);
    assert_eq!(
        scene.permission_requests("bold").len(),
        asked,
        "[{label}] a bypassPermissions teammate asked\n{}",
        scene.explain()
    );
}
