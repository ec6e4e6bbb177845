//! The task list across the link, on real task files in two (or three) temporary homes: the
//! lead's list appears in the host's mirror and follows it; a claim and a completion made on
//! the host reach the lead's list; two hosts racing for one task: exactly one wins, the loser's
//! mirror is set back and its claimant told; a claim in flight is not undone by an older copy
//! of the lead's; a task created on a host is made on the lead's list once; nothing is lost or
//! applied twice across a dropped link and a restarted relay.

use teamlead_protocol::store::{TaskList, inbox};
use teamlead_protocol::{Task, TaskStatus};
use teamlead_relay::Event;
use teamlead_relay::tasks_lead::Outcome;

use crate::support::{Pair, TEAM, identity, run_until, texts};

const OTHER_LINK: &str = "5a0c1d2e-0000-4000-8000-00000000beef";

fn list(home: &teamlead_protocol::store::Home) -> Vec<Task> {
    TaskList::new(home, TEAM).unwrap().list().unwrap().tasks
}

fn lead_list(pair: &Pair) -> TaskList {
    TaskList::new(pair.lead_home(), TEAM).unwrap()
}

fn host_list(pair: &Pair) -> TaskList {
    TaskList::new(pair.relay_home(), TEAM).unwrap()
}

/// A pair whose host runs `members`, connected, with the lead's tasks mirrored.
fn connected(pair: &mut Pair, members: &[&str]) {
    let hosted: Vec<String> = members.iter().map(|m| m.to_string()).collect();
    pair.lead.set_hosted(&hosted).unwrap();
    pair.connect();
    pair.settle();
    assert!(
        run_until(pair, 200, |p| list(p.relay_home()) == list(p.lead_home())),
        "the mirror never matched the lead's list"
    );
}

fn mirrored(pair: &mut Pair) -> bool {
    run_until(pair, 300, |p| list(p.relay_home()) == list(p.lead_home()))
}

#[test]
fn the_leads_task_list_appears_on_the_host_and_follows_its_changes() {
    let mut pair = Pair::new();
    let lead = lead_list(&pair);
    lead.create("build the parser", "parse it", vec![], None)
        .unwrap();
    lead.create("test the parser", "", vec!["1".into()], None)
        .unwrap();
    connected(&mut pair, &["alice"]);
    let mirror = list(pair.relay_home());
    assert_eq!(mirror.len(), 2);
    assert_eq!(mirror[1].blocked_by, vec!["1"]);
    // Changes on the lead's side follow: an edit, a new task, a deletion.
    lead.update("1", |t| {
        t.description = "parse it well".into();
        Ok(())
    })
    .unwrap();
    lead.create("ship it", "", vec![], None).unwrap();
    lead.delete("2").unwrap();
    assert!(mirrored(&mut pair));
    let ids: Vec<String> = list(pair.relay_home()).into_iter().map(|t| t.id).collect();
    assert_eq!(ids, vec!["1", "3"]);
    assert_eq!(
        host_list(&pair).get("1").unwrap().description,
        "parse it well"
    );
    // A task the host has no change of and the lead no longer has goes at the next
    // connection's full snapshot too (one removed while the link was down).
    pair.drop_link();
    lead.delete("3").unwrap();
    pair.connect();
    assert!(mirrored(&mut pair));
    assert_eq!(list(pair.relay_home()).len(), 1);
}

#[test]
fn a_claim_and_a_completion_on_the_host_reach_the_leads_list() {
    let mut pair = Pair::new();
    lead_list(&pair).create("build", "", vec![], None).unwrap();
    connected(&mut pair, &["alice"]);
    // The teammate on the host claims as a local teammate does, on its host's list.
    let claimed = host_list(&pair).claim("1", "alice", true).unwrap();
    assert_eq!(claimed.owner.as_deref(), Some("alice"));
    assert!(run_until(&mut pair, 200, |p| {
        lead_list(p).get("1").unwrap().owner.as_deref() == Some("alice")
    }));
    assert_eq!(
        lead_list(&pair).get("1").unwrap().status,
        TaskStatus::InProgress
    );
    host_list(&pair).complete("1").unwrap();
    assert!(run_until(&mut pair, 200, |p| {
        lead_list(p).get("1").unwrap().status == TaskStatus::Completed
    }));
    assert!(mirrored(&mut pair));
    let mirror = host_list(&pair).get("1").unwrap();
    assert_eq!(
        (mirror.owner.as_deref(), mirror.status),
        (Some("alice"), TaskStatus::Completed)
    );
    assert!(pair.events.iter().any(|(side, e)| *side == "lead"
        && matches!(e, Event::TaskUpdate { id, outcome: Outcome::Applied } if id == "1")));
}

