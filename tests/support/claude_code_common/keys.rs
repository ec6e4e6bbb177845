//! The key sequences that answer the lead's dialogs, in one place: the permission dialog (yes,
//! always, no with feedback) and the plan dialog (approve into a mode, reject with feedback).
//! Each answers on purpose, as the approvals policy asks of a person: it waits until the request
//! is on screen (its dialog or the banner of a waiting request), opens the dialog with Ctrl+P
//! and waits until it takes keys (`keys::Keyboard::open_approvals`: a key that changes no
//! answer is pressed until it shows, since the dialog ignores keys for its grace period), then
//! types the answer. "Always" is two steps: the option, then the confirmation of the exact
//! rule, pressed until it is taken (the changed content starts the grace period again, and the
//! confirmation has no key that changes nothing).

use super::Scene;
use teamlead_test_support::keys::{Key, Keyboard};

/// Confirms the second step of "always" once it shows the rule.
fn confirm_always(scene: &Scene) {
    scene.wait_screen("the always confirmation", |s| s.contains("Always?"));
    scene.press_until(Key::Char('a'), "the always confirmation to be taken", |s| {
        !s.contains("Always?")
    });
}

/// The option the permission dialog's selection (`❯`) is on: its label, up to the gap before
/// the next option.
fn selected_option(screen: &str) -> Option<String> {
    let line = screen.lines().find(|l| l.contains("❯ "))?;
    let label = &line[line.find("❯ ")? + "❯ ".len()..];
    Some(
        label
            .split("   ")
            .next()
            .unwrap_or(label)
            .trim()
            .to_string(),
    )
}

/// An answer to the permission dialog.
#[derive(Debug, Clone)]
pub enum PermissionAnswer {
    Yes,
    /// The first "Yes, and …" option (the request's first suggestion, or "always allow the
    /// tool this session" when it has none).
    Always,
    /// The "Yes, and …" option whose label contains this text.
    AlwaysOption(String),
    No(String),
}

/// Waits for the permission dialog, then answers its head.
pub fn answer_permission(scene: &Scene, answer: PermissionAnswer) {
    scene.wait_screen("the permission request", |s| {
        s.contains("needs permission") || s.contains("ctrl+p")
    });
    scene.open_approvals();
    match answer {
        PermissionAnswer::Yes => scene.keys(&["y"]),
        PermissionAnswer::Always => {
            scene.keys(&["a"]);
            confirm_always(scene);
        }
        PermissionAnswer::AlwaysOption(label) => {
            // Move the selection to the option, then choose it.
            let selected = |s: &str| selected_option(s).is_some_and(|o| o.contains(&label));
            for _ in 0..6 {
                let before = selected_option(&scene.screen());
                if before.as_ref().is_some_and(|o| o.contains(&label)) {
                    break;
                }
                scene.press(Key::Right);
                scene.wait_screen("the selection to move", |s| selected_option(s) != before);
            }
            scene.wait_screen(&format!("the option `{label}` selected"), selected);
            scene.keys(&["Enter"]);
            confirm_always(scene);
        }
        PermissionAnswer::No(feedback) => {
            scene.keys(&["n"]);
            scene.wait_screen("the feedback input", |s| s.contains("why"));
            scene.type_text(&feedback);
            scene.wait_screen("the typed feedback", |s| s.contains(&feedback));
            scene.keys(&["Enter"]);
        }
    }
}

/// Waits for the plan dialog showing `plan_marker`, then approves it into `mode` (one of
/// default / acceptEdits / bypassPermissions; the dialog starts at the lead's mode, default).
pub fn approve_plan(scene: &Scene, plan_marker: &str, mode: &str) {
    wait_plan(scene, plan_marker);
    let steps = match mode {
        "default" => 0,
        "acceptEdits" => 1,
        "bypassPermissions" => 2,
        other => panic!("no plan approval into {other}"),
    };
    for _ in 0..steps {
        scene.keys(&["Right"]);
    }
    scene.wait_screen(&format!("the plan dialog on {mode}"), |s| {
        s.contains(&format!("◂ {mode} ▸"))
    });
    scene.keys(&["y"]);
}

/// Waits for the plan dialog showing `plan_marker`, then rejects it with `feedback`.
pub fn reject_plan(scene: &Scene, plan_marker: &str, feedback: &str) {
    wait_plan(scene, plan_marker);
    scene.keys(&["n"]);
    scene.wait_screen("the plan feedback input", |s| {
        s.contains(plan_marker) && !s.contains("◂ ")
    });
    scene.type_text(feedback);
    scene.wait_screen("the typed plan feedback", |s| s.contains(feedback));
    scene.keys(&["Enter"]);
}

fn wait_plan(scene: &Scene, plan_marker: &str) {
    scene.wait_screen("the plan request", |s| {
        s.contains(plan_marker) || s.contains("ctrl+p")
    });
    scene.open_approvals();
    scene.wait_screen("the plan dialog", |s| {
        s.contains(plan_marker) && s.contains("◂ ")
    });
}
