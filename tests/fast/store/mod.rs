//! The store: the protocol's files under concurrent and hostile writers, and the watcher's events.

mod concurrency;
mod dead_writers;
mod interop;
mod watch_events;
