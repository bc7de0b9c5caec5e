//! The XML task parser: every mistake the normaliser repairs, each error code, and the fields a
//! task may carry.

use adk_orchestrator::{Task, TaskParser as _, XmlErrorCode, XmlNormalizer, XmlTaskParser};

/// The plan every repaired form below must read as.
fn expected() -> Vec<Task> {
    vec![
        Task::new("t1", "lookup", "weather")
            .with_description("Weather in Paris & Lyon")
            .with_priority(1)
            .with_metadata("city", "Paris"),
        Task::new("t2", "write", "writer")
            .with_description("Write the note")
            .with_dependencies(["t1"])
            .with_priority(2),
    ]
}

fn check(answer: &str) {
    let tasks = XmlTaskParser::default()
        .parse(answer)
        .unwrap_or_else(|error| panic!("{error}\n{answer}"));
    assert_eq!(tasks, expected(), "{answer}");
}

const CLEAN: &str = r#"<tasks>
  <task id="t1" type="lookup" processor="weather" priority="1">
    <description>Weather in Paris &amp; Lyon</description>
    <dependencies></dependencies>
    <metadata><item key="city">Paris</item></metadata>
  </task>
  <task id="t2" type="write" processor="writer" priority="2">
    <description>Write the note</description>
    <dependencies><dep>t1</dep></dependencies>
  </task>
</tasks>"#;

#[test]
fn a_clean_plan_is_read() {
    check(CLEAN);
}

#[test]
fn code_fences_and_stray_text_are_removed() {
    check(&format!(
        "Sure! Here is the plan you asked for:\n```xml\n<?xml version=\"1.0\"?>\n{CLEAN}\n```\nLet me know if it helps."
    ));
    check(&format!("```\n{CLEAN}\n```"));
}

#[test]
fn unescaped_ampersands_are_escaped() {
    check(&CLEAN.replace("&amp;", "&"));
}

#[test]
fn missing_closing_tags_are_added() {
    // No </task> anywhere, no </dep>, and no </tasks> at the end.
    let answer = CLEAN
        .replace("</task>", "")
        .replace("</dep>", "")
        .replace("</tasks>", "");
    check(&answer);
}

#[test]
fn a_missing_tasks_wrapper_is_added() {
    let answer = CLEAN.replace("<tasks>", "").replace("</tasks>", "");
    check(&format!("Plan:\n{answer}\nDone."));
}

#[test]
fn unquoted_attributes_upper_case_tags_and_stray_closers_are_repaired() {
    let answer = CLEAN
        .replace(r#"id="t1""#, "id=t1")
        .replace(r#"priority="2""#, "priority='2'")
        .replace("<description>Write", "<DESCRIPTION>Write")
        .replace("note</description>", "note</Description></metadata>");
    check(&answer);
}

#[test]
fn a_bare_less_than_sign_in_text_is_text() {
    let answer = CLEAN.replace("Write the note", "Write the note in < 100 words");
    let tasks = XmlTaskParser::default().parse(&answer).unwrap();
    assert_eq!(tasks[1].description, "Write the note in < 100 words");
}

#[test]
fn fields_may_be_elements_and_dependencies_plain_text() {
    let answer = r#"<tasks>
      <task><id>t1</id><type>lookup</type><processor>weather</processor><priority>1</priority>
        <description>Weather in Paris &amp; Lyon</description>
        <metadata><item name="city">Paris</item></metadata></task>
      <task id="t2" type="write" processor="writer" priority="2">
        <description><![CDATA[Write the note]]></description>
        <dependencies>t1, t1</dependencies></task>
    </tasks>"#;
    check(answer);
}

#[test]
fn no_tasks_section_is_its_own_error() {
    let error = XmlTaskParser::default()
        .parse("I am not sure how to split this request.")
        .unwrap_err();
    assert_eq!(error.code, XmlErrorCode::NoTasksSection);
    assert!(error.message.contains("<tasks>"), "{error}");
}

#[test]
fn invalid_xml_is_its_own_error() {
    // Repair on: a character reference XML does not allow cannot be repaired.
    let error = XmlTaskParser::default()
        .parse(r#"<tasks><task id="a" type="x" processor="p"><description>&#0;</description></task></tasks>"#)
        .unwrap_err();
    assert_eq!(error.code, XmlErrorCode::InvalidXml, "{error}");
    // Repair off: the model's slips are reported instead of fixed.
    let strict = XmlTaskParser::default().with_normalization(false);
    let error = strict.parse(&CLEAN.replace("</dep>", "")).unwrap_err();
    assert_eq!(error.code, XmlErrorCode::InvalidXml, "{error}");
    assert!(error.details.contains_key("position"), "{error:?}");
    let error = strict.parse(&CLEAN.replace("&amp;", "&")).unwrap_err();
    assert_eq!(error.code, XmlErrorCode::InvalidXml, "{error}");
}

#[test]
fn malformed_tasks_are_their_own_error() {
    let parser = XmlTaskParser::default();
    let cases = [
        (CLEAN.replace(r#" processor="writer""#, ""), "processor"),
        (CLEAN.replace(r#"id="t2""#, ""), "id"),
        (
            CLEAN.replace(r#"priority="1""#, r#"priority="high""#),
            "priority",
        ),
        (CLEAN.replace(r#"id="t2""#, r#"id="t1""#), "two tasks"),
        ("<tasks>\n</tasks>".to_owned(), "no tasks"),
    ];
    for (answer, what) in cases {
        let error = parser.parse(&answer).unwrap_err();
        assert_eq!(error.code, XmlErrorCode::MalformedTasks, "{answer}");
        assert!(error.message.contains(what), "{what}: {error}");
    }
}

#[test]
fn required_fields_are_configurable() {
    let answer = r#"<tasks><task id="a" processor="p"/></tasks>"#;
    assert!(XmlTaskParser::default().parse(answer).is_err());
    let lenient = XmlTaskParser::default().with_required_fields(["processor"]);
    assert_eq!(lenient.parse(answer).unwrap()[0].processor_type, "p");
    let strict = XmlTaskParser::default().with_required_fields(["processor", "description"]);
    let error = strict.parse(answer).unwrap_err();
    assert!(error.message.contains("description"), "{error}");
}

#[test]
fn the_normaliser_output_is_well_formed_for_every_repair() {
    let normalizer = XmlNormalizer::new();
    let xml = normalizer
        .normalize("<tasks><task id=a b=\"1\" b=\"2\"><description>x</task><!-- note -->")
        .unwrap();
    assert_eq!(
        xml,
        "<tasks><task id=\"a\" b=\"1\"><description>x</description></task></tasks>"
    );
}
