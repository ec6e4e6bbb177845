//! Frames a `claude` teammate sends the lead are never lost silently (issue 27): over 30 turns,
//! each begun by a message from the lead, the teammate asks to run a command (a
//! `permission_request`) and sends the lead a message, half the turns in each order, so each
//! kind is the first frame of a turn 15 times (the client's own in-place `isActive` write at a
//! turn's start is where a request can fail, docs/PROTOCOL.md §4). Every one of the 60 frames
//! must either reach the lead (its inbox or delivery log) or be shown in the lead as not
//! delivered, naming the teammate and what it carried. Run with a model that answers at once
//! and with the usual time to first token.

use std::time::{Duration, Instant};

use crate::claude_code_common::{Act, Client, PermissionAnswer, Rule, Scene, timing};
use crate::model_server::DEFAULT_LATENCY;

/// How many turns: each carries one permission request and one message.
const TURNS: usize = 30;

/// Turns (after those) in which the lead's inbox lock is held by the test for the whole turn,
/// so the client's writes to the lead's inbox fail as the torn read makes them fail: on a
/// client that says so in its tool results (2.1.332), both frames must be shown as not
/// delivered, and its lost idle notification must not leave the lead calling it working.
const FAULT_TURNS: usize = 4;

/// What became of the frames of one kind.
#[derive(Debug, Default, Clone, Copy)]
struct Count {
    delivered: usize,
    shown: usize,
    lost: usize,
}

fn command(i: usize) -> String {
    format!("touch frame_{i:02}.txt")
}

fn reply(i: usize) -> String {
    format!("CC-FRAME-REPLY-{i:02}")
}

/// The lead's inbox lock, taken by the test as a writer takes it (once the lead or the client
/// lets it go) and held as a live writer holds it: its time refreshed, so no one takes it as
/// stale. Released by [`HeldInboxLock::release`] or on drop.
struct HeldInboxLock {
    lock: std::path::PathBuf,
    holding: std::sync::Arc<std::sync::atomic::AtomicBool>,
    refresher: Option<std::thread::JoinHandle<()>>,
}

impl HeldInboxLock {
    fn take(scene: &Scene) -> HeldInboxLock {
        let lock = scene
            .ws
            .team_dir()
            .join("inboxes")
            .join("team-lead.json.lock");
        teamlead_test_support::wait::wait_until(
            "the lead's inbox lock free to hold",
            Duration::from_secs(30),
            || std::fs::create_dir(&lock).is_ok(),
            || format!("{} still held", lock.display()),
        );
        let holding = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let refresher = {
            let (lock, holding) = (lock.clone(), holding.clone());
            std::thread::spawn(move || {
                while holding.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(dir) = std::fs::File::open(&lock) {
                        let _ = dir.set_modified(std::time::SystemTime::now());
                    }
                    std::thread::sleep(Duration::from_millis(500));
                }
            })
        };
        HeldInboxLock {
            lock,
            holding,
            refresher: Some(refresher),
        }
    }

    fn release(mut self) {
        self.let_go();
    }

    fn let_go(&mut self) {
        let Some(refresher) = self.refresher.take() else {
            return;
        };
        self.holding
            .store(false, std::sync::atomic::Ordering::Relaxed);
        refresher.join().expect("the lock's refresher");
        std::fs::remove_dir(&self.lock).expect("release the lead's inbox lock");
    }
}

impl Drop for HeldInboxLock {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.let_go();
        } else {
            self.holding
                .store(false, std::sync::atomic::Ordering::Relaxed);
            let _ = std::fs::remove_dir(&self.lock);
        }
    }
}

