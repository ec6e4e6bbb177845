//! The agent: teamlead's own teammates (the runtime, the shell and llm engines against local model servers, their tools and rules).

mod control;
mod llm_cli;
mod llm_teammate;
mod llm_tools;
mod llm_turns;
mod llm_wire;
mod scale;
mod shell;
mod shell_rules;
