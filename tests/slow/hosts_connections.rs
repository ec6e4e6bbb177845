//! Connections to test hosts: one master per host, stale masters replaced, deadlines kept.
