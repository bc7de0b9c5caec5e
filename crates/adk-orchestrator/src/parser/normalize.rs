//! [`XmlNormalizer`]: turns what a model wrote into XML that a strict parser reads, fixing the
//! mistakes models commonly make.
//!
//! Models wrap XML in code fences, talk before and after it, forget the `<tasks>` wrapper or a
//! closing tag, leave `&` and `<` unescaped in text, quote attributes badly or not at all, and mix
//! the case of tag names. The normaliser fixes each of these in one pass over the text, so that a
//! plan with such slips still runs; what it cannot fix is left for the parser to report.

use std::borrow::Cow;

use super::ELEMENTS;
use super::error::{XmlError, XmlErrorCode};

/// The entities XML defines; any other `&name;` is escaped as text.
const XML_ENTITIES: [&str; 5] = ["amp", "lt", "gt", "quot", "apos"];

/// Cleans an analyzer's answer into well-formed XML holding its `<tasks>` section.
///
/// ```
/// use adk_orchestrator::XmlNormalizer;
///
/// let answer = "Here is the plan:\n```xml\n<tasks>\n<task id=t1 type=\"research\" processor=\"web\">\
///               <description>Salt & pepper prices</description>\n</tasks>\n```\nGood luck!";
/// let xml = XmlNormalizer::new().normalize(answer).unwrap();
/// assert_eq!(
///     xml,
///     "<tasks>\n<task id=\"t1\" type=\"research\" processor=\"web\">\
///      <description>Salt &amp; pepper prices</description>\n</task></tasks>"
/// );
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct XmlNormalizer;

impl XmlNormalizer {
    /// A normaliser.
    pub fn new() -> Self {
        Self
    }

    /// Extracts the tasks section of `content` and repairs it (see [`repair`](Self::repair)).
    ///
    /// Fails with [`XmlErrorCode::NoTasksSection`] when there is neither a `<tasks>` section nor
    /// a bare `<task>` element.
    pub fn normalize(&self, content: &str) -> Result<String, XmlError> {
        let section = self.tasks_section(content)?;
        Ok(self.repair(&section))
    }

    /// The `<tasks>` section of `content`, code fences and the text around it removed: from the
    /// first `<tasks>` to the last `</tasks>`, or to the end when it is not closed. Bare `<task>`
    /// elements without the wrapper are wrapped in one.
    pub fn tasks_section<'a>(&self, content: &'a str) -> Result<Cow<'a, str>, XmlError> {
        // The section is found in the text as written, and fences are removed only inside it,
        // so that a long answer is copied once, by the repair, and not before.
        if let Some(start) = find_open_tag(content, "tasks") {
            let end = find_last_close_tag(content, "tasks", start).unwrap_or(content.len());
            return Ok(strip_code_fences(&content[start..end]));
        }
        if let Some(start) = find_open_tag(content, "task") {
            let end = find_last_close_tag(content, "task", start).unwrap_or(content.len());
            let section = strip_code_fences(&content[start..end]);
            return Ok(Cow::Owned(format!("<tasks>{section}</tasks>")));
        }
        Err(XmlError::new(
            XmlErrorCode::NoTasksSection,
            "the answer holds no <tasks> section; answer with the plan as \
                 <tasks><task id=\"...\" type=\"...\" processor=\"...\">...</task></tasks>",
        )
        .with_detail("length", content.len()))
    }

    /// Repairs XML as models write it: escapes `&` that starts no entity and `<` that starts no
    /// tag, quotes attribute values, lower-cases tag names, drops closing tags that close nothing,
    /// comments, declarations and duplicate attributes, and adds the closing tags the model left
    /// out, so that the result is well formed. CDATA sections are kept as they are.
    pub fn repair(&self, xml: &str) -> String {
        let mut repair = Repair {
            out: String::with_capacity(xml.len() + xml.len() / 8),
            open: Vec::new(),
        };
        let mut rest = xml;
        while let Some(offset) = rest.find(['<', '&']) {
            repair.out.push_str(&rest[..offset]);
            rest = &rest[offset..];
            rest = if rest.starts_with('&') {
                repair.ampersand(rest)
            } else {
                repair.angle_bracket(rest)
            };
        }
        repair.out.push_str(rest);
        while let Some(name) = repair.open.pop() {
            repair.close(&name);
        }
        repair.out
    }
}

/// The state of one repair: the text written so far and the elements still open.
struct Repair<'a> {
    out: String,
    open: Vec<Cow<'a, str>>,
}

