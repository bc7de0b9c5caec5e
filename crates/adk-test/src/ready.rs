//! [`ready_line`]: waiting for a server a test started to print that it listens.

use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::time::Duration;

/// Reads the first line `child` prints on its (piped) stdout, at most 60 s, and makes what the
/// server listens on of it with `parse`; then drains its (piped) stderr so that a chatty server
/// never blocks on a full pipe.
///
/// # Panics
///
/// When no line comes in time or `parse` refuses it: the child is killed and its stderr shown.
pub(crate) fn ready_line<T>(
    child: &mut Child,
    what: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> T {
    // A server binds its socket before it prints, so it takes connections once the line is read;
    // a thread bounds the wait.
    let stdout = child.stdout.take().expect("a piped stdout");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sender.send(line);
    });
    let line = receiver
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_default();
    let Some(ready) = parse(line.trim()) else {
        let _ = child.kill();
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        panic!("{what} did not start (it printed {line:?}):\n{stderr}");
    };
    if let Some(mut pipe) = child.stderr.take() {
        std::thread::spawn(move || std::io::copy(&mut pipe, &mut std::io::sink()));
    }
    ready
}
