//! Mode cycling from the teams dialog: Shift+Tab in a teammate's detail asks for the next
//! mode; the lead brings the claude teammate there with Claude Code's own mode key and records
//! it once the client shows it (`lead::mode_drive`), observed by whether its calls ask:
//! loosened to acceptEdits, its Writes are not asked. Then tightening from the dialog
//! (acceptEdits → plan), a mode the client does not offer (bypassPermissions: told, shown as
//! requested beside the mode in force, never as taken), and default, where a Write asks.

use std::time::Instant;

use crate::claude_code_common::{Act, Client, PermissionAnswer, Rule, Scene, timing};

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
    scene.open_detail("worker");
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

    // Tightening from the dialog: acceptEdits → plan; then bypassPermissions, which a client
    // not started with it does not offer: the lead says so and the teammate stays in plan;
    // Shift+Tab once more moves on to default, where a Write asks.
    scene.open_detail("worker");
    scene.keys(&["BTab"]);
    scene.wait("config.json to show worker in plan", || {
        scene.member("worker")["mode"] == "plan"
    });
    scene.wait_screen("the detail showing plan", |s| {
        s.lines()
            .any(|l| l.contains("mode") && l.contains("plan") && !l.contains("requested"))
    });
    scene.keys(&["BTab"]);
    scene.wait_screen("the detail showing bypass requested, plan in force", |s| {
        s.contains("plan (bypassPermissions requested)")
    });
    scene.keys(&["BTab"]);
    scene.wait("config.json to show worker in default", || {
        scene.member("worker")["mode"] == "default"
    });
    scene.keys(&["Escape"]);
    scene.wait_screen("the teams dialog closed", |s| {
        s.contains("shift+tab to cycle") && !s.contains("esc close") && !s.contains("❯ ●")
    });
    scene.wait_screen("the lead saying bypass was not taken", |s| {
        s.contains("not bypassPermissions")
    });
    scene.model.add(Rule::on(
        "CC-WRITE-O",
        Act::Write {
            path: scene
                .work_file("cycled3.txt")
                .to_string_lossy()
                .into_owned(),
            content: "o\n".into(),
        },
    ));
    let asked = scene.permission_requests("worker").len();
    scene.say("worker", "CC-WRITE-O");
    scene.wait("the Write in default mode to be asked", || {
        scene.permission_requests("worker").len() > asked
    });
}

/// Tightening is true: a teammate spawned in acceptEdits and set to `default` by `/mode` asks
/// for its next Write (the mode the lead shows is the one in force), and config.json and the
/// teams dialog show `default` only once the teammate itself reports it. Loosening back to
/// acceptEdits makes the next Write unasked again. The lead brings a claude teammate to a mode
/// with Claude Code's own mode key in its pane (`lead::mode_drive`); the time from Enter to
/// the lead's confirmation is printed per round (`timing` lines, five rounds).
pub fn tighten_and_loosen_by_slash(client: &Client) {
    let scene = Scene::start(client, "cc-tight", Vec::new(), &[]);
    let label = client.label;
    for (key, file) in [
        ("CC-WRITE-T1", "t1.txt"),
        ("CC-WRITE-T2", "t2.txt"),
        ("CC-WRITE-T3", "t3.txt"),
    ] {
        scene.model.add(Rule::on(
            key,
            Act::Write {
                path: scene.work_file(file).to_string_lossy().into_owned(),
                content: "t\n".into(),
            },
        ));
    }
    scene.spawn("tight", "--mode acceptEdits CC-IDLE wait");
    assert_eq!(scene.member("tight")["mode"], "acceptEdits");

    // In acceptEdits a Write runs unasked.
    let asked = scene.permission_requests("tight").len();
    let before = scene.say("tight", "CC-WRITE-T1");
    scene.wait_turn_end("tight", before);
    assert!(
        scene.work_file("t1.txt").exists(),
        "[{label}] t1 not written"
    );
    assert_eq!(scene.permission_requests("tight").len(), asked);

    // Tighten and loosen five times; each confirmation is timed.
    let mut tighten = Vec::new();
    for round in 0..5 {
        let start = Instant::now();
        scene.submit("/mode tight default");
        // The teammate's own report in config.json is the confirmation (the lead never
        // writes a claude teammate's mode).
        scene.wait("config.json to show tight in default", || {
            scene.member("tight")["mode"] == "default"
        });
        tighten.push(start.elapsed());
        scene.wait_screen("the lead's confirmation of default", |s| {
            s.contains("tight is now in default mode.")
        });
        if round < 4 {
            scene.submit("/mode tight acceptEdits");
            scene.wait("config.json to show tight in acceptEdits", || {
                scene.member("tight")["mode"] == "acceptEdits"
            });
        }
    }
    tighten.sort();
    timing(
        client,
        "tighten acceptEdits → default (median of 5)",
        tighten[2],
    );
    scene.wait_teams_dialog_mode("tight", "default");

    // Now in default: the next Write asks; answered yes, it runs.
    let asked = scene.permission_requests("tight").len();
    let before = scene.say("tight", "CC-WRITE-T2");
    scene.wait("the Write to be asked", || {
        scene.permission_requests("tight").len() > asked
    });
    scene.answer(PermissionAnswer::Yes);
    scene.wait("t2.txt to exist", || scene.work_file("t2.txt").exists());
    scene.wait_turn_end("tight", before);

    // Loosened again: not asked.
    scene.submit("/mode tight acceptEdits");
    scene.wait("config.json to show tight in acceptEdits", || {
        scene.member("tight")["mode"] == "acceptEdits"
    });
    let asked = scene.permission_requests("tight").len();
    let before = scene.say("tight", "CC-WRITE-T3");
    scene.wait_turn_end("tight", before);
    assert!(
        scene.work_file("t3.txt").exists(),
        "[{label}] t3 not written"
    );
    assert_eq!(
        scene.permission_requests("tight").len(),
        asked,
        "[{label}] a Write in acceptEdits was asked\n{}",
        scene.explain()
    );
}
