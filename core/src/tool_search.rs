//! Deferred tools and the built-in `tool_search` (docs/behaviour.md §17): an agent with
//! deferred tools offers `tool_search`, which finds deferred tools by the words of their
//! ids, descriptions and parameter names; the tools it finds are offered from the next
//! request to the end of the run.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::tool::Tool;

/// The id of the built-in search tool.
pub const TOOL_SEARCH: &str = "tool_search";

/// How many tools a search answers when the model does not say.
const DEFAULT_LIMIT: usize = 5;

/// Query words too common to tell tools apart (words under three letters are ignored too).
const STOP_WORDS: [&str; 8] = ["the", "and", "for", "with", "from", "that", "this", "what"];

/// What a search knows of one deferred tool.
struct Entry {
    id: String,
    description: String,
    id_words: Vec<String>,
    parameter_words: Vec<String>,
    description_words: Vec<String>,
}

/// The lower-case words of `text` (split at anything not a letter or digit, so
/// `send_email` and `sendEmail`-style names give their parts).
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            // A lower-to-upper change starts a new word (camelCase).
            if ch.is_uppercase() && previous_lower && !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = ch.is_lowercase();
            current.extend(ch.to_lowercase());
        } else {
            previous_lower = false;
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

impl Entry {
    fn of(tool: &Tool) -> Self {
        let mut parameter_words = Vec::new();
        if let Some(properties) = tool.parameters.get("properties").and_then(Value::as_object) {
            for name in properties.keys() {
                parameter_words.extend(words(name));
            }
        }
        let mut id_words = words(&tool.id);
        id_words.push(tool.id.to_lowercase());
        Entry {
            id: tool.id.clone(),
            description: tool.description.clone(),
            id_words,
            parameter_words,
            description_words: words(&tool.description),
        }
    }

    /// Relevance to the query's words: a word of the id counts most, then a parameter
    /// name, then the description; a query word that only starts a word counts half.
    fn score(&self, query: &[String]) -> u32 {
        let weigh = |list: &[String], word: &str, weight: u32| -> u32 {
            if list.iter().any(|w| w == word) {
                weight * 2
            } else if list.iter().any(|w| w.starts_with(word)) {
                weight
            } else {
                0
            }
        };
        query
            .iter()
            .map(|q| {
                weigh(&self.id_words, q, 3)
                    + weigh(&self.parameter_words, q, 2)
                    + weigh(&self.description_words, q, 1)
            })
            .sum()
    }
}

/// The deferred tools of an agent, in definition order.
pub(crate) struct Catalog(Vec<Entry>);

impl Catalog {
    /// The catalog of `tools`' deferred ones; `None` when none is deferred.
    pub(crate) fn of(tools: &[Tool]) -> Option<Self> {
        let entries: Vec<Entry> = tools
            .iter()
            .filter(|t| t.defer_loading)
            .map(Entry::of)
            .collect();
        (!entries.is_empty()).then_some(Catalog(entries))
    }

    /// The best `limit` matches of `query`, ties in definition order.
    fn search(&self, query: &str, limit: usize) -> Vec<&Entry> {
        let query: Vec<String> = words(query)
            .into_iter()
            .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(&w.as_str()))
            .collect();
        let mut scored: Vec<(u32, usize, &Entry)> = self
            .0
            .iter()
            .enumerate()
            .map(|(i, e)| (e.score(&query), i, e))
            .filter(|(score, _, _)| *score > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(limit).map(|(_, _, e)| e).collect()
    }
}

/// The built-in `tool_search` over `catalog`.
pub(crate) fn search_tool(catalog: Catalog) -> Tool {
    let catalog = Arc::new(catalog);
    Tool::new(
        TOOL_SEARCH,
        "Searches the tools that are not loaded yet by words of their names, descriptions \
         and parameters. The tools found can be called from the next step on.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words describing the tool needed"},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 20,
                    "description": "How many tools to return (default 5)"
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }),
        move |input, _| {
            let query = input.get("query").and_then(Value::as_str).unwrap_or("");
            // The schema admitted an integer 1..20, which JSON may write `2.0`: read it by value.
            let limit = input
                .get("limit")
                .and_then(Value::as_f64)
                .map_or(DEFAULT_LIMIT, |n| n as usize);
            let found: Vec<Value> = catalog
                .search(query, limit)
                .into_iter()
                .map(|e| json!({"id": e.id, "description": e.description}))
                .collect();
            Ok(json!({ "tools": found }))
        },
    )
}

/// The tool ids a successful `tool_search` result loads, in its order.
pub(crate) fn found_ids(result: &Value) -> impl Iterator<Item = &str> {
    result
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("id").and_then(Value::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(id: &str, description: &str, parameters: Value) -> Tool {
        Tool::new(id, description, parameters, |_, _| Ok(Value::Null)).defer_loading(true)
    }

    #[test]
    fn words_split_snake_and_camel_case() {
        assert_eq!(words("send_email"), ["send", "email"]);
        assert_eq!(words("getWeatherNow"), ["get", "weather", "now"]);
        assert_eq!(
            words("Find a CUSTOMER, fast!"),
            ["find", "a", "customer", "fast"]
        );
    }

    #[test]
    fn ids_rank_above_parameters_above_descriptions_ties_in_order() {
        let catalog = Catalog::of(&[
            tool("notes", "Keeps weather notes", json!({})),
            tool(
                "forecast",
                "Tells what comes",
                json!({"properties": {"weather_kind": {}}}),
            ),
            tool("weather", "Current conditions", json!({})),
            tool("archive", "Old weather data", json!({})),
            tool("unrelated", "Nothing to see", json!({})),
        ])
        .unwrap();
        let ids: Vec<&str> = catalog
            .search("Weather", 10)
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(ids, ["weather", "forecast", "notes", "archive"]);
        assert_eq!(catalog.search("weather", 1).len(), 1);
        assert!(catalog.search("zzz", 5).is_empty());
    }

    #[test]
    fn no_deferred_tool_no_catalog() {
        let plain = Tool::new("t", "", json!({}), |_, _| Ok(Value::Null));
        assert!(Catalog::of(&[plain]).is_none());
    }
}
