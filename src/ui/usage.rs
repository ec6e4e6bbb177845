//! How model usage reads on screen: counts in short form (`950`, `12.3k`, `1.2M`), a
//! teammate's usage as `12.3k tok` (teams list) or as a line (`12.3k tokens (12.0k in · 310
//! out) · 14 tool uses · 3 turns`, teams detail), and the session's sum for the footer:
//! every teammate's tokens plus the lead model's. Nothing shows while a count is zero.

use crate::lead::view::UsageView;
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

/// `12.3k tok` (input and output tokens), for the teams list.
pub fn tokens_short(usage: &UsageView) -> String {
    format!("{} tok", short_count(usage.total_tokens()))
}

/// `12.3k tokens (12.0k in · 310 out) · 14 tool uses · 3 turns`, for the teams detail.
pub fn detail_line(usage: &UsageView) -> String {
    format!(
        "{} tokens ({} in · {} out) · {} · {}",
        short_count(usage.total_tokens()),
        short_count(usage.input_tokens),
        short_count(usage.output_tokens),
        plural(usage.tool_uses, "tool use", "tool uses"),
        plural(usage.turns, "turn", "turns"),
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

/// `12.3k tok` for the footer, or `None` while nothing was used.
pub fn footer_text(state: &AppState) -> Option<String> {
    session_tokens(state).map(|n| format!("{} tok", short_count(n)))
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
    }
}
