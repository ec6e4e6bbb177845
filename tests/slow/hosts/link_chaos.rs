//! The link's guarantees over the user's real OpenSSH, on a test host (a network namespace with
//! its own sshd, user and HOME; teamlead installed there): the test plays the lead's side
//! (`Link::lead` + `drive` over `ssh … teamlead relay --stdio`, started through teamlead's own
//! ssh master), 8 writers on each side append real inbox entries for the other side, and
//! the link is dropped at random points: the relay killed, the ssh master killed, the
//! namespace's link taken down for a moment. Every entry must arrive exactly once. The 60 s
//! partition test takes the link down for a minute while the host keeps writing: the lead must
//! see the link down within 5 s by traffic alone, and be back within 5 s of the link's return.

use std::time::{Duration, Instant};

use rand::SeedableRng;

use crate::hosts_common::link::{
    HOSTED, LinkRig, TO_LEAD, Tally, host_writers, lead_writers, random_ms, tally, texts,
};
use crate::hosts_common::skip_unless_root;

const WRITERS: usize = 8;
const DROPS: usize = 100;
/// The whole chaos run (drops, then delivery of everything written) must end within this: a
/// bound, not a speed (100–150 s on a quiet 2-core machine; each drop waits for an ssh
/// handshake, which a loaded machine, the suite beside a second build, stretches to twice
/// that). The figures go to the report line.
const WHOLE_RUN: Duration = Duration::from_secs(420);

