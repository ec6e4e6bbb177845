//! Park and resume at a usage limit with real clients (issue 30). The scripted model refuses
//! requests the way the service refuses a claude.ai subscriber over its usage limit
//! (`model_server::limit_response`: HTTP 429 with the unified rate-limit headers); Claude Code
//! turns that into its transcript's limit message only on an OAuth token, so these scenes run
//! the clients as subscribers ([`SUBSCRIBER`]). What each client needs after its limit message
//! (docs/PROTOCOL.md): 2.1.332 takes the next message in its inbox; 2.1.45 opens its own
//! `/rate-limit-options` dialog in its pane, which holds every message until a key answers it
//! (Esc: "Stop and wait for limit to reset"). Resumed means the teammate takes its next turn,
//! once, after the reset, and no turn starts before it.

use std::time::Duration;

use crate::claude_code_common::{Act, Client, Rule, Scene, wait_until};

/// The environment of a subscriber: an OAuth token and no API key.
pub const SUBSCRIBER: [(&str, &str); 2] = [
    ("ANTHROPIC_API_KEY", ""),
    ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-conformance-token"),
];

/// What the lead tells a teammate whose work the limit stopped (`controller::park::GO_ON`).
const GO_ON: &str = "The usage limit has reset";

/// The longest a park can take here: a 2.1.45 teammate's reset is the end of the minute its
/// message names, plus the margin.
const PARKED_AT_MOST: Duration = Duration::from_secs(150);

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

