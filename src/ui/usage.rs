//! How model usage reads on screen: counts in short form (`950`, `12.3k`, `1.2M`), a
//! teammate's usage as `12.3k tok · $0.42` (teams list) or as a line (`12.3k tokens (12.0k in
//! · 310 out) · 14 tool uses · 3 turns · $0.42`, teams detail), and the session's sum for the
//! footer: every teammate's tokens plus the lead model's, and what the priced ones cost.
//! Nothing shows while a count is zero; no cost shows for a model without a price.

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

/// ` · $0.42`, or nothing without a price.
fn cost_suffix(usage: &UsageView) -> String {
    usage
        .cost_micros
        .map(|c| format!(" · {}", crate::protocol::pricing::dollars(c)))
        .unwrap_or_default()
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

/// `12.3k tok` (and ` · $1.23` when priced) for the footer, or `None` while nothing was used.
pub fn footer_text(state: &AppState) -> Option<String> {
    let cost = session_cost(state)
        .map(|c| format!(" · {}", crate::protocol::pricing::dollars(c)))
        .unwrap_or_default();
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
            cost_micros: None,
        };
        assert_eq!(tokens_short(&usage), "12.3k tok");
        assert_eq!(
            detail_line(&usage),
            "12.3k tokens (12.0k in · 310 out) · 1 tool use · 3 turns"
        );
        let mut state = AppState::new();
        assert_eq!(footer_text(&state), None);
        state.lead_usage = Some(usage);
        assert_eq!(footer_text(&state), Some("12.3k tok".to_string()));
        let priced = UsageView {
            cost_micros: Some(1_234_567),
            ..usage
        };
        assert_eq!(tokens_short(&priced), "12.3k tok · $1.23");
        assert!(detail_line(&priced).ends_with("3 turns · $1.23"));
        state.lead_usage = Some(priced);
        assert_eq!(footer_text(&state), Some("12.3k tok · $1.23".to_string()));
    }
}
