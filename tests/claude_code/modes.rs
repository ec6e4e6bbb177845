//! Mode cycling from the teams dialog: Shift+Tab in a teammate's detail writes its new mode to
//! config.json and sends a `mode_set_request`; the teammate honours it, observed by whether
//! its next call asks.

use crate::common::{Act, Client, Rule, Scene};

pub fn cycle_from_the_teams_dialog(client: &Client) {
    let scene = Scene::start(client, "cc-mode", Vec::new(), &[]);
    let label = client.label;
    scene.model.add(Rule::on(
        "CC-WRITE-M",
        Act::Write {
            path: scene.work_file("cycled.txt").to_string_lossy().into_owned(),
            content: "m\n".into(),
        },
    ));
    scene.spawn("worker", "CC-IDLE wait");
    scene.keys(&["Down"]);
    scene.wait_screen("the footer badge selected", |s| {
        s.contains("open the teams dialog")
    });
    scene.keys(&["Enter"]);
    scene.wait_screen("the teams dialog", |s| s.contains("❯ ● worker"));
    scene.keys(&["Enter"]);
    scene.wait_screen("worker's detail", |s| s.contains("worker@"));
    scene.keys(&["BTab"]);
    scene.wait("config.json to show worker in acceptEdits", || {
        scene.member("worker")["mode"] == "acceptEdits"
    });
    scene.wait_screen("the detail showing acceptEdits", |s| {
        s.contains("acceptEdits")
    });
    scene.keys(&["Escape"]);
    scene.wait_screen("the teams dialog closed", |s| {
        s.contains("shift+tab to cycle")
    });
    let asked = scene.permission_requests("worker").len();
    let before = scene.say("worker", "CC-WRITE-M");
    scene.wait_turn_end("worker", before);
    assert_eq!(
        scene.permission_requests("worker").len(),
        asked,
        "[{label}] the teammate asked for a Write after the lead set acceptEdits\n{}",
        scene.explain()
    );
    assert!(
        scene.work_file("cycled.txt").exists(),
        "[{label}] the Write did not run\n{}",
        scene.explain()
    );
}
