//! The kitty backend against a real kitty (Debian's 0.26) under Xvfb with software rendering:
//! each test starts its own X server (`-displayfd`, a free display) and kitty with remote control
//! on a private socket, HOME and config, and kills both on drop (`kitty_common`). Three teammate
//! windows beside the lead's, titled (borders keep kitty's colors), a typed command line that runs, hide/show
//! between tabs, focus, liveness from `ls`, a window that closes with its program, and kill.

use crate::kitty_common;

use std::path::Path;
use std::time::{Duration, Instant};

use kitty_common::{KITTY_ACTIVE_BORDER, RealKitty};
use teamlead::backend::terminals::kitty::rc as kitty_rc;
use teamlead::backend::terminals::kitty::{KittyBackend, parse_ls};
use teamlead::backend::{PaneBackend, PaneState};
use teamlead::protocol::Color;

const WAIT: Duration = Duration::from_secs(30);

fn wait_until(what: &str, cond: impl FnMut() -> bool) {
    teamlead_test_support::wait::wait_until(what, WAIT, cond, String::new);
}

#[test]
fn real_kitty_windows_beside_the_lead_titles_colors_commands_hide_show_focus_kill() {
    let start = Instant::now();
    let kitty = RealKitty::start();
    let lead = kitty.windows()[0].1.clone();
    let lead_tab = kitty.tab_of(&lead).unwrap();
    let backend = KittyBackend::new(&kitty.program, &kitty.listen_on, &lead);

    let mut windows = Vec::new();
    for (name, color) in [("a", Color::Red), ("b", Color::Blue), ("c", Color::Green)] {
        let w = backend.create_pane().unwrap();
        PaneBackend::style(&backend, &w, name, Some(color)).unwrap();
        windows.push(w);
    }
    let started_in = start.elapsed();
    for (w, name) in windows.iter().zip(["a", "b", "c"]) {
        assert_eq!(backend.title(w).as_deref(), Some(name));
        assert_eq!(kitty.tab_of(w), Some(lead_tab.clone()), "beside the lead");
    }
    // kitty's border colors are global: the lead's window keeps kitty's own active border.
    wait_until("the lead's active border on screen", || {
        kitty.pixels_of(KITTY_ACTIVE_BORDER) > 0
    });
    // The liveness poll asks kitty's socket itself, not `kitty @`: the same windows.
    let over_socket = kitty_rc::ls(&kitty.listen_on).expect("ls answered on kitty's socket");
    assert_eq!(parse_ls(&over_socket).unwrap(), kitty.windows());
    assert_eq!(
        backend.pane_states(&windows),
        vec![PaneState::Running; 3],
        "placeholders wait for their command"
    );

    // The command line typed into the placeholder runs; the window closes when it ends.
    let proof = kitty.dir.path().join("proof.txt");
    let line = format!("echo ran > '{}'", proof.display());
    backend.run_command(&windows[2], &line).unwrap();
    wait_until("the typed command to run", || {
        std::fs::read_to_string(&proof).is_ok_and(|t| t == "ran\n")
    });
    wait_until("c's window to close with its program", || {
        backend.pane_states(&windows[2..]) == vec![PaneState::Gone]
    });

    // Hide moves a window to a tab of its own, show brings it back beside the lead.
    backend.hide(&windows[1]).unwrap();
    wait_until("b in another tab", || {
        kitty.tab_of(&windows[1]).is_some_and(|t| t != lead_tab)
    });
    // The keyboard stays with the lead: hide and show never hand it to the teammate.
    assert_eq!(
        kitty.focused(),
        Some(lead.clone()),
        "the lead has the focus after hide"
    );
    backend.show(&windows[1]).unwrap();
    wait_until("b back beside the lead", || {
        kitty.tab_of(&windows[1]) == Some(lead_tab.clone())
    });
    assert_eq!(
        kitty.focused(),
        Some(lead.clone()),
        "the lead has the focus after show"
    );
    backend.focus(&windows[0]).unwrap();

    backend.kill(&windows[0]).unwrap();
    backend.kill(&windows[1]).unwrap();
    wait_until("a and b closed", || {
        backend.pane_states(&windows[..2]) == vec![PaneState::Gone; 2]
    });
    assert_eq!(kitty.windows().len(), 1, "only the lead's window is left");
    assert!(Path::new(&kitty.dir.path()).exists());
    eprintln!(
        "timings: kitty up + 3 windows {started_in:?}, whole test {:?}",
        start.elapsed()
    );
}