/// The notes of the lead (`ctl events --json`), with when each was made (epoch ms).
fn notes(scene: &Scene) -> Vec<(u64, String)> {
    let out = scene.ctl(&["events", "--json"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["kind"] == "note")
        .filter_map(|e| Some((e["at_ms"].as_u64()?, e["text"].as_str()?.to_string())))
        .collect()
}

/// When the lead made each note holding `needle`.
fn note_times(scene: &Scene, needle: &str) -> Vec<u64> {
    notes(scene)
        .into_iter()
        .filter(|(_, n)| n.contains(needle))
        .map(|(at, _)| at)
        .collect()
}

fn count_notes(scene: &Scene, needle: &str) -> usize {
    note_times(scene, needle).len()
}

/// Waits up to [`PARKED_AT_MOST`] for `cond`.
fn wait_long(scene: &Scene, what: &str, cond: impl FnMut() -> bool) {
    let what = format!("[{}] {what}", scene.client.label);
    wait_until(&what, PARKED_AT_MOST, cond, || scene.explain());
}

/// The model requests with tools (turns of teammates, not side requests) that came after
/// `after_ms`, with when they came.
fn turns_after(scene: &Scene, after_ms: u64) -> Vec<(u64, String)> {
    let times = scene.model.request_times();
    scene
        .model
        .requests()
        .iter()
        .zip(times)
        .filter(|(r, at)| !r.tools().is_empty() && *at > after_ms)
        .map(|(r, at)| (at, r.last_user_text().chars().take(120).collect()))
        .collect()
}

/// Says `/limits resume on` and waits for the lead's answer.
fn resume_on(scene: &Scene) {
    scene.submit("/limits resume on");
    scene.wait("resuming turned on", || {
        count_notes(scene, "Resuming after a usage limit is on") > 0
    });
}

/// One claude teammate hits the limit with its reset 3 s ahead and then 1 s behind: each
/// time the team is parked, a message sent meanwhile is held, no turn starts before the
/// reset, and the teammate is resumed once after it (2.1.45's dialog answered first).
pub fn resume_at_the_reset(client: &Client) {
    let rules = vec![
        Rule::on("CC-LIMIT-AHEAD", Act::Limit { reset_in_s: 3 }).once(),
        Rule::on("CC-LIMIT-BEHIND", Act::Limit { reset_in_s: -1 }).once(),
        Rule::on(GO_ON, Act::Text("CC-GONE-ON".into())),
    ];
    let scene = Scene::start_with_env(client, "cc-park", rules, &SUBSCRIBER);
    resume_on(&scene);
    scene.spawn("worker", "CC-IDLE hello");
    let pane = scene.pane_of("worker");
    for (round, needle) in [(1, "CC-LIMIT-AHEAD"), (2, "CC-LIMIT-BEHIND")] {
        if needle == "CC-LIMIT-BEHIND" {
            // 2.1.45 prints the minute only: a reset a second ago must stay in this minute.
            scene.wait("a second early in the minute", || {
                (3..50).contains(&(now_ms() / 1000 % 60))
            });
        }
        let refused = scene.model.refused().len();
        scene.submit(&format!("@worker {needle} go"));
        scene.wait("the limit refused", || {
            scene.model.refused().len() > refused
        });
        let limited_at = now_ms();
        scene.wait("the team parked", || {
            count_notes(&scene, "The team is parked") == round
        });
        let held = format!("CC-HELD-{round}");
        scene
            .model
            .add(Rule::on(&held, Act::Text(format!("{held}-DONE"))));
        scene.submit(&format!("@worker {held} during the park"));
        scene.wait("the message held", || {
            count_notes(&scene, "worker is parked at the usage limit: this is held") == round
        });
        wait_long(&scene, "worker resumed", || {
            count_notes(&scene, "Resumed worker (1 of 1)") == round
        });
        let resumed_at = note_times(&scene, "Resumed worker (1 of 1)")[round - 1];
        // No turn started while parked: no request between the limit and the resume.
        let between: Vec<(u64, String)> = turns_after(&scene, limited_at)
            .into_iter()
            .filter(|(at, _)| *at < resumed_at)
            .collect();
        assert!(
            between.is_empty(),
            "[{}] round {round}: a turn started while parked: {between:?}",
            client.label
        );
        assert_eq!(
            refused_turns_since(&scene, refused),
            1,
            "[{}] round {round}: one turn refused, nothing asked again before the reset; refused:\n{}",
            client.label,
            refused_since(&scene, refused).join("\n")
        );
        // Resumed once: it takes its next turn on the word to go on and the held message.
        scene.wait("the resumed turn", || {
            scene.model.turns_on(&[GO_ON]) >= round && scene.model.turns_on(&[&held]) >= 1
        });
        assert!(
            !scene
                .tmux
                .capture(&pane)
                .contains("Stop and wait for limit to reset"),
            "[{}] the client's limit dialog is answered",
            client.label
        );
    }
    assert_eq!(
        scene.model.turns_on(&[GO_ON]),
        2,
        "[{}] resumed once per limit\n{}",
        client.label,
        scene.model.summary()
    );
}

/// Every teammate's `parked` in `ctl status --json` (name → the object, `Null` when not parked).
fn parked_status(scene: &Scene) -> Vec<(String, serde_json::Value)> {
    let out = scene.ctl(&["status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    status["teammates"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap_or("").to_string(),
                        t["parked"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The requests refused at the limit since the first `from` of them, one line each (last user
/// text, tools, the start of the system prompt): what asked the model while it was limited.
fn refused_since(scene: &Scene, from: usize) -> Vec<String> {
    let requests = scene.model.requests();
    scene.model.refused()[from..]
        .iter()
        .map(|&i| {
            let r = &requests[i];
            let text: String = r.last_user_text().chars().take(200).collect();
            let system: String = r.system_text().chars().take(120).collect();
            format!("#{i} [{} tools, system {system:?}] {text}", r.tools().len())
        })
        .collect()
}

/// How many turns were refused since the first `from` refusals: refused requests with tools
/// (a side request, a title or a quota check, has none), one per last user text (the client
/// sending the refused request again is not a new turn: what the lead sends is).
fn refused_turns_since(scene: &Scene, from: usize) -> usize {
    let requests = scene.model.requests();
    let mut texts: Vec<String> = scene.model.refused()[from..]
        .iter()
        .map(|&i| &requests[i])
        .filter(|r| !r.tools().is_empty())
        .map(|r| r.last_user_text())
        .collect();
    texts.sort();
    texts.dedup();
    texts.len()
}

/// Opens the teams dialog, waits until every one of `names` has a row holding `text`, and
/// closes it.
fn dialog_shows(scene: &Scene, names: &[&str], text: &str) {
    scene.keys(&["Down"]);
    scene.wait_screen("the footer badge selected", |s| {
        s.contains("open the teams dialog")
    });
    scene.keys(&["Enter"]);
    scene.wait_screen(&format!("the teams dialog showing {text}"), |s| {
        names.iter().all(|name| {
            s.lines()
                .any(|l| l.contains(&format!("● {name}")) && l.contains(text))
        })
    });
    scene.keys(&["Escape"]);
    scene.wait_screen("the teams dialog closed", |s| {
        s.contains("shift+tab to cycle") && !s.contains("esc close") && !s.contains("❯ ●")
    });
}

/// The acceptance of issue 30: a team of two of teamlead's own teammates (`--engine llm`)
/// and two claude teammates. One of the own hits the account's limit with its reset 3 s
/// ahead; with resuming on all four are parked (the dialog and `ctl status --json` say so),
/// messages sent meanwhile are held, no turn starts until the reset, then each is resumed
/// once, the limited one first. Then a cut-off before the next reset keeps the team parked.
pub fn two_own_and_two_claude_parked_and_resumed(client: &Client) {
    let rules = vec![
        Rule::on("PK-LIMIT-SOON", Act::Limit { reset_in_s: 3 }).once(),
        Rule::on("PK-LIMIT-LATE", Act::Limit { reset_in_s: 900 }).once(),
        Rule::on(GO_ON, Act::Text("PK-GONE-ON".into())),
    ];
    let scene =
        Scene::start_where_env(client, "cc-park4", rules, &["--engine", "llm"], &SUBSCRIBER);
    resume_on(&scene);
    let team = ["cc1", "cc2", "own1", "own2"];
    for name in team {
        let agent = if name.starts_with("own") {
            "--agent builtin "
        } else {
            ""
        };
        scene.spawn(name, &format!("{agent}PK-HELLO-{name} say hello"));
    }
    let refused = scene.model.refused().len();
    scene.submit("@own1 PK-LIMIT-SOON go");
    scene.wait("the limit refused", || {
        scene.model.refused().len() > refused
    });
    let limited_at = now_ms();
    scene.wait("the team parked", || {
        count_notes(&scene, "own1 hit the usage limit") == 1
            && count_notes(&scene, "The team is parked") == 1
    });
    // Work for the other three while parked: held.
    for name in ["own2", "cc1", "cc2"] {
        let work = format!("PK-WORK-{name}");
        scene
            .model
            .add(Rule::on(&work, Act::Text(format!("{work}-DONE"))));
        scene.submit(&format!("@{name} {work} now"));
        scene.wait(&format!("{name}'s message held"), || {
            count_notes(
                &scene,
                &format!("{name} is parked at the usage limit: this is held"),
            ) == 1
        });
    }
    let parked = parked_status(&scene);
    assert!(
        parked.len() == 4
            && parked
                .iter()
                .all(|(_, p)| p["reset"].is_string() && p["resume_at"].is_string()),
        "[{}] all four parked in ctl status --json: {parked:?}",
        client.label
    );
    dialog_shows(&scene, &team, "parked · resumes");
    wait_long(&scene, "all four resumed", || {
        count_notes(&scene, "(4 of 4) after the usage limit's reset") == 1
    });
    let first_resume = note_times(&scene, "Resumed own1 (1 of 4)");
    assert_eq!(first_resume.len(), 1, "[{}] own1 first", client.label);
    for (i, name) in ["cc1", "cc2", "own2"].iter().enumerate() {
        assert_eq!(
            count_notes(&scene, &format!("Resumed {name} ({} of 4)", i + 2)),
            1,
            "[{}] {name} resumed once, in its turn",
            client.label
        );
    }
    let between: Vec<(u64, String)> = turns_after(&scene, limited_at)
        .into_iter()
        .filter(|(at, _)| *at < first_resume[0])
        .collect();
    assert!(
        between.is_empty(),
        "[{}] a turn started while parked: {between:?}",
        client.label
    );
    assert_eq!(
        refused_turns_since(&scene, refused),
        1,
        "[{}] one turn refused, nothing asked the model again before the reset; refused:\n{}",
        client.label,
        refused_since(&scene, refused).join("\n")
    );
    scene.wait("each resumed teammate's turn", || {
        scene.model.turns_on(&[GO_ON]) >= 1
            && ["own2", "cc1", "cc2"]
                .iter()
                .all(|n| scene.model.turns_on(&[&format!("PK-WORK-{n}")]) >= 1)
    });
    assert_eq!(
        scene.model.turns_on(&[GO_ON]),
        1,
        "[{}] own1 told once",
        client.label
    );
    for name in ["own2", "cc1", "cc2"] {
        assert_eq!(
            scene.model.turns_on(&[&format!("PK-WORK-{name}")]),
            1,
            "[{}] {name} took its held message once\n{}",
            client.label,
            scene.model.summary()
        );
    }
    assert!(parked_status(&scene).iter().all(|(_, p)| p.is_null()));

    // A cut-off two minutes from now, and a limit whose reset is 15 minutes away: parked,
    // and not resuming by itself.
    let cutoff = (chrono::Local::now() + chrono::Duration::minutes(2))
        .format("%H:%M")
        .to_string();
    scene.submit(&format!("/limits resume-until {cutoff}"));
    scene.wait("the cut-off set", || {
        count_notes(&scene, &format!("starts past {cutoff}")) == 1
    });
    scene.submit("@cc1 PK-LIMIT-LATE go");
    scene.wait("parked past the cut-off", || {
        count_notes(&scene, "stays parked: the reset is past the cut-off") == 1
    });
    dialog_shows(&scene, &team, "parked · past the cut-off");
    let parked = parked_status(&scene);
    assert!(
        parked.len() == 4
            && parked
                .iter()
                .all(|(_, p)| p["reset"].is_string() && p["resume_at"].is_null()),
        "[{}] parked with no resume time: {parked:?}",
        client.label
    );
}
