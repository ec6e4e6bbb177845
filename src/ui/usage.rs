//! How model usage reads on screen: counts in short form (`950`, `12.3k`, `1.2M`), a
//! teammate's usage as `12.3k tok · $0.42` (teams list) or as a line (`12.3k tokens (12.0k in
//! · 310 out) · 14 tool uses · 3 turns · $0.42`, teams detail), and the session's sum for the
//! footer: every teammate's tokens plus the lead model's, and what the priced ones cost.
//! Nothing shows while a count is zero; no cost shows for a model without a price, and a sum
//! says what it leaves out (`$1.23 + 2 teammates not priced (model fable-5-2)`).

use crate::lead::contract::UsageView;
use crate::ui::state::AppState;

/// `950`, `1.2k`, `12.3k`, `123k`, `1.2M`, `12.3M`, `123M`.
pub fn short_count(n: u64) -> String {
    fn scaled(n: u64, unit: u64, suffix: &str) -> String {
        let value = n as f64 / unit as f64;
        if value < 99.95 {
            format!("{value:.1}{suffix}")
        } else {
            format!("{value:.0}{suffix}")
        }
    }
    if n < 1_000 {
        n.to_string()
    } else if n < 999_500 {
        scaled(n, 1_000, "k")
    } else {
        scaled(n, 1_000_000, "M")
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `12.3k tok` (input and output tokens), and ` · $0.42` when priced, for the teams list.
pub fn tokens_short(usage: &UsageView) -> String {
    format!(
        "{} tok{}",
        short_count(usage.total_tokens()),
        cost_suffix(usage)
    )
}

/// ` · $0.42`; ` · $0.42 + not priced` when some of its models have no price, ` · not priced`
/// when none has; nothing while nothing was priced or left out.
fn cost_suffix(usage: &UsageView) -> String {
    let cost = usage.cost_micros.map(crate::protocol::pricing::dollars);
    match (cost, usage.unpriced_models.is_empty()) {
        (Some(c), true) => format!(" · {c}"),
        (Some(c), false) => format!(" · {c} + not priced"),
        (None, false) => " · not priced".to_string(),
        (None, true) => String::new(),
    }
}

/// `20.0k read · 1.5k written 5 min · 8.0k written 1 h` (the cache's share of the input
/// tokens), for the teams detail; `None` while the cache was not used.
pub fn cache_line(usage: &UsageView) -> Option<String> {
    let parts: Vec<String> = [
        (usage.cache_read_tokens, "read"),
        (usage.cache_write_5m_tokens, "written 5 min"),
        (usage.cache_write_1h_tokens, "written 1 h"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{} {what}", short_count(n)))
    .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The models of `usage` without a price (`model fable-5-2 not priced`), for the teams
/// detail; `None` when every model is priced.
pub fn unpriced_line(usage: &UsageView) -> Option<String> {
    let models = &usage.unpriced_models;
    (!models.is_empty()).then(|| {
        format!(
            "{} {} not priced: its tokens are left out of every cost (teamlead prices)",
            if models.len() == 1 { "model" } else { "models" },
            models.join(", ")
        )
    })
}

/// `12.3k tokens (12.0k in · 310 out) · 14 tool uses · 3 turns`, for the teams detail.
pub fn detail_line(usage: &UsageView) -> String {
    format!(
        "{} tokens ({} in · {} out) · {} · {}{}",
        short_count(usage.total_tokens()),
        short_count(usage.input_tokens),
        short_count(usage.output_tokens),
        plural(usage.tool_uses, "tool use", "tool uses"),
        plural(usage.turns, "turn", "turns"),
        cost_suffix(usage),
    )
}

/// Tokens used in this session: every teammate's and the lead model's; `None` while zero.
pub fn session_tokens(state: &AppState) -> Option<u64> {
    let teammates: u64 = state
        .team
        .iter()
        .filter_map(|t| t.usage.as_ref())
        .map(UsageView::total_tokens)
        .sum();
    let lead = state
        .lead_usage
        .as_ref()
        .map(UsageView::total_tokens)
        .unwrap_or(0);
    Some(teammates + lead).filter(|n| *n > 0)
}

/// What the priced usage of the session cost (teammates and lead model), in micro-dollars;
/// `None` while nothing is priced.
pub fn session_cost(state: &AppState) -> Option<u64> {
    let costs: Vec<u64> = state
        .team
        .iter()
        .filter_map(|t| t.usage.as_ref())
        .chain(state.lead_usage.as_ref())
        .filter_map(|u| u.cost_micros)
        .collect();
    (!costs.is_empty()).then(|| costs.iter().sum())
}

/// What the session's cost leaves out: `2 teammates not priced (model fable-5-2)`.
pub fn unpriced_note(state: &AppState) -> Option<String> {
    let unpriced: Vec<&[String]> = state
        .team
        .iter()
        .filter_map(|t| t.usage.as_ref())
        .map(|u| u.unpriced_models.as_slice())
        .collect();
    crate::protocol::pricing::unpriced_note(&unpriced)
}

/// `12.3k tok` (and ` · $1.23` when priced, ` · ≥$1.23` when the sum leaves a model without
/// a price out) for the footer, or `None` while nothing was used.
pub fn footer_text(state: &AppState) -> Option<String> {
    // The footer has little room: `≥$1.25` says the sum leaves something out (the teams
    // dialog says what).
    let cost = session_cost(state).map(crate::protocol::pricing::dollars);
    let cost = match (cost, unpriced_note(state).is_some()) {
        (Some(c), true) => format!(" · ≥{c}"),
        (Some(c), false) => format!(" · {c}"),
        (None, true) => " · not priced".to_string(),
        (None, false) => String::new(),
    };
    session_tokens(state).map(|n| format!("{} tok{cost}", short_count(n)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_short() {
        let cases = [
            (0, "0"),
            (950, "950"),
            (1_000, "1.0k"),
            (1_234, "1.2k"),
            (12_345, "12.3k"),
            (99_949, "99.9k"),
            (123_456, "123k"),
            (999_949, "1.0M"),
            (1_250_000, "1.2M"),
            (123_000_000, "123M"),
        ];
        for (n, text) in cases {
            assert_eq!(short_count(n), text, "{n}");
        }
    }

    #[test]
    fn lines_and_the_session_sum() {
        let usage = UsageView {
            input_tokens: 12_000,
            output_tokens: 310,
            tool_uses: 1,
            turns: 3,
            ..UsageView::default()
        };
        assert_eq!(tokens_short(&usage), "12.3k tok");
        assert_eq!(
            detail_line(&usage),
            "12.3k tokens (12.0k in · 310 out) · 1 tool use · 3 turns"
        );
        let mut state = AppState::new();
        assert_eq!(footer_text(&state), None);
        state.lead_usage = Some(usage.clone());
        assert_eq!(footer_text(&state), Some("12.3k tok".to_string()));
        let priced = UsageView {
            cost_micros: Some(1_234_567),
            ..usage.clone()
        };
        assert_eq!(tokens_short(&priced), "12.3k tok · $1.23");
        assert!(detail_line(&priced).ends_with("3 turns · $1.23"));
        state.lead_usage = Some(priced.clone());
        assert_eq!(footer_text(&state), Some("12.3k tok · $1.23".to_string()));
        // Two teammates the cost leaves out, one of them partly.
        let fable = UsageView {
            unpriced_models: vec!["fable-5-2".to_string()],
            ..usage.clone()
        };
        let mut partly = priced.clone();
        partly.unpriced_models = vec!["fable-5-2".to_string()];
        assert_eq!(tokens_short(&fable), "12.3k tok · not priced");
        assert_eq!(tokens_short(&partly), "12.3k tok · $1.23 + not priced");
        assert_eq!(
            unpriced_line(&fable).as_deref(),
            Some(
                "model fable-5-2 not priced: its tokens are left out of every cost (teamlead prices)"
            )
        );
    }
}
