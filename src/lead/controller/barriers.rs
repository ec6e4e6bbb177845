//! `ctl`'s barriers ([`LeadCommand::Barrier`](crate::lead::contract::LeadCommand)): a barrier
//! closes the store worker's current generation and is answered, in order, once no job of its
//! generation or an earlier one is left, saying whether any command sent with its token
//! ([`LeadCommand::Tracked`](crate::lead::contract::LeadCommand)) was refused or failed: a
//! command another client (a screen) sent meanwhile is not its caller's.

use std::collections::VecDeque;

/// Barriers waiting, and the refusals not answered yet.
#[derive(Debug, Default)]
pub(crate) struct Barriers {
    /// Refusals: the generation and whose command it was (a barrier's token; `None`: a
    /// screen's, which no barrier answers for).
    refused: Vec<(u64, Option<u64>)>,
    /// Barriers waiting for their generation's continuations: token and generation, in order.
    waiting: VecDeque<(u64, u64)>,
}

impl Barriers {
    /// A command of `origin` (a barrier's token, `None` for a screen's) in `generation` was
    /// refused or failed.
    pub fn refuse(&mut self, generation: u64, origin: Option<u64>) {
        if origin.is_some() {
            self.refused.push((generation, origin));
        }
    }

    /// Barrier `token` waits for `generation`.
    pub fn wait(&mut self, token: u64, generation: u64) {
        self.waiting.push_back((token, generation));
    }

    /// The barriers whose generation is settled, in order: each token, and whether a command
    /// sent with that token was refused.
    pub fn release(&mut self, settled: impl Fn(u64) -> bool) -> Vec<(u64, bool)> {
        let mut answered = Vec::new();
        while let Some(&(token, generation)) = self.waiting.front() {
            if !settled(generation) {
                break;
            }
            self.waiting.pop_front();
            let mine = |&(g, o): &(u64, Option<u64>)| g <= generation && o == Some(token);
            let refused = self.refused.iter().any(mine);
            self.refused.retain(|r| !mine(r));
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
        b.refuse(0, Some(10));
        b.wait(10, 0);
        b.wait(11, 1);
        b.refuse(1, Some(11));
        // A screen's refusal and another caller's are not 12's.
        b.refuse(2, None);
        b.refuse(2, Some(13));
        b.wait(12, 2);
        // Generation 0 is settled, 1 is not: only the first answers, and it was refused.
        assert_eq!(b.release(|g| g == 0), vec![(10, true)]);
        // Everything settles: 11 was refused (its own command), 12 was not.
        assert_eq!(b.release(|_| true), vec![(11, true), (12, false)]);
        assert!(b.release(|_| true).is_empty());
        // 13's refusal waits for 13's barrier, even in a generation another one closed.
        b.wait(13, 3);
        assert_eq!(b.release(|_| true), vec![(13, true)]);
    }
}
