//! The dependency planner: topological phases, priorities, phase splitting, and the errors of a
//! graph that cannot be ordered.

use adk_orchestrator::{DependencyPlanCreator, PlanCreator as _, PlanError, Task};

fn task(id: &str, dependencies: &[&str]) -> Task {
    Task::new(id, "step", "worker").with_dependencies(dependencies.iter().copied())
}

fn phases(planner: DependencyPlanCreator, tasks: Vec<Task>) -> Vec<Vec<String>> {
    planner
        .create_plan(tasks)
        .unwrap()
        .phase_ids()
        .into_iter()
        .map(|phase| phase.into_iter().map(str::to_owned).collect())
        .collect()
}

#[test]
fn tasks_are_ordered_into_topological_levels() {
    // A diamond with a tail: a -> (b, c) -> d -> e, and f on its own.
    let tasks = vec![
        task("e", &["d"]),
        task("d", &["b", "c"]),
        task("b", &["a"]),
        task("c", &["a"]),
        task("a", &[]),
        task("f", &[]),
    ];
    assert_eq!(
        phases(DependencyPlanCreator::default(), tasks),
        [vec!["a", "f"], vec!["b", "c"], vec!["d"], vec!["e"]]
    );
}

#[test]
fn a_task_waits_for_its_deepest_dependency() {
    // c depends on a (level 0) and b (level 1), so it is in level 2.
    let tasks = vec![task("a", &[]), task("b", &["a"]), task("c", &["a", "b"])];
    assert_eq!(
        phases(DependencyPlanCreator::default(), tasks),
        [vec!["a"], vec!["b"], vec!["c"]]
    );
}

#[test]
fn phases_are_sorted_by_priority_then_by_the_analyzers_order() {
    let tasks = vec![
        task("low", &[]).with_priority(3),
        task("first", &[]).with_priority(1),
        task("tie_a", &[]).with_priority(2),
        task("tie_b", &[]).with_priority(2),
    ];
    assert_eq!(
        phases(DependencyPlanCreator::default(), tasks),
        [vec!["first", "tie_a", "tie_b", "low"]]
    );
}

#[test]
fn phases_over_the_limit_are_split() {
    let tasks = (0..5)
        .map(|i| task(&format!("t{i}"), &[]).with_priority(5 - i))
        .chain([task("last", &["t0"])])
        .collect();
    assert_eq!(
        phases(DependencyPlanCreator::new(2), tasks),
        [vec!["t4", "t3"], vec!["t2", "t1"], vec!["t0"], vec!["last"]]
    );
    assert_eq!(DependencyPlanCreator::new(0).max_tasks_per_phase, 10);
}

#[test]
fn a_cycle_is_rejected_naming_its_tasks() {
    let tasks = vec![
        task("start", &[]),
        task("a", &["start", "c"]),
        task("b", &["a"]),
        task("c", &["b"]),
        task("after", &["c"]),
    ];
    let error = DependencyPlanCreator::default()
        .create_plan(tasks)
        .unwrap_err();
    let PlanError::Cycle { tasks } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(tasks, &["a", "c", "b"]);
    assert!(error.to_string().contains("a -> c -> b -> a"), "{error}");
}

#[test]
fn a_task_depending_on_itself_is_a_cycle() {
    let error = DependencyPlanCreator::default()
        .create_plan(vec![task("loop", &["loop"])])
        .unwrap_err();
    assert_eq!(
        error,
        PlanError::Cycle {
            tasks: vec!["loop".to_owned()]
        }
    );
}

#[test]
fn unknown_dependencies_and_duplicate_ids_are_rejected() {
    let error = DependencyPlanCreator::default()
        .create_plan(vec![task("a", &["ghost"])])
        .unwrap_err();
    assert_eq!(
        error,
        PlanError::UnknownDependency {
            task: "a".to_owned(),
            dependency: "ghost".to_owned()
        }
    );
    let error = DependencyPlanCreator::default()
        .create_plan(vec![task("a", &[]), task("a", &[])])
        .unwrap_err();
    assert_eq!(error, PlanError::DuplicateTask { id: "a".to_owned() });
}

#[test]
fn repeated_dependencies_count_once() {
    let tasks = vec![task("a", &[]), task("b", &["a", "a"])];
    assert_eq!(
        phases(DependencyPlanCreator::default(), tasks),
        [vec!["a"], vec!["b"]]
    );
}
