//! The lead liveness lock: held means alive; dropped, or its process killed with SIGKILL,
//! means not alive — the kernel releases the flock however the lead dies.

use crate::store_common;

use std::time::Duration;

use teamlead_protocol::store::liveness::lead_pid;
use teamlead_protocol::store::{LeadLiveness, StoreError, is_lead_alive};

use store_common::{ChildGuard, ChildJob, TempHome, child_command, wait_until};

#[test]
fn held_is_alive_and_dropped_is_not() {
    let t = TempHome::new();
    assert!(!is_lead_alive(&t.home, "alpha"), "no lock file yet");
    let held = LeadLiveness::acquire(&t.home, "alpha").unwrap();
    assert!(is_lead_alive(&t.home, "alpha"));
    assert_eq!(lead_pid(&t.home, "alpha"), Some(std::process::id()));
    assert!(held.path().ends_with("teams/alpha/.teamlead/lead.lock"));
    // Checking does not take it away, and a second lead is refused.
    assert!(is_lead_alive(&t.home, "alpha"));
    let err = LeadLiveness::acquire(&t.home, "alpha").unwrap_err();
    assert!(matches!(err, StoreError::LeadAlive { .. }), "{err}");
    assert!(err.to_string().contains(&std::process::id().to_string()));
    drop(held);
    assert!(!is_lead_alive(&t.home, "alpha"));
    // Another team is independent.
    let _a = LeadLiveness::acquire(&t.home, "alpha").unwrap();
    assert!(!is_lead_alive(&t.home, "beta"));
}

#[test]
fn a_lead_killed_with_sigkill_is_not_alive() {
    let t = TempHome::new();
    let mut child = ChildGuard(
        child_command(ChildJob::HoldLead {
            home: &t.home.root,
            team: "alpha",
        })
        .spawn()
        .unwrap(),
    );
    let marker = t.home.root.join("held-marker");
    assert!(wait_until(Duration::from_secs(20), || marker.exists()));
    assert!(is_lead_alive(&t.home, "alpha"));
    assert_eq!(lead_pid(&t.home, "alpha"), Some(child.0.id()));
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || !is_lead_alive(&t.home, "alpha")),
        "the lock outlived its process"
    );
    // A new lead can take over at once.
    LeadLiveness::acquire(&t.home, "alpha").unwrap();
}