/// Waits until everything written both ways has arrived (or `within` passes); the tallies.
fn settle(
    rig: &LinkRig,
    to_host: &[String],
    to_lead: &[String],
    within: Duration,
) -> (Tally, Tally) {
    let end = Instant::now() + within;
    loop {
        let a = tally(to_host, &texts(&rig.host_home, &HOSTED));
        let b = tally(to_lead, &texts(&rig.lead_home, &TO_LEAD));
        let through = a.delivered == a.sent && b.delivered == b.sent;
        if through || Instant::now() >= end {
            // A last while: nothing more may come (no late duplicate).
            if through {
                std::thread::sleep(Duration::from_secs(1));
                return (
                    tally(to_host, &texts(&rig.host_home, &HOSTED)),
                    tally(to_lead, &texts(&rig.lead_home, &TO_LEAD)),
                );
            }
            return (a, b);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Straight to the standard error (not the test's captured output), so a plain `cargo test`
/// shows the figures.
fn report(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn line(t: &Tally) -> String {
    format!(
        "sent {}, delivered {}, lost {}, duplicated {}, unknown {}",
        t.sent, t.delivered, t.lost, t.duplicated, t.unknown
    )
}

#[test]
fn nothing_lost_or_duplicated_over_100_drops_of_a_real_ssh_link() {
    if skip_unless_root() {
        return;
    }
    let started = Instant::now();
    let seed = 29;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let rig = LinkRig::start();
    let mut lead = rig.run_lead();
    assert!(
        lead.wait_for(Duration::from_secs(20), |l| l.is_up()),
        "the link never came up: {:?}",
        lead.with_log(|l| format!("{:?}", l.failed_starts))
    );
    let lead_w = lead_writers(&rig.lead_home, WRITERS, 100..300, seed * 100);
    let host_w = host_writers(&rig, WRITERS, 3, 200..600, seed * 100 + 50);
    let (mut relays, mut masters, mut partitions) = (0, 0, 0);
    let mut partitioned_ms = 0u128;
    let mut reconnects: Vec<Duration> = Vec::new();
    for drop in 0..DROPS {
        // Each drop hits a link that is up, with traffic both ways.
        assert!(
            lead.wait_for(Duration::from_secs(20), |l| l.is_up()),
            "the link did not come back after drop {drop}: {:?}\nprocesses:\n{}",
            lead.with_log(|l| format!(
                "{:?} {:?}",
                l.downs.iter().rev().take(3).collect::<Vec<_>>(),
                l.failed_starts.iter().rev().take(5).collect::<Vec<_>>()
            )),
            rig.diagnose()
        );
        std::thread::sleep(random_ms(&mut rng, 50..250));
        let downs_before = lead.with_log(|l| l.downs.len());
        let killed = match drop % 5 {
            0 | 1 => {
                let killed = rig.kill_relay();
                relays += usize::from(killed > 0);
                killed
            }
            2 | 3 => {
                let killed = rig.kill_master();
                masters += usize::from(killed > 0);
                killed
            }
            _ => {
                let down = random_ms(&mut rng, 200..1500);
                rig.host.set_link(false);
                std::thread::sleep(down);
                rig.host.set_link(true);
                partitions += 1;
                partitioned_ms += down.as_millis();
                0
            }
        };
        // A killed relay or master ends the connection: the lead sees it before the next drop.
        if killed > 0 {
            let ups_before = lead.with_log(|l| l.ups.len());
            let dropped = Instant::now();
            assert!(
                lead.wait_for(Duration::from_secs(10), |l| l.downs.len() > downs_before),
                "drop {drop} did not end the connection"
            );
            if lead.wait_for(Duration::from_secs(20), |l| l.ups.len() > ups_before) {
                reconnects.push(dropped.elapsed());
            }
        }
        assert!(
            started.elapsed() < WHOLE_RUN - Duration::from_secs(30),
            "only {drop} drops in {:?} ({} written to the host, {} to the lead; failed starts: \
             {:?})",
            started.elapsed(),
            lead_w.written.load(std::sync::atomic::Ordering::Relaxed),
            host_w.written.load(std::sync::atomic::Ordering::Relaxed),
            lead.with_log(|l| l
                .failed_starts
                .iter()
                .map(|(_, why)| why.clone())
                .collect::<Vec<_>>()),
        );
    }
    let drops_took = started.elapsed();
    reconnects.sort();
    let reconnect = |p: f64| reconnects[((reconnects.len() - 1) as f64 * p) as usize];
    let to_host = lead_w.finish();
    let to_lead = host_w.finish();
    let (a, b) = settle(&rig, &to_host, &to_lead, Duration::from_secs(40));
    let (ups, downs, failed) =
        lead.with_log(|l| (l.ups.len(), l.downs.clone(), l.failed_starts.clone()));
    let failed_kinds: std::collections::BTreeSet<&str> = failed
        .iter()
        .map(|(_, why)| why.split(':').next().unwrap_or_default())
        .collect();
    lead.stop();
    let silent = downs
        .iter()
        .filter(|(_, why)| why.contains("Silent"))
        .count();
    report(&format!(
        "link chaos over real ssh (seed {seed}): {} drops in {:.1} s ({relays} relays killed, \
         {masters} ssh masters killed, {partitions} link downs of {partitioned_ms} ms in all), \
         {ups} connections, {} ended ({silent} by silence), {} failed starts \
         ({failed_kinds:?}); back up after a kill: p50 {:?}, max {:?}; {:.1} s in all\n  lead → host: {}\n  host → lead: {}",
        relays + masters + partitions,
        drops_took.as_secs_f64(),
        downs.len(),
        failed.len(),
        reconnect(0.5),
        reconnect(1.0),
        started.elapsed().as_secs_f64(),
        line(&a),
        line(&b),
    ));
    assert_eq!(
        relays + masters + partitions,
        DROPS,
        "every drop hit a live link"
    );
    for (name, t) in [("lead → host", a), ("host → lead", b)] {
        assert!(t.sent > 0, "{name}: nothing written");
        assert_eq!(
            (t.lost, t.duplicated, t.unknown),
            (0, 0, 0),
            "{name}: {}",
            line(&t)
        );
    }
    assert!(
        started.elapsed() < WHOLE_RUN,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_60_s_partition_is_seen_within_5_s_and_healed_within_5_s_of_the_return() {
    if skip_unless_root() {
        return;
    }
    let seed = 60;
    let rig = LinkRig::start();
    let mut lead = rig.run_lead();
    assert!(
        lead.wait_for(Duration::from_secs(20), |l| l.is_up()),
        "the link never came up"
    );
    let lead_w = lead_writers(&rig.lead_home, 1, 200..400, seed * 100);
    let host_w = host_writers(&rig, 1, 2, 200..400, seed * 100 + 50);
    // Traffic on the link before the partition.
    let delivered_before = lead.with_log(|l| l.delivered);
    assert!(
        lead.wait_for(Duration::from_secs(10), |l| l.delivered > delivered_before),
        "nothing came from the host's writer"
    );
    let ups_before = lead.with_log(|l| l.ups.len());
    let downs_before = lead.with_log(|l| l.downs.len());
    let cut = Instant::now();
    rig.host.set_link(false);
    let seen_down = lead.wait_for(Duration::from_secs(10), |l| l.downs.len() > downs_before);
    let detected = lead.with_log(|l| {
        l.downs
            .last()
            .map(|(t, why)| (t.duration_since(cut), why.clone()))
    });
    let written_at_cut = host_w.written.load(std::sync::atomic::Ordering::Relaxed);
    // The rest of the minute, down; the host's writer keeps writing.
    std::thread::sleep(Duration::from_secs(60).saturating_sub(cut.elapsed()));
    let written_during = host_w.written.load(std::sync::atomic::Ordering::Relaxed) - written_at_cut;
    let still_down = lead.with_log(|l| !l.is_up());
    let back = Instant::now();
    rig.host.set_link(true);
    let rebound = lead.wait_for(Duration::from_secs(15), |l| {
        l.ups.len() > ups_before && l.is_up()
    });
    let reconnected = lead.with_log(|l| l.ups.last().map(|t| t.duration_since(back)));
    // A little more traffic after the return, then everything must be through once.
    std::thread::sleep(Duration::from_secs(1));
    let to_host = lead_w.finish();
    let to_lead = host_w.finish();
    let (a, b) = settle(&rig, &to_host, &to_lead, Duration::from_secs(20));
    let failed = lead.with_log(|l| l.failed_starts.len());
    lead.stop();
    report(&format!(
        "60 s partition: link down seen after {detected:?}, back {reconnected:?} after the \
         link's return ({failed} failed starts meanwhile); the host wrote {written_during} \
         entries while cut off\n  lead → host: {}\n  host → lead: {}",
        line(&a),
        line(&b)
    ));
    assert!(seen_down, "the lead never saw the link down");
    let (after, _) = detected.unwrap();
    assert!(
        after <= Duration::from_secs(5),
        "the link down seen after {after:?}"
    );
    assert!(still_down, "the link was up during the partition");
    assert!(rebound, "the lead did not reconnect after the partition");
    let reconnected = reconnected.unwrap();
    assert!(
        reconnected <= Duration::from_secs(5),
        "reconnected {reconnected:?} after the link's return"
    );
    assert!(
        written_during > 0,
        "the host's writer wrote nothing while cut off"
    );
    for (name, t) in [("lead → host", a), ("host → lead", b)] {
        assert!(t.sent > 0, "{name}: nothing written");
        assert_eq!(
            (t.lost, t.duplicated, t.unknown),
            (0, 0, 0),
            "{name}: {}",
            line(&t)
        );
    }
}
