//! Frame time of the UI with a big session: 50 teammates and 10,000 transcript items on a
//! 200×50 `TestBackend`. Prints the median (and p90) over 200 frames for: a redraw of the
//! main screen, a redraw after one new transcript item, and a redraw with the teams dialog
//! open. Run by hand: `cargo bench --bench ui_render`.

use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use teamlead::lead::contract::{LeadEvent, TeammateStatus, TeammateView, TranscriptItem};
use teamlead::protocol::PermissionMode;
use teamlead::protocol::color::Color;
use teamlead::ui::AppState;
use teamlead::ui::modal::Modal;
use teamlead::ui::modal::teams::TeamsDialog;
use teamlead::ui::render;

const FRAMES: usize = 200;
const NOW: u64 = 1_767_225_600_000;

fn team() -> Vec<TeammateView> {
    (0..50)
        .map(|i| TeammateView {
            name: format!("worker-{i:02}"),
            agent_id: format!("worker-{i:02}@bench"),
            color: Some(Color::nth(i).as_str().to_string()),
            status: match i % 3 {
                0 => TeammateStatus::Working,
                1 => TeammateStatus::WaitingForApproval,
                _ => TeammateStatus::Idle {
                    since_ms: NOW - 1_000 * i as u64,
                },
            },
            mode: PermissionMode::Default,
            backend: Some(if i % 2 == 0 {
                teamlead::backend::BackendKind::Tmux
            } else {
                teamlead::backend::BackendKind::InProcess
            }),
            pane_id: format!("%{i}"),
            host: None,
            hidden: false,
            model: None,
            cwd: "/tmp/project".to_string(),
            worktree: None,
            prompt: Some("work on the parser".to_string()),
            plan_mode_required: false,
            current_task: Some((i.to_string(), format!("task number {i}"))),
            owned_tasks: Vec::new(),
            recent_messages: Vec::new(),
            usage: None,
            mode_requested: None,
            rate_limited_until: None,
            parked: None,
            messages: Vec::new(),
            unread_since: None,
            over_budget: None,
            budget_micros: None,
            costs_nothing: false,
        })
        .collect()
}

fn item(i: usize) -> TranscriptItem {
    let from = format!("worker-{:02}", i % 50);
    let color = Some(Color::nth(i % 50).as_str().to_string());
    match i % 4 {
        0 => TranscriptItem::User {
            text: format!("message {i}: please look at the failing test in module {i}"),
        },
        1 => TranscriptItem::Teammate {
            from,
            color,
            summary: Some(format!("progress report {i}")),
            text: "Finished the tokenizer; all tests pass. Next: the recursive-descent parser, \
                   then error recovery at statement boundaries, then fuzzing."
                .to_string(),
        },
        2 => TranscriptItem::Frame {
            from,
            color,
            line: format!("is idle (available) after task #{i}"),
        },
        _ => TranscriptItem::System {
            text: format!("note {i}"),
        },
    }
}

fn report(label: &str, mut times: Vec<Duration>) {
    times.sort();
    let median = times[times.len() / 2];
    let p90 = times[times.len() * 9 / 10];
    println!(
        "{label:<42} median {:>8.1} µs   p90 {:>8.1} µs",
        median.as_secs_f64() * 1e6,
        p90.as_secs_f64() * 1e6
    );
}

fn main() {
    let mut state = AppState::new();
    state.now_ms = NOW;
    state.apply(LeadEvent::Team(team()));
    for i in 0..10_000 {
        state.apply(LeadEvent::Transcript(item(i)));
    }
    let mut terminal = Terminal::new(TestBackend::new(200, 50)).expect("terminal");

    let cold = Instant::now();
    terminal
        .draw(|f| render::render(f, &mut state))
        .expect("draw");
    println!(
        "first frame (cold wrap cache)              {:>8.1} µs",
        cold.elapsed().as_secs_f64() * 1e6
    );

    let mut times = Vec::with_capacity(FRAMES);
    for _ in 0..FRAMES {
        let start = Instant::now();
        terminal
            .draw(|f| render::render(f, &mut state))
            .expect("draw");
        times.push(start.elapsed());
    }
    report("redraw, 50 teammates, 10,000 items", times);

    let mut times = Vec::with_capacity(FRAMES);
    for i in 0..FRAMES {
        let start = Instant::now();
        state.apply(LeadEvent::Transcript(item(10_000 + i)));
        terminal
            .draw(|f| render::render(f, &mut state))
            .expect("draw");
        times.push(start.elapsed());
    }
    report("append one item + redraw", times);

    state.modals.push(Modal::Teams(TeamsDialog::new()));
    let mut times = Vec::with_capacity(FRAMES);
    for _ in 0..FRAMES {
        let start = Instant::now();
        terminal
            .draw(|f| render::render(f, &mut state))
            .expect("draw");
        times.push(start.elapsed());
    }
    report("redraw with the teams dialog open", times);
}
