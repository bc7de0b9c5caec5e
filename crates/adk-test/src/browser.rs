//! A headless Chromium driven over the W3C WebDriver protocol (through `chromedriver`), for tests
//! that use a real UI: open a page, type, click, wait for the DOM, take screenshots.
//!
//! The client is a few JSON calls over HTTP on loopback; Chromium and chromedriver come from the
//! system (Debian's `chromium` and `chromium-driver`, which CI installs). Chromium runs with a fresh
//! profile and with its background networking off, as this machine reaches no outside host.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// The W3C key of the element reference in WebDriver answers.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Where the browser and its driver are looked for, unless `CHROME_BIN` / `CHROMEDRIVER` say.
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A headless Chromium session; dropping it ends the session's driver (and so the browser).
pub struct Browser {
    http: reqwest::Client,
    session: String,
    driver_url: String,
    _driver: Child,
    _profile: tempfile::TempDir,
}

/// A reference to an element of the page.
#[derive(Debug, Clone)]
pub struct Element(String);

impl Browser {
    /// Starts chromedriver on a free loopback port and a headless Chromium session in a window of
    /// `width` × `height`. Panics with what to install when the binaries are missing.
    pub async fn start(width: u32, height: u32) -> Self {
        Self::start_with_args(width, height, &[]).await
    }