#[test]
fn two_hosts_race_for_one_task_one_wins_the_loser_is_set_back_and_told() {
    let mut one = Pair::new();
    lead_list(&one)
        .create("the one task", "", vec![], None)
        .unwrap();
    lead_list(&one).create("another", "", vec![], None).unwrap();
    let mut two = Pair::beside(&one, OTHER_LINK);
    connected(&mut one, &["alice"]);
    connected(&mut two, &["bob"]);
    // Both claim task 1 on their own host's mirror: both succeed there.
    host_list(&one).claim("1", "alice", true).unwrap();
    host_list(&two).claim("1", "bob", true).unwrap();
    // Both changes travel; the lead applies them in the order they come.
    one.tick();
    two.tick();
    one.settle();
    two.settle();
    let winner = lead_list(&one).get("1").unwrap().owner.unwrap();
    let (loser, loser_pair) = if winner == "alice" {
        ("bob", &mut two)
    } else {
        ("alice", &mut one)
    };
    assert!(
        run_until(loser_pair, 300, |p| {
            host_list(p).get("1").unwrap().owner.as_deref() == Some(winner.as_str())
                && texts(p.relay_home(), loser)
                    .iter()
                    .any(|t| t.contains(&winner))
        }),
        "the loser's mirror was not set back to {winner}, or {loser} was not told"
    );
    assert!(mirrored(&mut one));
    assert!(mirrored(&mut two));
    assert_eq!(
        lead_list(&one).get("1").unwrap().owner.as_deref(),
        Some(winner.as_str())
    );
    let told = texts(
        if loser == "bob" {
            two.relay_home()
        } else {
            one.relay_home()
        },
        loser,
    );
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("went to"), "{told:?}");
    println!("{winner} won; {loser} was told: {}", told[0]);
    // The loser's completion of the task it lost (its command ran on) is refused too: the
    // winner's task stays in progress.
    let loser_pair = if loser == "bob" { &mut two } else { &mut one };
    host_list(loser_pair).complete("1").unwrap();
    assert!(mirrored(loser_pair));
    let task = lead_list(loser_pair).get("1").unwrap();
    assert_eq!(
        (task.owner.as_deref(), task.status),
        (Some(winner.as_str()), TaskStatus::InProgress)
    );
}

#[test]
fn a_claim_in_flight_is_not_undone_by_an_older_copy_of_the_leads() {
    let mut pair = Pair::new();
    lead_list(&pair)
        .create("build", "old words", vec![], None)
        .unwrap();
    connected(&mut pair, &["alice"]);
    // The host claims and sends it; the lead edits the task before the claim arrives.
    host_list(&pair).claim("1", "alice", true).unwrap();
    pair.relay
        .tick(pair.now)
        .map(|s| pair.take_relay(s))
        .unwrap();
    lead_list(&pair)
        .update("1", |t| {
            t.description = "new words".into();
            Ok(())
        })
        .unwrap();
    pair.lead.tick(pair.now).map(|s| pair.take_lead(s)).unwrap();
    // The lead's copy (no owner, new words) reaches the host first.
    pair.deliver("relay", usize::MAX);
    let mirror = host_list(&pair).get("1").unwrap();
    assert_eq!(
        mirror.owner.as_deref(),
        Some("alice"),
        "the claim was undone"
    );
    assert_eq!(mirror.description, "new words");
    assert!(mirrored(&mut pair));
    let lead = lead_list(&pair).get("1").unwrap();
    assert_eq!(
        (lead.owner.as_deref(), lead.description.as_str()),
        (Some("alice"), "new words")
    );
}

