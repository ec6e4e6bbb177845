//! From the llm engine's usage meter to what the UI shows ([`UsageView`]): input tokens (cache
//! reads and writes included), output tokens, tool uses and turns. Nothing at all when the
//! meter is still at zero (a `shell` teammate, a lead model that has not answered yet).

use crate::agent::events::Usage;
use crate::lead::contract::UsageView;

/// What the UI shows of `usage`; `None` while nothing was used.
pub fn usage_view(usage: &Usage) -> Option<UsageView> {
    let view = UsageView {
        input_tokens: usage.input_tokens
            + usage.cache_read_input_tokens
            + usage.cache_creation_input_tokens,
        output_tokens: usage.output_tokens,
        tool_uses: usage.tool_uses,
        turns: usage.turns,
        cost_micros: None,
        cache_read_tokens: usage.cache_read_input_tokens,
        cache_write_5m_tokens: usage.cache_creation_input_tokens,
        cache_write_1h_tokens: 0,
        unpriced_models: Vec::new(),
    };
    (view.total_tokens() > 0 || view.tool_uses > 0).then_some(view)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_nothing_and_cache_tokens_count_as_input() {
        assert_eq!(usage_view(&Usage::default()), None);
        // A shell teammate counts turns only: still nothing to show.
        let shell = Usage {
            turns: 3,
            ..Usage::default()
        };
        assert_eq!(usage_view(&shell), None);
        let llm = Usage {
            input_tokens: 100,
            cache_read_input_tokens: 1000,
            cache_creation_input_tokens: 10,
            output_tokens: 50,
            tool_uses: 2,
            turns: 1,
            ..Usage::default()
        };
        let view = usage_view(&llm).expect("shown");
        assert_eq!(view.input_tokens, 1110);
        assert_eq!(view.total_tokens(), 1160);
        assert_eq!((view.tool_uses, view.turns), (2, 1));
    }
}
