//! Commands stay in order across jobs. `apply` starts slow work as jobs and goes on, so a
//! command could overtake the job of the one before it: `/kill alpha` then `/merge alpha`
//! must merge a teammate that is gone, `/spawn b` then `/msg b hi` must reach b. So a command
//! that names a teammate whose runtime job (start, kill, hide/show, jump) is under way is held
//! until that job is done, and a command about the whole team (`/broadcast`, `/team`,
//! `/shutdown all`, prune, `/quit`, `/detach`) until no runtime job is under way; a command
//! held keeps every later one (but answers and interrupts) behind it. Starts of different
//! teammates still overlap, and a permission answer is never held.

use std::collections::{HashMap, VecDeque};
use std::future::Future;

use super::state::Controller;
use super::store_worker::Lane;
use crate::lead::commands::{Input, ShutdownTarget, SlashCommand, parse_input};
use crate::lead::contract::{LeadCommand, ViewTarget};
use crate::store::Home;

/// What a command waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Needs {
    /// Nothing: it runs at once.
    Nothing,
    /// No runtime job of this teammate under way.
    Teammate(String),
    /// No runtime job of anyone under way.
    Everyone,
}

/// The runtime jobs under way, and the commands held behind them.
#[derive(Default)]
pub(crate) struct CommandOrder {
    /// Runtime jobs under way per teammate.
    busy: HashMap<String, usize>,
    held: VecDeque<LeadCommand>,
}

impl CommandOrder {
    /// A runtime job of `name` started.
    pub fn started(&mut self, name: &str) {
        *self.busy.entry(name.to_string()).or_default() += 1;
    }

    /// A runtime job of `name` is done.
    pub fn finished(&mut self, name: &str) {
        if let Some(n) = self.busy.get_mut(name) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.busy.remove(name);
            }
        }
    }

    /// Whether any runtime job is under way.
    pub fn any_busy(&self) -> bool {
        !self.busy.is_empty()
    }

    fn blocked(&self, needs: &Needs) -> bool {
        match needs {
            Needs::Nothing => false,
            Needs::Teammate(name) => self.busy.contains_key(name),
            Needs::Everyone => self.any_busy(),
        }
    }
}

/// What `command` waits for.
pub(crate) fn needs(command: &LeadCommand) -> Needs {
    match command.inner() {
        LeadCommand::Submit { target, text } => {
            if let ViewTarget::Teammate(name) = target
                && !text.trim_start().starts_with('/')
            {
                return Needs::Teammate(name.clone());
            }
            match parse_input(text) {
                Ok(Input::Mention { to, .. }) => Needs::Teammate(bare(&to)),
                Ok(Input::Slash(slash)) => slash_needs(&slash),
                _ => Needs::Nothing,
            }
        }
        LeadCommand::CycleTeammateMode { name }
        | LeadCommand::SetTeammateMode { name, .. }
        | LeadCommand::Shutdown { name }
        | LeadCommand::Kill { name }
        | LeadCommand::ToggleHidden { name }
        | LeadCommand::Jump { name }
        | LeadCommand::ReviewFile { name, .. }
        | LeadCommand::ReviewComment { name, .. }
        | LeadCommand::RetireWorktree { name } => Needs::Teammate(name.clone()),
        LeadCommand::CycleAllModes
        | LeadCommand::Prune { .. }
        | LeadCommand::Quit
        | LeadCommand::Detach => Needs::Everyone,
        LeadCommand::CycleLeadMode
        | LeadCommand::AnswerPermission { .. }
        | LeadCommand::AnswerPlan { .. }
        | LeadCommand::InterruptTeammate { .. }
        | LeadCommand::InterruptLead
        | LeadCommand::ScreenClosed
        | LeadCommand::Barrier { .. }
        | LeadCommand::Tracked { .. }
        | LeadCommand::Note { .. } => Needs::Nothing,
    }
}