#[test]
fn a_task_created_on_the_host_is_made_once_on_the_leads_list() {
    let mut pair = Pair::new();
    lead_list(&pair).create("first", "", vec![], None).unwrap();
    connected(&mut pair, &["alice"]);
    // Both sides make task #2 at once: the host's gets the lead's next id.
    host_list(&pair)
        .create("made on the host", "", vec!["1".into()], None)
        .unwrap();
    lead_list(&pair)
        .create("made on the lead", "", vec![], None)
        .unwrap();
    assert!(mirrored(&mut pair));
    for _ in 0..20 {
        pair.tick();
        pair.settle();
    }
    let subjects: Vec<String> = list(pair.lead_home())
        .into_iter()
        .map(|t| t.subject)
        .collect();
    assert_eq!(
        subjects,
        vec!["first", "made on the lead", "made on the host"]
    );
    assert_eq!(list(pair.relay_home()), list(pair.lead_home()));
    assert_eq!(lead_list(&pair).get("3").unwrap().blocked_by, vec!["1"]);
    assert_eq!(lead_list(&pair).get("1").unwrap().blocks, vec!["3"]);
}

#[test]
fn a_claim_survives_a_dropped_link_and_a_restarted_relay_and_is_applied_once() {
    let mut pair = Pair::new();
    lead_list(&pair).create("build", "", vec![], None).unwrap();
    lead_list(&pair).create("test", "", vec![], None).unwrap();
    connected(&mut pair, &["alice", "bob"]);
    host_list(&pair).claim("1", "alice", true).unwrap();
    // Picked up and cut before the lead read it; the relay process is replaced.
    pair.tick();
    pair.drop_link();
    pair.restart_relay(identity("remote-host"));
    // Meanwhile, on the host, another claim while the link is down.
    host_list(&pair).claim("2", "bob", true).unwrap();
    pair.connect();
    assert!(run_until(&mut pair, 300, |p| {
        let l = lead_list(p);
        l.get("1").unwrap().owner.as_deref() == Some("alice")
            && l.get("2").unwrap().owner.as_deref() == Some("bob")
    }));
    assert!(mirrored(&mut pair));
    let refused = pair
        .events
        .iter()
        .filter(|(_, e)| {
            matches!(
                e,
                Event::TaskUpdate {
                    outcome: Outcome::Refused { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(refused, 0, "{:?}", pair.events);
    assert_eq!(texts(pair.relay_home(), "alice"), Vec::<String>::new());
    assert_eq!(list(pair.lead_home()).len(), 2);
}

#[test]
fn member_fields_come_back_and_the_leads_team_body_does_not_undo_them() {
    use teamlead_protocol::store::team as team_file;
    use teamlead_protocol::{Member, TeamFile};
    let mut pair = Pair::new();
    let mut alice = Member::new("alice", TEAM, "/work");
    alice.is_active = Some(false);
    alice.mode = Some("default".into());
    let file = TeamFile {
        lead_agent_id: format!("team-lead@{TEAM}"),
        members: vec![alice.clone()],
        ..TeamFile::new(TEAM, None, "")
    };
    team_file::create_team(pair.lead_home(), &file).unwrap();
    pair.lead.set_hosted(&["alice".to_string()]).unwrap();
    pair.lead
        .set_team(&file.lead_agent_id, &file.members)
        .unwrap();
    pair.connect();
    pair.settle();
    assert!(run_until(&mut pair, 100, |p| team_file::read_team(
        p.relay_home(),
        TEAM
    )
    .is_ok()));
    // The teammate on the host goes busy and changes its mode, in its host's team file.
    team_file::set_active(pair.relay_home(), TEAM, "alice", true).unwrap();
    team_file::edit_team(pair.relay_home(), TEAM, |f| {
        f.member_mut("alice").unwrap().mode = Some("acceptEdits".into());
        Ok(())
    })
    .unwrap();
    let lead_alice = |p: &Pair| {
        team_file::read_team(p.lead_home(), TEAM)
            .unwrap()
            .members
            .into_iter()
            .find(|m| m.name == "alice")
            .unwrap()
    };
    assert!(run_until(&mut pair, 200, |p| {
        let a = lead_alice(p);
        a.is_active == Some(true) && a.mode.as_deref() == Some("acceptEdits")
    }));
    // The lead sends its team file again with its old copy of alice (another member joined):
    // the host keeps what alice wrote there, and the lead's stays as the host says.
    let mut carol = Member::new("carol", TEAM, "/work");
    carol.is_active = Some(false);
    let step = pair
        .lead
        .set_team(&file.lead_agent_id, &[alice.clone(), carol])
        .unwrap();
    pair.take_lead(step);
    for _ in 0..30 {
        pair.tick();
        pair.settle();
    }
    let host = team_file::read_team(pair.relay_home(), TEAM).unwrap();
    assert_eq!(host.members.len(), 2);
    let host_alice = host.members.iter().find(|m| m.name == "alice").unwrap();
    assert_eq!(host_alice.is_active, Some(true));
    assert_eq!(host_alice.mode.as_deref(), Some("acceptEdits"));
    assert_eq!(lead_alice(&pair).is_active, Some(true));
    // Idle again on the host: the lead follows.
    team_file::set_active(pair.relay_home(), TEAM, "alice", false).unwrap();
    assert!(run_until(&mut pair, 200, |p| lead_alice(p).is_active == Some(false)));
    let _ = inbox::read(pair.lead_home(), TEAM, "alice");
}

/// What the host's mirror says of a claim marked `mark`: held by the lead or not.
fn held(pair: &Pair, id: &str, mark: &str) -> bool {
    host_list(pair)
        .get(id)
        .ok()
        .and_then(|t| {
            t.extra
                .get(teamlead_protocol::store::tasks::CLAIM_HELD_KEY)
                .cloned()
        })
        .is_some_and(|v| v == mark)
}

#[test]
fn a_marked_claim_comes_back_held_also_when_the_lead_gave_the_task_to_the_claimant_meanwhile() {
    let mut pair = Pair::new();
    lead_list(&pair).create("build", "", vec![], None).unwrap();
    lead_list(&pair).create("test", "", vec![], None).unwrap();
    connected(&mut pair, &["alice"]);
    // A claim on the host's list with a mark: held once the lead applied it.
    host_list(&pair)
        .claim_marked("1", "alice", true, Some("alice/one"))
        .unwrap();
    assert!(run_until(&mut pair, 300, |p| held(p, "1", "alice/one")));
    // The lead gives task 2 to alice as alice claims it on her host: the mirror took the
    // owner from the lead's copy first, so the mark goes alone, and the lead holds it all the
    // same (before, it answered only a change of owner, and alice waited in vain).
    lead_list(&pair).claim("2", "alice", false).unwrap();
    assert!(mirrored(&mut pair));
    host_list(&pair)
        .claim_marked("2", "alice", false, Some("alice/two"))
        .unwrap();
    assert!(run_until(&mut pair, 300, |p| held(p, "2", "alice/two")));
    assert_eq!(
        lead_list(&pair).get("2").unwrap().owner.as_deref(),
        Some("alice")
    );
}

#[test]
fn a_marked_claim_that_lost_is_never_held() {
    let mut pair = Pair::new();
    lead_list(&pair).create("build", "", vec![], None).unwrap();
    connected(&mut pair, &["alice"]);
    pair.drop_link();
    // bob (here, at the lead) takes it while alice claims it on her host, cut off.
    lead_list(&pair).claim("1", "bob", true).unwrap();
    host_list(&pair)
        .claim_marked("1", "alice", true, Some("alice/lost"))
        .unwrap();
    pair.connect();
    assert!(run_until(&mut pair, 300, |p| {
        host_list(p).get("1").unwrap().owner.as_deref() == Some("bob")
    }));
    assert!(!held(&pair, "1", "alice/lost"));
}
