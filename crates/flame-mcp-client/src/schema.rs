//! A server's tool schema made one every provider Flame speaks to accepts ([`offered_schema`]).
//!
//! A tool schema is sent as it is to Anthropic, OpenAI and servers on this computer, and
//! llama.cpp's server turns every schema of a request into a grammar: one schema it cannot turn
//! refuses the whole request (400), so one server's careless schema would stop the agent. What
//! llama.cpp's server refuses was found by sending it schemas (the llama-server of the team's
//! peers): a schema that is `true` or `false` where an object is expected (in `items`,
//! `properties`, `anyOf`, `$defs`…), a `$ref` that does not resolve in the same document as
//! written (`#`, `#foo`, another document, a missing or escaped name), a `type` it does not know
//! or that is not a string or strings, `properties` that is not an object, an empty `enum` or
//! `anyOf`/`oneOf`/`allOf`, a bound that is not a number (`minimum`) or not a non-negative integer
//! (`minLength`), a `pattern` it cannot parse, and a grammar too large to build (`minLength`,
//! `minItems` or a pattern's repetition in the tens of thousands).
//!
//! Each of those is mended so the schema says no more than the server meant, or a little less: a
//! `true` schema becomes `{}` (anything), `false` becomes `{"not": {}}`, and what cannot be kept
//! (a `$ref` that does not resolve, a pattern, a bound) is left out, which only loosens what the
//! model is asked for; the server still checks its arguments. The root must be an object (the
//! providers take only objects for a tool's input): one without a `type` is taken for one, one of
//! another type is refused, as is one deeper than [`crate::MAX_SCHEMA_DEPTH`] or larger than
//! [`crate::MAX_SCHEMA_BYTES`] once mended.

use serde_json::{Map, Value};

use crate::limits::{MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH};

/// The largest `minLength`, `minItems`, `minProperties` or repetition count in a pattern kept:
/// llama.cpp's server builds a grammar of that many repetitions (1,000 was accepted, 10,000
/// refused).
pub const MAX_REPEAT: u64 = 1_000;

/// The JSON Schema types.
const TYPES: [&str; 7] = ["object", "array", "string", "number", "integer", "boolean", "null"];

/// Keywords whose value is one schema.
const ONE_SCHEMA: [&str; 11] = [
    "items",
    "additionalProperties",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];

/// Keywords of [`ONE_SCHEMA`] whose value llama.cpp's server takes as `true` or `false` as well
/// as an object, so a boolean there is kept as the server wrote it.
const BOOLEAN_ALLOWED: [&str; 4] =
    ["additionalProperties", "additionalItems", "unevaluatedItems", "unevaluatedProperties"];

/// Keywords whose value is an object of schemas.
const SCHEMA_MAPS: [&str; 5] =
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/// Keywords whose value is a non-empty array of schemas.
const SCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

/// Keywords that must be numbers.
const NUMBERS: [&str; 5] =
    ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];

/// Keywords that must be non-negative integers, and those of them that make the grammar repeat.
const COUNTS: [&str; 8] = [
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
];
const REPEATING_COUNTS: [&str; 4] = ["minLength", "minItems", "minProperties", "minContains"];

