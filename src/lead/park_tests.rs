//! The park state machine on plain times: who is held, when each teammate is resumed, the
//! stagger, a limit met again while resuming, the cut-off, and resuming by hand.

use super::*;

fn team() -> Vec<String> {
    ["alpha", "beta", "gamma", "delta"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn on() -> Park {
    Park::new(ParkSettings {
        resume: true,
        until: None,
    })
}

/// Every step due from `from` to `to`, ticking each 100 ms: (time, step).
fn run(park: &mut Park, from: u64, to: u64) -> Vec<(u64, ParkStep)> {
    let mut steps = Vec::new();
    let mut now = from;
    while now <= to {
        while let Some(step) = park.tick(now) {
            steps.push((now, step));
        }
        now += 100;
    }
    steps
}

fn resumed(steps: &[(u64, ParkStep)]) -> Vec<(u64, String)> {
    steps
        .iter()
        .filter_map(|(at, s)| match s {
            ParkStep::Resume { name, .. } => Some((*at, name.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn off_parks_nothing() {
    let mut park = Park::default();
    assert_eq!(
        park.limit("beta", 10_000, 1_000, &team()),
        Limited::NotParked
    );
    assert!(!park.holds("beta"));
    assert_eq!(park.due_ms(), None);
}

#[test]
fn all_are_held_until_the_reset_then_resumed_once_each_staggered_the_limited_one_first() {
    let mut park = on();
    let now = 1_000_000;
    let reset = now + 3_000;
    assert_eq!(
        park.limit("gamma", reset, now, &team()),
        Limited::Parked {
            resume_at_ms: reset + MARGIN_MS,
            stopped: None
        }
    );
    for name in team() {
        assert!(park.holds(&name), "{name} parked");
    }
    assert_eq!(park.due_ms(), Some(reset + MARGIN_MS));
    assert_eq!(park.resume_of("gamma"), Some(reset + MARGIN_MS));
    assert_eq!(
        park.resume_of("beta"),
        Some(reset + MARGIN_MS + 2 * STAGGER_MS)
    );
    // Nothing happens before the reset and its margin.
    assert!(run(&mut park, now, reset + MARGIN_MS - 100).is_empty());
    let steps = run(&mut park, reset + MARGIN_MS, reset + MARGIN_MS + 60_000);
    let first = reset + MARGIN_MS;
    assert_eq!(
        resumed(&steps),
        vec![
            (first, "gamma".to_string()),
            (first + STAGGER_MS, "alpha".to_string()),
            (first + 2 * STAGGER_MS, "beta".to_string()),
            (first + 3 * STAGGER_MS, "delta".to_string()),
        ],
        "once each, the one that hit the limit first, one every {STAGGER_MS} ms"
    );
    assert_eq!(
        steps[3].1,
        ParkStep::Resume {
            name: "delta".into(),
            number: 4,
            of: 4
        }
    );
    assert!(!park.active(), "the park is over");
    assert!(!park.holds("delta"));
}

#[test]
fn a_teammate_resumed_is_no_longer_held_and_the_others_still_are() {
    let mut park = on();
    park.limit("alpha", 5_000, 1_000, &team());
    let steps = run(&mut park, 1_000, 5_000 + MARGIN_MS);
    assert_eq!(resumed(&steps).len(), 1);
    assert!(!park.holds("alpha"));
    assert!(park.holds("beta") && park.holds("gamma") && park.holds("delta"));
}

#[test]
fn a_reset_in_the_past_resumes_after_the_margin_only() {
    let mut park = on();
    let now = 50_000;
    assert_eq!(
        park.limit("alpha", now - 10_000, now, &team()),
        Limited::Parked {
            resume_at_ms: now + MARGIN_MS,
            stopped: None
        }
    );
    let steps = run(&mut park, now, now + MARGIN_MS);
    assert_eq!(
        resumed(&steps),
        vec![(now + MARGIN_MS, "alpha".to_string())]
    );
}

#[test]
fn a_later_reset_moves_the_resume_and_the_same_one_changes_nothing() {
    let mut park = on();
    park.limit("alpha", 10_000, 1_000, &team());
    assert_eq!(park.limit("alpha", 10_000, 2_000, &team()), Limited::Known);
    assert_eq!(
        park.limit("beta", 20_000, 3_000, &team()),
        Limited::Extended {
            resume_at_ms: 20_000 + MARGIN_MS
        }
    );
    // beta hit it last: its work stopped too, it goes first.
    let steps = run(&mut park, 3_000, 20_000 + MARGIN_MS);
    assert_eq!(
        resumed(&steps),
        vec![(20_000 + MARGIN_MS, "beta".to_string())]
    );
}

#[test]
fn a_limit_met_again_while_resuming_parks_everyone_again() {
    let mut park = on();
    park.limit("alpha", 10_000, 1_000, &team());
    let first = run(&mut park, 1_000, 10_000 + MARGIN_MS);
    assert_eq!(resumed(&first).len(), 1, "alpha resumed");
    // alpha meets the limit again at once: nobody else is resumed into it.
    let again = 10_000 + MARGIN_MS + 1_000;
    assert!(matches!(
        park.limit("alpha", 40_000, again, &team()),
        Limited::Parked { .. }
    ));
    assert!(run(&mut park, again, 40_000 + MARGIN_MS - 100).is_empty());
    for name in team() {
        assert!(park.holds(&name), "{name} parked again");
    }
    let steps = run(&mut park, 40_000 + MARGIN_MS, 40_000 + MARGIN_MS + 30_000);
    assert_eq!(resumed(&steps).len(), 4, "each once, in the new park");
}

#[test]
fn the_cut_off_stops_a_resume_past_it_and_resume_now_overrides_it() {
    let mut park = on();
    let now = 1_000_000;
    let cutoff = now + 60_000;
    park.state = ParkState::Running;
    // A reset past the cut-off: parked, and not resuming by itself.
    let limited = {
        park.settings.until = None;
        // The cut-off as the controller computes it: here, directly.
        let l = park.limit("alpha", cutoff + 120_000, now, &team());
        if let ParkState::Parked {
            cutoff_ms,
            stopped,
            resume_at_ms,
            ..
        } = &mut park.state
        {
            *cutoff_ms = Some(cutoff);
            *stopped = cut_off(Some(cutoff), *resume_at_ms);
        }
        l
    };
    assert!(matches!(limited, Limited::Parked { .. }));
    assert_eq!(park.due_ms(), None, "nothing due: stopped at the cut-off");
    assert_eq!(park.resume_of("alpha"), None);
    assert!(run(&mut park, now, cutoff + 300_000).is_empty());
    assert!(park.holds("beta"));
    // The person resumes it by hand.
    assert!(park.resume_now(cutoff + 300_000));
    let steps = run(&mut park, cutoff + 300_000, cutoff + 300_000 + 30_000);
    assert_eq!(resumed(&steps).len(), 4);
}

#[test]
fn a_cut_off_reached_while_resuming_stops_the_rest() {
    let mut park = on();
    let now = 1_000_000;
    park.limit("alpha", now + 1_000, now, &team());
    let start = now + 1_000 + MARGIN_MS;
    if let ParkState::Parked { cutoff_ms, .. } = &mut park.state {
        // Between the second and the third resume.
        *cutoff_ms = Some(start + STAGGER_MS + 1);
    }
    let steps = run(&mut park, now, start + 10 * STAGGER_MS);
    assert_eq!(resumed(&steps).len(), 2);
    assert!(
        steps
            .iter()
            .any(|(_, s)| matches!(s, ParkStep::CutOff(Stopped::CutOff { .. })))
    );
    assert!(park.holds("gamma") && park.holds("delta"));
    assert!(!park.holds("alpha"));
}

#[test]
fn the_cut_off_is_its_next_occurrence_after_the_park() {
    let now = chrono::Local::now().timestamp_millis() as u64;
    let in_an_hour = chrono::Local::now() + chrono::Duration::hours(1);
    let clock = NaiveTime::from_hms_opt(
        chrono::Timelike::hour(&in_an_hour),
        chrono::Timelike::minute(&in_an_hour),
        0,
    )
    .expect("clock");
    let at = next_clock_ms(clock, now).expect("next");
    assert!(at > now && at <= now + 3_600_000 + 60_000, "{at} {now}");
    // Parked with that cut-off and a reset two hours ahead: it does not resume by itself.
    let mut park = Park::new(ParkSettings {
        resume: true,
        until: Some(clock),
    });
    let limited = park.limit("alpha", now + 7_200_000, now, &team());
    assert!(
        matches!(
            limited,
            Limited::Parked {
                stopped: Some(Stopped::CutOff { .. }),
                ..
            }
        ),
        "{limited:?}"
    );
    // A reset before it resumes.
    let mut park = Park::new(ParkSettings {
        resume: true,
        until: Some(clock),
    });
    assert!(matches!(
        park.limit("alpha", now + 60_000, now, &team()),
        Limited::Parked { stopped: None, .. }
    ));
    assert_eq!(parse_clock("02:00"), NaiveTime::from_hms_opt(2, 0, 0));
    assert_eq!(parse_clock("25:00"), None);
}

#[test]
fn releasing_ends_the_park_with_who_was_still_parked() {
    let mut park = on();
    park.limit("gamma", 10_000, 1_000, &team());
    assert_eq!(park.queue(), vec!["gamma", "alpha", "beta", "delta"]);
    assert_eq!(park.release(), vec!["gamma", "alpha", "beta", "delta"]);
    assert!(!park.active());
    assert!(!park.holds("gamma"));
}
