//! Budgets (config `budget-teammate`, `budget-team`; `/budget [NAME|team] DOLLARS`, and
//! `/budget` alone to read them back with what each teammate spent): what a
//! teammate, or the whole team, may cost. At 80 % the lead warns once; at 100 % the teammate
//! (or, for the team's budget, every teammate) is paused: no message from the lead is
//! delivered to it and no task is assigned to it, until the person raises the budget. The
//! cost is the one the teams dialog shows (`publish_usage`: the price table on its tokens).

use std::collections::{BTreeMap, BTreeSet};

use super::state::Controller;
use crate::lead::contract::TeammateView;
use crate::protocol::pricing::dollars;

/// The budgets in force and what was already said about them.
#[derive(Debug, Default)]
pub(crate) struct Budgets {
    /// Every teammate's, unless it has its own.
    teammate: Option<u64>,
    team: Option<u64>,
    /// Budgets set for one teammate.
    own: BTreeMap<String, u64>,
    /// Warnings given (teammate name, or `""` for the team), until a budget changes.
    warned: BTreeSet<String>,
    /// Teammates paused, and why.
    paused: BTreeMap<String, String>,
}

/// What the budgets make of the costs now: who is over (and why), who crossed 80 %.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub over: BTreeMap<String, String>,
    pub warn: Vec<String>,
}

impl Budgets {
    /// Budgets for every teammate and for the team (micro-dollars).
    pub fn new(teammate: Option<u64>, team: Option<u64>) -> Budgets {
        Budgets {
            teammate,
            team,
            ..Budgets::default()
        }
    }

    /// The budget of `name`.
    pub fn of(&self, name: &str) -> Option<u64> {
        self.own.get(name).copied().or(self.teammate)
    }

    /// Judges the costs (micro-dollars per teammate).
    pub fn judge(&mut self, costs: &[(String, u64)]) -> Verdict {
        let mut v = Verdict::default();
        let total: u64 = costs.iter().map(|(_, c)| c).sum();
        if let Some(team) = self.team {
            if total >= team {
                for (name, _) in costs {
                    v.over.insert(
                        name.clone(),
                        format!(
                            "the team is over its budget ({} of {})",
                            dollars(total),
                            dollars(team)
                        ),
                    );
                }
            } else if total * 5 >= team * 4 && self.warned.insert(String::new()) {
                v.warn.push(format!(
                    "The team has used {} of its {} budget (80 %): at 100 % every teammate is paused. /budget team DOLLARS raises it.",
                    dollars(total),
                    dollars(team)
                ));
            }
        }
        for (name, cost) in costs {
            let Some(budget) = self.of(name) else {
                continue;
            };
            if *cost >= budget {
                v.over.entry(name.clone()).or_insert_with(|| {
                    format!(
                        "over its budget ({} of {})",
                        dollars(*cost),
                        dollars(budget)
                    )
                });
            } else if cost * 5 >= budget * 4 && self.warned.insert(name.clone()) {
                v.warn.push(format!(
                    "{name} has used {} of its {} budget (80 %): at 100 % it is paused. /budget {name} DOLLARS raises it.",
                    dollars(*cost),
                    dollars(budget)
                ));
            }
        }
        v
    }
}

impl Controller {
    /// `/budget [NAME|team] DOLLARS`: a teammate not in the team is refused, as every command
    /// naming one is.
    pub fn set_budget(&mut self, name: Option<&str>, micros: u64) {
        match name {
            Some(name) => {
                let who = name.to_string();
                self.with_teammate(name, move |c, known| {
                    if !known {
                        return c.no_such_teammate(&who);
                    }
                    c.budgets.own.insert(who.clone(), micros);
                    c.budgets.warned.remove(&who);
                    c.note(format!("{who}'s budget is now {}.", dollars(micros)));
                    c.publish();
                });
                return;
            }
            None => {
                self.budgets.team = Some(micros);
                self.budgets.warned.remove("");
                self.note(format!("The team's budget is now {}.", dollars(micros)));
            }
        }
        self.publish();
    }

    /// `/budget` alone: the budgets in force and what each teammate has spent.
    pub fn show_budgets(&mut self) {
        let mut team = crate::lead::view_builder::team_views(
            self.cache.file(),
            self.cache.tasks(),
            self.roster.records(),
            &|_| false,
        );
        self.publish_usage(&mut team);
        self.apply_budgets(&mut team);
        let spent: Vec<Spent> = team
            .iter()
            .map(|t| Spent {
                name: t.name.clone(),
                budget: self.budgets.of(&t.name),
                cost: match &t.usage {
                    None if t.costs_nothing => Cost::Nothing,
                    None => Cost::NotYet,
                    Some(u) => match u.cost_micros {
                        Some(c) => Cost::Priced(c),
                        None => Cost::Unpriced,
                    },
                },
                paused: self.budgets.paused.get(&t.name).cloned(),
            })
            .collect();
        let text = budget_report(self.budgets.team, self.budgets.teammate, &spent);
        self.note(text);
    }

