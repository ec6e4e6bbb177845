//! The lead session in a pseudo-terminal for the hostile suite (filled in by `hostile_lead`).
