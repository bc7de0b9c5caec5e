//! Names that come from a request (an app, user, session or artifact name), checked before they
//! reach a service or a file path.

use crate::error::ApiError;

/// Checks a name that came from the request (an app, user, session or artifact name): not empty,
/// no `/` or `\`, not `.` or `..`, no NUL or other control character, at most 255 bytes.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), ApiError> {
    let problem = if name.is_empty() {
        Some("is empty")
    } else if name.len() > 255 {
        Some("is longer than 255 bytes")
    } else if name.contains(['/', '\\']) {
        Some("contains a path separator")
    } else if name == "." || name == ".." || name.contains("..") {
        Some("contains '..'")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(ApiError::bad_request(format!(
            "{what} {name:?} {problem}; use a plain name"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use http::StatusCode;

    use super::*;

    #[test]
    fn names_that_could_reach_outside_are_refused() {
        for bad in [
            "",
            "a/b",
            "a\\b",
            "..",
            ".",
            "a..b",
            "nul\0",
            "tab\t",
            "esc\u{1b}[2J",
        ] {
            let error = check_name("app", bad).unwrap_err();
            assert_eq!(error.status(), StatusCode::BAD_REQUEST, "{bad:?}");
        }
        assert!(check_name("app", &"x".repeat(256)).is_err());
        for good in [
            "quickstart",
            "report.pdf",
            "user:notes.txt",
            "ünïcode",
            "a b",
        ] {
            check_name("artifact", good).unwrap();
        }
    }
}
