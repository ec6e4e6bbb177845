//! The on-disk agent-team protocol (PROTOCOL.md) as Rust types: the team file, inbox entries,
//! every structured frame, tasks, permission updates and modes, palette colors, agent ids and
//! names, timestamps, the `<teammate-message>` rendering and the input digest. No I/O here.

pub mod backend_kind;
pub mod backend_request;
pub mod color;
pub mod display;
pub mod fence;
pub mod frames;
pub mod inbox;
pub mod json;
pub mod mode;
pub mod names;
pub mod permission;
pub mod pricing;
pub mod render;
pub mod task;
pub mod team;
pub mod time;

pub use backend_kind::BackendKind;
pub use backend_request::BackendRequest;
pub use color::Color;
pub use frames::Frame;
pub use inbox::InboxEntry;
pub use mode::PermissionMode;
pub use names::{AgentId, LEAD_NAME};
pub use permission::PermissionUpdate;
pub use task::{Task, TaskStatus};
pub use team::{Member, TeamFile};