/// `schema` (a tool's input schema as the server gave it) mended as the module says, or why the
/// tool cannot be offered.
pub fn offered_schema(schema: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let root = Value::Object(schema.clone());
    let mut mended = root.clone();
    mend(&mut mended, &root, 0)?;
    let Value::Object(mut mended) = mended else {
        return Err("its input schema is not an object".to_owned());
    };
    mended.remove("$schema");
    match mended.get("type") {
        None => {
            mended.insert("type".to_owned(), Value::from("object"));
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(Value::Array(types)) if types.iter().any(|t| t == "object") => {
            mended.insert("type".to_owned(), Value::from("object"));
        }
        Some(other) => {
            return Err(format!(
                "its input is of type {other}, and a tool's input must be an object"
            ));
        }
    }
    if !mended.contains_key("properties") {
        mended.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    let bytes = serde_json::to_string(&mended).map_or(usize::MAX, |text| text.len());
    if bytes > MAX_SCHEMA_BYTES {
        return Err(format!(
            "its input schema is {bytes} bytes, over the {MAX_SCHEMA_BYTES} bytes Flame offers"
        ));
    }
    Ok(mended)
}

/// Mends the schema `value` at `depth`, `$ref`s resolved in `root`.
fn mend(value: &mut Value, root: &Value, depth: usize) -> Result<(), String> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(format!("its input schema nests deeper than {MAX_SCHEMA_DEPTH}"));
    }
    let map = match value {
        Value::Bool(true) => {
            *value = Value::Object(Map::new());
            return Ok(());
        }
        Value::Bool(false) => {
            *value = serde_json::json!({ "not": {} });
            return Ok(());
        }
        Value::Object(map) => map,
        // Not a schema at all: taken for "anything".
        _ => {
            *value = Value::Object(Map::new());
            return Ok(());
        }
    };
    mend_type(map);
    if let Some(reference) = map.get("$ref")
        && !reference.as_str().is_some_and(|r| resolves(r, root))
    {
        map.remove("$ref");
    }
    if map.get("enum").is_some_and(|e| e.as_array().is_none_or(|a| a.is_empty())) {
        map.remove("enum");
    }
    if let Some(pattern) = map.get("pattern")
        && !pattern.as_str().is_some_and(pattern_is_usable)
    {
        map.remove("pattern");
    }
    for key in NUMBERS {
        if map.get(key).is_some_and(|v| !v.is_number()) {
            map.remove(key);
        }
    }
    for key in COUNTS {
        let Some(count) = map.get(key) else { continue };
        let too_many =
            REPEATING_COUNTS.contains(&key) && count.as_u64().is_some_and(|n| n > MAX_REPEAT);
        if count.as_u64().is_none() || too_many {
            map.remove(key);
        }
    }
    for key in ONE_SCHEMA {
        if let Some(inner) = map.get_mut(key) {
            match inner {
                Value::Bool(_) if BOOLEAN_ALLOWED.contains(&key) => {}
                // The old form of `items`: one schema per place.
                Value::Array(list) if key == "items" => {
                    for item in list.iter_mut() {
                        mend(item, root, depth + 1)?;
                    }
                }
                _ => mend(inner, root, depth + 1)?,
            }
        }
    }
    for key in SCHEMA_MAPS {
        match map.get_mut(key) {
            Some(Value::Object(schemas)) => {
                for inner in schemas.values_mut() {
                    mend(inner, root, depth + 1)?;
                }
            }
            Some(_) => {
                map.remove(key);
            }
            None => {}
        }
    }
    for key in SCHEMA_LISTS {
        match map.get_mut(key) {
            Some(Value::Array(list)) if !list.is_empty() => {
                for inner in list.iter_mut() {
                    mend(inner, root, depth + 1)?;
                }
            }
            Some(_) => {
                map.remove(key);
            }
            None => {}
        }
    }
    Ok(())
}

/// Keeps only the types JSON Schema knows: a `type` of one unknown name, or of none left, goes.
fn mend_type(map: &mut Map<String, Value>) {
    let known = |t: &Value| t.as_str().is_some_and(|t| TYPES.contains(&t));
    let mended = match map.get("type") {
        None => return,
        Some(t) if known(t) => return,
        Some(Value::Array(types)) => {
            let kept: Vec<Value> = types.iter().filter(|t| known(t)).cloned().collect();
            match kept.len() {
                0 => None,
                1 => kept.into_iter().next(),
                _ => Some(Value::Array(kept)),
            }
        }
        Some(_) => None,
    };
    match mended {
        Some(t) => map.insert("type".to_owned(), t),
        None => map.remove("type"),
    };
}

/// Whether `reference` is a pointer into the same document that resolves as written (llama.cpp
/// decodes neither `~1` nor `%20`), to something that is or will be mended into an object.
fn resolves(reference: &str, root: &Value) -> bool {
    let Some(path) = reference.strip_prefix("#/") else { return false };
    let mut at = root;
    for segment in path.split('/') {
        at = match at {
            Value::Object(map) => match map.get(segment) {
                Some(next) => next,
                None => return false,
            },
            Value::Array(list) => match segment.parse::<usize>().ok().and_then(|i| list.get(i)) {
                Some(next) => next,
                None => return false,
            },
            _ => return false,
        };
    }
    true
}

