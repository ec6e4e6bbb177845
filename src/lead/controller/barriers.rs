//! `ctl`'s barriers ([`LeadCommand::Barrier`](crate::lead::view::LeadCommand)): a barrier
//! closes the store worker's current generation and is answered, in order, once no job of its
//! generation or an earlier one is left, saying whether any command of those generations was
//! refused or failed.

use std::collections::{BTreeSet, VecDeque};

/// Barriers waiting, and the generations in which something was refused.
#[derive(Debug, Default)]
pub(crate) struct Barriers {
    /// Generations in which a command was refused or failed, until their barrier answers.
    refused: BTreeSet<u64>,
    /// Barriers waiting for their generation's continuations: token and generation, in order.
    waiting: VecDeque<(u64, u64)>,
}

impl Barriers {
    /// Something in `generation` was refused or failed.
    pub fn refuse(&mut self, generation: u64) {
        self.refused.insert(generation);
    }

    /// Barrier `token` waits for `generation`.
    pub fn wait(&mut self, token: u64, generation: u64) {
        self.waiting.push_back((token, generation));
    }

    /// The barriers whose generation is settled, in order: each token, and whether a command
    /// of its generations was refused.
    pub fn release(&mut self, settled: impl Fn(u64) -> bool) -> Vec<(u64, bool)> {
        let mut answered = Vec::new();
        while let Some(&(token, generation)) = self.waiting.front() {
            if !settled(generation) {
                break;
            }
            self.waiting.pop_front();
            let later = self.refused.split_off(&(generation + 1));
            let refused = !std::mem::replace(&mut self.refused, later).is_empty();
            answered.push((token, refused));
        }
        answered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barriers_answer_in_order_once_settled_with_their_own_refusals() {
        let mut b = Barriers::default();
        b.refuse(0);
        b.wait(10, 0);
        b.wait(11, 1);
        b.refuse(1);
        b.wait(12, 2);
        // Generation 0 is settled, 1 is not: only the first answers, and it was refused.
        assert_eq!(b.release(|g| g == 0), vec![(10, true)]);
        // Everything settles: 11 was refused (its own generation), 12 was not.
        assert_eq!(b.release(|_| true), vec![(11, true), (12, false)]);
        assert!(b.release(|_| true).is_empty());
    }
}
