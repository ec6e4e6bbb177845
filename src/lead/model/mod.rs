//! The optional lead model (`teamlead --lead-model`): a language model that reads what the human
//! types and what teammates send, and leads the team with a few tools. This module is the part
//! that knows nothing of the controller: the system prompt ([`prompt`]), the tools and reading
//! their calls ([`tools`]), one turn run as a task beside the controller through the one agent
//! loop of `agent::llm::agent_loop` ([`turn`]), and the usage shown in the UI ([`usage`]). The controller runs the tools through its slash-command
//! code and keeps permission requests and plans away from the model.

pub mod prompt;
pub mod tools;
pub mod turn;
pub mod usage;

pub use prompt::{LeadPromptContext, TeammateLine, lead_system_prompt};
pub use tools::{LeadTool, call_line, lead_tool_specs, parse_call};
pub use turn::{ModelEvent, Session, TurnEnd, spawn_turn};
pub use usage::usage_view;
