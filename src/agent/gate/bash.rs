//! Reading a shell command the way permission rules need it. The reading itself (the bash
//! grammar, plain commands, safe prefixes, what a rule matches and means) is one pure protocol
//! module, [`crate::protocol::permission::bash`], shared with the lead's dialog; the gate uses
//! it through these names.

pub use crate::protocol::permission::bash::{
    BashPattern, Reading, covers, prefix_is_safe, read, rule_meaning, safe_prefix,
    suggested_rule_contents,
};
