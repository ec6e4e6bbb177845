//! A `claude` teammate whose rate or usage limit holds (its session transcript says so): the
//! teams view says until when, an assignment to it is kept, and it hears of it once its
//! transcript shows the limit lifted. The lead runs on temporary files; the test plays the
//! teammate (its transcript and its messages).

use std::io::Write;
use std::time::Duration;

use crate::lead::contract::{LeadCommand, LeadEvent, ViewTarget};
use crate::protocol::frames::Frame;
use crate::protocol::time::now_ms;
use crate::protocol::{InboxEntry, LEAD_NAME};
use crate::store::{self, Home};

const SESSION: &str = "0b7c5d1e-1111-4222-8333-944455556666";

use super::test_events::{TestLead, alpha_in_a_pane, next_matching, note_with};

fn append(path: &std::path::Path, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("transcript");
    f.write_all(line.as_bytes()).expect("write");
}

fn assignments_of(home: &Home, team: &str, name: &str) -> usize {
    store::inbox::read(home, team, name)
        .map(|r| {
            r.entries
                .iter()
                .filter(|e| matches!(e.parse_frame(), Some(Frame::TaskAssignment(_))))
                .count()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assignment_waits_for_a_rate_limited_teammate_until_its_limit_lifts() {
    // alpha is a claude teammate this lead started, with a session of its choosing.
    let TestLead {
        home,
        team,
        commands,
        mut events,
        dirs: _dirs,
    } = TestLead::start("limited", SESSION, |_| {});
    let alpha = alpha_in_a_pane(&team, "/");
    store::add_member(&home, &team, alpha).expect("member");
    let task = store::tasks::TaskList::new(&home, &team)
        .expect("tasks")
        .create("write the docs", "", vec![], None)
        .expect("task");

    // Its transcript records a usage limit that resets in ten minutes; its next message makes
    // the lead read it.
    let dir = home.root.join("projects").join("-w");
    std::fs::create_dir_all(&dir).expect("projects");
    let transcript = dir.join(format!("{SESSION}.jsonl"));
    let reset_s = now_ms() / 1000 + 600;
    append(
        &transcript,
        &format!(
            "{{\"type\":\"assistant\",\"isApiErrorMessage\":true,\"timestamp\":\"{}\",\"message\":{{\"id\":\"x\",\"model\":\"<synthetic>\",\"content\":[{{\"type\":\"text\",\"text\":\"Claude AI usage limit reached|{reset_s}\"}}],\"usage\":{{\"input_tokens\":0,\"output_tokens\":0}}}}}}\n",
            crate::protocol::time::now_iso()
        ),
    );
    store::inbox::append(&home, &team, LEAD_NAME, &InboxEntry::new("alpha", "stuck")).unwrap();
    next_matching(&mut events, "alpha shown rate-limited", |e| {
        matches!(e, LeadEvent::Team(t) if t.iter().any(|v| v.name == "alpha" && v.rate_limited_until == Some(reset_s * 1000)))
    })
    .await;

    commands
        .send(LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: format!("/task assign {} alpha", task.id),
        })
        .await
        .unwrap();
    next_matching(&mut events, "the assignment kept", |e| {
        note_with(e, "alpha is rate-limited until")
    })
    .await;
    assert_eq!(assignments_of(&home, &team, "alpha"), 0, "held, not sent");

    // An answer after the limit: it has lifted, and the assignment goes out.
    append(
        &transcript,
        "{\"type\":\"assistant\",\"message\":{\"id\":\"m2\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}}\n",
    );
    store::inbox::append(&home, &team, LEAD_NAME, &InboxEntry::new("alpha", "back")).unwrap();
    next_matching(&mut events, "the limit lifted", |e| {
        note_with(e, "alpha's limit has reset")
    })
    .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while assignments_of(&home, &team, "alpha") == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no task_assignment");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    commands.send(LeadCommand::Quit).await.unwrap();
    next_matching(&mut events, "Exited", |e| *e == LeadEvent::Exited).await;
}