impl<'a> Repair<'a> {
    /// Writes the `&` at the start of `rest` (an entity, or an escaped ampersand); returns what
    /// follows.
    fn ampersand(&mut self, rest: &'a str) -> &'a str {
        let length = entity_length(rest);
        if length > 0 {
            self.out.push_str(&rest[..length]);
            &rest[length..]
        } else {
            self.out.push_str("&amp;");
            &rest[1..]
        }
    }

    /// Writes the markup at the start of `rest`, which starts with `<`; returns what follows.
    fn angle_bracket(&mut self, rest: &'a str) -> &'a str {
        if let Some(body) = rest.strip_prefix("<![CDATA[") {
            return match body.find("]]>") {
                Some(end) => {
                    let length = "<![CDATA[".len() + end + "]]>".len();
                    self.out.push_str(&rest[..length]);
                    &rest[length..]
                }
                None => {
                    self.out.push_str(rest);
                    self.out.push_str("]]>");
                    ""
                }
            };
        }
        for (start, end) in [("<!--", "-->"), ("<?", "?>"), ("<!", ">")] {
            if let Some(body) = rest.strip_prefix(start) {
                return body.find(end).map_or("", |at| &body[at + end.len()..]);
            }
        }
        match parse_tag(rest) {
            Some((tag, length)) => {
                self.tag(tag);
                &rest[length..]
            }
            None => {
                self.out.push_str("&lt;");
                &rest[1..]
            }
        }
    }

    fn tag(&mut self, tag: Tag<'a>) {
        match tag {
            Tag::Close(name) => {
                if self.open.contains(&name) {
                    self.close_through(&name);
                }
            }
            Tag::Open {
                name,
                attributes,
                self_closing,
            } => {
                // No element of a plan contains itself: opening one while another is open means
                // the model forgot to close the first.
                if !self_closing && ELEMENTS.contains(&name.as_ref()) && self.open.contains(&name) {
                    self.close_through(&name);
                }
                self.out.push('<');
                self.out.push_str(&name);
                for (index, (key, value)) in attributes.iter().enumerate() {
                    if attributes[..index]
                        .iter()
                        .any(|(earlier, _)| earlier == key)
                    {
                        continue;
                    }
                    self.out.push(' ');
                    self.out.push_str(key);
                    self.out.push_str("=\"");
                    escape_attribute(value, &mut self.out);
                    self.out.push('"');
                }
                if self_closing {
                    self.out.push_str("/>");
                } else {
                    self.out.push('>');
                    self.open.push(name);
                }
            }
        }
    }

    /// Closes the open elements down to and including the innermost `name`.
    fn close_through(&mut self, name: &str) {
        while let Some(open) = self.open.pop() {
            self.close(&open);
            if open == name {
                break;
            }
        }
    }

    fn close(&mut self, name: &str) {
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push('>');
    }
}

/// A tag as read by [`parse_tag`]: names lower-cased, attribute values unquoted.
enum Tag<'a> {
    Open {
        name: Cow<'a, str>,
        attributes: Vec<(Cow<'a, str>, &'a str)>,
        self_closing: bool,
    },
    Close(Cow<'a, str>),
}

/// `name` in lower case, borrowed when it already is.
fn lower(name: &str) -> Cow<'_, str> {
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    }
}

/// Reads the tag at the start of `text` (which starts with `<`) and its length; `None` when `<`
/// starts no tag (`a < b`, `<3`), so that it is text. A tag cut short by the next `<` ends there.
///
/// Every delimiter looked for is ASCII, so the byte offsets cut the text on character boundaries.
fn parse_tag(text: &str) -> Option<(Tag<'_>, usize)> {
    let bytes = text.as_bytes();
    let closing = bytes.get(1) == Some(&b'/');
    let mut at = if closing { 2 } else { 1 };
    let name_start = at;
    if !bytes
        .get(at)
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
    {
        return None;
    }
    while bytes
        .get(at)
        .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.'))
    {
        at += 1;
    }
    let name = lower(&text[name_start..at]);
    if closing {
        // Anything between the name and `>` is dropped, but a `<` first means the tag was cut.
        let length = match text[at..].find(['>', '<']) {
            Some(end) if bytes[at + end] == b'>' => at + end + 1,
            Some(end) => at + end,
            None => text.len(),
        };
        return Some((Tag::Close(name), length));
    }
    let mut attributes = Vec::new();
    loop {
        while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        match bytes.get(at) {
            None => return None,
            Some(b'>') => {
                at += 1;
                break;
            }
            Some(b'/') if bytes.get(at + 1) == Some(&b'>') => {
                return Some((
                    Tag::Open {
                        name,
                        attributes,
                        self_closing: true,
                    },
                    at + 2,
                ));
            }
            Some(b'<') => break,
            Some(_) => {}
        }
        let key_start = at;
        while bytes
            .get(at)
            .is_some_and(|b| !b.is_ascii_whitespace() && !matches!(b, b'=' | b'>' | b'<' | b'/'))
        {
            at += 1;
        }
        if at == key_start {
            // A stray `/` or `=`: skip it.
            at += 1;
            continue;
        }
        let key = lower(&text[key_start..at]);
        while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        if bytes.get(at) != Some(&b'=') {
            attributes.push((key, ""));
            continue;
        }
        at += 1;
        while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        let value = match bytes.get(at) {
            Some(quote @ (b'"' | b'\'')) => {
                let start = at + 1;
                let end = text[start..]
                    .find(char::from(*quote))
                    .map_or(text.len(), |end| start + end);
                at = (end + 1).min(text.len());
                &text[start..end]
            }
            _ => {
                let start = at;
                while bytes.get(at).is_some_and(|b| {
                    !b.is_ascii_whitespace()
                        && *b != b'>'
                        && *b != b'<'
                        && !(*b == b'/' && bytes.get(at + 1) == Some(&b'>'))
                }) {
                    at += 1;
                }
                &text[start..at]
            }
        };
        attributes.push((key, value));
    }
    Some((
        Tag::Open {
            name,
            attributes,
            self_closing: false,
        },
        at,
    ))
}

