//! The dev UI's icon fonts, offline: adk-web's `index.html` loads Material Icons and Material
//! Symbols Outlined from Google Fonts, so without the internet every icon shows as its ligature
//! name ("send", "dock_to_right"). [`install`] takes both fonts from their pinned npm packages
//! (`npm pack`, sha512 checked) into the UI's `fonts/` folder, which the dev UI's routes serve, and
//! points the page's `@font-face` rules at them.

use std::path::Path;

use tokio::process::Command;

use super::{io_error, lock, run};
use crate::error::ServerError;

/// One icon font: the npm package that ships it, pinned, and where its file goes.
struct IconFont {
    /// `name@version` for `npm pack`.
    package: &'static str,
    /// The tarball's file name, as `npm pack` writes it.
    tarball: &'static str,
    /// The tarball's sha512, as the registry lists it (`dist.integrity`, base64).
    sha512: &'static str,
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
        package: "material-icons@1.13.14",
        tarball: "material-icons-1.13.14.tgz",
        sha512: "kZOfc7xCC0rAT8Q3DQixYAeT+tBqZnxkseQtp2bxBxz7q5pMAC+wmit7vJn1g/l7wRU+HEPq23gER4iPjGs5Cg==",
        member: "package/iconfont/material-icons.woff2",
        file: "material-icons.woff2",
        google_url: "https://fonts.gstatic.com/s/materialicons/",
    },
    IconFont {
        package: "material-symbols@0.47.5",
        tarball: "material-symbols-0.47.5.tgz",
        sha512: "bry9rHVqF7HewbSK9Yb77obFoDvQsEot8IrW9+F179iEkcg7P/zYv2zuwBRU1oFkA5Ez0MpDAintffdtqL70Eg==",
        member: "package/material-symbols-outlined.woff2",
        file: "material-symbols-outlined.woff2",
        google_url: "https://fonts.gstatic.com/s/materialsymbolsoutlined/",
    },
];

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

/// Puts the icon fonts in `dir/fonts/` (once: later calls find them) and points `dir/index.html`
/// at them. Concurrent callers wait for one install through the dev UI's lock file.
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
        let staging = parent.join(format!(".icon-font-download-{}", std::process::id()));
        tokio::fs::create_dir_all(&staging)
            .await
            .map_err(|source| io_error(&staging, source))?;
        tracing::info!(
            package = font.package,
            "downloading an icon font of the dev UI with npm"
        );
        let fetched = fetch_font(font, &staging, &target, &python).await;
        let _ = tokio::fs::remove_dir_all(&staging).await;
        fetched?;
    }
    point_page_at_fonts(dir).await
}

/// Whether both fonts are in place and the page loads them from there.
async fn installed(dir: &Path) -> bool {
    for font in &FONTS {
        if tokio::fs::metadata(dir.join(FONTS_DIR).join(font.file))
            .await
            .is_err()
        {
            return false;
        }
    }
    tokio::fs::read_to_string(dir.join("index.html"))
        .await
        .is_ok_and(|page| FONTS.iter().all(|font| !page.contains(font.google_url)))
}

/// Packs `font`'s package with npm into `staging` and copies the font to `target`.
async fn fetch_font(
    font: &IconFont,
    staging: &Path,
    target: &Path,
    python: &str,
) -> Result<(), ServerError> {
    run(
        Command::new("npm")
            .args(["pack", font.package, "--silent", "--pack-destination"])
            .arg(staging),
        &format!(
            "npm could not fetch {} (the dev UI's icon font; install Node.js with npm, or \
             the icons show as words offline)",
            font.package
        ),
    )
    .await?;
    run(
        Command::new(python)
            .args(["-c", EXTRACT_SCRIPT])
            .arg(staging.join(font.tarball))
            .arg(font.sha512)
            .arg(font.member)
            .arg(target),
        &format!("the icon font could not be taken from {}", font.package),
    )
    .await
}

/// Rewrites `dir/index.html` so that each icon font's `@font-face` loads the file in `fonts/`
/// instead of Google Fonts' URL; other text is left as it is.
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
}