fn slash_needs(slash: &SlashCommand) -> Needs {
    match slash {
        SlashCommand::TaskAssign { name, .. }
        | SlashCommand::Kill { name }
        | SlashCommand::Interrupt { name }
        | SlashCommand::Respawn { name }
        | SlashCommand::Mode { name, .. }
        | SlashCommand::Review { name }
        | SlashCommand::Merge { name, .. }
        | SlashCommand::Shutdown {
            target: ShutdownTarget::One(name),
            ..
        } => Needs::Teammate(bare(name)),
        SlashCommand::Msg { to, .. } | SlashCommand::Steer { to, .. } => Needs::Teammate(bare(to)),
        SlashCommand::Broadcast { .. }
        | SlashCommand::Shutdown {
            target: ShutdownTarget::All,
            ..
        }
        | SlashCommand::Team
        | SlashCommand::TeamDelete
        | SlashCommand::Queue
        | SlashCommand::Quit
        | SlashCommand::Detach
        | SlashCommand::DetachScreen => Needs::Everyone,
        SlashCommand::Spawn { .. }
        | SlashCommand::TaskAdd { .. }
        | SlashCommand::TaskList
        | SlashCommand::TaskSet { .. }
        | SlashCommand::TaskEdit { .. }
        | SlashCommand::Clean
        | SlashCommand::Help
        | SlashCommand::Version
        | SlashCommand::Budget { .. }
        | SlashCommand::Budgets
        | SlashCommand::Limits(_) => Needs::Nothing,
    }
}

fn bare(name: &str) -> String {
    name.trim_start_matches('@').to_string()
}

/// Commands that never wait, even behind a held one: they answer or stop something.
fn never_held(command: &LeadCommand) -> bool {
    matches!(
        command.inner(),
        LeadCommand::AnswerPermission { .. }
            | LeadCommand::AnswerPlan { .. }
            | LeadCommand::InterruptTeammate { .. }
            | LeadCommand::InterruptLead
            | LeadCommand::CycleLeadMode
            | LeadCommand::ScreenClosed
            | LeadCommand::Note { .. }
    )
}

impl Controller {
    /// A command from the UI: run now, or held behind a runtime job (see the module header).
    pub fn on_command_in_order(&mut self, command: LeadCommand) {
        if never_held(&command) {
            return self.on_command(command);
        }
        if !self.order.held.is_empty() || self.order.blocked(&needs(&command)) {
            tracing::debug!("held behind a runtime job: {command:?}");
            self.order.held.push_back(command);
            return;
        }
        self.on_command(command);
    }

    /// Runs `work` (starting, killing, hiding, showing or focusing `name`) as a job in
    /// `name`'s runtime lane; `then` runs on the loop with its result, and the commands held
    /// behind it run after that.
    pub(super) fn runtime_job<T: Send + 'static, F>(
        &mut self,
        name: &str,
        work: impl FnOnce(Home) -> F + Send + 'static,
        then: impl FnOnce(&mut Controller, T) + Send + 'static,
    ) where
        F: Future<Output = T> + Send + 'static,
    {
        self.order.started(name);
        let who = name.to_string();
        self.store
            .job(Lane::Runtime(who.clone()), work, move |c, result| {
                then(c, result);
                c.runtime_done(&who);
            });
    }

    /// A runtime job of `name` is done: held commands that can run now do, in order.
    fn runtime_done(&mut self, name: &str) {
        self.order.finished(name);
        while let Some(next) = self.order.held.front() {
            if self.order.blocked(&needs(next)) {
                return;
            }
            if let Some(command) = self.order.held.pop_front() {
                self.on_command(command);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submit(text: &str) -> LeadCommand {
        LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: text.to_string(),
        }
    }

    #[test]
    fn commands_name_what_they_wait_for() {
        assert_eq!(needs(&submit("/msg @b hi")), Needs::Teammate("b".into()));
        assert_eq!(needs(&submit("@b hi")), Needs::Teammate("b".into()));
        assert_eq!(
            needs(&submit("/merge b --squash")),
            Needs::Teammate("b".into())
        );
        assert_eq!(needs(&submit("/spawn c do it")), Needs::Nothing);
        assert_eq!(needs(&submit("/broadcast hi")), Needs::Everyone);
        assert_eq!(needs(&submit("/quit")), Needs::Everyone);
        let in_view = LeadCommand::Submit {
            target: ViewTarget::Teammate("r1".into()),
            text: "hello".into(),
        };
        assert_eq!(needs(&in_view), Needs::Teammate("r1".into()));
        assert_eq!(
            needs(&LeadCommand::Kill { name: "a".into() }),
            Needs::Teammate("a".into())
        );
    }

    #[test]
    fn a_busy_teammate_blocks_only_what_names_it() {
        let mut order = CommandOrder::default();
        order.started("a");
        assert!(order.blocked(&Needs::Teammate("a".into())));
        assert!(!order.blocked(&Needs::Teammate("b".into())));
        assert!(order.blocked(&Needs::Everyone));
        order.finished("a");
        assert!(!order.blocked(&Needs::Teammate("a".into())));
        assert!(!order.any_busy());
    }
}