/// Whether a pattern parses as a regular expression with no repetition over [`MAX_REPEAT`].
/// Rust's parser is stricter than llama.cpp's (it refuses look-around and back-references, which
/// llama.cpp accepts); such a pattern is left out, which only loosens the schema.
fn pattern_is_usable(pattern: &str) -> bool {
    use regex_syntax::ast::{Ast, RepetitionKind, RepetitionRange};
    fn fits(ast: &Ast) -> bool {
        match ast {
            Ast::Repetition(repetition) => {
                let bound = match &repetition.op.kind {
                    RepetitionKind::Range(RepetitionRange::Exactly(n))
                    | RepetitionKind::Range(RepetitionRange::AtLeast(n)) => u64::from(*n),
                    RepetitionKind::Range(RepetitionRange::Bounded(n, m)) => {
                        u64::from(*n).max(u64::from(*m))
                    }
                    _ => 0,
                };
                bound <= MAX_REPEAT && fits(&repetition.ast)
            }
            Ast::Group(group) => fits(&group.ast),
            Ast::Alternation(alternation) => alternation.asts.iter().all(fits),
            Ast::Concat(concat) => concat.asts.iter().all(fits),
            _ => true,
        }
    }
    regex_syntax::ast::parse::Parser::new().parse(pattern).is_ok_and(|ast| fits(&ast))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn offered(schema: Value) -> Result<Value, String> {
        let Value::Object(map) = schema else { panic!("not an object") };
        offered_schema(&map).map(Value::Object)
    }

    fn property(schema: Value) -> Value {
        let mended = offered(json!({"type": "object", "properties": {"a": schema}})).unwrap();
        mended["properties"]["a"].clone()
    }

    #[test]
    fn a_plain_schema_passes_as_it_is_without_its_dialect() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"message": {"type": "string", "description": "Message to echo"}},
            "required": ["message"],
            "additionalProperties": false
        });
        let mut expected = schema.clone();
        expected.as_object_mut().unwrap().remove("$schema");
        assert_eq!(offered(schema).unwrap(), expected);
    }

    #[test]
    fn boolean_schemas_become_objects() {
        assert_eq!(property(json!(true)), json!({}));
        assert_eq!(property(json!(false)), json!({"not": {}}));
        // Where llama.cpp takes a boolean, it stays one.
        assert_eq!(
            property(json!({"type": "object", "additionalProperties": false})),
            json!({"type": "object", "additionalProperties": false})
        );
        assert_eq!(
            property(json!({"type": "array", "items": true})),
            json!({"type": "array", "items": {}})
        );
        assert_eq!(
            property(json!({"anyOf": [true, {"type": "string"}]})),
            json!({"anyOf": [{}, {"type": "string"}]})
        );
    }

    #[test]
    fn references_that_do_not_resolve_as_written_are_left_out() {
        let mended = offered(json!({
            "type": "object",
            "properties": {
                "kept": {"$ref": "#/$defs/x"},
                "missing": {"$ref": "#/$defs/nope"},
                "root": {"$ref": "#"},
                "anchor": {"$ref": "#foo"},
                "other": {"$ref": "https://example.com/s.json"},
                "escaped": {"$ref": "#/$defs/x~1y", "description": "kept"}
            },
            "$defs": {"x": true, "x/y": {"type": "string"}}
        }))
        .unwrap();
        let p = &mended["properties"];
        assert_eq!(p["kept"], json!({"$ref": "#/$defs/x"}));
        assert_eq!(mended["$defs"]["x"], json!({}), "a boolean definition is an object now");
        for gone in ["missing", "root", "anchor", "other"] {
            assert_eq!(p[gone], json!({}), "{gone}");
        }
        assert_eq!(p["escaped"], json!({"description": "kept"}));
    }

    #[test]
    fn unknown_types_and_malformed_keywords_are_left_out() {
        assert_eq!(property(json!({"type": "widget"})), json!({}));
        assert_eq!(property(json!({"type": 5})), json!({}));
        assert_eq!(property(json!({"type": ["string", "widget"]})), json!({"type": "string"}));
        assert_eq!(property(json!({"enum": []})), json!({}));
        assert_eq!(property(json!({"anyOf": []})), json!({}));
        assert_eq!(
            property(json!({"type": "integer", "minimum": "3"})),
            json!({"type": "integer"})
        );
        assert_eq!(property(json!({"type": "string", "maxLength": -1})), json!({"type": "string"}));
        assert_eq!(
            property(json!({"type": "string", "minLength": 1.5})),
            json!({"type": "string"})
        );
        assert_eq!(
            property(json!({"type": "object", "properties": []})),
            json!({"type": "object"})
        );
    }

    #[test]
    fn grammars_too_large_to_build_are_avoided() {
        assert_eq!(
            property(json!({"type": "string", "minLength": 10_000})),
            json!({"type": "string"})
        );
        assert_eq!(
            property(json!({"type": "string", "minLength": MAX_REPEAT})),
            json!({"type": "string", "minLength": MAX_REPEAT})
        );
        assert_eq!(
            property(json!({"type": "array", "minItems": 100_000, "maxItems": 100_000})),
            json!({"type": "array", "maxItems": 100_000})
        );
        assert_eq!(
            property(json!({"type": "string", "pattern": "^a{100000}$"})),
            json!({"type": "string"})
        );
        assert_eq!(
            property(json!({"type": "string", "pattern": "^a{1,1000}$"})),
            json!({"type": "string", "pattern": "^a{1,1000}$"})
        );
    }

    #[test]
    fn patterns_that_do_not_parse_are_left_out() {
        assert_eq!(
            property(json!({"type": "string", "pattern": "^[a-$"})),
            json!({"type": "string"})
        );
        assert_eq!(
            property(json!({"type": "string", "pattern": "[a-z]+"})),
            json!({"type": "string", "pattern": "[a-z]+"})
        );
    }

    #[test]
    fn the_root_must_be_an_object_of_bounded_depth_and_size() {
        assert_eq!(offered(json!({})).unwrap(), json!({"type": "object", "properties": {}}));
        assert!(offered(json!({"type": "array", "items": {}})).unwrap_err().contains("array"));
        let mut deep = json!({"type": "string"});
        for _ in 0..=MAX_SCHEMA_DEPTH {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        assert!(offered(deep).unwrap_err().contains("deeper"));
        let big = json!({"type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES)});
        assert!(offered(big).unwrap_err().contains("bytes"));
    }
}
