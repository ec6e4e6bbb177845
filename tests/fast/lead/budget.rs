//! `/budget` reads back: alone it shows the team's budget and spend and each teammate's
//! budget and what it spent (a teammate that runs no model says it costs nothing); a name not
//! in the team is refused as every command naming one is; the views (`ctl status --json`)
//! carry each teammate's budget and whether it costs nothing.

use crate::lead_common::Session;
use teamlead::protocol::InboxEntry;
use teamlead::protocol::frames::{Frame, IdleNotification, IdleReason};
use teamlead::protocol::time::now_iso;
use teamlead::store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budget_alone_shows_budgets_and_spend_and_unknown_names_are_refused() {
    let mut s = Session::start_with("spend", |mut opts| {
        opts.budget_team = Some(10_000_000);
        opts
    })
    .await;
    s.add_pane_member("alpha", "%1", "default").await;
    store::team::edit_team(&s.home, &s.team, |file| {
        if let Some(m) = file.member_mut("alpha") {
            m.model = Some("claude-sonnet-4-5".into());
        }
        Ok(())
    })
    .unwrap();
    let idle = IdleNotification {
        from: "alpha".into(),
        timestamp: now_iso(),
        idle_reason: Some(IdleReason::Available),
        summary: None,
        completed_task_id: None,
        completed_status: None,
        failure_reason: None,
        result: None,
        usage: Some(teamlead::protocol::frames::ReportedUsage {
            input_tokens: 11_000,
            ..Default::default()
        }),
        limit_until_ms: None,
    };
    s.to_lead(&InboxEntry::frame("alpha", &Frame::IdleNotification(idle)));
    s.wait_team("alpha's usage", |t| {
        t.iter()
            .any(|v| v.name == "alpha" && v.usage.as_ref().is_some_and(|u| u.cost_micros.is_some()))
    })
    .await;
    s.submit("/spawn beta \"wait\"").await;
    s.wait_note("Spawned beta").await;

    s.submit("/budget nobody 3").await;
    let refused = s.wait_note("nobody").await;
    assert!(!refused.contains("budget is now"), "{refused}");
    s.submit("/budget beta 2").await;
    s.wait_note("beta's budget is now $2.00").await;
    let team = s
        .wait_team("beta's budget in the views", |t| {
            t.iter()
                .any(|v| v.name == "beta" && v.budget_micros == Some(2_000_000))
        })
        .await;
    let beta = team.iter().find(|v| v.name == "beta").unwrap();
    assert!(beta.costs_nothing, "{beta:?}");

    s.submit("/budget").await;
    let report = s.wait_note("Budgets:").await;
    insta::assert_snapshot!("budget_report", report);
    s.quit().await;
}