    /// Like [`start`](Self::start), with Chromium's command line extended by `extra` (such as
    /// `--host-resolver-rules=MAP evil.test 127.0.0.1`, which makes a foreign name resolve to this
    /// machine, as DNS rebinding does).
    pub async fn start_with_args(width: u32, height: u32, extra: &[&str]) -> Self {
        let chromium = std::env::var("CHROME_BIN").unwrap_or_else(|_| CHROMIUM.to_owned());
        let driver = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| CHROMEDRIVER.to_owned());
        for binary in [&chromium, &driver] {
            assert!(
                Path::new(binary).exists(),
                "{binary} is missing: install Debian's chromium and chromium-driver \
                 (apt-get install chromium chromium-driver), as .ci/run does"
            );
        }
        let port = free_port();
        let child = Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {driver}: {error}"));
        let driver_url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        wait_until_ready(&http, &driver_url).await;
        let profile = tempfile::tempdir().expect("a temporary profile directory");
        let mut args: Vec<String> = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        args.push(format!("--window-size={width},{height}"));
        args.push(format!("--user-data-dir={}", profile.path().display()));
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
        }}});
        let answer = call(
            &http,
            reqwest::Method::POST,
            &format!("{driver_url}/session"),
            Some(capabilities),
        )
        .await;
        let session = answer["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("chromedriver gave no session: {answer}"))
            .to_owned();
        Self {
            http,
            session,
            driver_url,
            _driver: child,
            _profile: profile,
        }
    }

    async fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.driver_url, self.session);
        call(&self.http, method, &url, body).await
    }

    /// Opens `url`.
    pub async fn goto(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", Some(json!({"url": url})))
            .await;
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page and returns its value.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        self.command(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
        .await
    }

    /// The first element matching the CSS `selector`, if any.
    pub async fn find(&self, selector: &str) -> Option<Element> {
        let url = format!("{}/session/{}/element", self.driver_url, self.session);
        let response = self
            .http
            .post(url)
            .json(&json!({"using": "css selector", "value": selector}))
            .send()
            .await
            .expect("chromedriver answers");
        if !response.status().is_success() {
            return None;
        }
        let answer: Value = response.json().await.expect("a WebDriver answer is JSON");
        answer["value"][ELEMENT_KEY]
            .as_str()
            .map(|id| Element(id.to_owned()))
    }

    /// Clicks `element`.
    pub async fn click(&self, element: &Element) {
        self.command(
            reqwest::Method::POST,
            &format!("/element/{}/click", element.0),
            Some(json!({})),
        )
        .await;
    }

    /// Types `text` into `element` (`\u{E007}` is the Enter key).
    pub async fn type_text(&self, element: &Element, text: &str) {
        self.command(
            reqwest::Method::POST,
            &format!("/element/{}/value", element.0),
            Some(json!({"text": text})),
        )
        .await;
    }

    /// The page's visible text.
    pub async fn text(&self) -> String {
        self.execute("return document.body.innerText;", Vec::new())
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Waits until `script` returns a truthy value, polling; panics naming `what` after
    /// `patience` (a guard against a hang, not a performance bound), with the page's text.
    pub async fn wait_for(&self, script: &str, what: &str, patience: Duration) -> Value {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let value = self.execute(script, Vec::new()).await;
            if !(value.is_null() || value == json!(false) || value == json!("")) {
                return value;
            }
            if tokio::time::Instant::now() > deadline {
                panic!("waited for {what}; the page shows:\n{}", self.text().await);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until the page's visible text contains `text` (see [`wait_for`](Self::wait_for)).
    pub async fn wait_for_text(&self, text: &str, patience: Duration) {
        let script = format!("return document.body.innerText.includes({});", json!(text));
        self.wait_for(&script, &format!("the text {text:?}"), patience)
            .await;
    }

    /// Clicks the innermost element whose text is exactly `text`; panics when there is none, or
    /// when the click opens a prompt (`alert`, `confirm`), naming the prompt's text.
    pub async fn click_text(&self, text: &str) {
        let clicked = self
            .execute(
                "const all = [...document.querySelectorAll('body *')]
                     .filter(e => e.children.length === 0 && e.textContent.trim() === arguments[0]);
                 if (all.length === 0) { return false; }
                 all[0].click();
                 return true;",
                vec![json!(text)],
            )
            .await;
        if clicked.is_null() {
            // WebDriver answers a script with null when a prompt opens while it runs.
            let prompt = self
                .command(reqwest::Method::GET, "/alert/text", None)
                .await;
            panic!("clicking {text:?} opened a prompt: {prompt}");
        }
        assert_eq!(clicked, json!(true), "nothing on the page reads {text:?}");
    }

    /// Types `message` into the adk-web dev UI's message box and sends it with Enter.
    pub async fn send_chat_message(&self, message: &str, patience: Duration) {
        self.wait_for(
            "return document.querySelector('textarea.chat-input-box');",
            "the dev UI's message box",
            patience,
        )
        .await;
        let input = self
            .find("textarea.chat-input-box")
            .await
            .expect("the dev UI's message box");
        self.type_text(&input, message).await;
        self.type_text(&input, "\u{E007}").await;
    }

    /// Writes `text` into the input of the dialog adk-web opened last, replacing what it proposed.
    ///
    /// It waits for the dialog to finish opening, then sets the value and sends the `input` event
    /// Angular's forms listen to, rather than typing: Angular Material moves the focus into a
    /// dialog only after its opening animation, and on a loaded machine that move could land in
    /// the middle of typed keys and send the rest elsewhere.
    pub async fn fill_dialog_input(&self, text: &str, patience: Duration) {
        const LAST_DIALOG: &str = "const dialogs = document.querySelectorAll(
                 '.cdk-overlay-container .mat-mdc-dialog-container');
             const dialog = dialogs[dialogs.length - 1];";
        self.wait_for(
            &format!(
                "{LAST_DIALOG}
                 return dialog && dialog.querySelector('input')
                     && dialog.classList.contains('mdc-dialog--open')
                     && !dialog.classList.contains('mdc-dialog--opening');"
            ),
            "the dialog's input, with the dialog open",
            patience,
        )
        .await;
        let written = self
            .execute(
                &format!(
                    "{LAST_DIALOG}
                     const input = dialog.querySelector('input');
                     input.value = arguments[0];
                     input.dispatchEvent(new Event('input', {{bubbles: true}}));
                     return input.value;"
                ),
                vec![json!(text)],
            )
            .await;
        assert_eq!(written, json!(text), "the dialog's input took the text");
    }

    /// In adk-web's Evals tab, creates eval set `set` and adds the conversation on screen to it as
    /// case `case`, waiting for each step to show.
    pub async fn add_session_to_new_eval_set(&self, set: &str, case: &str, patience: Duration) {
        self.click_text("Evals").await;
        self.wait_for_text("Eval Sets", patience).await;
        self.click_text("New").await;
        self.wait_for_text("Create New Eval Set", patience).await;
        self.fill_dialog_input(set, patience).await;
        self.click_text("Create").await;
        self.wait_for_text(set, patience).await;
        self.click_text(set).await;
        self.wait_for_text("From Current Session", patience).await;
        self.click_text("From Current Session").await;
        self.wait_for_text("Add Current Session To Eval Set", patience)
            .await;
        self.fill_dialog_input(case, patience).await;
        self.click_text("Create").await;
        self.wait_for_text(case, patience).await;
    }

    /// Saves a PNG screenshot of the window at `path` (its folder is created).
    pub async fn screenshot(&self, path: &Path) -> PathBuf {
        let answer = self
            .command(reqwest::Method::GET, "/screenshot", None)
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(answer.as_str().expect("a screenshot is base64 text"))
            .expect("a screenshot decodes");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, png).unwrap();
        path.to_owned()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ending the session closes Chromium; chromedriver is killed with its handle.
        let url = format!("{}/session/{}", self.driver_url, self.session);
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(runtime) = runtime {
                runtime.block_on(async {
                    let _ = tokio::time::timeout(
                        Duration::from_secs(10),
                        reqwest::Client::new().delete(url).send(),
                    )
                    .await;
                });
            }
        })
        .join();
    }
}

/// One WebDriver call; panics with the driver's error when it fails.
async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<Value>,
) -> Value {
    let mut request = http.request(method.clone(), url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|error| panic!("WebDriver {method} {url}: {error}"));
    let status = response.status();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    assert!(
        status.is_success(),
        "WebDriver {method} {url} failed ({status}): {answer}"
    );
    answer["value"].clone()
}

async fn wait_until_ready(http: &reqwest::Client, driver_url: &str) {
    for _ in 0..300 {
        if let Ok(response) = http.get(format!("{driver_url}/status")).send().await
            && response.status().is_success()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not answer at {driver_url}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free loopback port")
}