    /// Why `name` is paused (over a budget), if it is.
    pub fn over_budget(&self, name: &str) -> Option<String> {
        self.budgets.paused.get(name).cloned()
    }

    /// After the costs were filled in: warnings, and who is paused now (said when it
    /// changes).
    pub(super) fn apply_budgets(&mut self, team: &mut [TeammateView]) {
        for view in team.iter_mut() {
            view.budget_micros = self.budgets.of(&view.name);
            view.costs_nothing =
                view.usage.is_none() && view.model.is_none() && !self.is_claude(&view.name);
        }
        if self.budgets.team.is_none()
            && self.budgets.teammate.is_none()
            && self.budgets.own.is_empty()
        {
            return;
        }
        let costs: Vec<(String, u64)> = team
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    t.usage.as_ref().and_then(|u| u.cost_micros).unwrap_or(0),
                )
            })
            .collect();
        let verdict = self.budgets.judge(&costs);
        for warning in verdict.warn {
            self.note(warning);
        }
        for (name, why) in &verdict.over {
            if !self.budgets.paused.contains_key(name) {
                self.note(format!(
                    "{name} is paused: {why}. Messages and tasks for it wait until /budget raises the budget."
                ));
            }
        }
        let resumed: Vec<String> = self
            .budgets
            .paused
            .keys()
            .filter(|n| !verdict.over.contains_key(*n))
            .cloned()
            .collect();
        for name in resumed {
            self.note(format!("{name} is within its budget again."));
        }
        self.budgets.paused = verdict.over;
        for view in team.iter_mut() {
            view.over_budget = self.budgets.paused.get(&view.name).cloned();
        }
    }
}

/// What one teammate has cost so far, as `/budget` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cost {
    /// Priced from its tokens (micro-dollars).
    Priced(u64),
    /// It uses a model with no price known: tokens only.
    Unpriced,
    /// It runs no model (a shell teammate): it costs nothing.
    Nothing,
    /// A `claude` teammate whose usage was not read yet.
    NotYet,
}

/// One teammate's line of `/budget`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spent {
    pub name: String,
    pub budget: Option<u64>,
    pub cost: Cost,
    pub paused: Option<String>,
}

/// What `/budget` says: the team's budget and spend, then one line per teammate.
pub(crate) fn budget_report(team: Option<u64>, every: Option<u64>, spent: &[Spent]) -> String {
    let total: u64 = spent
        .iter()
        .filter_map(|s| match s.cost {
            Cost::Priced(c) => Some(c),
            _ => None,
        })
        .sum();
    let mut out = String::from("Budgets:");
    out.push_str(&match team {
        Some(b) => format!("\n  team: {} of {} spent", dollars(total), dollars(b)),
        None => format!("\n  team: no budget ({} spent)", dollars(total)),
    });
    if let Some(b) = every {
        out.push_str(&format!("\n  every teammate: {}", dollars(b)));
    }
    if spent.is_empty() {
        out.push_str("\n  No teammate yet.");
    }
    for s in spent {
        let cost = match s.cost {
            Cost::Priced(c) => format!("{} spent", dollars(c)),
            Cost::Unpriced => "cost unknown (no price for its model)".to_string(),
            Cost::Nothing => "costs nothing (no model)".to_string(),
            Cost::NotYet => "nothing spent yet".to_string(),
        };
        let budget = match s.budget {
            Some(b) => format!("budget {}", dollars(b)),
            None => "no budget".to_string(),
        };
        out.push_str(&format!("\n  @{}: {cost}, {budget}", s.name));
        if let Some(why) = &s.paused {
            out.push_str(&format!(" (paused: {why})"));
        }
    }
    out.push_str("\n/budget NAME DOLLARS or /budget team DOLLARS sets one.");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_once_at_80_percent_and_pauses_at_100() {
        let mut b = Budgets {
            teammate: Some(1_000_000),
            ..Budgets::default()
        };
        let v = b.judge(&[("alpha".into(), 700_000)]);
        assert!(v.warn.is_empty() && v.over.is_empty());
        let v = b.judge(&[("alpha".into(), 850_000)]);
        assert_eq!(v.warn.len(), 1, "{v:?}");
        assert!(v.warn[0].starts_with("alpha has used $0.85 of its $1.00 budget"));
        let v = b.judge(&[("alpha".into(), 900_000)]);
        assert!(v.warn.is_empty(), "told once");
        let v = b.judge(&[("alpha".into(), 1_000_000)]);
        assert_eq!(v.over["alpha"], "over its budget ($1.00 of $1.00)");
        // Its own, higher budget: within again.
        b.own.insert("alpha".into(), 2_000_000);
        let v = b.judge(&[("alpha".into(), 1_000_000)]);
        assert!(v.over.is_empty());
    }

    #[test]
    fn the_teams_budget_pauses_everyone() {
        let mut b = Budgets {
            team: Some(1_000_000),
            ..Budgets::default()
        };
        let v = b.judge(&[("a".into(), 600_000), ("b".into(), 500_000)]);
        assert_eq!(v.over.len(), 2);
        assert!(v.over["b"].starts_with("the team is over its budget ($1.10 of $1.00)"));
    }
}
