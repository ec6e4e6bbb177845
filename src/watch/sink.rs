//! Where a watcher's events go: a tokio channel for async consumers, a std channel for plain
//! threads. Sending fails only when the receiver is gone, which stops the watcher.

use super::event::ChangeEvent;

/// The receiving end the watcher writes to.
pub(crate) enum Sink {
    Tokio(tokio::sync::mpsc::UnboundedSender<ChangeEvent>),
    Std(std::sync::mpsc::Sender<ChangeEvent>),
}

impl Sink {
    /// Sends every event; `false` when the receiver has been dropped.
    pub fn send_all(&self, events: Vec<ChangeEvent>) -> bool {
        for event in events {
            let ok = match self {
                Sink::Tokio(tx) => tx.send(event).is_ok(),
                Sink::Std(tx) => tx.send(event).is_ok(),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Is the receiver gone?
    pub fn is_closed(&self) -> bool {
        match self {
            Sink::Tokio(tx) => tx.is_closed(),
            // A std sender only learns this on send; the loop finds out on its next event.
            Sink::Std(_) => false,
        }
    }
}