/// The length of the entity at the start of `text` (which starts with `&`), or 0 when it starts
/// none: `&amp;` and the other XML entities, `&#38;`, `&#x26;`.
fn entity_length(text: &str) -> usize {
    let Some(end) = text[1..].find(';').map(|end| end + 1) else {
        return 0;
    };
    let body = &text[1..end];
    let valid = if let Some(hex) = body.strip_prefix("#x").or_else(|| body.strip_prefix("#X")) {
        !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit())
    } else if let Some(decimal) = body.strip_prefix('#') {
        !decimal.is_empty() && decimal.bytes().all(|b| b.is_ascii_digit())
    } else {
        XML_ENTITIES.contains(&body)
    };
    if valid { end + 1 } else { 0 }
}

/// Writes an attribute value for a double-quoted attribute: entities kept, a bare `&`, `<` and
/// `"` escaped.
fn escape_attribute(value: &str, out: &mut String) {
    let mut rest = value;
    while let Some(at) = rest.find(['&', '<', '"']) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match rest.as_bytes()[0] {
            b'&' => {
                let length = entity_length(rest);
                if length > 0 {
                    out.push_str(&rest[..length]);
                    rest = &rest[length..];
                    continue;
                }
                out.push_str("&amp;");
            }
            b'<' => out.push_str("&lt;"),
            _ => out.push_str("&quot;"),
        }
        rest = &rest[1..];
    }
    out.push_str(rest);
}

/// `content` without Markdown code fences (```` ``` ```` and ```` ```xml ````).
fn strip_code_fences(content: &str) -> Cow<'_, str> {
    if !content.contains("```") {
        return Cow::Borrowed(content);
    }
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(at) = rest.find("```") {
        out.push_str(&rest[..at]);
        rest = rest[at + 3..].trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The offset of the first `<name` (any case, followed by `>`, `/` or white space).
fn find_open_tag(text: &str, name: &str) -> Option<usize> {
    text.match_indices('<').map(|(at, _)| at).find(|&at| {
        let rest = &text.as_bytes()[at + 1..];
        rest.len() >= name.len()
            && rest[..name.len()].eq_ignore_ascii_case(name.as_bytes())
            && rest
                .get(name.len())
                .is_none_or(|b| *b == b'>' || *b == b'/' || b.is_ascii_whitespace())
    })
}

/// The offset just past the last `</name ...>` (any case) after `start`; `None` when there is
/// none, or when the last one is cut off or names another tag (`</tasksx>`), in which case the
/// section runs to the end and the repair closes it.
fn find_last_close_tag(text: &str, name: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let at = text.rmatch_indices("</").map(|(at, _)| at).find(|&at| {
        at > start
            && bytes.len() >= at + 2 + name.len()
            && bytes[at + 2..at + 2 + name.len()].eq_ignore_ascii_case(name.as_bytes())
    })?;
    let after = at + 2 + name.len();
    match bytes.get(after) {
        Some(b'>') => Some(after + 1),
        Some(b) if b.is_ascii_whitespace() => Some(
            text[after..]
                .find('>')
                .map_or(text.len(), |end| after + end + 1),
        ),
        None => Some(after),
        Some(_) => None,
    }
}
