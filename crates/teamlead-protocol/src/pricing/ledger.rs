//! Usage priced message by message: each API message is priced by its own model and tier when
//! it is counted (`PriceTable::message_micros`), and the ledger keeps, per model, the tokens by
//! kind and what the priced ones cost. A model without a price keeps its tokens and no cost, so
//! a total can say what it leaves out.

use super::Tokens;

/// One model's share of a session.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ModelUsage {
    pub model: String,
    pub tokens: Tokens,
    pub messages: u64,
    /// What its messages cost, in micro-dollars (not rounded); `None` when it has no price.
    pub micros: Option<f64>,
}

/// Usage per model, in the order the models were first seen.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Ledger {
    pub models: Vec<ModelUsage>,
}

impl Ledger {
    fn entry(&mut self, model: &str) -> &mut ModelUsage {
        let at = match self.models.iter().position(|m| m.model == model) {
            Some(at) => at,
            None => {
                self.models.push(ModelUsage {
                    model: model.to_string(),
                    ..ModelUsage::default()
                });
                self.models.len() - 1
            }
        };
        &mut self.models[at]
    }

    /// Counts one message (`micros`: its cost, `None` without a price).
    pub fn add(&mut self, model: &str, tokens: &Tokens, micros: Option<f64>) {
        let e = self.entry(model);
        e.tokens.add(tokens);
        e.messages += 1;
        if let Some(m) = micros {
            *e.micros.get_or_insert(0.0) += m;
        }
    }

    /// Takes back a message counted before (its counts grew on a later line).
    pub fn remove(&mut self, model: &str, tokens: &Tokens, micros: Option<f64>) {
        let e = self.entry(model);
        e.tokens.sub(tokens);
        e.messages = e.messages.saturating_sub(1);
        if let (Some(total), Some(m)) = (e.micros.as_mut(), micros) {
            *total = (*total - m).max(0.0);
        }
    }

    /// Every model's tokens together.
    pub fn tokens(&self) -> Tokens {
        let mut all = Tokens::default();
        for m in &self.models {
            all.add(&m.tokens);
        }
        all
    }

    /// What the priced models cost together, in micro-dollars; `None` when none is priced.
    pub fn cost_micros(&self) -> Option<u64> {
        let priced: Vec<f64> = self.models.iter().filter_map(|m| m.micros).collect();
        (!priced.is_empty()).then(|| priced.iter().sum::<f64>().round() as u64)
    }

    /// The models that used tokens and have no price.
    pub fn unpriced(&self) -> Vec<String> {
        self.models
            .iter()
            .filter(|m| m.micros.is_none() && m.tokens.total() > 0)
            .map(|m| m.model.clone())
            .collect()
    }
}
