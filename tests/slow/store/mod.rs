//! The store: the protocol's files under concurrent and hostile writers, and the watcher's events.

mod hostile;
