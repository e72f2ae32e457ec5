//! The tools each role is offered, as JSON schemas, and their arguments as typed values.
use serde::Deserialize;
use serde_json::{Value, json};
use temper_journal::TipKind;

use crate::wire::{FunctionDef, Tool};

/// One tool offered to the model; each request offers exactly one.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: Value,
    /// Fields that identify a bare JSON object in the content as a call of this tool.
    pub fields: &'static [&'static str],
}

impl ToolSpec {
    pub fn wire(&self) -> Tool {
        Tool {
            kind: "function",
            function: FunctionDef { name: self.name, description: self.description, parameters: self.parameters.clone() },
        }
    }
}

pub fn apply_fix() -> ToolSpec {
    ToolSpec {
        name: "apply_fix",
        description: "Apply one fix to the host. Call exactly once.",
        parameters: json!({
            "type": "object",
            "properties": {
                "fix_script": {"type": "string", "description": "Idempotent bash script that makes the rule pass."},
                "revert_script": {"type": "string", "description": "Bash script that restores the exact prior state."},
                "description": {"type": "string", "description": "One sentence: what the fix changes."}
            },
            "required": ["fix_script", "revert_script", "description"]
        }),
        fields: &["fix_script", "revert_script", "description"],
    }
}

pub fn select_rule() -> ToolSpec {
    ToolSpec {
        name: "select_rule",
        description: "Pick one failing rule to fix next. Call exactly once.",
        parameters: json!({
            "type": "object",
            "properties": {
                "rule_id": {"type": "string", "description": "A rule id copied exactly from the candidate list."},
                "plan": {"type": "string", "description": "Short plan for the Worker: what to change and how."}
            },
            "required": ["rule_id", "plan"]
        }),
        fields: &["rule_id", "plan"],
    }
}

pub fn decide() -> ToolSpec {
    ToolSpec {
        name: "decide",
        description: "Decide how to go on with this rule. Call exactly once.",
        parameters: json!({
            "type": "object",
            "properties": {
                "decision": {"type": "string", "enum": ["CONTINUE", "PIVOT", "ESCALATE"]},
                "plan_or_reason": {"type": "string", "description": "The plan for CONTINUE or PIVOT; the reason for ESCALATE."}
            },
            "required": ["decision", "plan_or_reason"]
        }),
        fields: &["decision", "plan_or_reason"],
    }
}

pub fn reflect() -> ToolSpec {
    ToolSpec {
        name: "reflect",
        description: "Record what this failed attempt teaches. Call exactly once.",
        parameters: json!({
            "type": "object",
            "properties": {
                "lesson": {"type": "string", "description": "What went wrong and why, in one or two sentences."},
                "banned": {"type": ["string", "null"], "description": "Optional regex of a script pattern to refuse from now on; narrow, never matching everything."},
                "preferred": {"type": "string", "description": "The approach to prefer next time."},
                "distilled": {"type": "string", "description": "At most 200 characters summarising the attempt."},
                "tips": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "text": {"type": "string"},
                            "type": {"type": "string", "enum": TipKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>()},
                            "mechanism": {"type": "string"}
                        },
                        "required": ["text", "type", "mechanism"]
                    }
                }
            },
            "required": ["lesson", "banned", "preferred", "distilled", "tips"]
        }),
        fields: &["lesson", "distilled", "preferred"],
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct ApplyFixArgs {
    pub fix_script: String,
    pub revert_script: String,
    pub description: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SelectRuleArgs {
    pub rule_id: String,
    pub plan: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DecideArgs {
    pub decision: String,
    pub plan_or_reason: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ReflectArgs {
    pub lesson: String,
    #[serde(default)]
    pub banned: Option<String>,
    #[serde(default)]
    pub preferred: String,
    pub distilled: String,
    #[serde(default)]
    pub tips: Vec<TipArgs>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TipArgs {
    #[serde(default)]
    pub text: String,
    #[serde(default, rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub mechanism: String,
}

/// Parses a call's arguments (a JSON string) into `T`, with a reason fit for the record.
pub fn parse_args<T: serde::de::DeserializeOwned>(tool: &str, arguments: &str) -> Result<T, String> {
    let value: Value = serde_json::from_str(arguments).map_err(|e| format!("{tool} arguments are not valid JSON: {e}"))?;
    if !value.is_object() {
        return Err(format!("{tool} arguments are not a JSON object"));
    }
    serde_json::from_value(value).map_err(|e| format!("{tool} arguments are invalid: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_field_is_named() {
        let e = parse_args::<ApplyFixArgs>("apply_fix", r#"{"fix_script":"a","description":"d"}"#).unwrap_err();
        assert!(e.contains("missing field `revert_script`"), "{e}");
    }

    #[test]
    fn invalid_json_says_json() {
        let e = parse_args::<ApplyFixArgs>("apply_fix", "{fix_script: 1").unwrap_err();
        assert!(e.contains("not valid JSON"), "{e}");
    }

    #[test]
    fn wrong_type_is_rejected() {
        let e = parse_args::<ApplyFixArgs>("apply_fix", r#"{"fix_script":1,"revert_script":"r","description":"d"}"#).unwrap_err();
        assert!(e.contains("invalid type"), "{e}");
    }

    #[test]
    fn schemas_require_what_the_types_require() {
        for (spec, n) in [(apply_fix(), 3), (select_rule(), 2), (decide(), 2), (reflect(), 5)] {
            assert_eq!(spec.parameters["required"].as_array().unwrap().len(), n, "{}", spec.name);
        }
    }
}
