//! The roster: one part of the controller. What the lead tracks about each teammate besides
//! the team file ([`Tracking`]), the names whose start is under way (taken, not yet members),
//! and the palette's round-robin. Its fields are private: the controller's other files reach
//! it through these methods, so a new use says what it does with a teammate's record.

use std::collections::{HashMap, HashSet};

use crate::lead::tracking::Tracking;
use crate::protocol::Color;

/// Every teammate's [`Tracking`], the starts under way and the palette's next colour.
#[derive(Debug, Default)]
pub(crate) struct Roster {
    tracking: HashMap<String, Tracking>,
    starting: HashSet<String>,
    spawned: usize,
}

impl Roster {
    /// `name`'s record, when the lead has one.
    pub fn get(&self, name: &str) -> Option<&Tracking> {
        self.tracking.get(name)
    }

    /// `name`'s record to change, when the lead has one.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Tracking> {
        self.tracking.get_mut(name)
    }

    /// `name`'s record, made empty first when the lead had none.
    pub fn entry(&mut self, name: &str) -> &mut Tracking {
        self.tracking.entry(name.to_string()).or_default()
    }

    /// Forgets `name`'s record (a teammate gone or started afresh).
    pub fn forget(&mut self, name: &str) {
        self.tracking.remove(name);
    }

    /// Every record, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Tracking)> {
        self.tracking.iter()
    }

    /// Every record to change, by name.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Tracking)> {
        self.tracking.iter_mut()
    }

    /// The records as one map (what the views are built from).
    pub fn records(&self) -> &HashMap<String, Tracking> {
        &self.tracking
    }

    /// Whether `name`'s start is under way.
    pub fn is_starting(&self, name: &str) -> bool {
        self.starting.contains(name)
    }

    /// The names whose start is under way (taken for new teammates).
    pub fn starting(&self) -> impl Iterator<Item = &str> {
        self.starting.iter().map(String::as_str)
    }

    /// `name`'s start began: its name is taken until [`Roster::start_ended`].
    pub fn start_began(&mut self, name: &str) {
        self.starting.insert(name.to_string());
    }

    /// `name`'s start ended (started or failed).
    pub fn start_ended(&mut self, name: &str) {
        self.starting.remove(name);
    }

    /// The colour of the next new teammate, which takes it.
    pub fn take_color(&mut self) -> Color {
        let color = Color::nth(self.spawned);
        self.spawned += 1;
        color
    }

    /// The colour the next new teammate would take (for a teammate started again that has
    /// none of its own), left for it.
    pub fn next_color(&self) -> Color {
        Color::nth(self.spawned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_go_round_and_a_look_takes_none() {
        let mut roster = Roster::default();
        let first = roster.next_color();
        assert_eq!(roster.take_color(), first);
        assert_eq!(roster.next_color(), Color::nth(1));
        assert_eq!(roster.take_color(), Color::nth(1));
    }

    #[test]
    fn a_start_takes_the_name_until_it_ends() {
        let mut roster = Roster::default();
        roster.start_began("alpha");
        assert!(roster.is_starting("alpha"));
        assert_eq!(roster.starting().collect::<Vec<_>>(), ["alpha"]);
        roster.start_ended("alpha");
        assert!(!roster.is_starting("alpha"));
    }

    #[test]
    fn an_entry_is_made_once_and_forgotten() {
        let mut roster = Roster::default();
        roster.entry("alpha").remember("hello".into());
        assert!(roster.get("alpha").is_some_and(|t| t.recent().len() == 1));
        roster.forget("alpha");
        assert!(roster.get("alpha").is_none());
    }
}
