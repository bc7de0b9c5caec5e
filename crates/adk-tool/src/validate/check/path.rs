//! [`Path`]: where in the value a check is, written out only for a problem.

use std::fmt::Write as _;

#[derive(Debug, Clone, Copy)]
pub(super) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    pub(super) fn render(&self) -> String {
        let mut segments = Vec::new();
        let mut at = self;
        loop {
            match at {
                Path::Root => break,
                Path::Key(parent, _) | Path::Index(parent, _) => {
                    segments.push(at);
                    at = parent;
                }
            }
        }
        if segments.is_empty() {
            return "arguments".to_owned();
        }
        let mut rendered = String::from("`");
        for segment in segments.iter().rev() {
            match segment {
                Path::Key(_, key) => {
                    if rendered.len() > 1 {
                        rendered.push('.');
                    }
                    rendered.push_str(key);
                }
                Path::Index(_, index) => {
                    let _ = write!(rendered, "[{index}]");
                }
                Path::Root => {}
            }
        }
        rendered.push('`');
        rendered
    }
}
