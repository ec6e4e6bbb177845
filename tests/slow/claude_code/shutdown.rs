//! Ending `claude` teammates: `/shutdown` (the model answers the `shutdown_request` with a
//! `shutdown_response` in its version's schema; the client writes `shutdown_approved` and
//! exits; the lead closes the pane and removes the member), `/kill`, and `/quit` with several
//! teammates (no pane, process or team left).

use std::time::Instant;

use crate::claude_code_common::panes_common::alive;
use crate::claude_code_common::{Act, Client, Rule, Scene, timing};

fn rules() -> Vec<Rule> {
    vec![Rule::on("shutdown_request", Act::ApproveShutdown)]
}

/// Waits until `name`'s pane, processes (`pids`, found while it ran) and member entry are gone.
fn wait_gone(scene: &Scene, name: &str, pane: &str, pids: &[u32]) {
    scene.wait(
        &format!("{name}'s pane, process and member entry to go"),
        || {
            !scene.pane_exists(pane)
                && pids.iter().all(|p| !alive(*p))
                && scene.member(name).is_null()
        },
    );
}

pub fn shutdown_and_kill(client: &Client) {
    let scene = Scene::start(client, "cc-stop", rules(), &[]);
    scene.spawn("quitter", "CC-IDLE wait");
    scene.spawn("victim", "CC-IDLE wait");
    let pane = scene.pane_of("quitter");
    let pids = scene.teammate_pids("quitter");
    assert!(!pids.is_empty(), "{}", scene.explain());

    // /shutdown: the handshake.
    scene.type_text("/shutdown quitter");
    scene.wait_screen("the /shutdown line", |s| s.contains("/shutdown quitter"));
    let start = Instant::now();
    scene.keys(&["Enter"]);
    scene.wait("the pane to close", || !scene.pane_exists(&pane));
    timing(client, "/shutdown -> pane gone", start.elapsed());
    wait_gone(&scene, "quitter", &pane, &pids);
    assert!(
        scene
            .lead_mail("quitter")
            .iter()
            .any(|t| t.contains("shutdown_approved")),
        "[{}] no shutdown_approved from the teammate\n{}",
        client.label,
        scene.explain()
    );
    scene.wait_screen("the shut-down note", |s| {
        s.contains("quitter has shut down")
    });

    // /kill: no handshake.
    let pane = scene.pane_of("victim");
    let pids = scene.teammate_pids("victim");
    scene.submit("/kill victim");
    wait_gone(&scene, "victim", &pane, &pids);
}

pub fn quit_with_several_teammates(client: &Client) {
    let scene = Scene::start(client, "cc-quit", rules(), &[]);
    scene.spawn("one", "CC-IDLE wait");
    scene.spawn("two", "CC-IDLE wait");
    let panes = [scene.pane_of("one"), scene.pane_of("two")];
    let mut pids = scene.teammate_pids("one");
    pids.extend(scene.teammate_pids("two"));
    let server = scene.server_pid().expect("the lead server");
    scene.submit("/quit");
    scene.wait(
        "the lead to exit and every pane, process and the team to go",
        || {
            !alive(scene.lead_pid)
                && !alive(server)
                && panes.iter().all(|p| !scene.pane_exists(p))
                && pids.iter().all(|p| !alive(*p))
                && !scene.ws.team_dir().exists()
        },
    );
}
