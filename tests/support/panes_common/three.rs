//! The scenario every pane backend's test starts with: the lead spawns three teammates, `a`,
//! `b` and `c` (palette order: red, blue, green), and each shows up in a pane of its own.

use std::time::Duration;

use super::{Workspace, wait_until};
use teamlead_test_support::keys::Keyboard;

/// The three teammates, in spawn order, with the color the lead gives each.
pub const THREE: [(&str, &str); 3] = [("a", "red"), ("b", "blue"), ("c", "green")];

/// Spawns [`THREE`] from `lead` (`/spawn NAME say hi`, each waited for as `Spawned NAME:` on
/// its screen), then checks each teammate as config.json records it (`backend` as its
/// `backendType`, its palette color, a pane) and waits until that pane shows it started
/// (`NAME@TEAM started` in `pane_text(pane)`). Every wait is up to `limit`. Returns the panes
/// in spawn order.
pub fn spawn_three(
    lead: &impl Keyboard,
    ws: &Workspace,
    backend: &str,
    limit: Duration,
    pane_text: impl Fn(&str) -> String,
) -> Vec<String> {
    for (name, _) in THREE {
        lead.type_line(&format!("/spawn {name} say hi"));
        let spawned = format!("Spawned {name}:");
        wait_until(
            &format!("`{spawned}`"),
            limit,
            || lead.screen().contains(&spawned),
            || format!("lead screen:\n{}", lead.screen()),
        );
    }
    THREE
        .iter()
        .map(|(name, color)| {
            let config = ws.config();
            let member = config["members"]
                .as_array()
                .and_then(|ms| ms.iter().find(|m| m["name"] == *name))
                .unwrap_or_else(|| panic!("{name} is not a member: {config}"));
            assert_eq!(member["backendType"], backend, "{member}");
            assert_eq!(member["color"], *color, "{member}");
            let pane = ws
                .pane_of(name)
                .unwrap_or_else(|| panic!("no pane recorded for {name}: {config}"));
            let header = format!("{name}@{} started", ws.team);
            wait_until(
                &format!("{name}'s header in its pane"),
                limit,
                || pane_text(&pane).contains(&header),
                || format!("pane {pane}:\n{}", pane_text(&pane)),
            );
            pane
        })
        .collect()
}
