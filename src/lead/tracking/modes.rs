//! What the lead knows of one teammate's permission mode besides its member: the mode it
//! last sent (`controller::mode_sync`), the mode it asked a `claude` teammate for and the
//! teammate does not report yet, and the mode such a teammate was seen to take with the mode
//! it left (`controller::mode_keys`).

use crate::protocol::PermissionMode;

/// A mode the lead recorded for a `claude` teammate, and the mode it left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldMode {
    pub mode: PermissionMode,
    pub left: PermissionMode,
}

/// One teammate's mode bookkeeping.
#[derive(Debug, Clone, Default)]
pub struct ModeBook {
    /// Set with a `mode_set_request`, until a request shows the teammate has not applied it.
    sent: Option<PermissionMode>,
    /// Asked of a `claude` teammate (its keys), shown beside the mode in force until it
    /// reports it.
    requested: Option<PermissionMode>,
    /// Taken by a `claude` teammate and recorded: its own stale write of the mode it left is
    /// put right.
    held: Option<HeldMode>,
}

impl ModeBook {
    /// The mode last set with a `mode_set_request`.
    pub fn sent(&self) -> Option<PermissionMode> {
        self.sent
    }

    /// A `mode_set_request` for `mode` was written.
    pub fn set_sent(&mut self, mode: PermissionMode) {
        self.sent = Some(mode);
    }

    /// A request showed the teammate has not applied the mode sent.
    pub fn forget_sent(&mut self) {
        self.sent = None;
    }

    /// The mode asked of a `claude` teammate and not reported yet.
    pub fn requested(&self) -> Option<PermissionMode> {
        self.requested
    }

    /// The lead asks a `claude` teammate for `mode`: what it held before no longer stands.
    pub fn request(&mut self, mode: PermissionMode) {
        self.requested = Some(mode);
        self.held = None;
    }

    /// The request is over (reported, or given up).
    pub fn request_done(&mut self) {
        self.requested = None;
    }

    /// The teammate took `mode`, leaving `left`: recorded.
    pub fn hold(&mut self, mode: PermissionMode, left: PermissionMode) {
        self.held = Some(HeldMode { mode, left });
    }

    /// The mode held, while no request is on its way.
    pub fn held(&self) -> Option<HeldMode> {
        self.held.filter(|_| self.requested.is_none())
    }

    /// The held mode is no longer to be put right.
    pub fn release(&mut self) {
        self.held = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_replaces_what_was_held_and_hides_it_while_on_its_way() {
        let mut modes = ModeBook::default();
        modes.hold(PermissionMode::Plan, PermissionMode::Default);
        assert_eq!(modes.held().map(|h| h.mode), Some(PermissionMode::Plan));
        modes.request(PermissionMode::AcceptEdits);
        assert_eq!(modes.held(), None);
        modes.hold(PermissionMode::AcceptEdits, PermissionMode::Plan);
        assert_eq!(modes.held(), None, "a request on its way");
        modes.request_done();
        assert_eq!(modes.held().map(|h| h.left), Some(PermissionMode::Plan));
    }
}
