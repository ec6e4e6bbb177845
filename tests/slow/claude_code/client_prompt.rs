//! A claude teammate that waits on Claude Code's own prompt in its pane (here the
//! bypass-permissions warning, shown until `.claude.json` has `bypassPermissionsModeAccepted`,
//! and as root only with `IS_SANDBOX=1`) is shown as waiting there, with what to do, never as
//! working, and gets no "has not started its first turn" report while it waits; answered in
//! its pane, it starts. As root without `IS_SANDBOX` the client refuses bypass mode and exits:
//! the lead tells that exit once, and nothing more about that teammate.

use std::time::{Duration, Instant};

use crate::claude_code_common::{Client, Scene, WAIT};

/// The lead's first-turn deadline in these scenes (`TEAMLEAD_FIRST_TURN_MS`).
const FIRST_TURN_MS: u64 = 12_000;

/// Until `until`, fails as soon as the lead's screen shows `text`.
fn never_shows(scene: &Scene, text: &str, until: Instant) {
    while Instant::now() < until {
        let screen = scene.screen();
        assert!(
            !screen.contains(text),
            "[{}] the lead said {text:?}\n{}",
            scene.client.label,
            scene.explain()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn stuck_on_the_bypass_warning(client: &Client) {
    let first_turn = FIRST_TURN_MS.to_string();
    let scene = Scene::start_with_env(
        client,
        "cc-prompt",
        Vec::new(),
        &[("IS_SANDBOX", "1"), ("TEAMLEAD_FIRST_TURN_MS", &first_turn)],
    );
    scene.submit("/spawn s1 --mode bypassPermissions CC-IDLE say hello");
    let spawned = Instant::now();
    scene.wait_screen("`Spawned s1`", |s| s.contains("Spawned s1"));
    let pane = scene.pane_of("s1");
    scene.wait("s1's pane to show the bypass warning", || {
        scene.tmux.capture(&pane).contains("Yes, I accept")
    });
    // Said once in the transcript, with the prompt and what to do.
    scene.wait_screen("the lead saying s1 waits on its own prompt", |s| {
        s.contains("s1 waits on Claude Code's own prompt in its pane")
            && s.contains("Bypass Permissions mode")
    });
    let screen = scene.screen();
    assert!(
        screen.contains("jump to its pane") && screen.contains("No, exit / Yes, I accept"),
        "[{}] the note does not say what to do\n{screen}",
        client.label
    );
    // The footer: waiting, not working.
    scene.wait_screen("the footer counting s1 as waiting", |s| {
        footer_says(s, "● 1 waiting")
    });
    // The teams dialog's row says where it waits.
    scene.keys(&["Down"]);
    scene.wait_screen("the footer badge selected", |s| {
        s.contains("open the teams dialog")
    });
    scene.keys(&["Enter"]);
    scene.wait_screen("s1's row waiting in its pane", |s| {
        s.lines()
            .any(|l| l.contains("● s1") && l.contains("waiting in its pane"))
    });
    scene.keys(&["Escape"]);
    scene.wait_screen("the teams dialog closed", |s| {
        s.contains("shift+tab to cycle") && !s.contains("esc close") && !s.contains("❯ ●")
    });
    // Past its first-turn deadline (and a safety poll), no second report of the same cause.
    never_shows(
        &scene,
        "has not started its first turn",
        spawned + Duration::from_millis(FIRST_TURN_MS) + Duration::from_secs(11),
    );
    assert!(
        footer_says(&scene.screen(), "● 1 waiting"),
        "[{}] s1 shown working while it waits on its prompt\n{}",
        client.label,
        scene.explain()
    );
    // Answered in its pane (the second choice, `Yes, I accept`), it starts its first turn.
    scene.tmux.run(&["send-keys", "-t", &pane, "Down"]).ok();
    scene.wait("the cursor on `Yes, I accept`", || {
        scene
            .tmux
            .capture(&pane)
            .lines()
            .any(|l| l.contains('❯') && l.contains("Yes, I accept"))
    });
    scene.tmux.run(&["send-keys", "-t", &pane, "Enter"]).ok();
    scene.wait("s1's first idle notification", || scene.idles("s1") > 0);
    scene.wait_screen("s1 no longer waiting on its prompt", |s| {
        footer_says(s, "● 1 idle")
    });
}

pub fn root_refuses_bypass_once(client: &Client) {
    // Only root is refused; anyone else would get the warning instead.
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").map(|m| m.uid()).ok() != Some(0) {
        eprintln!("skipping: only root is refused bypass mode");
        return;
    }
    let first_turn = FIRST_TURN_MS.to_string();
    let scene = Scene::start_with_env(
        client,
        "cc-root",
        Vec::new(),
        &[("TEAMLEAD_FIRST_TURN_MS", &first_turn)],
    );
    scene.submit("/spawn s1 --mode bypassPermissions CC-IDLE say hello");
    let spawned = Instant::now();
    scene.wait_screen("the lead telling s1's exit", |s| {
        s.contains("s1") && s.contains("exited (1")
    });
    let deadline =
        spawned + WAIT.min(Duration::from_millis(FIRST_TURN_MS) + Duration::from_secs(13));
    never_shows(&scene, "has not started its first turn", deadline);
    let screen = scene.screen();
    assert!(
        screen.contains("cannot be used with root"),
        "[{}] the exit note lacks the client's reason\n{screen}",
        client.label
    );
    assert_eq!(
        screen.matches("exited (1").count(),
        1,
        "[{}] the exit was told more than once\n{screen}",
        client.label
    );
}

/// The lead's footer line (its badge) says `badge` and nobody working.
fn footer_says(screen: &str, badge: &str) -> bool {
    screen
        .lines()
        .any(|l| l.contains("shift+tab to cycle") && l.contains(badge) && !l.contains("working"))
}
