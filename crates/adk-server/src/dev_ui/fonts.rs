//! The dev UI's fonts, offline: adk-web's `index.html` loads Material Icons and Material Symbols
//! Outlined from Google Fonts, so without the internet every icon shows as its ligature name
//! ("send", "dock_to_right"), and its text font, Google Sans, falls back to another. [`install`]
//! takes the fonts from their pinned npm packages (`npm pack`, sha512 checked) into the UI's
//! `fonts/` folder, which the dev UI's routes serve, and points the page's `@font-face` rules at
//! them. Google Sans Mono, which the page also names, has no package on npm; it falls back to the
//! browser's monospace font offline.

use std::path::Path;

use tokio::process::Command;

use super::{io_error, lock, run};
use crate::error::ServerError;

/// One icon font: the npm package that ships it, pinned, and where its file goes.
struct IconFont {
    /// The package.
    package: Package,
    /// The font's path inside the tarball.
    member: &'static str,
    /// The font's file name under the UI's `fonts/` folder.
    file: &'static str,
    /// The start of the Google Fonts URL the page loads it from.
    google_url: &'static str,
}

/// The fonts adk-web uses: `mat-icon` draws with Material Icons, the builder's and the side
/// panel's icons with Material Symbols Outlined. Both packages are Apache-2.0, as the fonts are.
const FONTS: [IconFont; 2] = [
    IconFont {
        package: Package {
            name: "material-icons@1.13.14",
            tarball: "material-icons-1.13.14.tgz",
            sha512: "kZOfc7xCC0rAT8Q3DQixYAeT+tBqZnxkseQtp2bxBxz7q5pMAC+wmit7vJn1g/l7wRU+HEPq23gER4iPjGs5Cg==",
        },
        member: "package/iconfont/material-icons.woff2",
        file: "material-icons.woff2",
        google_url: "https://fonts.gstatic.com/s/materialicons/",
    },
    IconFont {
        package: Package {
            name: "material-symbols@0.47.5",
            tarball: "material-symbols-0.47.5.tgz",
            sha512: "bry9rHVqF7HewbSK9Yb77obFoDvQsEot8IrW9+F179iEkcg7P/zYv2zuwBRU1oFkA5Ez0MpDAintffdtqL70Eg==",
        },
        member: "package/material-symbols-outlined.woff2",
        file: "material-symbols-outlined.woff2",
        google_url: "https://fonts.gstatic.com/s/materialsymbolsoutlined/",
    },
];

/// The text font: Google Sans from Fontsource's package (SIL Open Font License 1.1), its Latin
/// files in the weights and styles adk-web draws with.
const TEXT_FONT: TextFont = TextFont {
    package: Package {
        name: "@fontsource/google-sans@5.3.1",
        tarball: "fontsource-google-sans-5.3.1.tgz",
        sha512: "vPaxyKtWMAecphz5CHerhBAIhnRNzQs0dn4KEr8d9Zx5MsoRBXZgFG43Lso2h7w46HVb7S+ku1sdVkGvONz1kQ==",
    },
    family: "Google Sans",
    google_url: "https://fonts.gstatic.com/s/googlesans/",
    faces: &[
        ("normal", 400),
        ("normal", 500),
        ("normal", 700),
        ("italic", 400),
        ("italic", 500),
        ("italic", 700),
    ],
};

/// A text font: one npm package holding a file per style and weight.
struct TextFont {
    /// The package.
    package: Package,
    /// The family the page's rules name.
    family: &'static str,
    /// The start of the Google Fonts URL the page's rules load it from.
    google_url: &'static str,
    /// The styles and weights taken.
    faces: &'static [(&'static str, u16)],
}

impl TextFont {
    /// The file of a style and weight, under the UI's `fonts/` folder and in the package.
    fn file(style: &str, weight: u16) -> String {
        format!("google-sans-latin-{weight}-{style}.woff2")
    }

    fn member(style: &str, weight: u16) -> String {
        format!("package/files/{}", Self::file(style, weight))
    }

    /// The `@font-face` rules of the files in `fonts/`.
    fn rules(&self) -> String {
        self.faces
            .iter()
            .map(|(style, weight)| {
                format!(
                    "@font-face{{font-family:'{}';font-style:{style};font-weight:{weight};\
                     font-display:swap;src:url({FONTS_DIR}/{}) format('woff2');}}",
                    self.family,
                    Self::file(style, *weight)
                )
            })
            .collect()
    }
}

/// The folder of the UI that holds the fonts, served at `/dev-ui/fonts/`.
const FONTS_DIR: &str = "fonts";

/// Checks the tarball's sha512 and copies one member out of it (argv: tarball, sha512 in base64,
/// member, target file). The member must be a regular file.
const EXTRACT_SCRIPT: &str = r#"
import base64, hashlib, os, sys, tarfile
tarball, sha512, member, target = sys.argv[1:5]
with open(tarball, "rb") as data:
    digest = base64.b64encode(hashlib.sha512(data.read()).digest()).decode()
if digest != sha512:
    sys.exit(f"{tarball} has sha512 {digest}, not the pinned {sha512}")
