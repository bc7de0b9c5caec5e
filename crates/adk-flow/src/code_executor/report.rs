//! What the model reads about a run: the outcome, the output and the files, as ADK's
//! `codeExecutionResult`.

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;

use adk_core::{CodeExecutionResult, Language, Outcome};

use super::CodeExecution;
use super::ExecutionLimits;
use super::process::{Captured, Finished};
use super::scratch::Files;

/// Turns a finished run and its files into the execution the flow records.
///
/// A run that exited with status 0 is `OUTCOME_OK` with its standard output; one stopped at the
/// time limit is `OUTCOME_DEADLINE_EXCEEDED`; any other is `OUTCOME_FAILED` with what it printed
/// on both streams and how it ended, because the model fixes its code from that.
pub(super) fn report(finished: Finished, files: Files, limits: &ExecutionLimits) -> CodeExecution {
    let exit_code = finished.status.and_then(|status| status.code());
    let mut output = String::new();
    let outcome = if finished.timed_out {
        push_stream(&mut output, &finished.stdout, limits);
        push_stream(&mut output, &finished.stderr, limits);
        let _ = writeln!(
            output,
            "The code ran longer than the time limit of {} and was stopped.",
            seconds(limits)
        );
        Outcome::OutcomeDeadlineExceeded
    } else if exit_code == Some(0) {
        push_stream(&mut output, &finished.stdout, limits);
        Outcome::OutcomeOk
    } else {
        push_stream(&mut output, &finished.stdout, limits);
        push_stream(&mut output, &finished.stderr, limits);
        let ending = match finished.status {
            Some(status) => match (status.code(), status.signal()) {
                (Some(code), _) => format!("The code exited with status {code}."),
                (None, Some(signal)) => format!(
                    "The code was killed by signal {signal}{}.",
                    if signal == 9 {
                        " (it may have gone past the memory limit)"
                    } else {
                        ""
                    }
                ),
                (None, None) => "The code ended abnormally.".to_owned(),
            },
            None => "The code's exit status is unknown.".to_owned(),
        };
        output.push_str(&ending);
        output.push('\n');
        Outcome::OutcomeFailed
    };
    if !files.returned.is_empty() {
        let names: Vec<&str> = files
            .returned
            .iter()
            .filter_map(|file| file.display_name.as_deref())
            .collect();
        let _ = writeln!(output, "Files written: {}.", names.join(", "));
    }
    if !files.left_out.is_empty() {
        let _ = writeln!(output, "Files not returned: {}.", files.left_out.join(", "));
    }
    CodeExecution::from(CodeExecutionResult {
        outcome,
        output: Some(output),
    })
    .with_files(files.returned)
    .with_exit_code(exit_code)
}

/// A run the executor refused before starting anything: the model reads why.
pub(super) fn refused(language: Language) -> CodeExecution {
    CodeExecution::from(CodeExecutionResult {
        outcome: Outcome::OutcomeFailed,
        output: Some(format!(
            "This executor runs Python only, not {language:?}; write the code in Python."
        )),
    })
}

fn push_stream(output: &mut String, stream: &Captured, limits: &ExecutionLimits) {
    output.push_str(&stream.text());
    if stream.truncated {
        let _ = writeln!(
            output,
            "\n[output cut at {} bytes]",
            limits.max_output_bytes
        );
    } else if !output.is_empty() && !output.ends_with('\n') {
        output.push('\n');
    }
}

fn seconds(limits: &ExecutionLimits) -> String {
    let secs = limits.timeout.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs} s")
    }
}
