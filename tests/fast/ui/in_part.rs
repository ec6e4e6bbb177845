//! A request or plan too large to show whole (`teamlead::lead::shown`): the dialog shows its
//! head, says it is shown in part with its full size and the file that holds it whole, and
//! offers no "always" rule built from the head (it could differ from the whole input's).
//! Snapshots of both dialogs at widths 80 and 40.

use crate::ui_common;

use serde_json::json;

use teamlead::lead::contract::LeadEvent;
use teamlead::lead::shown::{InPart, value_head};
use ui_common::*;

const WIDTHS: [u16; 2] = [80, 40];
const WHOLE: &str =
    "/home/ada/.claude/teams/demo/.teamlead/requests/permission-5d1c0a9e3b7f2a64.json";

fn huge_request() -> teamlead::lead::contract::PendingPermission {
    let mut r = bash_request(1, "alpha", "blue", "");
    let command = format!("echo {}", "0123456789abcdef".repeat(2_000_000));
    r.input = value_head(&json!({ "command": command }), 300);
    r.suggestions = Vec::new();
    r.in_part = Some(InPart {
        bytes: 32_000_018,
        full_at: Some(WHOLE.to_string()),
    });
    r
}

#[test]
fn a_request_shown_in_part_says_its_size_and_where_it_is_whole() {
    for w in WIDTHS {
        let mut state = state_with(vec![LeadEvent::Permissions(vec![huge_request()])]);
        let t = screen(&mut state, w, 20);
        let flat: String = rows(&t)
            .concat()
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '│')
            .collect();
        assert!(flat.contains("showninpart:30.5MBinall"), "{flat}");
        assert!(flat.contains(&WHOLE.replace(' ', "")), "{flat}");
        assert!(!flat.contains("Always"), "no rule from the head: {flat}");
        insta::assert_snapshot!(format!("in_part_permission_{w}"), t.backend());
    }
}

#[test]
fn a_plan_shown_in_part_says_its_size_and_where_it_is_whole() {
    for w in WIDTHS {
        let mut plan = plan_request("plan-1", "alpha", "blue");
        plan.plan =
            "# Plan\n1. read everything\n2. change everything… (shown in part: 5.0 MB in all)"
                .to_string();
        plan.in_part = Some(InPart {
            bytes: 5 * 1024 * 1024,
            full_at: Some(
                "/home/ada/.claude/teams/demo/.teamlead/requests/plan-77aa01b2c3d4e5f6.md"
                    .to_string(),
            ),
        });
        let mut state = state_with(vec![LeadEvent::Plans(vec![plan])]);
        let t = screen(&mut state, w, 20);
        let flat: String = rows(&t)
            .concat()
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '│')
            .collect();
        assert!(flat.contains("showninpart:5.0MBinall"), "{flat}");
        insta::assert_snapshot!(format!("in_part_plan_{w}"), t.backend());
    }
}
