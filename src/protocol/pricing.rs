//! What model tokens cost: a built-in table of per-million-token prices (input, output, cache
//! write, cache read) for Claude models, matched by the longest prefix of the model id
//! (`claude-opus-4-1` before `claude-opus-`), which the config file's `[prices."prefix"]`
//! tables extend or override. A model no entry matches has no price: its tokens show, its
//! cost does not. Costs are kept in micro-dollars (integers), so views stay comparable.
//!
//! The built-in prices are Anthropic's list prices in US dollars (standard rate, 5-minute
//! cache writes); long-context, batch and regional rates are not modelled.

use serde::Deserialize;

/// Prices of one model family, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Writes to the prompt cache (defaults to 1.25 × input, Anthropic's 5-minute rate).
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// Reads from the prompt cache (defaults to 0.1 × input).
    #[serde(default)]
    pub cache_read: Option<f64>,
}

impl Price {
    const fn of(input: f64, output: f64) -> Price {
        Price {
            input,
            output,
            cache_write: Some(input * 1.25),
            cache_read: Some(input * 0.1),
        }
    }

    /// The cost of these tokens in micro-dollars (rounded to the nearest).
    pub fn cost_micros(&self, tokens: &Tokens) -> u64 {
        // Per million tokens in dollars = per token in micro-dollars.
        let micros = self.input * tokens.input as f64
            + self.output * tokens.output as f64
            + self.cache_write.unwrap_or(self.input * 1.25) * tokens.cache_write as f64
            + self.cache_read.unwrap_or(self.input * 0.1) * tokens.cache_read as f64;
        if micros.is_finite() && micros > 0.0 {
            micros.round() as u64
        } else {
            0
        }
    }
}

/// Tokens by kind: `input` without the cache's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_write: u64,
    pub cache_read: u64,
}

/// The built-in prices, by model-id prefix.
const BUILT_IN: &[(&str, Price)] = &[
    // Opus 4.5 and later (5.x too) at the lower rate; Opus 4 and 4.1 at the old one.
    ("claude-opus-", Price::of(5.0, 25.0)),
    ("claude-opus-4-1", Price::of(15.0, 75.0)),
    ("claude-opus-4-0", Price::of(15.0, 75.0)),
    ("claude-opus-4-2025", Price::of(15.0, 75.0)),
    ("claude-sonnet-", Price::of(3.0, 15.0)),
    ("claude-haiku-", Price::of(1.0, 5.0)),
    ("claude-3-opus", Price::of(15.0, 75.0)),
    ("claude-3-7-sonnet", Price::of(3.0, 15.0)),
    ("claude-3-5-sonnet", Price::of(3.0, 15.0)),
    ("claude-3-5-haiku", Price::of(0.8, 4.0)),
    ("claude-3-haiku", Price::of(0.25, 1.25)),
];

/// Prices by model-id prefix: the built-in ones and the config file's.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    entries: Vec<(String, Price)>,
}

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable::built_in()
    }
}

impl PriceTable {
    /// The built-in table.
    pub fn built_in() -> PriceTable {
        PriceTable {
            entries: BUILT_IN
                .iter()
                .map(|(p, price)| (p.to_string(), *price))
                .collect(),
        }
    }

    /// The built-in table with `overrides` (prefix → price) added or replacing entries.
    pub fn with_overrides<'a>(
        mut self,
        overrides: impl IntoIterator<Item = (&'a String, &'a Price)>,
    ) -> PriceTable {
        for (prefix, price) in overrides {
            self.entries.retain(|(p, _)| p != prefix);
            self.entries.push((prefix.clone(), *price));
        }
        self
    }

    /// The price of `model`: the entry with the longest prefix of it.
    pub fn price(&self, model: &str) -> Option<&Price> {
        // Claude Code's aliases name the newest model of a family.
        let model = match model {
            "opus" => "claude-opus-",
            "sonnet" => "claude-sonnet-",
            "haiku" => "claude-haiku-",
            m => m,
        };
        self.entries
            .iter()
            .filter(|(prefix, _)| model.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, price)| price)
    }

    /// What `tokens` of `model` cost, in micro-dollars; `None` for a model without a price.
    pub fn cost_micros(&self, model: Option<&str>, tokens: &Tokens) -> Option<u64> {
        self.price(model?).map(|p| p.cost_micros(tokens))
    }
}

/// `$0.42`, `$12.34`, `$1,234` (under a cent: `<$0.01`).
pub fn dollars(micros: u64) -> String {
    let cents = (micros + 5_000) / 10_000;
    if micros > 0 && cents == 0 {
        return "<$0.01".to_string();
    }
    if cents >= 100_000 {
        let whole = (cents + 50) / 100;
        let mut digits = whole.to_string();
        let mut i = digits.len();
        while i > 3 {
            i -= 3;
            digits.insert(i, ',');
        }
        return format!("${digits}");
    }
    format!("${}.{:02}", cents / 100, cents % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_wins_and_unknown_models_have_no_price() {
        let t = PriceTable::built_in();
        assert_eq!(t.price("claude-opus-4-5-20251101").unwrap().input, 5.0);
        assert_eq!(t.price("claude-opus-5-5").unwrap().input, 5.0);
        assert_eq!(t.price("claude-opus-4-1-20250805").unwrap().input, 15.0);
        assert_eq!(t.price("claude-opus-4-20250514").unwrap().input, 15.0);
        assert_eq!(t.price("claude-sonnet-4-5").unwrap().output, 15.0);
        assert_eq!(t.price("claude-haiku-4-5").unwrap().cache_read, Some(0.1));
        assert_eq!(t.price("gpt-5"), None);
        assert_eq!(t.price("sonnet").unwrap().input, 3.0);
        assert_eq!(t.cost_micros(None, &Tokens::default()), None);
        let custom = Price {
            input: 2.0,
            output: 4.0,
            cache_write: None,
            cache_read: None,
        };
        let over = [
            ("claude-opus-".to_string(), custom),
            ("gpt-".to_string(), custom),
        ];
        let t = t.with_overrides(over.iter().map(|(p, c)| (p, c)));
        assert_eq!(t.price("claude-opus-5").unwrap().input, 2.0);
        assert_eq!(t.price("claude-opus-4-1").unwrap().input, 15.0);
        assert_eq!(t.price("gpt-5").unwrap().output, 4.0);
    }

    #[test]
    fn costs_to_the_micro_dollar_and_dollars_to_the_cent() {
        let opus = PriceTable::built_in();
        let tokens = Tokens {
            input: 1_000,
            output: 2_000,
            cache_write: 10_000,
            cache_read: 100_000,
        };
        // 1000×5 + 2000×25 + 10000×6.25 + 100000×0.5 = 5000 + 50000 + 62500 + 50000.
        assert_eq!(
            opus.cost_micros(Some("claude-opus-4-5"), &tokens),
            Some(167_500)
        );
        assert_eq!(dollars(167_500), "$0.17");
        assert_eq!(dollars(0), "$0.00");
        assert_eq!(dollars(4_000), "<$0.01");
        assert_eq!(dollars(12_345_678), "$12.35");
        assert_eq!(dollars(1_234_567_890), "$1,235");
    }
}
