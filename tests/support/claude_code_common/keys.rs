//! The key sequences that answer the lead's dialogs, in one place: the permission dialog (yes,
//! always, no with feedback) and the plan dialog (approve into a mode, reject with feedback).
//! Each answers on purpose, as the approvals policy asks of a person: it waits until the request
//! is on screen (its dialog or the banner of a waiting request), presses Ctrl+P (which opens the
//! dialog or keeps it on top), waits out the dialog's key grace period
//! (`teamlead::ui::modal::guard::GRACE_MS`, a known constant, plus a margin), then types the
//! answer. "Always" is two steps: the option, then — after the grace period that the changed
//! content starts again — the confirmation of the exact rule.

use std::time::Duration;

use super::Scene;

/// Longer than the dialogs' key grace period.
fn grace() -> Duration {
    Duration::from_millis(teamlead::ui::modal::guard::GRACE_MS + 200)
}

/// Opens the approvals dialog on purpose and waits out its grace period.
fn focus(scene: &Scene) {
    scene.keys(&["C-p"]);
    std::thread::sleep(grace());
}

/// Confirms the second step of "always" once it shows the rule.
fn confirm_always(scene: &Scene) {
    scene.wait_screen("the always confirmation", |s| s.contains("Always?"));
    std::thread::sleep(grace());
    scene.keys(&["a"]);
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
    focus(scene);
    scene.wait_screen("the permission dialog", |s| s.contains("needs permission"));
    match answer {
        PermissionAnswer::Yes => scene.keys(&["y"]),
        PermissionAnswer::Always => {
            scene.keys(&["a"]);
            confirm_always(scene);
        }
        PermissionAnswer::AlwaysOption(label) => {
            // Move the selection to the option, then choose it.
            let selected = |s: &str| s.lines().any(|l| l.contains('❯') && l.contains(&label));
            for _ in 0..6 {
                if selected(&scene.screen()) {
                    break;
                }
                scene.keys(&["Right"]);
                std::thread::sleep(Duration::from_millis(150));
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
    focus(scene);
    scene.wait_screen("the plan dialog", |s| {
        s.contains(plan_marker) && s.contains("◂ ")
    });
}