/// The notes of the lead (`ctl events --json`).
fn notes(scene: &Scene) -> Vec<String> {
    let out = scene.ctl(&["events", "--json"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["kind"] == "note")
        .filter_map(|e| e["text"].as_str().map(str::to_string))
        .collect()
}

/// Whether the lead showed `what` of `name` as not delivered.
fn shown_undelivered(notes: &[String], name: &str, what: &str) -> bool {
    notes
        .iter()
        .any(|n| n.starts_with(name) && n.contains("never reached the lead") && n.contains(what))
}

/// The last status `ctl events` told for `name`.
fn teammate_status(scene: &Scene, name: &str) -> Option<String> {
    let out = scene.ctl(&["events", "--json"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["kind"] == "teammate" && e["name"] == name)
        .filter_map(|e| e["status"].as_str().map(str::to_string))
        .next_back()
}

fn requested(scene: &Scene, name: &str, i: usize) -> bool {
    scene
        .permission_requests(name)
        .iter()
        .any(|r| r["input"]["command"] == command(i).as_str())
}

fn messaged(scene: &Scene, name: &str, i: usize) -> bool {
    scene.lead_mail(name).iter().any(|t| t.contains(&reply(i)))
}

pub fn frames_at_once(client: &Client) {
    frames_reach_the_lead_or_are_shown(client, Duration::ZERO);
}

pub fn frames_with_latency(client: &Client) {
    frames_reach_the_lead_or_are_shown(client, DEFAULT_LATENCY);
}

fn frames_reach_the_lead_or_are_shown(client: &Client, latency: Duration) {
    let label = client.label;
    let bash = |i: usize| Act::Bash {
        command: command(i),
        description: format!("frame {i}"),
    };
    let send = |i: usize| Act::SendToLead {
        summary: format!("reply {i}"),
        message: reply(i),
    };
    // Only a client that reports a failed write can be checked with the fault (2.1.45 writes
    // nothing when its write fails: docs/PROTOCOL.md §4).
    let faults = if client.label == "2.1.45" {
        0
    } else {
        FAULT_TURNS
    };
    let rules: Vec<Rule> = (0..TURNS + faults)
        .map(|i| {
            let (first, second) = if i % 2 == 0 {
                (bash(i), send(i))
            } else {
                (send(i), bash(i))
            };
            Rule::seq(
                &format!("CC-FRAME-TURN-{i:02}"),
                vec![first, second, Act::Text(format!("CC-FRAME-DONE-{i:02}"))],
            )
            .once()
        })
        .collect();
    let scene = Scene::start(client, "cc-frames", rules, &[]);
    scene.model.set_latency(latency);
    let name = "worker";
    scene.spawn(name, "CC-IDLE wait for instructions");
    let started = Instant::now();
    let (mut asks, mut messages) = (Count::default(), Count::default());
    let mut idles_missing = 0;
    for i in 0..TURNS {
        let tool_requests = |scene: &Scene| {
            scene
                .model
                .requests()
                .iter()
                .filter(|r| !r.tools().is_empty())
                .count()
        };
        let asked_before = tool_requests(&scene);
        let before = scene.say(name, &format!("CC-FRAME-TURN-{i:02} go"));
        // The permission request: answered when it arrives, else shown as not delivered.
        let mut shown = false;
        let deadline = Instant::now() + Duration::from_secs(30);
        let asked = loop {
            if requested(&scene, name, i) {
                break true;
            }
            if shown_undelivered(&notes(&scene), name, &command(i)) {
                shown = true;
                break false;
            }
            if Instant::now() > deadline {
                break false;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        if asked {
            asks.delivered += 1;
            scene.answer(PermissionAnswer::Yes);
        } else if shown {
            asks.shown += 1;
        } else {
            asks.lost += 1;
            eprintln!("[{label}] turn {i}: the permission request was lost silently");
            // The teammate may wait for an answer that never comes: stop its turn.
            scene.submit(&format!("/interrupt {name}"));
        }
        // Its three model steps (the last ends the turn), then its idle notification.
        scene.wait(&format!("turn {i}'s three model steps"), || {
            tool_requests(&scene) >= asked_before + 3 || !asked && !shown
        });
        let idle_deadline = Instant::now() + Duration::from_secs(10);
        while scene.idles(name) <= before && Instant::now() < idle_deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if scene.idles(name) <= before {
            idles_missing += 1;
            eprintln!("[{label}] turn {i}: no idle notification");
        }
        // The message: in the lead's mail, or shown as not delivered.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if messaged(&scene, name, i) {
                messages.delivered += 1;
                break;
            }
            if shown_undelivered(&notes(&scene), name, &reply(i)) {
                messages.shown += 1;
                break;
            }
            if Instant::now() > deadline {
                messages.lost += 1;
                eprintln!("[{label}] turn {i}: the message was lost silently");
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    timing(client, "30 turns of frames", started.elapsed());
    let mut fault_shown = 0;
    for i in TURNS..TURNS + faults {
        let held = HeldInboxLock::take(&scene);
        scene.submit(&format!("@{name} CC-FRAME-TURN-{i:02} go"));
        let shown = |what: &str| shown_undelivered(&notes(&scene), name, what);
        let both = scene.wait_try(Duration::from_secs(30), || {
            shown(&command(i)) && shown(&reply(i))
        });
        // Its turn ends meanwhile; its idle notification cannot be written either.
        let idle = scene.wait_try(Duration::from_secs(15), || {
            scene.config()["members"].as_array().is_some_and(|ms| {
                ms.iter()
                    .any(|m| m["name"] == name && m["isActive"] == false)
            })
        });
        held.release();
        assert!(
            both,
            "[{label}] fault turn {i}: the frames the client could not write were not shown as not delivered\n{:#?}\n{}",
            notes(&scene),
            scene.explain()
        );
        fault_shown += 2;
        assert!(
            idle,
            "[{label}] fault turn {i}: the turn did not end\n{}",
            scene.explain()
        );
        scene.wait(
            &format!("fault turn {i}: the lead shows {name} idle"),
            || teammate_status(&scene, name).as_deref() == Some("idle"),
        );
        scene.wait_screen(&format!("fault turn {i}'s message marked not done"), |s| {
            s.lines()
                .any(|l| l.contains(&format!("CC-FRAME-TURN-{i:02} go")) && l.contains("not done"))
        });
    }
    eprintln!(
        "frames [{label}] latency {} ms: permission requests delivered {} / shown as not delivered {} / lost silently {}; messages delivered {} / shown {} / lost {}; idle notifications missing {idles_missing}; fault turns: {fault_shown} frames shown as not delivered",
        latency.as_millis(),
        asks.delivered,
        asks.shown,
        asks.lost,
        messages.delivered,
        messages.shown,
        messages.lost
    );
    assert_eq!(
        (asks.lost, messages.lost),
        (0, 0),
        "[{label}] frames lost silently: {asks:?} {messages:?}\n{}",
        scene.explain()
    );
}

/// A permission request the client could not write to the lead's inbox (the test holds the
/// inbox's lock through the teammate's turn, as a busy lead or a torn read would make the write
/// fail): 2.1.45 never retries and says nothing of it (its pane shows `Waiting for team lead
/// approval` as for a request that arrived), 2.1.332 retries and then says so in its tool
/// result (or writes it on a retry once the lock is free). The lead must say that a request
/// never reached it, naming the teammate: never leave the person waiting for a request it
/// does not show.
pub fn a_permission_request_lost_on_the_way_is_shown(client: &Client) {
    let label = client.label;
    let rules = vec![Rule::on(
        "CC-LOST",
        Act::Bash {
            command: "touch lost_request.txt".into(),
            description: "Make a file".into(),
        },
    )];
    let scene = Scene::start(client, "cc-lost", rules, &[]);
    let name = "worker";
    scene.spawn(name, "CC-IDLE wait for messages");
    let held = HeldInboxLock::take(&scene);
    scene.say(name, "CC-LOST make the file");
    let pane = scene.pane_of(name);
    // The client is done trying to write its request: its pane says it sent it (2.1.45, which
    // does not know the write failed), or its tool result says it could not (2.1.332, after
    // its retries). Then the lock goes back to the lead.
    let tried = scene.wait_try(Duration::from_secs(60), || {
        scene
            .tmux
            .capture(&pane)
            .contains("Permission request sent to team")
            || scene.model.saw("could not be delivered")
    });
    held.release();
    assert!(
        tried,
        "[{label}] the client never tried to ask\n{}",
        scene.explain()
    );
    // 2.1.45 lost it for sure (it never retries): the lead must say so. 2.1.332 may still
    // have written it on a retry after the lock went back: then it is in the queue.
    let shown = || {
        notes(&scene)
            .iter()
            .any(|n| n.starts_with(name) && n.contains("never reached the lead"))
    };
    let delivered = || label != "2.1.45" && !scene.permission_requests(name).is_empty();
    let told = scene.wait_try(Duration::from_secs(30), || shown() || delivered());
    assert!(
        told,
        "[{label}] the lost request was not shown\nnotes: {:#?}\nrequests: {:?}\n{}",
        notes(&scene),
        scene.permission_requests(name),
        scene.explain()
    );
    assert!(
        !scene.work_file("lost_request.txt").exists(),
        "[{label}] the command ran without an answer"
    );
}
