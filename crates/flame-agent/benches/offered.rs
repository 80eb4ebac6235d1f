//! What every model call costs before any frame or message: the system preamble (with a
//! workspace) and the schemas of every tool offered, in tokens of o200k_base. Not a timing: a
//! size, printed so it can be compared run to run.

use std::io::Write;

use flame_tokens::{Encoding, count};

fn main() {
    let system = flame_context::preamble(Some("/home/someone/projects/flame"));
    let schemas = serde_json::to_string(&flame_agent::offered_tool_specs(true)).expect("json");
    let frame_only = serde_json::to_string(&flame_agent::offered_tool_specs(false)).expect("json");
    let (system, schemas, frame_only) = (
        count(Encoding::O200kBase, &system),
        count(Encoding::O200kBase, &schemas),
        count(Encoding::O200kBase, &frame_only),
    );
    let total = system + schemas;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "BENCH agent.system_preamble_tokens {system} tokens\n\
         BENCH agent.tool_schemas_tokens {schemas} tokens\n\
         BENCH agent.frame_tool_schemas_tokens {frame_only} tokens\n\
         BENCH agent.preamble_and_tools_tokens {total} tokens"
    )
    .expect("stdout");
}
