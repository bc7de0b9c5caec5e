//! Planning cost: parsing an analyzer's XML answer of 1,000 tasks with random acyclic
//! dependencies and ordering it into phases.
//!
//! Run with `cargo bench -p adk-orchestrator`. Each task depends on up to three earlier tasks,
//! picked by a fixed-seed generator so that every run plans the same graph.

use adk_orchestrator::{
    DependencyPlanCreator, PlanCreator as _, TaskParser as _, XmlNormalizer, XmlTaskParser,
};

fn main() {
    divan::main();
}

/// A small xorshift generator: the benchmark needs reproducible numbers, not good ones.
struct Numbers(u64);

impl Numbers {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % bound as u64).unwrap_or(0)
    }
}

/// An analyzer answer of `count` tasks, each depending on up to three earlier ones.
fn answer(count: usize) -> String {
    let mut numbers = Numbers(0x9E37_79B9_7F4A_7C15);
    let mut xml = String::from("Here is the plan.\n```xml\n<tasks>\n");
    for index in 0..count {
        let priority = numbers.below(5);
        xml.push_str(&format!(
            "  <task id=\"t{index}\" type=\"step\" processor=\"worker\" priority=\"{priority}\">\n    <description>Step {index} of the work &amp; its notes</description>\n    <dependencies>"
        ));
        if index > 0 {
            for _ in 0..numbers.below(4) {
                xml.push_str(&format!("<dep>t{}</dep>", numbers.below(index)));
            }
        }
        xml.push_str("</dependencies>\n    <metadata><item key=\"size\">small</item></metadata>\n  </task>\n");
    }
    xml.push_str("</tasks>\n```\n");
    xml
}

#[divan::bench(args = [100, 1000])]
fn parse_and_plan(bencher: divan::Bencher<'_, '_>, count: usize) {
    let text = answer(count);
    let parser = XmlTaskParser::default();
    let planner = DependencyPlanCreator::new(50);
    bencher.bench(|| {
        let tasks = parser.parse(divan::black_box(&text)).unwrap();
        planner.create_plan(tasks).unwrap()
    });
}

#[divan::bench(args = [1000])]
fn normalize_only(bencher: divan::Bencher<'_, '_>, count: usize) {
    let text = answer(count);
    bencher.bench(|| {
        XmlNormalizer::new()
            .normalize(divan::black_box(&text))
            .unwrap()
    });
}

#[divan::bench(args = [1000])]
fn plan_only(bencher: divan::Bencher<'_, '_>, count: usize) {
    let tasks = XmlTaskParser::default().parse(&answer(count)).unwrap();
    let planner = DependencyPlanCreator::new(50);
    bencher
        .with_inputs(|| tasks.clone())
        .bench_values(|tasks| planner.create_plan(tasks).unwrap());
}