with tarfile.open(tarball, "r:gz") as archive:
    info = archive.getmember(member)
    if not info.isfile():
        sys.exit(f"{member} in {tarball} is not a regular file")
    source = archive.extractfile(info)
    partial = target + ".partial"
    with open(partial, "wb") as out:
        out.write(source.read())
    os.replace(partial, target)
"#;

/// Puts the icon fonts and the text font in `dir/fonts/` (once: later calls find them) and points
/// `dir/index.html` at them. Concurrent callers wait for one install through the dev UI's lock file.
///
/// # Errors
///
/// [`ServerError::DevUi`] when npm or Python is missing, a package cannot be fetched or differs
/// from its pinned sha512; [`ServerError::DevUiIo`] when the folder cannot be written.
pub(crate) async fn install(dir: &Path, python: Option<&str>) -> Result<(), ServerError> {
    if installed(dir).await {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    let _lock = lock(&parent.join(".dev-ui.lock")).await?;
    if installed(dir).await {
        return Ok(());
    }
    let fonts = dir.join(FONTS_DIR);
    tokio::fs::create_dir_all(&fonts)
        .await
        .map_err(|source| io_error(&fonts, source))?;
    let python = match python {
        Some(python) => python.to_owned(),
        None => super::find_python().await?,
    };
    for font in &FONTS {
        let target = fonts.join(font.file);
        if tokio::fs::metadata(&target).await.is_ok() {
            continue;
        }
        fetch_files(
            &font.package,
            parent,
            &[(font.member.to_owned(), target)],
            &python,
        )
        .await?;
    }
    let text_files: Vec<(String, std::path::PathBuf)> = TEXT_FONT
        .faces
        .iter()
        .map(|(style, weight)| {
            (
                TextFont::member(style, *weight),
                fonts.join(TextFont::file(style, *weight)),
            )
        })
        .collect();
    if !all_present(text_files.iter().map(|(_, target)| target.as_path())).await {
        fetch_files(&TEXT_FONT.package, parent, &text_files, &python).await?;
    }
    point_page_at_fonts(dir).await
}

/// A pinned npm package.
struct Package {
    /// `name@version` for `npm pack`.
    name: &'static str,
    /// The tarball's file name, as `npm pack` writes it.
    tarball: &'static str,
    /// The tarball's sha512, as the registry lists it (`dist.integrity`, base64).
    sha512: &'static str,
}

/// Whether every one of `paths` exists.
async fn all_present(paths: impl Iterator<Item = &Path>) -> bool {
    for path in paths {
        if tokio::fs::metadata(path).await.is_err() {
            return false;
        }
    }
    true
}

/// Packs `package` with npm into a staging folder beside the UI and copies each (member, target)
/// of `files` out of it.
async fn fetch_files(
    package: &Package,
    parent: &Path,
    files: &[(String, std::path::PathBuf)],
    python: &str,
) -> Result<(), ServerError> {
    let staging = parent.join(format!(".font-download-{}", std::process::id()));
    tokio::fs::create_dir_all(&staging)
        .await
        .map_err(|source| io_error(&staging, source))?;
    tracing::info!(
        package = package.name,
        "downloading a font of the dev UI with npm"
    );
    let fetched = fetch_package(package, &staging, files, python).await;
    let _ = tokio::fs::remove_dir_all(&staging).await;
    fetched
}

/// Whether every font is in place and the page loads them from there.
async fn installed(dir: &Path) -> bool {
    let fonts = dir.join(FONTS_DIR);
    let files = FONTS
        .iter()
        .map(|font| fonts.join(font.file))
        .chain(
            TEXT_FONT
                .faces
                .iter()
                .map(|(style, weight)| fonts.join(TextFont::file(style, *weight))),
        )
        .collect::<Vec<_>>();
    if !all_present(files.iter().map(std::path::PathBuf::as_path)).await {
        return false;
    }
    tokio::fs::read_to_string(dir.join("index.html"))
        .await
        .is_ok_and(|page| {
            FONTS.iter().all(|font| !page.contains(font.google_url))
                && !page.contains(TEXT_FONT.google_url)
        })
}

/// Packs `package` with npm into `staging` and copies each (member, target) of `files` out of it.
async fn fetch_package(
    package: &Package,
    staging: &Path,
    files: &[(String, std::path::PathBuf)],
    python: &str,
) -> Result<(), ServerError> {
    run(
        Command::new("npm")
            .args(["pack", package.name, "--silent", "--pack-destination"])
            .arg(staging),
        &format!(
            "npm could not fetch {} (a font of the dev UI; install Node.js with npm, or \
             the icons show as words offline)",
            package.name
        ),
    )
    .await?;
    for (member, target) in files {
        run(
            Command::new(python)
                .args(["-c", EXTRACT_SCRIPT])
                .arg(staging.join(package.tarball))
                .arg(package.sha512)
                .arg(member)
                .arg(target),
            &format!("a font could not be taken from {}", package.name),
        )
        .await?;
    }
    Ok(())
}

/// Rewrites `dir/index.html` so that each icon font's `@font-face` loads the file in `fonts/`
/// instead of Google Fonts' URL, and Google Sans's rules (one per script subset, each for a range
/// of weights) become one rule per style and weight of its files in `fonts/`; other text is left
/// as it is.
async fn point_page_at_fonts(dir: &Path) -> Result<(), ServerError> {
    let path = dir.join("index.html");
    let page = tokio::fs::read_to_string(&path)
        .await
        .map_err(|source| io_error(&path, source))?;
    let rewritten = FONTS.iter().fold(page, |page, font| {
        replace_urls(
            &page,
            font.google_url,
            &format!("{FONTS_DIR}/{}", font.file),
        )
    });
    let rewritten = replace_rules(&rewritten, TEXT_FONT.google_url, &TEXT_FONT.rules());
    let partial = dir.join("index.html.partial");
    tokio::fs::write(&partial, rewritten)
        .await
        .map_err(|source| io_error(&partial, source))?;
    tokio::fs::rename(&partial, &path)
        .await
        .map_err(|source| io_error(&path, source))
}

/// `page` with every `url(<prefix>...)` replaced by `url(<local>)`.
fn replace_urls(page: &str, prefix: &str, local: &str) -> String {
    let pattern = format!("url({prefix}");
    let mut rewritten = String::with_capacity(page.len());
    let mut rest = page;
    while let Some(start) = rest.find(&pattern) {
        let Some(end) = rest[start..].find(')') else {
            break;
        };
        rewritten.push_str(&rest[..start]);
        rewritten.push_str("url(");
        rewritten.push_str(local);
        rest = &rest[start + end..];
    }
    rewritten.push_str(rest);
    rewritten
}

/// `page` with every `@font-face{...}` rule that loads from `prefix` removed, and `rules` put
/// where the first of them was.
fn replace_rules(page: &str, prefix: &str, rules: &str) -> String {
    const RULE: &str = "@font-face{";
    let mut rewritten = String::with_capacity(page.len());
    let mut rest = page;
    let mut placed = false;
    while let Some(start) = rest.find(RULE) {
        let Some(length) = rest[start..].find('}') else {
            break;
        };
        let rule = &rest[start..=start + length];
        rewritten.push_str(&rest[..start]);
        if rule.contains(&format!("url({prefix}")) {
            if !placed {
                rewritten.push_str(rules);
                placed = true;
            }
        } else {
            rewritten.push_str(rule);
        }
        rest = &rest[start + length + 1..];
    }
    rewritten.push_str(rest);
    rewritten
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_icon_fonts_urls_are_rewritten() {
        let page = "<style>@font-face{font-family:'Material Icons';src:url(https://fonts.gstatic.com/s/materialicons/v145/abc.woff2) format('woff2');}</style>\
                    <style>@font-face{font-family:'Google Sans';src:url(https://fonts.gstatic.com/s/googlesans/v70/x.woff2) format('woff2');}</style>";
        let rewritten = replace_urls(
            page,
            "https://fonts.gstatic.com/s/materialicons/",
            "fonts/material-icons.woff2",
        );
        assert_eq!(
            rewritten,
            "<style>@font-face{font-family:'Material Icons';src:url(fonts/material-icons.woff2) format('woff2');}</style>\
             <style>@font-face{font-family:'Google Sans';src:url(https://fonts.gstatic.com/s/googlesans/v70/x.woff2) format('woff2');}</style>"
        );
        // A page without the URL is left as it is.
        assert_eq!(replace_urls("plain", "https://x/", "y"), "plain");
    }

    #[test]
    fn google_sans_rules_become_one_per_local_file_and_others_stay() {
        let page = "<style>@font-face{font-family:'Google Sans';font-style:italic;font-weight:400 700;src:url(https://fonts.gstatic.com/s/googlesans/v70/a.woff2) format('woff2');unicode-range:U+0100-02BA;}\
                    @font-face{font-family:'Google Sans';font-style:normal;font-weight:400 700;src:url(https://fonts.gstatic.com/s/googlesans/v70/b.woff2) format('woff2');}\
                    @font-face{font-family:'Google Sans Mono';src:url(https://fonts.gstatic.com/s/googlesansmono/v28/c.woff2) format('woff2');}</style>";
        let rewritten = replace_rules(page, TEXT_FONT.google_url, &TEXT_FONT.rules());
        assert!(!rewritten.contains("s/googlesans/"), "{rewritten}");
        assert!(
            rewritten.contains("s/googlesansmono/v28/c.woff2"),
            "{rewritten}"
        );
        assert_eq!(rewritten.matches("@font-face").count(), 7, "{rewritten}");
        assert!(rewritten.contains(
            "@font-face{font-family:'Google Sans';font-style:italic;font-weight:700;font-display:swap;\
             src:url(fonts/google-sans-latin-700-italic.woff2) format('woff2');}"
        ));
        assert!(rewritten.starts_with(
            "<style>@font-face{font-family:'Google Sans';font-style:normal;font-weight:400;"
        ));
        assert!(rewritten.ends_with("</style>"));
    }
}
