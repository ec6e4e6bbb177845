//! Mode cycling from the teams dialog: Shift+Tab in a teammate's detail writes its new mode to
//! config.json and sends a `mode_set_request`; the teammate ends up in that mode, observed by
//! whether its calls ask. 2.1.45 applies the request, so its next Write is not asked. Newer
//! clients ignore it; their next Write asks, and the lead answers that request itself with a
//! `setMode` approval (the mode it set would not have asked; `controller::mode_sync`) and says
//! so — the person is never asked — after which the teammate's Writes are not asked either.

use crate::claude_code_common::{Act, Client, Rule, Scene};

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
    scene.model.add(Rule::on(
        "CC-WRITE-N",
        Act::Write {
            path: scene
                .work_file("cycled2.txt")
                .to_string_lossy()
                .into_owned(),
            content: "n\n".into(),
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
    // The footer's hint shows under the dialog too: wait for the dialog itself to go, or the
    // next keys reach tmux within its escape-time and turn Escape into Alt+key.
    scene.wait_screen("the teams dialog closed", |s| {
        s.contains("shift+tab to cycle") && !s.contains("esc close") && !s.contains("❯ ●")
    });
    let asked = scene.permission_requests("worker").len();
    let before = scene.say("worker", "CC-WRITE-M");
    scene.wait_turn_end("worker", before);
    assert!(
        scene.work_file("cycled.txt").exists(),
        "[{label}] the Write did not run\n{}",
        scene.explain()
    );
    if scene.permission_requests("worker").len() > asked {
        // A client that ignores mode_set_request: the lead answered for the mode it set.
        assert_ne!(label, "2.1.45", "2.1.45 applies mode_set_request");
        scene.wait_screen("the lead's note on the answer it gave", |s| {
            s.contains("Approved worker's Write request")
        });
    }
    // Either way the teammate is in acceptEdits now: the next Write is not asked.
    let asked = scene.permission_requests("worker").len();
    let before = scene.say("worker", "CC-WRITE-N");
    scene.wait_turn_end("worker", before);
    assert_eq!(
        scene.permission_requests("worker").len(),
        asked,
        "[{label}] the teammate asked for a Write in the mode the lead set\n{}",
        scene.explain()
    );
    assert!(
        scene.work_file("cycled2.txt").exists(),
        "[{label}] the second Write did not run\n{}",
        scene.explain()
    );
}
